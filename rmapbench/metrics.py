"""The declared metrics: what the tables and verdicts compare, read from
the workload modules (each Mode lists its metrics, headline first, and
the record kind they come from).

A metric no mode lists (a custom run's extra fields) is described from
its name: the unit is in the name (README: units are in the names),
per-second rates are better higher, and byte/object/page counts of
slabs, page tables and free memory are exact.
"""

from . import workloads
from .workloads.base import HIGHER, LOWER, NEUTRAL, Metric, Mode, metric

__all__ = ["HIGHER", "LOWER", "NEUTRAL", "Metric", "Mode", "entry",
           "primary", "primary_record", "modes", "lookup", "unit_of",
           "is_deterministic", "declared_modes"]


def declared_modes() -> list[tuple[str, Mode]]:
    """(workload, mode) of every workload, in the workloads' order."""
    return [(w.name, m) for w in workloads.WORKLOADS.values()
            for m in w.modes]


def entry(workload: str, mode: str) -> Mode | None:
    return workloads.mode(workload, mode)


def primary(workload: str, mode: str) -> tuple[Metric, ...]:
    """The metrics compared for (workload, mode); () if unknown."""
    m = entry(workload, mode)
    return m.metrics if m else ()


def primary_record(workload: str, mode: str) -> str:
    """The record kind compared for (workload, mode)."""
    m = entry(workload, mode)
    return m.record if m else "summary"


def modes(workload: str) -> list[str]:
    w = workloads.WORKLOADS.get(workload)
    return list(w.mode_names()) if w else []


UNIT_SUFFIXES = (("_per_vma_bytes", "B/VMA"), ("_per_child_bytes", "B/child"),
                 ("_per_s", "/s"), ("_ns", "ns"), ("_bytes", "B"),
                 ("_kb", "kB"), ("_pages", "pages"), ("_count", ""))


def unit_of(name: str) -> str:
    """The unit a metric's name carries."""
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
    """The Metric a mode declares as name, or one inferred from the
    name."""
    for m in primary(workload, mode):
        if m.name == name:
            return m
    for _, md in declared_modes():
        for m in md.metrics:
            if m.name == name:
                return m
    direction = HIGHER if name.endswith("_per_s") else LOWER
    return metric(name, name.replace("_", " "), unit_of(name), direction,
                  is_deterministic(name))
