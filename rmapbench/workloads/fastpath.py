"""fastpath: the paths every process takes, with no memory pressure, as
the 2004 comparison measured them (Martin Bligh's kernbench and SDET):
page faults (will-it-scale's page_fault1), brk grow and shrink (brk2)
and SDET-like busybox shell-script users, at 1 and 2 tasks; wall-clock
throughput (bench/rmb-fastpath.c).  Both schemes take these paths; a
difference here is the cost of the scheme's own bookkeeping.
"""

from pathlib import Path

from .. import figures as fg
from .. import testbed
from ..record import ConfigKey, Grouped, group, metric_values
from ..settings import on_zram
from ..testbed import BASE, HOST, ICOUNT, ICOUNT_RR, NEW
from ..stats import ratio_of_means, summarize
from ..tables import fmt, ratio_cell, table
from .base import HIGHER, Experiment, Figure, Metric, Mode, Workload, metric

ALL = testbed.arch_names()
# tasks at once on one vCPU: the default comparison runs one (the path
# length of each scheme's bookkeeping), 'compare --full' also two
# taking turns (two tasks on two vCPUs stay in the default: the -smp
# experiments)
TASKS = [1]
FULL_TASKS = [1, 2]
# what each mode calls its throughput, and its loop sizes in the
# default comparison (a few seconds of a TCG guest each)
RATES = {"fault": ("faults_per_s", "page faults per second", "faults/s"),
         "brk": ("brk_ops_per_s", "brk grow+shrink per second", "ops/s"),
         "sdet": ("scripts_per_s", "shell scripts per second", "scripts/s")}
FIXED = {"fault": {"L": 8, "R_mb": 16}, "brk": {"L": 20000},
         "sdet": {"L": 20}}
# brk also in exec'd tasks: 6.1's anon_vma does not expand a vma whose
# anon_vma chain came from fork, so in a forked task every brk makes a
# new vma (cheaper than anonmm's expand and split); a
# fresh mm expands and splits in both kernels (rmb-fastpath.c)
EXEC = {"brk": {"exec": [0, 1]}}
# the configuration that decides, in the default comparison and in
# 'compare --full' alike: the middle of --full's sweep would be brk at
# T=2 in forked tasks, where anon_vma's vma-per-brk quirk above
# reverses the verdict; the other rows stay in the tables
MAIN_PARAMS = (("T", 1), ("exec", 1))
TEXT = {"fault": "page_fault1: map 16 MB, write each page, unmap",
        "brk": "brk2: grow the heap a page, write it, shrink it",
        "sdet": "SDET-like users running busybox shell scripts"}


def rate_metrics(mode: str) -> tuple[Metric, ...]:
    name, label, unit = RATES[mode]
    return (metric(name, label, unit, HIGHER),
            metric("elapsed_ns", "wall time of the tasks", "ns"))


def experiment(mode: str) -> Experiment:
    """Path length on one vCPU (icount), T tasks taking turns; on zram,
    as every fastpath experiment: none swaps out, and with no disk their
    icount boots repeat exactly."""
    return on_zram(Experiment(
        f"fastpath-{mode}", "fastpath", mode, ALL,
        sweep={"T": TASKS, **EXEC.get(mode, {})}, fixed=FIXED[mode],
        clocks=(ICOUNT,), packs=True,
        full={"sweep": {"T": FULL_TASKS, **EXEC.get(mode, {})}},
        text=f"{TEXT[mode]}, T tasks at once, one vCPU"))


# the modes also run with 2 tasks on 2 vCPUs, on the icount-rr clock:
# the vCPUs take turns, so the time is both tasks' instructions summed,
# and it repeats as icount's does (docs/measurements.md); 'compare
# --full' on the host clock too, where the two CPUs really run at once
SMP_MODES = ("fault", "sdet")


def smp_experiment(mode: str) -> Experiment:
    return on_zram(Experiment(
        f"fastpath-{mode}-smp", "fastpath", mode, ALL,
        fixed={**FIXED[mode], "T": 2}, clocks=(ICOUNT_RR,), vcpus=(2,),
        packs=True, full={"clocks": (ICOUNT_RR, HOST)},
        text=f"{TEXT[mode]}, 2 tasks on 2 vCPUs"))


def plot_fastpath(records: list[dict], out_dir: Path) -> list[Path]:
    recs = fg.of_workload(records, "fastpath")
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
                key = (int(rec.get("vcpus") or 1), fg.param("T")(rec) or 0,
                       str(rec.get("clock") or HOST))
                cells.setdefault(key, {}).setdefault(
                    rec.get("stack", ""), []).append(rec)
            cells = dict(sorted(cells.items()))
            name, label, unit = RATES[mode]
            fg.draw_grouped(ax, cells,
                            [f"T={t}\n{v} vCPU\n{c}" for v, t, c in cells],
                            fg.metric(name))
            fg.finish(ax, f"{label} ({arch}; no swap)",
                      "tasks, vCPUs, clock", unit)
    fg.stack_legend(fig, fg.stack_labels(records))
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fg.save(fig, out_dir, "fastpath")


# --- the 2004 table beside this run's (a report section) ------------------

# Martin Bligh's 16-way runs of 2004: (what, anonmm, anon_vma, unit,
# the mode of this run that stands beside it)
PAPER = (("kernbench -j32, system time", 83.85, 83.69, "s", "fault"),
         ("SDET, 128 scripts, throughput", 124.7, 123.9, "% of baseline",
          "sdet"))
THEN = ("2004: 16 real CPUs, Linux 2.6.6-mm, whole benchmarks (kernbench: "
        "a kernel build, SDET: 128 concurrent script users), anonmm and "
        "anon_vma as posted then.")
CLOCK_TEXT = {"icount-rr": "timed by the instruction count of every vCPU "
                           "summed",
              "icount": "timed by instruction count (code path length, "
                        "no cache or memory latency)",
              "host": "timed by the host's clock"}


def setting(recs: list[dict]) -> str:
    """What differs in this run's setting, from the records the table
    shows (the main experiments')."""
    accels = sorted({str(r.get("accel")) for r in recs}) or ["—"]
    clocks = sorted({str(r.get("clock") or "host") for r in recs})
    vcpus = sorted({int(r.get("vcpus") or 1) for r in recs}) or [1]
    timed = "; ".join(CLOCK_TEXT.get(c, c) for c in clocks) or "—"
    return (f"{THEN}  Here: guests of {'/'.join(map(str, vcpus))} vCPU "
            f"under {', '.join(a.upper() for a in accels)}, {timed}; "
            "Linux 6.1 "
            "with the port; microbenchmarks of the same paths (page_fault1 "
            "for the faults a build takes, busybox shell users for SDET), "
            "at most 2 tasks.")


MAIN = tuple(f"fastpath-{m}" for m in RATES)


Lanes = dict[str, list[dict]]


def main_configs(grouped: Grouped, mode: str, arch: str
                 ) -> list[tuple[ConfigKey, Lanes]]:
    """The summary configurations of mode's main experiment on arch."""
    return [(k, lanes) for k, lanes in grouped.configs.items()
            if k.experiment == f"fastpath-{mode}" and k.mode == mode
            and k.arch == arch and k.record == "summary"]


def this_run(grouped: Grouped, mode: str, arch: str) -> list[str]:
    """NEW, BASE and the ratio of mode's rate on arch in its main
    experiment (one vCPU, icount), at the most tasks measured; dashes
    when it was not."""
    name, label, unit = RATES[mode]
    mine = main_configs(grouped, mode, arch)
    if not mine:
        return [f"{label}: not measured", "—", "—", "—"]
    key, lanes = max(mine, key=lambda kl: kl[0].param("T") or 0)
    base, new = (summarize(metric_values(lanes.get(s, []), name))
                 for s in (BASE, NEW))
    cells = [fmt(s.mean) if s else "failed" for s in (new, base)]
    return [f"{label} ({unit}, T={key.param('T')}, {key.vcpus} vCPU)",
            *cells, ratio_cell(ratio_of_means(base, new))]


def paper_table(records: list[dict]) -> list[str]:
    out = ["## The 2004 fast-path table beside this run", ""]
    recs = [r for r in records if r.get("workload") == "fastpath"
            and r.get("experiment") in MAIN]
    grouped = group(recs)
    arches = sorted({k.arch for k in grouped.configs
                     if k.record == "summary"}) or ["—"]
    rows = [[f"{what} ({unit})", f"{new:g}", f"{base:g}", f"{new / base:.3f}",
             arch, *this_run(grouped, mode, arch)]
            for what, new, base, unit, mode in PAPER for arch in arches]
    out += table(["2004 (Bligh, 16-way)", NEW, BASE, f"{NEW}/{BASE}",
                  "arch", "this run", NEW, BASE, f"{NEW}/{BASE} [95% CI]"],
                 rows)
    return out + ["", setting(recs), ""]


WORKLOAD = Workload(
    "fastpath", "rmb-fastpath",
    modes=tuple(Mode(m, rate_metrics(m), main=(f"fastpath-{m}",),
                     regime="fastpath", main_params=MAIN_PARAMS)
                for m in RATES),
    experiments=tuple(experiment(m) for m in RATES) +
    tuple(smp_experiment(m) for m in SMP_MODES),
    figures=(Figure("fastpath", tuple(f"fastpath-{m}" for m in RATES) +
                    tuple(f"fastpath-{m}-smp" for m in SMP_MODES),
                    plot_fastpath),),
    sections=(paper_table,),
    order=50)
