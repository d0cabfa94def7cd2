"""stressng: Debian's stress-ng, vm-class stressors, one instance each,
as a peer benchmark nobody here wrote: bogo-operations per second of
guest time, every stressor that can check its data run with --verify.
The image packs stress-ng (the stress-ng extra; on i386 Debian's i386
package, debs.py).  No program of ours: the plan runs stress-ng with a
YAML report, then shows the report as a section that becomes one record.
"""

from pathlib import Path

from .. import console, plan, record, testbed
from .. import figures as fg
from ..record import Config
from ..settings import on_zram
from ..testbed import ICOUNT
from .base import HIGHER, Experiment, Figure, Mode, Workload, metric

# mode -> stress-ng's arguments (one instance: a one-vCPU guest)
STRESSORS = {
    "vm": "--vm 1 --vm-bytes 32M --verify",
    "mmap": "--mmap 1 --mmap-bytes 512K --verify",
    "mremap": "--mremap 1 --mremap-bytes 512K --verify",
    "fork": "--fork 1",
    "brk": "--brk 1",
}
# guest seconds per run: under icount a second is 1e9 instructions,
# about 5 s of this host's time
SECONDS = 2
REPORT = "/tmp/stress-ng.yaml"


def steps(config: Config) -> list[str]:
    return [plan.info(),
            plan.sh(f"cd /tmp && stress-ng {STRESSORS[config.mode]} "
                    f"--timeout {SECONDS}s --metrics-brief --yaml {REPORT}"),
            plan.section("stressng", f"cat {REPORT}")]


def metrics_of(lines: list[str], stressor: str) -> dict[str, float]:
    """The YAML report's metrics of one stressor: its '- stressor: X'
    item's 'key: number' lines (no YAML parser needed for this)."""
    out: dict[str, float] = {}
    inside = False
    for line in lines:
        text = line.strip()
        if text.startswith("- stressor:"):
            inside = text.split(":", 1)[1].strip() == stressor
            continue
        if inside and ":" in text and not text.startswith("-"):
            key, value = (t.strip() for t in text.split(":", 1))
            try:
                out[key] = float(value)
            except ValueError:
                continue
        elif inside and (not text or text.startswith("...")):
            inside = False
    return out


def records(base: dict, con: console.Console) -> list[dict]:
    """The stressor's line of the report as one record."""
    scheme = con.section_pairs("rmapbench").get("scheme", "unknown")
    m = metrics_of(con.sections.get("stressng", []), base["mode"])
    if "bogo-ops" not in m:
        return [record.failed(base, scheme, "stress-ng reported no "
                              f"metrics for {base['mode']}",
                              "\n".join(con.sections.get("stressng", [])))]
    return [record.measured(base, {"scheme": scheme}, {}, {
        "bogo_ops_count": m["bogo-ops"],
        "bogo_ops_per_s": m.get("bogo-ops-per-second-real-time", 0.0),
        "wall_clock_ns": round(m.get("wall-clock-time", 0.0) * 1e9)})]


def plot_stressng(records: list[dict], out_dir: Path) -> list[Path]:
    recs = fg.of_workload(records, "stressng")
    if not recs:
        return fg.skipped("stressng", "no stressng records")
    plt = fg._pyplot()
    archs = fg.arches(recs)
    fig, axes = plt.subplots(len(archs), 1, squeeze=False,
                             figsize=(10, 4.5 * len(archs) + 0.6))
    for arch, (ax,) in zip(archs, axes):
        cells: dict[tuple, dict[str, list[dict]]] = {}
        for rec in (r for r in recs if r.get("arch") == arch):
            mode = str(rec.get("mode"))
            order = list(STRESSORS).index(mode) if mode in STRESSORS else 9
            cells.setdefault((order, mode), {}).setdefault(
                rec.get("stack", ""), []).append(rec)
        cells = dict(sorted(cells.items()))
        fg.draw_grouped(ax, cells, [m for _, m in cells],
                        fg.metric("bogo_ops_per_s"))
        clocks = ", ".join(sorted({str(r.get("clock")) for r in recs}))
        fg.finish(ax, f"stress-ng bogo-ops per second ({arch}; 1 vCPU, no "
                  f"swap; {clocks} clock)", "stressor", "bogo-ops/s")
    fg.stack_legend(fig, fg.stack_labels(records))
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fg.save(fig, out_dir, "stressng")


WORKLOAD = Workload(
    "stressng", None,
    modes=tuple(Mode(s, (
        metric("bogo_ops_per_s", f"stress-ng {s}, bogo-ops per second",
               "ops/s", HIGHER),), main=(f"stressng-{s}",),
        regime="fastpath") for s in STRESSORS),
    # on zram: none swaps out, and with no disk their icount boots repeat
    # exactly
    experiments=tuple(
        on_zram(Experiment(
            f"stressng-{s}", "stressng", s,
            testbed.arches_with("stress-ng"), clocks=(ICOUNT,),
            timeout_s=300.0, packs=True,
            text=f"stress-ng {STRESSORS[s]}, {SECONDS} s of guest time"))
        for s in STRESSORS),
    figures=(Figure("stressng", tuple(f"stressng-{s}" for s in STRESSORS),
                    plot_stressng),),
    extras=("stress-ng",), steps=steps, records=records,
    order=55)
