"""fork: a parent with V VMAs forks N children (breadth: latency per
fork, kernel memory per child), a chain of D generations each touching
pages then forking the next (depth: anon_vma_chain growth), fork+exit
rounds (rate).  bench/rmb-fork.c.
"""

from pathlib import Path

from .. import figures as fg
from .. import registry
from ..registry import HOST, ICOUNT
from .base import HIGHER, Experiment, Figure, Mode, Workload, metric

ALL = registry.arch_names()


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


WORKLOAD = Workload(
    "fork", "rmb-fork",
    modes=(
        Mode("breadth", (
            metric("fork_median_ns", "fork() latency, median", "ns"),
            metric("fork_p90_ns", "fork() latency, 90th percentile", "ns"),
            metric("slab_total_per_child_bytes", "slab total per child",
                   "B/child", exact=True)), main=("fork-breadth",)),
        Mode("depth", (
            metric("slab_total_delta_bytes", "slab total, generations alive",
                   "B", exact=True),
            metric("slab_anon_vma_chain_delta_bytes", "anon_vma_chain slab",
                   "B", exact=True),
            metric("slab_anon_vma_delta_bytes", "anon_vma slab", "B",
                   exact=True),
            metric("slab_anonmm_delta_bytes", "anonmm slab", "B",
                   exact=True)), record="generation", main=("fork-depth",)),
        Mode("rate", (
            metric("forks_per_s", "fork+exit rate", "forks/s", HIGHER),),
            main=("fork-rate",))),
    experiments=(
        Experiment("fork-breadth", "fork", "breadth", ALL,
                   sweep={"N": [8, 32, 128]}, fixed={"V": 1000},
                   clocks=(ICOUNT,),
                   text="one parent forks N children: latency, memory per "
                        "child"),
        Experiment("fork-depth", "fork", "depth", ALL,
                   fixed={"D": 16, "pages": 256},
                   text="a chain of generations, each COWing and forking "
                        "the next"),
        Experiment("fork-rate", "fork", "rate", ALL,
                   fixed={"V": 1000, "N": 300},
                   # the host clock too: the report shows how far the
                   # two clocks agree
                   clocks=(ICOUNT, HOST),
                   text="fork + child check + exit, rounds per second")),
    figures=(Figure("fork-breadth", ("fork-breadth",), plot_fork_breadth),),
    order=20)
