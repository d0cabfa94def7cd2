"""bundle: a prefork server's family (a master and W workers) under
reclaim, its data mapped by one worker (private), by a worker and a
helper it forked after every worker was up (pair), or by every worker
(shared): the rmap walk time, candidates visited, ptes examined and
try-lock failures per page swapped out, swap-out throughput, reclaim CPU
time (bench/rmb-bundle.c).  Where the schemes differ: a pair page makes
anonmm search the bundle for the helper, anon_vma look at two vmas.

The default comparison runs on the icount clock, where the mean walk
is the instructions one rmap walk takes, and swaps to zram: with no host
I/O in the guest's time two boots of one point execute the same
instructions (docs/measurements.md).  The private bundle at W = 64 also
swaps to the virtio disk, as context: there each request completes at
an instruction the host decides.  'compare --full' adds the host clock,
where swap-out throughput is zram's on the host's CPU.
"""

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from .. import figures as fg
from .. import testbed
from ..record import is_failed
from ..settings import with_setting
from ..testbed import ICOUNT, ICOUNT_RR
from .base import (FORK_ORDERS, NEUTRAL, Crossover, Experiment, Figure,
                   Mode, Workload, metric)

PATTERNS = ("private", "pair", "shared")
# the default comparison: small enough for TCG, wide enough for a slope,
# on both arches (i386's 128 MB guest is all lowmem); larger sweeps
# through 'compare --full' or 'harness.py run --workload
# bundle --mode pair --param W=1,4,16,64,256,1024 --mem 512'
COMPARE_W = [8, 64]
COMPARE_MB = 16
COMPARE_MEM = {"x86_64": [128], "i386": [128]}
# 'compare --full': prefork widths up to 1,024 workers on both arches;
# shared stops at 1,000, since reclaim takes a page that 1,022 mms or
# more map for a DMA-pinned one
FULL_W = {"private": [8, 64, 256, 1024], "pair": [8, 64, 256, 1024],
          "shared": [8, 64, 256, 1000]}
FULL_MEM = {"x86_64": [512], "i386": [512]}
# anonmm's walk of a pair page goes round the bundle's list from the
# worker to its helper: the pair bundles run both fork orders, the 2004
# tail as the headline, after_parent (the helper next to its worker)
# beside it.  Private and shared pages are walked the same under either
# order (docs/measurements.md, "The bundle list order"): their other
# order runs in 'compare --full' only
ORDER_MATTERS = ("pair",)


def bundle_metrics() -> tuple:
    """The mean walk decides: on the icount clock it is the
    instructions one rmap walk of reclaim takes.  Swap-out
    throughput and CPU times are context: under TCG the first follows
    the host's I/O and load (host clock) or the timer jumps of an idle
    guest (icount), and CPU times are counted in 10 ms ticks."""
    return (
        metric("walk_mean_ns", "mean time of one rmap walk under reclaim",
               "ns/walk"),
        metric("walk_slept_per_walk_count", "share of rmap walks switched "
               "out (timed apart: not in the mean walk)", "walks/walk",
               NEUTRAL),
        metric("walk_slept_mean_ns", "mean time of a switched-out rmap "
               "walk (other tasks' time included)", "ns/walk", NEUTRAL),
        # the mean walk times the walks per data page reclaimed, which
        # follow reclaim's course too (pages swapped out before the
        # measured window count in the denominator, not their walks)
        metric("walk_per_reclaimed_ns",
               "rmap walk time per data page reclaimed", "ns/page"),
        metric("visited_per_reclaimed_count",
               "rmap candidates visited per data page reclaimed",
               "visits/page"),
        metric("anon_rmap_pte_per_reclaimed_count",
               "ptes examined per data page reclaimed", "ptes/page"),
        metric("data_swapout_per_s", "data pages swapped out per second",
               "pages/s", NEUTRAL),
        metric("reclaim_cpu_per_reclaimed_ns",
               "reclaim CPU (kswapd + the balloon's system time, in "
               "ticks) per data page reclaimed", "ns/page", NEUTRAL),
        metric("kswapd_cpu_ns", "kswapd CPU time (in ticks)", "ns",
               NEUTRAL),
        metric("elapsed_ns", "the workload's wall time", "ns", NEUTRAL),
        metric("anon_rmap_trylock_fail_per_reclaimed_count",
               "try-lock failures per data page reclaimed", "fails/page",
               NEUTRAL),
        metric("anon_rmap_trylock_fail_per_walk_count",
               "mmap_lock / anon_vma lock try-lock failures per rmap walk",
               "fails/walk", NEUTRAL),
        metric("anon_rmap_folio_trylock_fail_per_walk_count",
               "folio try-lock failures per rmap walk (anonmm only)",
               "fails/walk", NEUTRAL),
        metric("anon_rmap_contended_keep_per_reclaimed_count",
               "pages kept on the inactive list because a walk was "
               "contended, per data page reclaimed", "pages/page",
               NEUTRAL))


def on_disk(pattern: str) -> Experiment:
    """The bundle of pattern swapping to the virtio disk."""
    return Experiment(
        f"bundle-{pattern}", "bundle", pattern, testbed.arch_names(),
        sweep={"W": COMPARE_W}, fixed={"mb": COMPARE_MB},
        mem_mb=COMPARE_MEM, timeout_s=600.0, clocks=(ICOUNT,),
        variants=FORK_ORDERS if pattern in ORDER_MATTERS else (),
        # three boots, three seeds, tell the schemes apart; more do not
        # bring W=64's walk within +-3% (docs/measurements.md)
        max_reps=3,
        # --full: the host clock too ("Clocks compared" in the report)
        full={"sweep": {"W": FULL_W[pattern]}, "mem_mb": FULL_MEM,
              "clocks": (ICOUNT, testbed.HOST), "variants": FORK_ORDERS},
        text=f"a master and W workers under reclaim, data {pattern} "
             f"({TEXT[pattern]})")


def experiment(pattern: str) -> Experiment:
    """The bundle of pattern swapping to zram: the headline."""
    disk = on_disk(pattern)
    return with_setting(disk, "zram", name=disk.name, variants=disk.variants)


def disk_context() -> Experiment:
    """The private bundle at W = 64 on the disk, beside its zram point."""
    disk = on_disk("private")
    return replace(disk, name=f"{disk.name}-disk", sweep={"W": [64]},
                   variants=(), full={},
                   text=f"{disk.text}; swap on the virtio disk")


CONTEND = "bundle-contend"


def plot_contend(records: list[dict], out_dir: Path) -> list[Path]:
    recs = [r for r in fg.select(records, CONTEND, "bundle")
            if not is_failed(r)]
    if not recs:
        return fg.skipped("bundle-contend", f"no records of {CONTEND}")
    plt = fg._pyplot()
    fig, axes = plt.subplots(1, 3, squeeze=False, figsize=(18, 5))
    cells = fg.cells_by(recs, lambda r: (fg.param("contend")(r) or 0,))
    vcpus = ", ".join(sorted({str(r.get("vcpus") or 1) for r in recs}))
    labels = ["mmap_lock\ncontended" if k[0] else "quiet" for k in cells]
    (ax1, ax2, ax3) = axes[0]
    fg.draw_grouped(ax1, cells, labels,
                    fg.metric("anon_rmap_trylock_fail_per_walk_count"))
    fg.finish(ax1, f"try-lock failures per rmap walk ({vcpus} vCPUs, "
              "under swap)", "sibling threads", "failures per walk")
    fg.draw_grouped(ax2, cells, labels, fg.metric("data_swapout_per_s"))
    fg.finish(ax2, f"data swap-out throughput ({vcpus} vCPUs)",
              "sibling threads", "data pages swapped out per second")
    # what the failures cost reclaim: pages it put back unreclaimed
    fg.draw_grouped(ax3, cells, labels, fg.metric(
        "anon_rmap_contended_keep_per_reclaimed_count"))
    fg.finish(ax3, "pages kept because a walk was contended",
              "sibling threads", "kept pages per data page reclaimed")
    fg.stack_legend(fig, fg.stack_labels(records))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fg.save(fig, out_dir, "bundle-contend")


def contend_experiment() -> Experiment:
    """SMP, with and without a thread per worker taking its mmap_lock
    for write while reclaim runs: anonmm's walks try-lock every mm,
    anon_vma's take none.  On the icount-rr clock and zram a boot
    replays for one seed, and its seeds' interval decides beside the
    one-vCPU rows; a lock is contended there when its holder's share of
    instructions ends inside it.
    'compare --full' adds the host clock, where both vCPUs run at once."""
    return with_setting(Experiment(
        CONTEND, "bundle", "pair", ("x86_64",),
        sweep={"contend": [0, 1]}, fixed={"W": 8, "mb": COMPARE_MB},
        mem_mb=COMPARE_MEM, timeout_s=600.0, vcpus=(2,),
        # its walk varies so much from one seed to the next that six
        # boots leave its interval wide too (docs/measurements.md, "One
        # boot is one sample"): three show the direction and say how wide
        max_reps=3,
        clocks=(ICOUNT_RR,), full={"clocks": (ICOUNT_RR, testbed.HOST)},
        text="pair data under reclaim on 2 vCPUs, each worker's "
             "mmap_lock taken for write in a loop (contend=1) or not"),
        "zram", name=CONTEND, variants=FORK_ORDERS)


# The pair bundle at W = 64 with MGLRU off, the guest setting of the
# distro kernels that changes how reclaim finds a page's mappings (the
# distro guests run MGLRU: it finds young pages by page-table walks, the
# classic lists by rmap walks alone).  Not in a memory cgroup: the
# bundle's balloon makes its pressure by mlocking memory, which the
# cgroup's reclaim cannot take back, and the cgroup's OOM killer took
# the balloon on both stacks (docs/measurements.md); the swap family
# measures memcg reclaim.
SETTINGS = ("classic",)


def setting_experiments() -> tuple[Experiment, ...]:
    """The pair bundle at W = 64 with each of SETTINGS (on zram, as the
    headline), and the private one on the disk."""
    return tuple(with_setting(experiment("pair"), s,
                              name=f"bundle-pair-{s}", sweep={"W": [64]},
                              full={}) for s in SETTINGS) + (
        disk_context(),)


THP = "bundle-thp"


def thp_experiment() -> Experiment:
    """Private data in whole THPs (each worker's 4 MB aligned: 64 MB in 8
    or 32 shares) under reclaim, swapping to zram, where a THP goes out
    whole: one walk per 2 MB folio on both stacks, each a visit of the
    owner's bundle on anonmm.  The distro profile's THP alone."""
    return with_setting(Experiment(
        THP, "bundle", "private", ("x86_64",),
        sweep={"W": [8, 32]}, fixed={"mb": 64, "aligned": 1},
        mem_mb={"x86_64": [256]}, timeout_s=600.0, clocks=(ICOUNT,),
        max_reps=3, needs=("thp",),
        text="a master and W workers under reclaim, each worker's share "
             "of 64 MB in whole THPs (4 MB aligned)"),
        "zram", name=THP)


def plot_thp(records: list[dict], out_dir: Path) -> list[Path]:
    return fg.grouped_panels(
        records, THP, "bundle", ("W",),
        (("walk_per_reclaimed_ns", 1.0, "rmap walk time per data page "
          "reclaimed (private THPs)", "ns per page"),
         ("thp_swpout_count", 1.0, "THPs swapped out whole", "THPs")),
        out_dir, THP)


TEXT = {"private": "each page mapped by one worker",
        "pair": "each page mapped by a worker and its helper",
        "shared": "each page mapped by every worker"}


def bundle_records(records: list[dict]) -> list[dict]:
    """Every measured bundle summary, of the comparison's experiments
    and of 'harness.py run' sweeps alike."""
    return [r for r in records if r.get("workload") == "bundle"
            and r.get("experiment") not in (CONTEND, THP)
            and not is_failed(r)
            and r.get("record", "summary") == "summary"]


def pattern_series(recs: list[dict],
                   value: Callable[[dict], float | None]) -> dict:
    """(stack, 'pattern [what else varies]') -> points against W, as
    figures.series gives them."""
    out = {}
    for pattern in PATTERNS:
        mine = [r for r in recs if r.get("mode") == pattern]
        for (stack, label), pts in fg.series(mine, fg.param("W"), value,
                                             skip=("W", "arch")).items():
            out[(stack, " ".join(t for t in (pattern, label) if t))] = pts
    return out


def w_axis(ax, recs: list[dict]) -> None:
    """W on a log2 axis, ticked at the widths measured."""
    ws = sorted({w for w in map(fg.param("W"), recs) if w})
    ax.set_xscale("log", base=2)
    ax.set_xticks(ws, [str(w) for w in ws])
    ax.minorticks_off()


def plot_bundle(records: list[dict], out_dir: Path) -> list[Path]:
    recs = bundle_records(records)
    if not recs:
        return fg.skipped("bundle", "no bundle records")
    plt = fg._pyplot()
    archs = fg.arches(recs)
    labels = fg.stack_labels(records)
    fig, axes = plt.subplots(len(archs), 3, squeeze=False,
                             figsize=(19, 5 * len(archs)))
    for arch, (ax1, ax2, ax3) in zip(archs, axes):
        mine = [r for r in recs if r.get("arch") == arch]
        clock = ", ".join(sorted({str(r.get("clock") or testbed.HOST)
                                  for r in mine}))
        for ax, name, title, ylabel in (
                (ax1, "visited_per_reclaimed_count",
                 f"rmap candidates visited per data page reclaimed "
                 f"({arch})", "mms (anonmm) or vmas (anon_vma) per page"),
                (ax2, "walk_mean_ns",
                 f"mean time of one rmap walk ({clock} clock, {arch})",
                 "ns per walk"),
                (ax3, "data_swapout_per_s",
                 f"swap-out throughput, context ({clock} clock, {arch})",
                 "data pages swapped out per second")):
            fg.draw_series(ax, pattern_series(mine, fg.metric(name)), labels)
            w_axis(ax, mine)
            if name == "data_swapout_per_s":
                ax.set_ylim(bottom=0)
            else:
                ax.set_yscale("log")
            fg.finish(ax, title, "workers (W)", ylabel)
    fig.tight_layout()
    return fg.save(fig, out_dir, "bundle")


WORKLOAD = Workload(
    "bundle", "rmb-bundle",
    modes=tuple(Mode(p, bundle_metrics(), main=(f"bundle-{p}",),
                     regime="reclaim")
                for p in PATTERNS),
    experiments=tuple(experiment(p) for p in PATTERNS) +
    (contend_experiment(), thp_experiment()) + setting_experiments(),
    crossovers=tuple(Crossover(f"bundle-{p}", "W", "walk_mean_ns",
                               5.0, f"the width W at which anonmm's rmap "
                               f"walk of {p} data takes more than 5% "
                               f"longer than anon_vma's") for p in PATTERNS),
    figures=(Figure("bundle", tuple(f"bundle-{p}" for p in PATTERNS),
                    plot_bundle),
             Figure("bundle-contend", (CONTEND,), plot_contend),
             Figure(THP, (THP,), plot_thp)),
    order=45)
