"""fastpath: the paths every process takes, with no memory pressure, as
the 2004 comparison measured them (Martin Bligh's kernbench and SDET):
page faults (will-it-scale's page_fault1), brk grow and shrink (brk2)
and SDET-like busybox shell-script users, at 1 and 2 tasks; wall-clock
throughput (bench/rmb-fastpath.c).  Both schemes take these paths; a
difference here is the cost of the scheme's own bookkeeping.
"""

from pathlib import Path

from .. import figures as fg
from .. import registry
from ..registry import ICOUNT
from .base import HIGHER, Experiment, Figure, Metric, Mode, Workload, metric

ALL = registry.arch_names()
TASKS = [1, 2]
# what each mode calls its throughput, and its loop sizes in the
# default comparison (a few seconds of a TCG guest each)
RATES = {"fault": ("faults_per_s", "page faults per second", "faults/s"),
         "brk": ("brk_ops_per_s", "brk grow+shrink per second", "ops/s"),
         "sdet": ("scripts_per_s", "shell scripts per second", "scripts/s")}
FIXED = {"fault": {"L": 8, "R_mb": 16}, "brk": {"L": 20000},
         "sdet": {"L": 20}}
TEXT = {"fault": "page_fault1: map 16 MB, write each page, unmap",
        "brk": "brk2: grow the heap a page, write it, shrink it",
        "sdet": "SDET-like users running busybox shell scripts"}


def rate_metrics(mode: str) -> tuple[Metric, ...]:
    name, label, unit = RATES[mode]
    return (metric(name, label, unit, HIGHER),
            metric("elapsed_ns", "wall time of the tasks", "ns"))


def experiment(mode: str) -> Experiment:
    return Experiment(f"fastpath-{mode}", "fastpath", mode, ALL,
                      sweep={"T": TASKS}, fixed=FIXED[mode],
                      clocks=(ICOUNT,),
                      text=f"{TEXT[mode]}, T tasks at once")


def plot_fastpath(records: list[dict], out_dir: Path) -> list[Path]:
    recs = [r for r in records if r.get("workload") == "fastpath"
            and not r.get("failed")]
    if not recs:
        return fg.skipped("fastpath", "no fastpath records")
    plt = fg._pyplot()
    archs = fg.arches(recs)
    modes = [m for m in RATES if any(r.get("mode") == m for r in recs)]
    fig, axes = plt.subplots(len(archs), len(modes), squeeze=False,
                             figsize=(4.5 * len(modes), 4 * len(archs) + 0.6))
    for arch, row in zip(archs, axes):
        for mode, ax in zip(modes, row):
            mine = [r for r in recs if r.get("arch") == arch
                    and r.get("mode") == mode]
            cells: dict[tuple, dict[str, list[dict]]] = {}
            for rec in mine:
                cells.setdefault((fg.param("T")(rec) or 0,), {}).setdefault(
                    rec.get("stack", ""), []).append(rec)
            cells = dict(sorted(cells.items()))
            name, label, unit = RATES[mode]
            fg.draw_grouped(ax, cells, [f"T={k[0]}" for k in cells],
                            fg.metric(name))
            fg.finish(ax, f"{label} ({arch}, no swap)", "tasks", unit)
    fg.stack_legend(fig, fg.stack_labels(records))
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fg.save(fig, out_dir, "fastpath")


WORKLOAD = Workload(
    "fastpath", "rmb-fastpath",
    modes=tuple(Mode(m, rate_metrics(m), main=(f"fastpath-{m}",),
                     regime="fastpath") for m in RATES),
    experiments=tuple(experiment(m) for m in RATES),
    figures=(Figure("fastpath", tuple(f"fastpath-{m}" for m in RATES),
                    plot_fastpath),),
    order=50)
