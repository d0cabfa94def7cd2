"""The comparison report: results/<run-id>/report.md from records.

Sections: warnings (TCG, an anonmm stack that does not run anonmm), the
environment, the config diff, a summary table, a verdict per workload,
the memory-size recommendation, one section per experiment (every
configuration, then its plots) and the failures.  A failed boot is
named as failed, with its excerpt, and never shown as a number.
"""

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import metrics, plots, stats
from .registry import BASE, NEW

STACKS = (BASE, NEW)
# The experiment whose configurations stand for a workload/mode in the
# summary table and the verdicts.
MAIN_EXPERIMENT = {
    ("vma", "count"): ("vma-cost",), ("vma", "capacity"): ("capacity",),
    ("fork", "breadth"): ("fork-breadth",),
    ("fork", "depth"): ("fork-depth",), ("fork", "rate"): ("fork-rate",),
    ("mremap", "unshared"): ("mremap-unshared", "mremap"),
    ("mremap", "shared"): ("mremap-shared", "mremap"),
    ("mremap", "swapped"): ("mremap-swapped", "mremap"),
    ("swap", "family"): ("swap-family",),
    ("fio", "write4k"): ("swap-ceiling", "swap-mem")}
EXPERIMENT_TEXT = {
    "vma-cost": "kernel memory per VMA, fresh VMAs of each kind",
    "lowmem": "lowmem consumed as the VMA count grows (i386)",
    "capacity": "VMAs created until lowmem runs out (i386)",
    "fork-breadth": "one parent forks N children: latency, memory per child",
    "fork-depth": "a chain of generations, each COWing and forking the next",
    "fork-rate": "fork + child check + exit, rounds per second",
    "mremap": "moving an anon region: unshared, shared with K children, "
              "partly swapped",
    "mremap-unshared": "moving an anon region mapped once",
    "mremap-shared": "moving an anon region shared with K forked children",
    "mremap-swapped": "moving an anon region partly swapped out",
    "swap-ceiling": "fio 4k writes to the swap device: the swap-out ceiling",
    "swap-mem": "a swapping family across guest memory sizes, with fio's "
                "swap-device ceiling",
    "swap-family": "swap-out throughput as the family grows",
}
TIME_UNITS = ("ns", "ns/page", "forks/s", "pages/s", "kB/s")
LEGEND = ("Cells: median / mean ± 95% CI half-width (n); `exact`: every "
          "repetition gave the same count.  Ratio: anonmm mean / anon_vma "
          "mean with its 95% interval (Fieller).  Mark: `*` Welch's "
          "t-test p < 0.05; `exact` both stacks repeated one exact value "
          "each and they differ; none: no significant difference.")


def write_report(run_dir: Path, records: list[dict], metadata: dict,
                 plot_files: list[Path]) -> Path:
    """Write run_dir/report.md (atomically) and return its path."""
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "report.md"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(render(run_dir, records, metadata, plot_files))
    os.replace(tmp, path)
    return path


def render(run_dir: Path, records: list[dict], metadata: dict,
           plot_files: list[Path]) -> str:
    analysis = stats.analyse(records)
    failed = [r for r in records if stats.is_failed(r)]
    accel = tcg(metadata, records)
    parts = [f"# rmapbench report: {run_id(run_dir, records, metadata)}", ""]
    parts += warnings(records, accel)
    parts += environment(metadata, records)
    parts += config_diff(metadata)
    parts += summary_table(analysis, failed)
    parts += verdicts(records, analysis, accel)
    parts += memory_recommendation(records)
    parts += experiments(run_dir, records, metadata, analysis, plot_files)
    parts += failures(failed)
    return "\n".join(parts).rstrip() + "\n"


# --- formatting ------------------------------------------------------------

def fmt(x: float) -> str:
    """A number for a table: integers as integers, 3-4 figures else."""
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}"
    a = abs(x)
    if a >= 1000:
        return f"{x:,.0f}"
    if a >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}"


def fmt_ratio(x: float) -> str:
    a = abs(x)
    if a >= 100:
        return f"{x:,.0f}"
    return f"{x:.1f}" if a >= 10 else f"{x:.3f}"


def cell(s: stats.Summary | None, failed_n: int = 0) -> str:
    """One stack's value in a table; 'failed' (never a number) when
    every boot of it failed."""
    if s is None:
        return f"failed ({failed_n} boot{'s' * (failed_n != 1)})" \
            if failed_n else "—"
    if s.exact:
        text = f"{fmt(s.mean)} exact (n={s.n})"
    elif s.constant and s.n > 1:
        text = f"{fmt(s.mean)}, all equal (n={s.n})"
    elif s.n == 1:
        text = f"{fmt(s.mean)} (n=1)"
    else:
        text = f"{fmt(s.median)} / {fmt(s.mean)} ± {fmt(s.ci_half or 0)} " \
               f"(n={s.n})"
    return text + (f", {failed_n} failed" if failed_n else "")


def mean_cell(s: stats.Summary | None, failed_n: int = 0) -> str:
    if s is None:
        return cell(None, failed_n)
    return f"{fmt(s.mean)}{' exact' if s.exact else ''} (n={s.n})"


def ratio_cell(r: stats.Ratio) -> str:
    if r.value is None:
        return "—"
    if r.low is None or r.high is None or r.low == r.high:
        return fmt_ratio(r.value)
    return f"{fmt_ratio(r.value)} [{fmt_ratio(r.low)}, {fmt_ratio(r.high)}]"


def mark_cell(c: stats.Comparison) -> str:
    if c.mark:
        return c.mark
    return "" if c.note in ("", "equal") else c.note


def table(header: list[str], rows: Iterable[list[str]]) -> list[str]:
    esc = [[str(v).replace("|", "\\|").replace("\n", " ") for v in row]
           for row in rows]
    return ["| " + " | ".join(header) + " |",
            "|" + "|".join("---" for _ in header) + "|"] + \
           ["| " + " | ".join(row) + " |" for row in esc]


def params_text(params: dict | None) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted((params or {}).items())) \
        or "defaults"


def config_text(key: stats.ConfigKey) -> str:
    return key.label(skip=("seed",))


def metric_text(m: metrics.Metric) -> str:
    return f"{m.label} ({m.unit})" if m.unit else m.label


# --- run facts and warnings -----------------------------------------------

def run_id(run_dir: Path, records: list[dict], metadata: dict) -> str:
    if metadata.get("run_id"):
        return str(metadata["run_id"])
    for rec in records:
        if rec.get("run_id"):
            return str(rec["run_id"])
    return run_dir.name


def tcg(metadata: dict, records: list[dict]) -> bool:
    """Whether any boot ran under TCG (emulated timings)."""
    seen = {str(metadata.get("accel", ""))}
    seen |= {str(r.get("accel", "")) for r in records}
    return "tcg" in seen


def stack_schemes(records: list[dict]) -> dict[str, set[str]]:
    """stack -> schemes its measured (not failed) records report."""
    out: dict[str, set[str]] = {}
    for rec in records:
        if not stats.is_failed(rec):
            out.setdefault(str(rec.get("stack")), set()).add(
                str(rec.get("scheme")))
    return out


def anonmm_not_running(records: list[dict]) -> bool:
    """Every measured record of the anonmm stack says scheme anon_vma."""
    return stack_schemes(records).get(NEW) == {BASE}


NOT_PORTED = ("**The anonmm stack does not yet run anonmm**: every record "
              "of stack anonmm says scheme anon_vma, so both kernels run "
              "anon_vma and **no verdict about anonmm is possible**.")


def single_repetition(records: list[dict]) -> bool:
    """No configuration of any stack has two measured repetitions."""
    seen: dict[tuple, set] = {}
    for rec in records:
        if not stats.is_failed(rec):
            key = (stats.config_key(rec), rec.get("stack"))
            seen.setdefault(key, set()).add(rec.get("rep"))
    return bool(seen) and all(len(reps) < 2 for reps in seen.values())


def warnings(records: list[dict], accel_tcg: bool) -> list[str]:
    out = []
    if single_repetition(records):
        out += ["> **WARNING: one repetition.** No configuration was "
                "measured twice: there are no confidence intervals and no "
                "significance tests, so no scheme can be said to win. Run "
                "with --reps 3 or more.", ""]
    if accel_tcg:
        out += ["> **WARNING: TCG.** These guests ran under QEMU's TCG "
                "emulation, not KVM: every timing (ns, per-second rates) is "
                "emulated and says little about real hardware. Byte, object "
                "and page counts are unaffected.", ""]
    if anonmm_not_running(records):
        out += [f"> **WARNING:** {NOT_PORTED}", ""]
    for stack, schemes in sorted(stack_schemes(records).items()):
        odd = sorted(schemes - {stack})
        if odd and not (stack == NEW and schemes == {BASE}):
            out += [f"> **WARNING:** records of stack {stack} report "
                    f"scheme {', '.join(odd)}.", ""]
    return out


def flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """Nested dicts as ('a / b', value) pairs."""
    if isinstance(value, dict):
        out = []
        for k, v in sorted(value.items()):
            out += flatten(v, f"{prefix} / {k}" if prefix else str(k))
        return out
    if isinstance(value, (list, tuple)):
        return [(prefix, ", ".join(str(v) for v in value))]
    return [(prefix, str(value))]


ENVIRONMENT = (("linux-source version", "linux_source_version"),
               ("series digest", "series_digest"),
               ("config sha256", "config_sha256"),
               ("bench digest", "bench_digest"),
               ("QEMU version", "qemu_version"), ("accel", "accel"),
               ("host CPU", "host_cpu"), ("host kernel", "host_kernel"),
               ("host cores", "host_cores"), ("date", "created"),
               ("repetitions", "reps"), ("swap disk (MB)", "swap_mb"),
               ("command", "command"))


def environment(metadata: dict, records: list[dict]) -> list[str]:
    rows = []
    for label, key in ENVIRONMENT:
        if key not in metadata:
            rows.append([label, "unknown"])
            continue
        for sub, value in flatten(metadata[key]):
            text = f"`{value}`" if key in ("series_digest", "config_sha256",
                                           "bench_digest", "command") \
                else value
            if key == "accel" and value == "tcg":
                text = "**tcg (emulated: timings are not real)**"
            rows.append([f"{label} {sub}".strip(), text])
    rows.append(["experiments",
                 ", ".join(metadata_experiments(metadata)) or "unknown"])
    accels = sorted({str(r.get("accel")) for r in records if r.get("accel")})
    if accels:
        rows.append(["accel of the boots", ", ".join(accels)])
    rows.append(["records", f"{len(records)} "
                 f"({sum(stats.is_failed(r) for r in records)} failed)"])
    return ["## Environment", ""] + table(["what", "value"], rows) + [""]


def config_diff(metadata: dict) -> list[str]:
    out = ["## Config diff between the stacks", ""]
    diff = metadata.get("config_diff")
    if not isinstance(diff, dict) or not diff:
        return out + ["Not recorded.", ""]
    for arch, value in sorted(diff.items()):
        lines, unfair = diff_lines(value)
        if not lines:
            out += [f"**{arch}**: the configurations are identical (not "
                    f"even a scheme option differs).", ""]
            continue
        out.append(f"**{arch}**: {len(lines)} symbol(s) differ")
        out += ["", "```"] + lines + ["```", ""]
        if unfair:
            out += [f"Beyond the scheme option: {', '.join(unfair)}: the "
                    f"comparison is not fair on {arch}.", ""]
    return out


def diff_lines(value: Any) -> tuple[list[str], list[str]]:
    """(lines, unfair symbols) of one arch's config_diff entry."""
    if isinstance(value, dict):
        return ([str(v) for v in value.get("lines", [])],
                [str(v) for v in value.get("unfair", [])])
    if isinstance(value, str):
        return value.splitlines(), []
    return [str(v) for v in value or []], []


# --- failures next to configurations --------------------------------------

def failure_key(rec: dict, stack: str | None = None) -> tuple:
    return (rec.get("experiment"), rec.get("arch"), rec.get("mem_mb"),
            rec.get("workload"), rec.get("mode"),
            tuple(sorted((rec.get("params") or {}).items())),
            stack if stack is not None else rec.get("stack"))


def key_of(key: stats.ConfigKey, stack: str) -> tuple:
    return (key.experiment, key.arch, key.mem_mb, key.workload, key.mode,
            key.params, stack)


def failed_counts(failed: list[dict]) -> dict[tuple, int]:
    out: dict[tuple, int] = {}
    for rec in failed:
        out[failure_key(rec)] = out.get(failure_key(rec), 0) + 1
    return out


# --- summary and verdicts --------------------------------------------------

def main_config(analysis: list[stats.ConfigStats], workload: str, mode: str,
                arch: str) -> stats.ConfigStats | None:
    """The configuration standing for (workload, mode) on arch.

    Of the catalogue's record kind: from MAIN_EXPERIMENT if it has any,
    preferably with both stacks measured; the last generation for
    generation records; else the middle of the sorted configurations
    (the middle of a sweep).
    """
    cands = [c for c in analysis if c.key.workload == workload
             and c.key.mode == mode and c.key.arch == arch]
    main = [c for c in cands
            if c.key.experiment in MAIN_EXPERIMENT.get((workload, mode), ())]
    cands = main or cands
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
    return c.winner(m.direction) or "—"


def summary_rows(analysis: list[stats.ConfigStats], fails: dict[tuple, int]
                 ) -> list[list[str]]:
    rows = []
    for (workload, mode), entry in metrics.CATALOGUE.items():
        for arch in sorted({c.key.arch for c in analysis}):
            cs = main_config(analysis, workload, mode, arch)
            if cs is None:
                continue
            for m in entry.metrics:
                c = cs.comparisons[m.name]
                if c.base is None and c.new is None:
                    continue
                rows.append([
                    f"{workload}/{mode}", arch, metric_text(m),
                    config_text(cs.key),
                    mean_cell(c.base, fails.get(key_of(cs.key, BASE), 0)),
                    mean_cell(c.new, fails.get(key_of(cs.key, NEW), 0)),
                    ratio_cell(c.ratio), mark_cell(c), winner_text(c, m)])
    return rows


def summary_table(analysis: list[stats.ConfigStats], failed: list[dict]
                  ) -> list[str]:
    out = ["## Summary", ""]
    rows = summary_rows(analysis, failed_counts(failed))
    if not rows:
        return out + ["No measurements.", ""]
    out += ["Each workload/mode at its main configuration (the main "
            "experiment's middle configuration; the last generation of a "
            "fork chain).", ""]
    out += table(["workload/mode", "arch", "metric", "configuration",
                  "anon_vma mean", "anonmm mean", "anonmm/anon_vma [95% CI]",
                  "mark", "winner"], rows)
    return out + ["", LEGEND, ""]


def how_much(c: stats.Comparison, m: metrics.Metric) -> str:
    """e.g. 'anonmm 0.677× anon_vma (-32%, 95% CI [0.651, 0.703])'."""
    assert c.base is not None and c.new is not None
    r = c.ratio
    if r.value is None or r.value == 0:
        return (f"anonmm {fmt(c.new.mean)} vs anon_vma {fmt(c.base.mean)} "
                f"{m.unit}")
    text = f"anonmm {fmt_ratio(r.value)}× anon_vma"
    extra = [f"{(r.value - 1) * 100:+.0f}%"] if 0.5 <= r.value <= 2 else []
    if r.low is not None and r.high is not None and r.low != r.high:
        extra.append(f"95% CI [{fmt_ratio(r.low)}, {fmt_ratio(r.high)}]")
    return text + (f" ({', '.join(extra)})" if extra else "")


def how_sure(c: stats.Comparison, m: metrics.Metric, accel_tcg: bool) -> str:
    if c.mark == stats.MARK_EXACT:
        sure = "exact (every repetition gave the same value)"
    elif c.p_value is not None:
        sure = f"significant (Welch p={c.p_value:.2g})"
    else:
        sure = "significant at 0.05 (Welch)"
    if accel_tcg and m.unit in TIME_UNITS:
        sure += ", emulated timing (TCG)"
    return sure


def short_ratio(c: stats.Comparison, m: metrics.Metric) -> str:
    """e.g. '0.875×' or 'anonmm 0.004 vs anon_vma 0 B/VMA'."""
    assert c.base is not None and c.new is not None
    if c.ratio.value is None or c.ratio.value == 0:
        return f"anonmm {fmt(c.new.mean)} vs anon_vma {fmt(c.base.mean)} " \
               f"{m.unit}"
    return f"{fmt_ratio(c.ratio.value)}×"


def outcome(c: stats.Comparison, m: metrics.Metric) -> str:
    """'anonmm', 'anon_vma', 'same' or 'untested'."""
    if c.base is None or c.new is None or c.note.startswith("n=1"):
        return "untested"
    return c.winner(m.direction) or "same"


def mode_verdict(cs: stats.ConfigStats, entry: metrics.Entry,
                 fails: dict[tuple, int], accel_tcg: bool
                 ) -> tuple[str, str]:
    """One bullet on the main configuration of a mode and arch, and the
    outcome of its headline metric (the catalogue's first)."""
    head = f"- **{entry.mode}, {cs.key.arch}** ({config_text(cs.key)}): "
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
               f"{how_sure(c, first, accel_tcg)}."
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


def tally(analysis: list[stats.ConfigStats], workload: str) -> str:
    """How every comparison of the workload came out."""
    counts = {BASE: 0, NEW: 0, "same": 0, "untested": 0}
    for cs in analysis:
        if cs.key.workload != workload:
            continue
        for name, c in cs.comparisons.items():
            m = metrics.lookup(name, workload, cs.key.mode)
            if m.direction != metrics.NEUTRAL and (c.base or c.new):
                counts[outcome(c, m)] += 1
    return (f"Over all configurations and metrics of {workload}: anonmm "
            f"better in {counts[NEW]}, anon_vma better in {counts[BASE]}, "
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
        return (f"**Mixed**: anonmm wins {wins[NEW]} headline comparison(s), "
                f"anon_vma {wins[BASE]}.")
    best = NEW if wins[NEW] else BASE
    rest = len(results) - wins[best]
    return (f"**{best} wins** {wins[best]} of {len(results)} headline "
            f"comparison(s)" + (f"; no significant difference or no test "
                                f"in {rest}." if rest else "; none the "
                                "other way."))


def workload_verdict(workload: str, records: list[dict],
                     analysis: list[stats.ConfigStats], accel_tcg: bool
                     ) -> list[str]:
    out = [f"### {workload}", ""]
    recs = [r for r in records if r.get("workload") == workload]
    measured = [r for r in recs if not stats.is_failed(r)]
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
    fails = failed_counts([r for r in recs if stats.is_failed(r)])
    lines, results = [], []
    for mode in metrics.modes(workload):
        for arch in sorted({c.key.arch for c in analysis}):
            cs = main_config(analysis, workload, mode, arch)
            if cs is not None:
                line, result = mode_verdict(cs, metrics.CATALOGUE[
                    (workload, mode)], fails, accel_tcg)
                lines.append(line)
                results.append(result)
    if anonmm_not_running(measured):
        out += [NOT_PORTED + " What follows compares two anon_vma kernels; "
                "any difference is noise or a harness problem.", ""]
    else:
        out += [headline(results), ""]
    out += lines + ["", tally(analysis, workload), ""]
    return out


def verdicts(records: list[dict], analysis: list[stats.ConfigStats],
             accel_tcg: bool) -> list[str]:
    out = ["## Verdicts", ""]
    for workload in metrics.WORKLOADS:
        out += workload_verdict(workload, records, analysis, accel_tcg)
    return out


# --- memory-size recommendation -------------------------------------------

def swap_groups(records: list[dict]) -> dict[tuple, dict[int, list[dict]]]:
    """(arch, params text) -> mem_mb -> swap-mem records (failed too)."""
    out: dict[tuple, dict[int, list[dict]]] = {}
    for rec in records:
        if rec.get("experiment") == "swap-mem" and \
                rec.get("workload") == "swap":
            key = (str(rec.get("arch")), params_text(
                {k: v for k, v in (rec.get("params") or {}).items()
                 if k != "seed"}))
            out.setdefault(key, {}).setdefault(
                int(rec.get("mem_mb") or 0), []).append(rec)
    return out


def pswpout(rec: dict) -> float | None:
    m = rec.get("metrics") or {}
    if "pswpout_pages" in m:
        return m["pswpout_pages"]
    if "fill_pswpout_pages" in m or "passes_pswpout_pages" in m:
        return (m.get("fill_pswpout_pages") or 0) + \
            (m.get("passes_pswpout_pages") or 0)
    return None


def no_swap_from(sizes: dict[int, list[dict]], stack: str) -> int | None:
    """The smallest memory size at which no measured boot of stack
    swapped out a page (pswpout_pages == 0)."""
    for mem in sorted(sizes):
        vals = [pswpout(r) for r in sizes[mem] if r.get("stack") == stack
                and not stats.is_failed(r)]
        vals = [v for v in vals if v is not None]
        if vals and all(v == 0 for v in vals):
            return mem
    return None


def swap_cell(recs: list[dict], stack: str) -> list[str]:
    mine = [r for r in recs if r.get("stack") == stack]
    ok = [r for r in mine if not stats.is_failed(r)]
    nfail = len(mine) - len(ok)
    s = stats.summarize(stats.metric_values(ok, "swapout_per_s"))
    swapped = [v for v in (pswpout(r) for r in ok) if v is not None]
    state = "—" if not swapped else (
        "no swap" if all(v == 0 for v in swapped) else "swaps")
    return [cell(s, nfail), state if ok else ""]


def memory_recommendation(records: list[dict]) -> list[str]:
    out = ["## Memory-size recommendation (swap-mem)", ""]
    groups = swap_groups(records)
    if not groups:
        return out + ["Not measured.", ""]
    for (arch, ptext), sizes in sorted(groups.items()):
        out += [f"**{arch}**, swap {ptext}:", ""]
        for stack in STACKS:
            out.append("- " + recommend(stack, sizes))
        rows = [[f"{mem} MB"] + swap_cell(sizes[mem], BASE) +
                swap_cell(sizes[mem], NEW) for mem in sorted(sizes)]
        out += [""] + table(["guest memory", "anon_vma swap-out (pages/s)",
                             "anon_vma", "anonmm swap-out (pages/s)",
                             "anonmm"], rows) + [""]
    return out


def mean0(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def recommend(stack: str, sizes: dict[int, list[dict]]) -> str:
    measured = {mem: [r for r in recs if r.get("stack") == stack
                      and not stats.is_failed(r)]
                for mem, recs in sizes.items()}
    measured = {m: rs for m, rs in measured.items() if rs}
    if not measured:
        return f"{stack}: not measured."
    mem = no_swap_from(sizes, stack)
    rates = {m: mean0(stats.metric_values(rs, "swapout_per_s"))
             for m, rs in measured.items()}
    best = max(rates, key=lambda m: rates[m])
    rate = rates[best]
    fastest = f"fastest swap-out at {best} MB ({fmt(rate)} pages/s)" \
        if rate > 0 else "no size swapped out a page"
    if mem is None:
        return (f"{stack}: swaps at every size tried (up to "
                f"{max(measured)} MB); {fastest}. Give it more memory to "
                f"stop swapping.")
    return (f"{stack}: no swap-out from {mem} MB: give at least {mem} MB "
            f"to runs that must not swap, less to measure swap-out; "
            f"{fastest}.")


# --- experiments -----------------------------------------------------------

def metadata_experiments(metadata: dict) -> list[str]:
    """The experiment names in metadata: a list of names, or the
    catalogue's JSON description (a list of objects with a name)."""
    value = metadata.get("experiments") or []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            value = [v.strip() for v in value.split(",") if v.strip()]
    names = []
    for item in value if isinstance(value, list) else []:
        name = item.get("name") if isinstance(item, dict) else item
        if name and str(name) not in names:
            names.append(str(name))
    return names


def experiment_names(records: list[dict], metadata: dict) -> list[str]:
    names = metadata_experiments(metadata)
    extra = sorted({str(r.get("experiment")) for r in records} - set(names))
    return names + extra


def config_rows(cs: stats.ConfigStats, fails: dict[tuple, int]
                ) -> list[list[str]]:
    rows = []
    first = True
    for name, c in cs.comparisons.items():
        if c.base is None and c.new is None and not any(
                fails.get(key_of(cs.key, s)) for s in STACKS):
            continue
        m = metrics.lookup(name, cs.key.workload, cs.key.mode)
        what = f"{cs.key.workload}/{cs.key.mode}" if first else ""
        conf = config_text(cs.key) if first else ""
        first = False
        rows.append([what, conf, metric_text(m),
                     cell(c.base, fails.get(key_of(cs.key, BASE), 0)),
                     cell(c.new, fails.get(key_of(cs.key, NEW), 0)),
                     ratio_cell(c.ratio), mark_cell(c)])
    return rows


def failed_only_rows(experiment: str, analysis: list[stats.ConfigStats],
                     failed: list[dict]) -> list[list[str]]:
    """Configurations of which every boot of both stacks failed."""
    seen = {key_of(c.key, "")[:-1] for c in analysis}
    rows, done = [], set()
    for rec in failed:
        k = failure_key(rec, "")[:-1]
        if rec.get("experiment") != experiment or k in seen or k in done:
            continue
        done.add(k)
        n = {s: sum(r.get("stack") == s and failure_key(r, "")[:-1] == k
                    for r in failed) for s in STACKS}
        rows.append([f"{rec.get('workload')}/{rec.get('mode')}",
                     f"{rec.get('arch')} {rec.get('mem_mb')}MB "
                     f"{params_text(rec.get('params'))}", "all",
                     cell(None, n[BASE]), cell(None, n[NEW]), "—", ""])
    return rows


def plot_links(run_dir: Path, experiment: str, plot_files: list[Path],
               shown: set[Path]) -> list[str]:
    """Links to the figures of experiment not shown in an earlier
    section (each figure appears once, where its first experiment is)."""
    out = []
    for f in plot_files:
        if f.suffix == ".png" and f not in shown and \
                experiment in plots.figure_experiments(f):
            shown.add(f)
            png = Path(os.path.relpath(f, run_dir)).as_posix()
            svg = Path(os.path.relpath(f.with_suffix(".svg"),
                                       run_dir)).as_posix()
            out += [f"![{f.stem}]({png})", "", f"([SVG]({svg}))", ""]
    return out


def experiments(run_dir: Path, records: list[dict], metadata: dict,
                analysis: list[stats.ConfigStats], plot_files: list[Path]
                ) -> list[str]:
    failed = [r for r in records if stats.is_failed(r)]
    fails = failed_counts(failed)
    out = ["## Experiments", ""]
    shown: set[Path] = set()
    for exp in experiment_names(records, metadata):
        out += [f"### {exp}", ""]
        if exp in EXPERIMENT_TEXT:
            out += [EXPERIMENT_TEXT[exp] + ".", ""]
        mine = [c for c in analysis if c.key.experiment == exp]
        nfail = sum(r.get("experiment") == exp for r in failed)
        rows = [row for c in mine for row in config_rows(c, fails)]
        rows += failed_only_rows(exp, analysis, failed)
        if not rows:
            out += ["Not measured.", ""]
            continue
        if nfail:
            out += [f"{nfail} failed boot(s), listed under Failures.", ""]
        out += table(["workload/mode", "configuration", "metric", "anon_vma",
                      "anonmm", "anonmm/anon_vma [95% CI]", "mark"], rows)
        out += [""] + plot_links(run_dir, exp, plot_files, shown)
    return out


# --- failures --------------------------------------------------------------

def fence(text: str) -> str:
    """A code fence longer than any run of backticks in text."""
    longest, run = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def failures(failed: list[dict]) -> list[str]:
    out = ["## Failures", ""]
    if not failed:
        return out + ["None: every boot finished.", ""]
    out += [f"{len(failed)} failed boot(s); none of them is a number in "
            "any table.", ""]
    for i, rec in enumerate(failed, 1):
        out += [f"### Failure {i}: {rec.get('stack')} {rec.get('arch')} "
                f"{rec.get('mem_mb')} MB {rec.get('workload')}/"
                f"{rec.get('mode')} rep {rec.get('rep')}", "",
                f"- experiment: {rec.get('experiment')}",
                f"- stack: {rec.get('stack')}, arch: {rec.get('arch')}, "
                f"memory: {rec.get('mem_mb')} MB",
                f"- workload: {rec.get('workload')}, mode: {rec.get('mode')}, "
                f"params: {params_text(rec.get('params'))}",
                f"- repetition: {rec.get('rep')}, boot: `{rec.get('boot')}`",
                f"- failure: {rec.get('failure') or 'unknown'}", ""]
        excerpt = str(rec.get("excerpt") or "(no excerpt)")
        f = fence(excerpt)
        out += [f, excerpt, f, ""]
    return out
