"""fork: a parent with V VMAs forks N children (breadth: latency per
fork, kernel memory per child), a chain of D generations each touching
pages then forking the next (depth: anon_vma_chain growth), the same
chain with every parent exiting once it forked (chain: the 2012-2015
anon_vma growth reproducer, up to 100000 generations: rmap slab alive
per live process, orphan pages re-pointed, fork latency), fork+exit
rounds (rate), and those rounds from a parent whose memory is THPs (thp:
fork copies one pmd per 2 MB on both stacks; with cow=1 each child
writes a page of every 2 MB, a huge COW that splits its pmd).
bench/rmb-fork.c.
"""

from pathlib import Path

from .. import figures as fg
from .. import testbed
from ..record import is_failed
from ..settings import on_zram
from ..testbed import HOST, ICOUNT, ICOUNT_RR
from .base import FORK_ORDERS, HIGHER, NEUTRAL, Experiment, Figure, Mode, \
    Workload, metric

ALL = testbed.arch_names()
# Where a child joins its bundle's list is fork's own work on anonmm,
# but the fork experiments' ratios are the same under either order
# (docs/measurements.md, "The bundle list order"): each experiment boots
# the other order (FORK_ORDERS) in 'compare --full' only


def plot_fork_breadth(records: list[dict], out_dir: Path) -> list[Path]:
    recs = fg.select(records, "fork-breadth", "fork")
    if not recs:
        return fg.skipped("fork-breadth",
                          "no records of experiment fork-breadth")
    plt = fg._pyplot()
    labels = fg.stack_labels(records)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 5))
    data = fg.series(recs, fg.param("N"), fg.metric("fork_median_ns", 1e-3),
                     skip=("N",))
    fg.draw_series(ax1, data, labels)
    fg.log_x_if_wide(ax1, data)
    fg.finish(ax1, "fork() latency vs children", "children (N)",
              "fork() latency, median (µs)")
    data = fg.series(recs, fg.param("N"),
                     fg.metric("slab_total_per_child_bytes", 1 / 1024),
                     skip=("N",))
    fg.draw_series(ax2, data, labels)
    fg.log_x_if_wide(ax2, data)
    ax2.set_ylim(bottom=0)
    fg.finish(ax2, "Kernel memory per child vs children", "children (N)",
              "slab total per child (KiB)")
    fig.tight_layout()
    return fg.save(fig, out_dir, "fork-breadth")


# (metric, scale, title, y label) of the fork-chain figure's panels
CHAIN_PANELS = (
    ("rmap_slab_per_process_bytes", 1.0,
     "rmap slab alive per live process",
     "anon_vma + anon_vma_chain + anonmm (bytes)"),
    ("fork_median_ns", 1e-3, "fork() latency, median since the last line",
     "µs"),
    ("anon_rmap_orphan_pages", 1.0, "orphan pages re-pointed (so far)",
     "pages"))


def chain_records(records: list[dict]) -> list[dict]:
    """The generation lines of every chain run, of the comparison's
    experiment and of 'harness.py run' sweeps alike."""
    return [r for r in records if r.get("workload") == "fork"
            and r.get("mode") == "chain" and not is_failed(r)
            and r.get("record") == "generation"]


def plot_fork_chain(records: list[dict], out_dir: Path) -> list[Path]:
    recs = chain_records(records)
    if not recs:
        return fg.skipped("fork-chain", "no fork chain records")
    plt = fg._pyplot()
    labels = fg.stack_labels(records)
    archs = fg.arches(recs)
    fig, axes = plt.subplots(len(archs), len(CHAIN_PANELS), squeeze=False,
                             figsize=(6 * len(CHAIN_PANELS), 4.6 * len(archs)))
    for arch, row in zip(archs, axes):
        mine = [r for r in recs if r.get("arch") == arch]
        for ax, (name, scale, title, ylabel) in zip(row, CHAIN_PANELS):
            data = fg.series(mine, fg.metric("generation"),
                             fg.metric(name, scale), skip=("arch",))
            fg.draw_series(ax, data, labels)
            ax.set_xscale("log")
            ax.set_ylim(bottom=0)
            fg.finish(ax, f"{title} ({arch})",
                      "generation (parents exited)", ylabel)
    fig.tight_layout()
    return fg.save(fig, out_dir, "fork-chain")


def plot_fork_rate(records: list[dict], out_dir: Path) -> list[Path]:
    """fork+exit rounds per second per arch, grouped by guest clock and
    vCPUs (each clock's own time: icount's is instructions, not the
    host's seconds)."""
    recs = fg.select(records, "fork-rate", "fork")
    if not recs:
        return fg.skipped("fork-rate", "no records of experiment fork-rate")
    plt = fg._pyplot()
    archs = fg.arches(recs)
    fig, axes = plt.subplots(1, len(archs), squeeze=False,
                             figsize=(6 * len(archs), 5))
    for arch, ax in zip(archs, axes[0]):
        cells = fg.cells_by([r for r in recs if r.get("arch") == arch],
                            fg.clock_vcpus)
        fg.draw_grouped(ax, cells, [fg.clock_vcpus_label(k) for k in cells],
                        fg.metric("forks_per_s"))
        fg.finish(ax, f"fork + child check + exit ({arch})",
                  "guest clock and vCPUs", "rounds per second")
    fg.stack_legend(fig, fg.stack_labels(records))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fg.save(fig, out_dir, "fork-rate")


def plot_fork_thp(records: list[dict], out_dir: Path) -> list[Path]:
    return fg.grouped_panels(
        records, "fork-thp", "fork", ("cow",),
        (("fork_median_ns", 1e-3, "fork() of 64 MB of THPs", "µs, median"),
         ("round_median_ns", 1e-3, "fork + child + exit (cow=1: a huge "
          "COW per 2 MB)", "µs, median")),
        out_dir, "fork-thp")


def chain_metrics() -> tuple:
    return (metric("rmap_slab_per_process_bytes",
                   "rmap slab alive per live process", "B/process",
                   exact=True),
            metric("rmap_slab_delta_objs_count", "rmap slab objects alive",
                   "objects", exact=True),
            metric("fork_median_ns", "fork() latency, median", "ns"),
            metric("anon_rmap_orphan_pages", "orphan pages re-pointed",
                   "pages", NEUTRAL, exact=True))


WORKLOAD = Workload(
    "fork", "rmb-fork",
    modes=(
        Mode("breadth", (
            metric("fork_median_ns", "fork() latency, median", "ns"),
            metric("fork_p90_ns", "fork() latency, 90th percentile", "ns"),
            metric("slab_total_per_child_bytes", "slab total per child",
                   "B/child", exact=True),
            # anonmm looks at the ptes of each private file vma at fork,
            # for anon pages in them: what that costs, forks alike
            metric("anon_pages_test_pte_count", "ptes looked at for anon "
                   "pages (anonmm: private file vmas at fork), all forks",
                   "ptes", NEUTRAL, exact=True)), main=("fork-breadth",),
             regime="fork"),
        Mode("depth", (
            metric("slab_total_delta_bytes", "slab total, generations alive",
                   "B", exact=True),
            metric("slab_anon_vma_chain_delta_bytes", "anon_vma_chain slab",
                   "B", exact=True),
            metric("slab_anon_vma_delta_bytes", "anon_vma slab", "B",
                   exact=True),
            metric("slab_anonmm_delta_bytes", "anonmm slab", "B",
                   exact=True)), record="generation", main=("fork-depth",),
             regime="fork"),
        Mode("chain", chain_metrics(), record="generation",
             main=("fork-chain",), regime="fork"),
        Mode("rate", (
            metric("forks_per_s", "fork+exit rate", "forks/s", HIGHER),),
            main=("fork-rate",), regime="fork"),
        Mode("thp", (
            metric("fork_median_ns", "fork() of THP-backed memory, median",
                   "ns"),
            metric("round_median_ns", "fork + child check (and huge COW) + "
                   "exit, median", "ns"),
            metric("forks_per_s", "rounds per second", "forks/s", HIGHER),
            metric("split_pmd_per_round_count", "pmds split per round (the "
                   "children's huge COWs)", "splits", NEUTRAL, exact=True),
            metric("region_thp_kb", "THP-backed memory after the fill "
                   "(AnonHugePages)", "kB", NEUTRAL, exact=True),
            metric("verify_mismatch_pages", "pages wrong in the children",
                   "pages", exact=True)),
             main=("fork-thp",), regime="fork", main_params=(("cow", 0),),
             needs=("thp",))),
    experiments=(
        # on zram, as fork-rate and fork-rate-smp: none swaps out, and
        # with no disk their icount boots repeat exactly
        on_zram(Experiment(
            "fork-breadth", "fork", "breadth", ALL,
            sweep={"N": [8, 32, 128]}, fixed={"V": 1000}, clocks=(ICOUNT,),
            full={"variants": FORK_ORDERS},
            text="one parent forks N children: latency, memory per "
                 "child")),
        Experiment("fork-depth", "fork", "depth", ALL,
                   fixed={"D": 16, "pages": 256},
                   full={"variants": FORK_ORDERS},
                   text="a chain of generations, each COWing and forking "
                        "the next"),
        # icount: its headline is exact, and its fork latency is a
        # CPU-bound path, which host-clock boots under TCG do not time
        # within +-3%
        Experiment("fork-chain", "fork", "chain", ("x86_64",),
                   fixed={"D": 1000, "pages": 256, "touch": 32},
                   mem_mb={"x86_64": [128]}, clocks=(ICOUNT,),
                   # 10,000 generations, ten times the default's
                   full={"fixed": {"D": 10000, "pages": 256, "touch": 32},
                         "variants": FORK_ORDERS},
                   text="a chain of generations, each parent exiting once "
                        "it forked: rmap slab per live process"),
        on_zram(Experiment(
            "fork-rate", "fork", "rate", ALL,
            fixed={"V": 1000, "N": 300}, clocks=(ICOUNT,), packs=True,
            # 'compare --full' on the host clock too: the report shows
            # how far the two clocks agree (host-clock boots run alone,
            # so only --full pays for them)
            full={"clocks": (ICOUNT, HOST), "variants": FORK_ORDERS},
            text="fork + child check + exit, rounds per second")),
        # on the icount-rr clock: its time sums both vCPUs' instructions
        # (the child's exit on one, the parent's next fork on the other),
        # and repeats; 'compare --full' also on the host clock, where
        # they run at once
        on_zram(Experiment(
            "fork-rate-smp", "fork", "rate", ALL,
            fixed={"V": 1000, "N": 300}, vcpus=(2,), packs=True,
            clocks=(ICOUNT_RR,),
            full={"clocks": (ICOUNT_RR, HOST), "variants": FORK_ORDERS},
            text="fork + child check + exit on 2 vCPUs: the child runs "
                 "and exits on the other CPU while the parent forks the "
                 "next")),
        # icount, on zram: fork and exit of THP-backed memory are CPU
        # work; not packed, since a packed boot's earlier points leave
        # memory too fragmented for whole THPs
        on_zram(Experiment(
            "fork-thp", "fork", "thp", ("x86_64",),
            sweep={"cow": [0, 1]}, fixed={"huge": 64, "N": 100},
            clocks=(ICOUNT,), needs=("thp",),
            text="fork + child check + exit from 64 MB of THPs, the child "
                 "reading them, or writing a page of every 2 MB (cow=1)"))),
    figures=(Figure("fork-breadth", ("fork-breadth",), plot_fork_breadth),
             Figure("fork-chain", ("fork-chain",), plot_fork_chain),
             Figure("fork-rate", ("fork-rate",), plot_fork_rate),
             Figure("fork-thp", ("fork-thp",), plot_fork_thp)),
    order=20)
