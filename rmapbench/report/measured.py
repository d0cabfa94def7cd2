"""How the run was measured: each experiment's guest clock, kernel
arguments and stack variants, repetitions (and why that many), the
configurations measured on two clocks side by side, where the run's
time went (its phases) and where a boot's time went."""

import statistics
from dataclasses import replace
from pathlib import Path

from .. import metrics, phases, settings, stats, store, testbed
from ..analysis import TARGET, ConfigStats
from ..record import Config, ConfigKey, is_variant, lane
from ..testbed import HOST
from ..tables import fmt_ratio, ratio_cell, table
from . import decision
from .compare import config_text

PHASES = phases.ORDER


def clock_line(clock: str) -> str:
    try:
        text = testbed.clock(clock).text
    except Exception:    # a clock this version does not know
        text = "unknown to this version of the harness"
    return f"**{clock}**: {text}"


def points_of(metadata: dict, experiment: str) -> list[dict]:
    return [p for p in metadata.get("repetitions") or []
            if p.get("experiment") == experiment]


def boots_text(points: list[dict]) -> str:
    """e.g. '2 boots per stack at 5 configurations (every timed ratio
    within ±3%); 6 at x86_64 512MB K=16 (cap of 6 reached...)'."""
    groups: dict[tuple, list[dict]] = {}
    for p in points:
        groups.setdefault((p.get("boots"), p.get("why")), []).append(p)
    parts = []
    for (boots, why), pts in sorted(groups.items(), key=str):
        where = f"{len(pts)} configurations" if len(pts) > 1 else \
            ConfigKey(**Config.of(pts[0]).__dict__).label(
                skip=("seed",))
        parts.append(f"{boots} boot(s) per stack at {where} ({why})")
    return "; ".join(parts)


def policy_text(point: dict) -> str:
    kind, start, cap = point.get("policy"), point.get("start"), \
        point.get("cap")
    if kind == "fixed":
        return f"fixed by --reps at {start}"
    if kind == store.EXACT:
        return ("exact counts only: one boot per configuration and stack, "
                "a second at the check configuration (the standing or the "
                "middle one) checks that they repeat")
    if kind == store.REPEATS:
        return ("boots that repeat exactly (an instruction-counting clock "
                "and no disk): one boot per configuration and stack, a "
                "second at the check configuration (the standing or the "
                "middle one) checks that every metric repeats, timings "
                "included")
    return (f"timed: {start} boots per configuration and stack, then one "
            f"more at a time while the 95% interval of a timed metric's "
            f"{testbed.NEW}/{testbed.BASE} ratio reaches beyond "
            f"±{float(point.get('target') or 0):.0%} of it, at most {cap}")


def boot_args(records: list[dict]) -> list[str]:
    """What the records' boots added to the harness's kernel arguments:
    every stack's (the experiment's), and each stack variant's lane."""
    every = sorted({str(r["kernel_args"]) for r in records
                    if r.get("kernel_args")})
    lanes = sorted({lane(r) for r in records if is_variant(r)})
    out = [f"Kernel arguments on every stack's boots: `{a}`." for a in every]
    if lanes:
        out.append(f"Stack variants, each its stack's boots with more "
                   f"kernel arguments, against the same "
                   f"{testbed.BASE} boots: {'; '.join(lanes)}.")
    return out


def how_measured(experiment: str, metadata: dict,
                 records: list[dict]) -> list[str]:
    """The experiment's clock(s), kernel arguments and repetitions, and
    why."""
    mine = [r for r in records if r.get("experiment") == experiment]
    clocks = sorted({str(r.get("clock") or HOST) for r in mine})
    out = [f"Clock {clock_line(c)}." for c in clocks] + boot_args(mine)
    for clock in clocks:
        pts = [p for p in points_of(metadata, experiment)
               if (p.get("clock") or HOST) == clock]
        if not pts:
            continue
        name = f" on {clock}" if len(clocks) > 1 else ""
        out.append(f"Repetitions{name}: {policy_text(pts[0])}. Here: "
                   f"{boots_text(pts)}.")
    return [" ".join(out), ""] if out else []


def pairs(analysis: list[ConfigStats]
          ) -> list[tuple[ConfigStats, ConfigStats]]:
    """(icount, host) statistics of every configuration on both."""
    by_key = {cs.key: cs for cs in analysis}
    out = []
    for key, cs in by_key.items():
        if key.clock != HOST:
            host = by_key.get(replace(key, clock=HOST))
            if host is not None:
                out.append((cs, host))
    return out


def agree(a: stats.Ratio, b: stats.Ratio) -> str:
    if None in (a.low, a.high, b.low, b.high):
        return "no interval"
    assert a.low is not None and a.high is not None
    assert b.low is not None and b.high is not None
    overlap = a.low <= b.high and b.low <= a.high
    return "intervals overlap" if overlap else "intervals apart"


def clocks_compared(analysis: list[ConfigStats]) -> list[str]:
    """Ratios of the configurations measured on two clocks."""
    rows = []
    for other, host in pairs(analysis):
        for name, c in other.comparisons.items():
            h = host.comparisons.get(name)
            if h is None or c.ratio.value is None or h.ratio.value is None:
                continue
            rows.append([other.key.experiment, config_text(host.key), name,
                         f"{ratio_cell(c.ratio)} ({other.key.clock})",
                         f"{ratio_cell(h.ratio)} (host)",
                         fmt_ratio(c.ratio.value / h.ratio.value),
                         agree(c.ratio, h.ratio)])
    if not rows:
        return []
    return ["## Clocks compared", "",
            "Configurations measured on two clocks: the "
            f"{testbed.NEW}/{testbed.BASE} ratio on each, and how far "
            "they agree.", ""] + table(
        ["experiment", "configuration", "metric", "ratio [95% CI]",
         "ratio on the host clock [95% CI]", "quotient", "agreement"],
        rows) + [""]


Timed = list[tuple[float, ConfigStats, str]]


def timed_ratios(analysis: list[ConfigStats]) -> dict[str, Timed]:
    """clock -> (half width, configuration, metric) of every timed
    metric a mode compares (not the informational ones), of
    per-generation records the last generation only."""
    last: dict[ConfigKey, int] = {}
    for cs in analysis:
        if cs.key.generation is not None:
            k = replace(cs.key, generation=None)
            last[k] = max(last.get(k, 0), cs.key.generation)
    out: dict[str, Timed] = {}
    for cs in analysis:
        k = cs.key
        if k.record != metrics.primary_record(k.workload, k.mode) or \
                (k.generation is not None and
                 k.generation != last[replace(k, generation=None)]):
            continue
        for m in metrics.primary(k.workload, k.mode):
            c = cs.comparisons.get(m.name)
            if m.timed and m.direction != metrics.NEUTRAL and c is not None \
                    and c.ratio.value:
                out.setdefault(k.clock, []).append(
                    (c.ratio.reach, cs, m.name))
    return out


def pressure_of(cs: ConfigStats) -> str:
    """'under swap', 'no swap-out' or 'swap-out not counted', with the
    guest settings the configuration ran with ('under swap (zram)'):
    a swap device or a reclaim of another kind is a pressure apart."""
    pressure = decision.PRESSURE[decision.swapped(cs)]
    names = ", ".join(s.name for s in settings.in_force(cs.key.kernel_args))
    return f"{pressure} ({names})" if names else pressure


def interval_widths(analysis: list[ConfigStats]) -> list[str]:
    """Per clock, apart for configurations that swapped (a reclaim's
    course varies where a CPU-bound path does not) and for each set of
    guest settings: how many timed ratios lie within the repetitions'
    target and the widest of them."""
    groups: dict[tuple[str, str], Timed] = {}
    for clock, items in timed_ratios(analysis).items():
        for item in items:
            key = (clock, pressure_of(item[1]))
            groups.setdefault(key, []).append(item)
    rows = []
    for (clock, pressure), items in sorted(groups.items()):
        inside = sum(1 for w, _, _ in items if w <= TARGET)
        w, cs, name = max(items, key=lambda t: t[0])
        reach = "no interval" if w == float("inf") else f"±{w:.1%}"
        rows.append([clock, pressure, str(len(items)), str(inside),
                     config_text(cs.key), name,
                     ratio_cell(cs.comparisons[name].ratio), reach])
    if not rows:
        return []
    return ["## Interval widths", "",
            f"Per guest clock and memory pressure: the timed metrics' "
            f"{testbed.NEW}/{testbed.BASE} ratios (apart for each set of "
            "guest settings), how many have a 95% "
            f"interval within ±{TARGET:.0%} of the ratio (the "
            "target repetitions are added for), and the widest.",
            ""] + table(
        ["clock", "pressure", "timed ratios",
         f"within ±{TARGET:.0%}", "widest: configuration",
         "metric", "ratio [95% CI]", "reach"], rows) + [""]


def run_time(metadata: dict) -> list[str]:
    """The phases of every invocation on the run, with the host load."""
    entries = metadata.get("phases") or []
    if not entries:
        return []
    rows = []
    for e in entries:
        secs = e.get("seconds") or {}
        rows.append([str(e.get("started", "")),
                     *[f"{secs[p]:.0f}" if p in secs else "—"
                       for p in PHASES],
                     f"{float(e.get('total_s') or 0):.0f}",
                     " / ".join(str(x) for x in e.get("load_start") or []),
                     " / ".join(str(x) for x in e.get("load_end") or [])])
    return ["## Run time", "",
            "Wall seconds of each phase per invocation (metadata.json "
            "'phases'; the report's own time is recorded after it is "
            "written), and the host's load average (1/5/15 min) at its "
            "start and end: timings taken under load are not final.",
            ""] + table(["started", *PHASES, "total", "load at start",
                         "load at end"], rows) + [""]


def mean_of(values: list[float]) -> str:
    return f"{statistics.fmean(values):.1f}" if values else "—"


def boot_time(run_dir: Path) -> list[str]:
    """Where a boot's time went, per experiment and clock."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for boot in store.load_boots(run_dir) if run_dir.exists() else []:
        recs = boot.get("records") or [{}]
        if boot.get("phases"):
            key = (str(recs[0].get("experiment")),
                   str(recs[0].get("clock") or HOST))
            groups.setdefault(key, []).append(boot["phases"])
    if not groups:
        return []
    rows = []
    for (exp, clock), ph in sorted(groups.items()):
        steps = [p.get("guest_steps_s") or {} for p in ph]
        rows.append([exp, clock, str(len(ph)),
                     mean_of([p["qemu_s"] for p in ph]),
                     mean_of([p["prep_s"] for p in ph]),
                     mean_of([p["guest_init_s"] for p in ph
                              if p.get("guest_init_s") is not None]),
                     mean_of([s.get("run", 0) + s.get("section", 0)
                              for s in steps]),
                     mean_of([sum(s.values()) - s.get("run", 0) -
                              s.get("section", 0) for s in steps])])
    return ["## Boot time", "",
            "Mean seconds per boot: host seconds in QEMU and making the "
            "initrd; guest seconds (on the boot's clock) to /init, in the "
            "workload, and in the other plan steps (swapon, state "
            "sections).", ""] + table(
        ["experiment", "clock", "boots", "QEMU (host s)", "initrd (host s)",
         "to /init (guest s)", "workload (guest s)", "other steps (guest s)"],
        rows) + [""]
