"""migrate: what page migration costs each scheme (bench/rmb-migrate.c).

Migration must find every pte of a page twice: to make each a migration
entry, and to point each at the new page.  anon_vma walks the page's
anon_vma tree; anonmm walks the bundle, try-locking each mm, and keeps
the lock of each mm where it made an entry until the restore
(kernels/anonmm 0017).  Three modes:

- move: move_pages(2) of the parent's pages to the other NUMA node and
  back, timed per call; pattern=shared (every worker maps them: both
  walks visit W + 1 mappings) or cow (every worker wrote its own copy:
  anon_vma still visits every worker's vma, anonmm finds the parent at
  once).
- compact: whole-memory compaction rounds.  With churn (the correctness
  suite's test) the bundle mprotects, mremaps, pages out, exits and
  forks meanwhile, and the run shows the migrations that succeeded and
  failed (anonmm fails a page whose mapping mm holds or awaits its
  mmap_lock for write); without (the comparison's), a steady bundle
  whose shared pages compaction migrates: pages per second and walk
  visits per page.
- balance: NUMA balancing moving each worker's own copies to the node
  its worker runs on (hinting faults): the time until 90% moved, hinting
  faults and walk visits per page migrated.

All need the distro profile's kernels (Mode.needs): 'compare' runs them
on x86_64 distro only, and 'run --workload migrate' needs --profile
distro.
"""

from pathlib import Path

from .. import figures as fg
from .. import testbed
from ..settings import on_zram
from ..testbed import ICOUNT, ICOUNT_RR
from .base import (HIGHER, NEUTRAL, Experiment, Figure, Mode, Workload,
                   metric)

WALK = (
    metric("anon_rmap_visit_count", "mms (anonmm) or vmas (anon_vma) "
           "visited", "visits", NEUTRAL, exact=True),
    metric("anon_rmap_trylock_fail_count", "failed rmap try-locks",
           "try-locks", NEUTRAL, exact=True),
    metric("pgmigrate_fail_pages", "migrations failed", "pages"),
)

MOVE = (
    metric("move_per_page_ns", "move_pages() per page (median call)",
           "ns", timed=True),
    metric("visited_per_moved_count", "rmap candidates visited per page "
           "moved", "visits/page"),
    metric("moved_pages", "pages moved", "pages", HIGHER, exact=True),
    *WALK,
)

COMPACT = (
    metric("migrated_per_s", "pages compaction migrated per second",
           "pages/s", HIGHER),
    metric("visited_per_migrated_count", "rmap candidates visited per "
           "page migrated", "visits/page"),
    metric("pgmigrate_success_pages", "pages migrated by compaction",
           "pages", NEUTRAL),
    *WALK,
    metric("verify_mismatch_pages", "pages wrong after the run", "pages",
           exact=True),
)

BALANCE = (
    metric("converge_ns", "time until NUMA balancing moved 90% of the "
           "copies", "ns", timed=True),
    metric("visited_per_migrated_count", "rmap candidates visited per "
           "page migrated", "visits/page"),
    metric("hint_faults_per_migrated_count", "NUMA hinting faults per "
           "page migrated", "faults/page"),
    metric("numa_pages_migrated_pages", "pages NUMA balancing migrated",
           "pages", NEUTRAL),
    *WALK,
)

# move_pages(2) of pages a bundle of W maps (shared) or the parent alone
# maps after W workers copied them (cow); 128 pages, so that 1,024 cow
# workers' copies fit a 1 GB guest
MOVE_W = [8, 64, 256]
FULL_MOVE_W = [8, 64, 256, 1024]
PATTERNS = ["shared", "cow"]

EXPERIMENTS = (
    # both icount experiments on zram: with no disk their boots repeat
    # exactly (after a disk's partition read two icount boots part, and
    # compaction's course with them)
    on_zram(Experiment(
        "migrate-move", "migrate", "move", ("x86_64",),
        sweep={"workers": MOVE_W, "pattern": PATTERNS},
        fixed={"pages": 128, "rounds": 10},
        mem_mb={"x86_64": [512]}, clocks=(ICOUNT,), packs=True,
        full={"sweep": {"workers": FULL_MOVE_W, "pattern": PATTERNS},
              "mem_mb": {"x86_64": [1024]}},
        text="move_pages(2) of 128 pages between the two nodes, mapped by "
             "a bundle of W (shared) or by the parent alone after W "
             "workers copied them (cow)")),
    # one width: at W = 64 whole-memory compaction of the 256 MB guest
    # migrated none of the bundle's pages on either stack (its scanners
    # met before reaching them: docs/measurements.md), so nothing was
    # compared there
    on_zram(Experiment(
        "migrate-compact", "migrate", "compact", ("x86_64",),
        sweep={"workers": [8]},
        fixed={"pages": 1024, "rounds": 4, "churn": 0, "pageout": 0},
        mem_mb={"x86_64": [256]}, clocks=(ICOUNT,), max_reps=3,
        text="whole-memory compaction of a fragmented guest whose 1,024 "
             "scattered pages a steady bundle of 8 maps")),
    # NUMA balancing needs a CPU on each node: two vCPUs, on the
    # icount-rr clock and zram, where its boots repeat exactly ('compare
    # --full' adds the host clock).  Its scan delay and shortest period
    # at 100 ms, not 1000: the workers share node 1's CPU, each waits
    # for a second of its own run time before its first scan, and at the
    # defaults a boot of 64 spent 36 s of 38 waiting (docs/measurements.md)
    on_zram(Experiment(
        "migrate-balance", "migrate", "balance", ("x86_64",),
        sweep={"workers": [8, 64]},
        fixed={"pages": 256, "seconds": 120, "scan_ms": 100},
        mem_mb={"x86_64": [512]}, clocks=(ICOUNT_RR,), vcpus=(2,),
        full={"clocks": (ICOUNT_RR, testbed.HOST)},
        text="NUMA balancing moving W workers' own copies of 256 pages "
             "from node 0 to node 1, where they run (scans every 100 ms "
             "of a task's run time)")),
)


def plot_move(records: list[dict], out_dir: Path) -> list[Path]:
    """move_pages(2) per page and walk visits per page moved against
    the bundle's width, a line per stack and pattern."""
    recs = fg.select(records, "migrate-move", "migrate")
    if not recs:
        return fg.skipped("migrate-move", "no migrate-move records")
    plt = fg._pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5))
    labels = fg.stack_labels(records)
    workers = sorted({w for w in map(fg.param("workers"), recs) if w})
    for ax, name, title, ylabel in (
            (ax1, "move_per_page_ns", "move_pages(2) per page (median "
             "call)", "ns per page"),
            (ax2, "visited_per_moved_count", "rmap candidates visited per "
             "page moved", "visits per page")):
        fg.draw_series(ax, fg.series(recs, fg.param("workers"),
                                     fg.metric(name), skip=("workers",)),
                       labels)
        ax.set_xscale("log", base=2)
        ax.set_xticks(workers, [str(w) for w in workers])
        ax.minorticks_off()
        ax.set_yscale("log")
        fg.finish(ax, title, "workers mapping the pages (W)", ylabel)
    fig.tight_layout()
    return fg.save(fig, out_dir, "migrate-move")


WORKLOAD = Workload(
    "migrate", "rmb-migrate",
    modes=(Mode("compact", COMPACT, main=("migrate-compact",),
                regime="migration", main_params=(("workers", 8),),
                needs=("migration",)),
           Mode("move", MOVE, main=("migrate-move",), regime="migration",
                main_params=(("workers", 64), ("pattern", "shared")),
                needs=("numa",)),
           Mode("balance", BALANCE, main=("migrate-balance",),
                regime="migration", main_params=(("workers", 64),),
                needs=("numa",)),
           # the correctness suite's: compact with memory hot-remove
           Mode("offline", COMPACT, needs=("migration", "hotremove"))),
    experiments=EXPERIMENTS,
    figures=(Figure("migrate-move", ("migrate-move",), plot_move),),
    order=80)
