"""collapse: what collapsing base pages into THPs costs each scheme
(bench/rmb-collapse.c).

A bundle of W workers, each with 8 MB of its own base pages (written
with THP off) and `holes` 2 MB vmas it never touches.

- khugepaged: THP back on "always", khugepaged scanning every 10 ms at
  its default pages_to_scan collapses every worker's data: THPs collapsed
  per second of guest time.  Collapse itself takes one lock fewer on
  anonmm (no anon_vma write lock), but anonmm's khugepaged scans vmas
  never faulted (kernels/anonmm 0026: with no vma->anon_vma to say so,
  every private vma may have anon pages), each 2 MB hole spending 512
  pages of its scan budget; anon_vma passes over them.  Not inherent: a
  flag for "faulted once" would do.
- madvise: every worker collapses its data itself with MADV_COLLAPSE,
  2 MB a call: collapse_huge_page() alone, without the scan.

512 MB guests: a collapse allocates its THP on its pages' node alone,
and in 256 MB (128 MB a node) a node often had no free 2 MB block even
just after compaction; the failed allocations' sleeps then made the
rate vary tenfold between seeds (docs/measurements.md).

Needs THP (the distro profile).
"""

from pathlib import Path

from .. import figures as fg
from ..settings import on_zram
from ..testbed import ICOUNT
from .base import HIGHER, NEUTRAL, Experiment, Figure, Mode, Workload, metric

VERIFIED = metric("verify_mismatch_pages", "pages wrong after the collapse",
                  "pages", exact=True)

KHUGEPAGED = (
    metric("collapsed_per_s", "THPs khugepaged collapsed per second",
           "THPs/s", HIGHER),
    metric("full_scans_count", "khugepaged's full scans until done",
           "scans", NEUTRAL),
    metric("khugepaged_per_thp_ns", "khugepaged CPU per THP (clock ticks)",
           "ns"),
    metric("collapsed_count", "THPs collapsed (every process)", "THPs",
           NEUTRAL),
    VERIFIED,
)

MADVISE = (
    metric("collapsed_per_s", "THPs the workers' MADV_COLLAPSE made per "
           "second", "THPs/s", HIGHER),
    metric("madvise_collapsed_count", "2 MB ranges MADV_COLLAPSE collapsed",
           "THPs", HIGHER, exact=True),
    VERIFIED,
)

COMMON = {"W": 8, "mb": 8}


def plot_collapse(records: list[dict], out_dir: Path) -> list[Path]:
    return fg.grouped_panels(
        records, "collapse-khugepaged", "collapse", ("holes",),
        (("collapsed_per_s", 1.0, "THPs khugepaged collapsed per second "
          "(W=8, 8 MB each)", "THPs/s"),
         ("full_scans_count", 1.0, "khugepaged's full scans until done",
          "scans")),
        out_dir, "collapse")


EXPERIMENTS = (
    # icount on zram, as fork-thp: khugepaged's sleeps are timers on the
    # guest's clock and nothing waits on a disk, so a boot repeats
    on_zram(Experiment(
        "collapse-khugepaged", "collapse", "khugepaged", ("x86_64",),
        sweep={"holes": [0, 64]}, fixed=COMMON, mem_mb={"x86_64": [512]},
        clocks=(ICOUNT,), needs=("thp",),
        text="khugepaged collapsing a bundle of 8 workers' 8 MB of base "
             "pages each, with 0 or 64 never-faulted 2 MB vmas per "
             "worker")),
    on_zram(Experiment(
        "collapse-madvise", "collapse", "madvise", ("x86_64",),
        fixed=COMMON, mem_mb={"x86_64": [512]}, clocks=(ICOUNT,),
        needs=("thp",),
        text="each of 8 workers collapsing its 8 MB of base pages with "
             "MADV_COLLAPSE, 2 MB a call")),
)

WORKLOAD = Workload(
    "collapse", "rmb-collapse",
    modes=(Mode("khugepaged", KHUGEPAGED, main=("collapse-khugepaged",),
                regime="collapse", main_params=(("holes", 0),),
                needs=("thp",)),
           Mode("madvise", MADVISE, main=("collapse-madvise",),
                regime="collapse", needs=("thp",))),
    experiments=EXPERIMENTS,
    figures=(Figure("collapse", ("collapse-khugepaged",), plot_collapse),),
    order=84)
