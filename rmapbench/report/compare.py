"""The report's comparison: the summary table (each workload/mode at its
main configuration) and a verdict per workload, from its modes' headline
metrics (the first each mode lists)."""

from .. import metrics, stats, workloads
from ..analysis import SEED_TOLERANCE, ConfigStats
from ..profiles import MINIMAL, Target, sort_targets
from ..record import Config, ConfigKey, is_failed, lane
from ..testbed import BASE, HOST, NEW
from ..tables import fmt, fmt_ratio, mark_cell, mean_cell, ratio_cell, table
from . import facts

STACKS = (BASE, NEW)
Failures = tuple[Config, str]
Fails = dict[Failures, int]          # (configuration, lane) -> failed boots
RATIO = f"{NEW}/{BASE} [95% CI]"          # the ratio's column
# the summary table's columns (summary_rows), in Markdown and plain text
SUMMARY_HEADER = ["workload/mode", "arch", "metric", "configuration",
                  f"{BASE} mean", f"{NEW} mean", RATIO, "mark", "winner"]
LEGEND = ("Cells: median / mean ± 95% CI half-width (n); `exact`: every "
          "repetition gave the same count (with n=1: one boot of a "
          "configuration whose experiment checked, at its check "
          "configuration (the one its verdict stands on, else the middle "
          "one), that a second boot with another seed agrees: "
          "on the counts, or, for boots that replay exactly, on every "
          f"compared metric within {SEED_TOLERANCE:.1%}).  "
          "Configurations name "
          "their guest clock when it is not the host's (see each "
          f"experiment's clock).  Ratio: {NEW} mean / {BASE} "
          "mean with its 95% interval (Fieller).  Mark: `*` Welch's "
          "t-test p < 0.05; `exact` both stacks repeated one exact value "
          "each and they differ; none: no significant difference.")


def config_text(key: ConfigKey) -> str:
    return key.label(skip=("seed",))


def metric_text(m: metrics.Metric) -> str:
    return f"{m.label} ({m.unit})" if m.unit else m.label


def failure_key(rec: dict) -> Failures:
    """(configuration, lane): a variant's failures are its own."""
    return (Config.of(rec), lane(rec))


def key_of(key: ConfigKey, stack: str) -> tuple[Config, str]:
    return (key.config(), stack)


def failed_counts(failed: list[dict]) -> dict[tuple[Config, str], int]:
    """(configuration, lane) -> failed boots."""
    out: dict[tuple[Config, str], int] = {}
    for rec in failed:
        out[failure_key(rec)] = out.get(failure_key(rec), 0) + 1
    return out


def kernels(analysis: list[ConfigStats]) -> list[Target]:
    """The kernels (profile and arch) the configurations measured."""
    return sort_targets({kernel(c.key) for c in analysis})


def kernel(key: Config) -> Target:
    return Target(key.profile, key.arch)


def main_config(analysis: list[ConfigStats], workload: str, mode: str,
                where: str | Target) -> ConfigStats | None:
    """The configuration standing for (workload, mode) on a kernel (a
    bare arch: its minimal kernel).

    Of the mode's record kind: from the mode's main experiments if
    it has any, on the experiment's own clock, at the mode's main_params
    where it has them, preferably with both stacks measured; the last
    generation for generation records; else the middle of the sorted
    configurations (the middle of a sweep).
    """
    want = where if isinstance(where, Target) else Target(MINIMAL, where)
    cands = [c for c in analysis if c.key.workload == workload
             and c.key.mode == mode and kernel(c.key) == want]
    entry = metrics.entry(workload, mode)
    main = [c for c in cands
            if entry and c.key.experiment in entry.main]
    cands = main or cands
    own = [c for c in cands
           if c.key.clock == workloads.own_clock(c.key.experiment)]
    cands = own or cands
    # the mode's own setting first: a stack's failed boots there show
    # as its row, not as another setting's verdict
    at = [c for c in cands if entry and all(
        c.key.param(k, v) == v for k, v in entry.main_params)]
    cands = at or cands
    both = [c for c in cands if all(c.records.get(s) for s in STACKS)]
    cands = both or cands
    if not cands:
        return None
    if any(c.key.generation is not None for c in cands):
        return max(cands, key=lambda c: c.key.generation or 0)
    return cands[len(cands) // 2]


def winner_text(c: stats.Comparison, m: metrics.Metric) -> str:
    if m.direction == metrics.NEUTRAL:
        return "(informational)"
    return c.winner(m.lower_better) or "—"


def summary_rows(analysis: list[ConfigStats], fails: Fails
                 ) -> list[list[str]]:
    rows = []
    for workload, entry in metrics.declared_modes():
        mode = entry.name
        for k in kernels(analysis):
            cs = main_config(analysis, workload, mode, k)
            if cs is None:
                continue
            for m in entry.metrics:
                c = cs.comparisons[m.name]
                if c.base is None and c.new is None:
                    continue
                rows.append([
                    f"{workload}/{mode}", k.label(), metric_text(m),
                    config_text(cs.key),
                    mean_cell(c.base, fails.get(key_of(cs.key, BASE), 0)),
                    mean_cell(c.new, fails.get(key_of(cs.key, NEW), 0)),
                    ratio_cell(c.ratio), mark_cell(c), winner_text(c, m)])
    return rows


def summary_table(analysis: list[ConfigStats], failed: list[dict]
                  ) -> list[str]:
    out = ["## Summary", ""]
    rows = summary_rows(analysis, failed_counts(failed))
    if not rows:
        return out + ["No measurements.", ""]
    out += ["Each workload/mode at its main configuration (the main "
            "experiment's middle configuration; the last generation of a "
            "fork chain).", ""]
    out += table(SUMMARY_HEADER, rows)
    return out + ["", LEGEND, ""]


def how_much(c: stats.Comparison, m: metrics.Metric) -> str:
    """e.g. 'anonmm 0.677× anon_vma (-32%, 95% CI [0.651, 0.703])'."""
    assert c.base is not None and c.new is not None
    r = c.ratio
    if r.value is None or r.value == 0:
        return (f"{NEW} {fmt(c.new.mean)} vs {BASE} {fmt(c.base.mean)} "
                f"{m.unit}")
    text = f"{NEW} {fmt_ratio(r.value)}× {BASE}"
    extra = [f"{(r.value - 1) * 100:+.0f}%"] if 0.5 <= r.value <= 2 else []
    if r.low is not None and r.high is not None and r.low != r.high:
        extra.append(f"95% CI [{fmt_ratio(r.low)}, {fmt_ratio(r.high)}]")
    return text + (f" ({', '.join(extra)})" if extra else "")


def how_sure(c: stats.Comparison, m: metrics.Metric, accel_tcg: bool,
             clock: str = HOST) -> str:
    if c.mark == stats.MARK_EXACT:
        sure = "exact (every repetition gave the same value)"
    elif c.p_value is not None:
        sure = f"significant (Welch p={c.p_value:.2g})"
    else:
        sure = "significant at 0.05 (Welch)"
    if m.timed and clock != HOST:
        sure += f", {clock} clock"
    elif accel_tcg and m.timed:
        sure += ", emulated timing (TCG)"
    return sure


def short_ratio(c: stats.Comparison, m: metrics.Metric) -> str:
    """e.g. '0.875×' or 'anonmm 0.004 vs anon_vma 0 B/VMA'."""
    assert c.base is not None and c.new is not None
    if c.ratio.value is None or c.ratio.value == 0:
        return f"{NEW} {fmt(c.new.mean)} vs {BASE} {fmt(c.base.mean)} " \
               f"{m.unit}"
    return f"{fmt_ratio(c.ratio.value)}×"


def outcome(c: stats.Comparison, m: metrics.Metric) -> str:
    """'anonmm', 'anon_vma', 'same' or 'untested'."""
    if c.base is None or c.new is None or c.note.startswith("n=1"):
        return "untested"
    return c.winner(m.lower_better) or "same"


def mode_verdict(cs: ConfigStats, entry: metrics.Mode,
                 fails: Fails, accel_tcg: bool
                 ) -> tuple[str, str]:
    """One bullet on the main configuration of a mode and arch, and the
    outcome of its headline metric (the mode's first)."""
    head = (f"- **{entry.name}, {kernel(cs.key).label()}** "
            f"({config_text(cs.key)}): ")
    for stack in STACKS:
        if not cs.records.get(stack):
            n = fails.get(key_of(cs.key, stack), 0)
            why = f"every boot of {stack} failed ({n})" if n else \
                f"{stack} not measured"
            return head + f"no comparison: {why}.", "untested"
    first, rest = entry.metrics[0], entry.metrics[1:]
    c = cs.comparisons[first.name]
    result = outcome(c, first)
    if result in STACKS:
        text = f"**{result} wins** on {first.label}: {how_much(c, first)}; " \
               f"{how_sure(c, first, accel_tcg, cs.key.clock)}."
    elif result == "same" and c.note == "equal":
        text = f"no difference in {first.label} (identical values)."
    elif result == "same":
        text = f"no significant difference in {first.label} " \
               f"({ratio_cell(c.ratio)})."
    else:
        text = f"{first.label}: no test ({untested_reason(c)})."
    also, same, untested = [], [], []
    for m in rest:
        c = cs.comparisons[m.name]
        if c.base is None and c.new is None:
            continue
        res = outcome(c, m)
        if res in STACKS:
            also.append(f"{m.label} {short_ratio(c, m)} ({res}, "
                        f"{'exact' if c.mark == stats.MARK_EXACT else '*'})")
        elif res == "untested":
            untested.append(m.label)
        elif m.direction != metrics.NEUTRAL:
            same.append(m.label)
    if also:
        text += " Also different: " + "; ".join(also) + "."
    if same:
        text += " No significant difference: " + ", ".join(same) + "."
    if untested:
        text += " No test (one repetition or a stack missing): " + \
            ", ".join(untested) + "."
    return head + text, result


def untested_reason(c: stats.Comparison) -> str:
    if c.note.startswith("n=1"):
        return "one repetition only"
    return c.note or "not measured"


def tally(analysis: list[ConfigStats], workload: str) -> str:
    """How every comparison of the workload came out."""
    counts = {BASE: 0, NEW: 0, "same": 0, "untested": 0}
    for cs in analysis:
        if cs.key.workload != workload:
            continue
        for name, c in cs.comparisons.items():
            m = metrics.lookup(name, workload, cs.key.mode)
            if m.direction != metrics.NEUTRAL and (c.base or c.new):
                counts[outcome(c, m)] += 1
    return (f"Over all configurations and metrics of {workload}: {NEW} "
            f"better in {counts[NEW]}, {BASE} better in {counts[BASE]}, "
            f"no significant difference in {counts['same']}, no test in "
            f"{counts['untested']}.")


def headline(results: list[str]) -> str:
    """The workload's verdict from its modes' headline outcomes."""
    wins = {s: results.count(s) for s in STACKS}
    if not any(wins.values()):
        if "same" in results:
            return "**No significant difference** in the headline metrics."
        return "No test was possible (one repetition or a stack missing)."
    if wins[NEW] and wins[BASE]:
        return (f"**Mixed**: {NEW} wins {wins[NEW]} headline "
                f"comparison(s), {BASE} {wins[BASE]}.")
    best = NEW if wins[NEW] else BASE
    rest = len(results) - wins[best]
    return (f"**{best} wins** {wins[best]} of {len(results)} headline "
            f"comparison(s)" + (f"; no significant difference or no test "
                                f"in {rest}." if rest else "; none the "
                                "other way."))


def workload_verdict(workload: str, records: list[dict],
                     analysis: list[ConfigStats], accel_tcg: bool
                     ) -> list[str]:
    out = [f"### {workload}", ""]
    recs = [r for r in records if r.get("workload") == workload]
    measured = [r for r in recs if not is_failed(r)]
    if not recs:
        return out + ["Not measured.", ""]
    if not measured:
        return out + [f"Not measured: all {len(recs)} boot(s) failed (see "
                      f"Failures).", ""]
    missing = [s for s in STACKS if not any(r.get("stack") == s
                                            for r in measured)]
    if missing:
        return out + [f"No comparison: {', '.join(missing)} not measured "
                      f"(see Failures).", ""]
    fails = failed_counts([r for r in recs if is_failed(r)])
    lines, results = [], []
    for mode in metrics.modes(workload):
        for k in kernels(analysis):
            cs = main_config(analysis, workload, mode, k)
            if cs is not None:
                line, result = mode_verdict(cs, metrics.entry(
                    workload, mode), fails, accel_tcg)
                lines.append(line)
                results.append(result)
    if facts.anonmm_not_running(measured):
        out += [facts.NOT_PORTED + f" What follows compares two {BASE} "
                "kernels; any difference is noise or a harness problem.", ""]
    else:
        out += [headline(results), ""]
    out += lines + ["", tally(analysis, workload), ""]
    return out


def verdicts(records: list[dict], analysis: list[ConfigStats],
             accel_tcg: bool) -> list[str]:
    out = ["## Verdicts", ""]
    for workload in workloads.WORKLOADS:
        out += workload_verdict(workload, records, analysis, accel_tcg)
    return out
