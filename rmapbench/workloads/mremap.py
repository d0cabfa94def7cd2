"""mremap: move an R MB anon region back and forth, unshared, shared
with K forked children, and partly swapped out: time per move, pages
copied, memory consumed.  bench/rmb-mremap.c.
"""

from pathlib import Path

from .. import figures as fg
from .. import testbed
from ..settings import on_zram
from ..testbed import HOST, ICOUNT
from .base import (NEUTRAL, Experiment, Figure, Metric, Mode, SizeSearch,
                   Workload, metric)

ALL = testbed.arch_names()


def move_metrics() -> tuple[Metric, ...]:
    return (metric("move_median_ns", "mremap move, median", "ns"),
            metric("move_per_page_ns", "mremap time per page", "ns/page"),
            metric("mremap_anon_copy_pages", "pages copied by mremap",
                   "pages", exact=True),
            metric("anon_swapin_copy_pages", "pages copied at swap-in",
                   "pages"),
            metric("memfree_consumed_kb", "memory consumed by the moves",
                   "kB", exact=True),
            metric("thp_split_pmd_count", "pmds split by the moves",
                   "splits", NEUTRAL, exact=True),
            metric("region_thp_kb", "THP-backed memory once filled "
                   "(AnonHugePages)", "kB", NEUTRAL, exact=True),
            metric("ptemapped_count", "THPs made PTE-mapped before the "
                   "moves (ptemap=1: pmds split)", "THPs", NEUTRAL,
                   exact=True))


MREMAP_MODES = ("unshared", "shared", "swapped")

# the memory-size searches' family: anonmm copies every page of it
# that a child moves (16 x 16 MB), anon_vma none
MOVES = {"K": 16, "R_mb": 16, "child_moves": 1}
MOVES_TEXT = ("16 children share a 16 MB region, each moves its own mapping "
              "once")


def mremap_category(rec: dict, extra: list[str]) -> tuple[tuple, str]:
    """(sort key, label) of a record: its mode and sharing, arch apart."""
    mode = str(rec.get("mode"))
    k, pct = fg.param("K")(rec), fg.param("swap_pct")(rec)
    label = {"shared": f"shared\nK={k}",
             "swapped": f"swapped\n{pct}%"}.get(mode, mode)
    if extra:
        label += "\n" + fg.dims_label(rec, extra)
    order = MREMAP_MODES.index(mode) if mode in MREMAP_MODES else 9
    return (order, k or 0, pct or 0, fg.dims_label(rec, extra)), label


THP = "mremap-thp"


def plot_mremap_thp(records: list[dict], out_dir: Path) -> list[Path]:
    return fg.grouped_panels(
        records, THP, "mremap", ("aligned", "ptemap"),
        (("move_median_ns", 1e-3, "moving 32 MB of THPs (ptemap=1: "
          "PTE-mapped)", "µs per move, median"),
         ("thp_split_pmd_count", 1.0, "pmds split by the moves",
          "splits")),
        out_dir, THP)


def plot_mremap(records: list[dict], out_dir: Path) -> list[Path]:
    recs = [r for r in fg.select(records, "mremap", "mremap")
            if r.get("experiment") != THP]      # its own figure
    if not recs:
        return fg.skipped("mremap", "no records of experiment mremap")
    plt = fg._pyplot()
    archs = fg.arches(recs)
    extra = fg.varying(recs, skip=("arch", "K", "swap_pct"))
    fig, axes = plt.subplots(len(archs), 2, squeeze=False,
                             figsize=(12, 4.5 * len(archs) + 0.6))
    for arch, (ax1, ax2) in zip(archs, axes):
        cells: dict[tuple, dict[str, list[dict]]] = {}
        names = {}
        for rec in (r for r in recs if r.get("arch") == arch):
            key, label = mremap_category(rec, extra)
            names[key] = label
            cells.setdefault(key, {}).setdefault(rec.get("stack", ""),
                                                 []).append(rec)
        cells = dict(sorted(cells.items()))
        labels = [names[k] for k in cells]
        fg.draw_grouped(ax1, cells, labels, fg.metric("move_median_ns", 1e-3))
        fg.finish(ax1, f"mremap move time, median ({arch})", "sharing",
                  "time per move (µs)")
        fg.draw_grouped(ax2, cells, labels,
                        fg.metric("mremap_anon_copy_pages"))
        fg.finish(ax2, f"pages copied by the moves ({arch})", "sharing",
                  "anon pages copied (pages)")
    fg.stack_legend(fig, fg.stack_labels(records))
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fg.save(fig, out_dir, "mremap")


WORKLOAD = Workload(
    "mremap", "rmb-mremap",
    modes=tuple(Mode(m, move_metrics(), main=(f"mremap-{m}",),
                     regime="mremap")
                for m in MREMAP_MODES),
    experiments=(
        # --full adds the host clock: anon_vma moves page tables whole,
        # anonmm also writes each page's index, and instruction counts
        # and an emulated memory system weigh that write differently
        # (the report shows both)
        # all three on zram: with no disk in the guest their icount
        # boots repeat exactly (a disk's completions land where the host
        # says), and mremap-swapped's data compresses
        on_zram(Experiment(
            "mremap-unshared", "mremap", "unshared", ALL,
            fixed={"R_mb": 32, "moves": 10}, clocks=(ICOUNT,), packs=True,
            # the host clock's cross-check of the icount figures is
            # fork-rate's in the default comparison
            full={"clocks": (ICOUNT, HOST)},
            text="moving an anon region mapped once")),
        on_zram(Experiment(
            "mremap-shared", "mremap", "shared", ALL,
            sweep={"K": [1, 4, 16]}, fixed={"R_mb": 32, "moves": 10},
            clocks=(ICOUNT,), packs=True,
            text="moving an anon region shared with K forked children")),
        on_zram(Experiment(
            "mremap-swapped", "mremap", "swapped", ALL,
            fixed={"R_mb": 32, "moves": 10},
            mem_mb={"i386": [256], "x86_64": [256]}, clocks=(ICOUNT,),
            text="moving an anon region partly swapped out")),
        # THP-backed: the pmds move whole where both ends are aligned
        # (anonmm writes one index per 2 MB), every pmd is split where
        # they are not; PTE-mapped THPs (ptemap=1) move pte by pte on
        # both, anonmm re-indexing each exclusive folio once.  Not
        # packed: a packed boot's earlier points leave memory too
        # fragmented for whole THPs (region_thp_kb shows it)
        on_zram(Experiment(
            THP, "mremap", "unshared", ("x86_64",),
            sweep={"aligned": [1, 0], "ptemap": [0, 1]},
            fixed={"R_mb": 32, "moves": 10}, clocks=(ICOUNT,),
            needs=("thp",),
            text="moving 32 MB of THPs: to an aligned address or one page "
                 "off, PMD-mapped or PTE-mapped"))),
    # The price of anonmm's moves in memory: it copies every page
    # another mm maps when it moves it, so the family needs a larger
    # guest on anonmm.  A probe short of memory thrashes (reclaim cannot
    # unmap the shared pages while the movers hold their mmap_lock)
    # until the OOM killer ends it minutes later, so at 30 s a probe
    # counts as falling short.  The icount clock makes the answers
    # repeat (on the host clock the movers race reclaim near the
    # threshold).  The searches start at 80 MB: a 64 MB guest sits at
    # the program's own memory check (2 x R_mb + 16 MB of MemAvailable).
    # How small a guest the family completes in at all is --full's:
    # there a probe may thrash for minutes.  Figures and commands:
    # docs/measurements.md.
    searches=(SizeSearch(
        Experiment("size-mremap-moves", "mremap", "shared", ALL,
                   fixed=MOVES, timeout_s=30.0, clocks=(ICOUNT,)),
        "no-swap", 80, 512, 16,
        f"{MOVES_TEXT} (icount clock, so guests without ACPI; a probe "
        "not done in 30 s falls short)"),
        SizeSearch(
        Experiment("size-mremap-completes", "mremap", "shared", ALL,
                   fixed=MOVES, timeout_s=600.0, clocks=(ICOUNT,)),
        "completes", 80, 512, 16,
        f"{MOVES_TEXT} (icount clock; a probe not done in 10 minutes "
        "falls short)", full_only=True)),
    figures=(Figure("mremap", ("mremap", "mremap-unshared", "mremap-shared",
                               "mremap-swapped"), plot_mremap),
             Figure(THP, (THP,), plot_mremap_thp)),
    order=30)
