"""The metric catalogue: what tables and verdicts show per workload/mode.

Each (workload, mode) has one record kind whose lines are compared
(`summary`, or `generation` for fork/depth) and a few primary metrics,
each with a label, a unit, which direction is better and whether it is
deterministic: a byte/object/page count the kernel gives exactly (slab
deltas, page tables, copied pages), so equal repetitions are shown as
one exact value, without a spread, rather than a timing with noise.
"""

from dataclasses import dataclass

from . import iface

LOWER = "lower_better"
HIGHER = "higher_better"
# A metric shown for context; neither scheme "wins" on it.
NEUTRAL = "informational"

SLAB_CACHES = iface.slabs(iface.COST)


@dataclass(frozen=True)
class Metric:
    name: str            # the field of records' metrics
    label: str           # for humans
    unit: str            # as shown in tables and on axes
    direction: str       # LOWER, HIGHER or NEUTRAL
    deterministic: bool  # an exact count: equal reps carry no spread


@dataclass(frozen=True)
class Entry:
    """What is compared for one (workload, mode)."""
    workload: str
    mode: str
    record: str                  # the record kind the metrics come from
    metrics: tuple[Metric, ...]


def _m(name: str, label: str, unit: str, direction: str = LOWER,
       deterministic: bool = False) -> Metric:
    return Metric(name, label, unit, direction, deterministic)


def _vma_count() -> tuple[Metric, ...]:
    per = [_m("slab_total_per_vma_bytes", "slab total per VMA", "B/VMA",
              deterministic=True)]
    per += [_m(f"slab_{c}_per_vma_bytes", f"{c} per VMA", "B/VMA",
               deterministic=True) for c in SLAB_CACHES]
    per += [_m("page_tables_per_vma_bytes", "page tables per VMA", "B/VMA",
               deterministic=True),
            _m("lowfree_consumed_per_vma_bytes", "lowmem consumed per VMA",
               "B/VMA", deterministic=True),
            _m("create_per_vma_ns", "time to create a VMA", "ns")]
    return tuple(per)


def _mremap() -> tuple[Metric, ...]:
    return (_m("move_median_ns", "mremap move, median", "ns"),
            _m("move_per_page_ns", "mremap time per page", "ns/page"),
            _m("mremap_anon_copy_pages", "pages copied by mremap", "pages",
               deterministic=True),
            _m("anon_swapin_copy_pages", "pages copied at swap-in", "pages"),
            _m("memfree_consumed_kb", "memory consumed by the moves", "kB",
               deterministic=True))


def _entries() -> list[Entry]:
    entries = [
        Entry("vma", "count", "summary", _vma_count()),
        Entry("vma", "capacity", "summary", (
            _m("vmas_count", "VMAs created before lowmem ran out", "VMAs",
               HIGHER, deterministic=True),
            _m("high_free_kb", "HighFree left at the end", "kB", NEUTRAL,
               deterministic=True))),
        Entry("fork", "breadth", "summary", (
            _m("fork_median_ns", "fork() latency, median", "ns"),
            _m("fork_p90_ns", "fork() latency, 90th percentile", "ns"),
            _m("slab_total_per_child_bytes", "slab total per child", "B/child",
               deterministic=True))),
        Entry("fork", "depth", "generation", (
            _m("slab_total_delta_bytes", "slab total, generations alive", "B",
               deterministic=True),
            _m("slab_anon_vma_chain_delta_bytes", "anon_vma_chain slab", "B",
               deterministic=True),
            _m("slab_anon_vma_delta_bytes", "anon_vma slab", "B",
               deterministic=True),
            _m("slab_anonmm_delta_bytes", "anonmm slab", "B",
               deterministic=True))),
        Entry("fork", "rate", "summary", (
            _m("forks_per_s", "fork+exit rate", "forks/s", HIGHER),)),
        Entry("swap", "family", "summary", (
            _m("swapout_per_s", "swap-out throughput", "pages/s", HIGHER),
            _m("passes_ns", "time of the passes", "ns"),
            _m("anon_rmap_visit_per_swapout_count",
               "rmap visits per swapped page", "visits/page"),
            _m("anon_rmap_pte_per_swapout_count",
               "ptes examined per swapped page", "ptes/page"),
            _m("members_majflt_count", "major faults of the members",
               "faults"),
            _m("anon_swapin_copy_pages", "pages copied at swap-in", "pages"),
            _m("anon_rmap_orphan_pages", "orphan pages re-pointed",
               "pages", NEUTRAL))),
        Entry("fio", "write4k", "summary", (
            _m("write_bw_kb_per_s", "fio 4k write bandwidth", "kB/s",
               HIGHER),)),
    ]
    entries += [Entry("mremap", mode, "summary", _mremap())
                for mode in ("unshared", "shared", "swapped")]
    return entries


CATALOGUE: dict[tuple[str, str], Entry] = {
    (e.workload, e.mode): e for e in _entries()}

WORKLOADS = ("vma", "fork", "mremap", "swap", "fio")


def entry(workload: str, mode: str) -> Entry | None:
    return CATALOGUE.get((workload, mode))


def primary(workload: str, mode: str) -> tuple[Metric, ...]:
    """The metrics compared for (workload, mode); () if unknown."""
    e = entry(workload, mode)
    return e.metrics if e else ()


def primary_record(workload: str, mode: str) -> str:
    """The record kind compared for (workload, mode)."""
    e = entry(workload, mode)
    return e.record if e else "summary"


def modes(workload: str) -> list[str]:
    return [m for (w, m) in CATALOGUE if w == workload]


UNIT_SUFFIXES = (("_per_vma_bytes", "B/VMA"), ("_per_child_bytes", "B/child"),
                 ("_per_s", "/s"), ("_ns", "ns"), ("_bytes", "B"),
                 ("_kb", "kB"), ("_pages", "pages"), ("_count", ""))


def unit_of(name: str) -> str:
    """The unit a metric's name carries (README: units are in the names)."""
    for suffix, unit in UNIT_SUFFIXES:
        if name.endswith(suffix):
            return unit
    return ""


def is_deterministic(name: str) -> bool:
    """Whether a metric is an exact count rather than a measured time."""
    if name.startswith(("slab_", "page_tables_", "lowfree_", "memfree_")):
        return not name.endswith("_ns")
    return name in ("vmas_count", "mremap_anon_copy_pages", "high_free_kb",
                    "low_free_kb", "procs_count", "generation")


def lookup(name: str, workload: str = "", mode: str = "") -> Metric:
    """The catalogue's Metric for name, or one inferred from the name."""
    for m in primary(workload, mode):
        if m.name == name:
            return m
    for e in CATALOGUE.values():
        for m in e.metrics:
            if m.name == name:
                return m
    direction = HIGHER if name.endswith("_per_s") else LOWER
    return Metric(name, name.replace("_", " "), unit_of(name), direction,
                  is_deterministic(name))
