"""ksm: what KSM costs each scheme (bench/rmb-ksm.c).

ksmd merges pages of equal contents into one write-protected KSM page,
whose rmap items each record one mapping: anon_vma finds the mms that
map it through each item's anon_vma, anonmm through each item's bundle
(kernels/anonmm 0037).  One mode, merge: a bundle of W workers and none or
four unrelated processes (bundles of their own) whose 256 pages repeat 16
patterns, madvised MERGEABLE, merged by ksmd (every page each pass) and
then reclaimed through their memory cgroup's memory.reclaim.

- pattern=cow: every worker wrote its own copy of the parent's pages:
  each page is mapped once, and both schemes make the first of a pair a
  KSM page in place.
- pattern=shared: the workers map the parent's pages as fork left them.
  anonmm does not make a page mapped twice a KSM page in place (0035:
  merge_shared_skip counts the refusals) and tries the other page of
  the pair: a peer's, where there is one; without peers (procs=0) it
  merges none of the bundle's pages, where anon_vma merges them all.

Measured, the headline first: the mean walk of a KSM page in the
reclaim (ksm_walk_mean_ns), the pages ksmd saved and the mappings it
merged, its refusals, the mappings merged per second of guest time and
ksmd's CPU per mapping (ksmd's clock ticks: coarse), and the candidates
each walk of the reclaim visited.  Needs KSM and the memory
controller (the distro profile).
"""

from pathlib import Path

from .. import figures as fg
from ..settings import on_zram
from ..testbed import ICOUNT
from .base import HIGHER, NEUTRAL, Experiment, Figure, Mode, Workload, metric

# The headline is the rmap's own cost, a KSM page's walk; what ksmd
# achieved follows (pages saved: exact; anonmm's refusals show there)
MERGE = (
    metric("ksm_walk_mean_ns", "KSM page walk in the reclaim, mean", "ns"),
    metric("saved_pages", "pages saved (pages_sharing)", "pages", HIGHER,
           exact=True),
    metric("merged_pages", "mappings merged (KSM pages and those sharing "
           "them)", "pages", HIGHER, exact=True),
    metric("merge_shared_skip_count", "in-place merges refused: the page "
           "was mapped twice", "merges", NEUTRAL, exact=True),
    metric("merged_per_s", "mappings ksmd merged per second (10 ms polls)",
           "pages/s", HIGHER),
    metric("ksmd_per_merged_ns", "ksmd CPU per mapping merged (clock "
           "ticks)", "ns"),
    metric("full_scans_count", "ksmd's full scans until merging stopped",
           "scans", NEUTRAL),
    metric("visits_per_walk_count", "rmap candidates visited per walk in "
           "the reclaim", "visits/walk"),
    metric("reclaim_ksm_walk_count", "KSM page walks in the reclaim",
           "walks", NEUTRAL),
    metric("reclaim_pswpout_pages", "pages the reclaim swapped out",
           "pages", NEUTRAL),
    metric("verify_mismatch_pages", "pages wrong after the run", "pages",
           exact=True),
)


def plot_ksm(records: list[dict], out_dir: Path) -> list[Path]:
    return fg.grouped_panels(
        records, "ksm-merge", "ksm", ("workers", "pattern", "procs"),
        (("ksm_walk_mean_ns", 1e-3, "KSM page walk in the reclaim",
          "µs per walk, mean"),
         ("saved_pages", 1.0, "pages ksmd saved (pages_sharing)",
          "pages")),
        out_dir, "ksm-merge")


EXPERIMENTS = (
    # icount on zram: ksmd's passes and the reclaim are CPU work there,
    # and a boot without a disk repeats
    on_zram(Experiment(
        "ksm-merge", "ksm", "merge", ("x86_64",),
        sweep={"workers": [8, 64], "pattern": ["cow", "shared"],
               "procs": [0, 4]},
        fixed={"pages": 256, "patterns": 16, "reclaim": 1},
        mem_mb={"x86_64": [512]}, clocks=(ICOUNT,), timeout_s=900.0,
        full={"sweep": {"workers": [8, 64, 256],
                        "pattern": ["cow", "shared"], "procs": [0, 4]}},
        text="ksmd merging a bundle of W and 0 or 4 unrelated processes, "
             "256 pages each in 16 patterns (workers' own copies, or "
             "fork's shared pages), then memory.reclaim of their "
             "cgroup")),
)

WORKLOAD = Workload(
    "ksm", "rmb-ksm",
    modes=(Mode("merge", MERGE, main=("ksm-merge",), regime="ksm",
                main_params=(("workers", 64), ("pattern", "cow"),
                             ("procs", 4)),
                needs=("ksm", "memcg")),),
    experiments=EXPERIMENTS,
    figures=(Figure("ksm-merge", ("ksm-merge",), plot_ksm),),
    order=85)
