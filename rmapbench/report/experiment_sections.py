"""The report's section per experiment: every configuration with every
compared metric, then a table per stack variant the experiment ran (its
lane against the same base boots, the headline's ratio beside it), then
the experiment's figures."""

import os
from pathlib import Path

from .. import figures, metrics, plots, workloads
from ..analysis import ConfigStats
from ..record import (Config, headline, is_failed, is_variant, lane,
                      swapped_out)
from ..testbed import BASE, NEW
from ..tables import cell, mark_cell, params_text, ratio_cell, table
from . import facts, measured
from .compare import RATIO, STACKS, Fails, config_text, failed_counts, \
    key_of, metric_text


def experiment_names(records: list[dict], metadata: dict) -> list[str]:
    names = facts.metadata_experiments(metadata)
    extra = sorted({str(r.get("experiment")) for r in records} - set(names))
    return names + extra


def config_rows(cs: ConfigStats, fails: Fails
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


def failed_only_rows(experiment: str, analysis: list[ConfigStats],
                     failed: list[dict]) -> list[list[str]]:
    """Configurations of which every boot of both stacks failed."""
    seen = {c.key.config() for c in analysis}
    rows, done = [], set()
    for rec in failed:
        k = Config.of(rec)
        if rec.get("experiment") != experiment or k in seen or k in done:
            continue
        done.add(k)
        n = {s: sum(lane(r) == s and Config.of(r) == k
                    for r in failed) for s in STACKS}
        rows.append([f"{rec.get('workload')}/{rec.get('mode')}",
                     f"{rec.get('arch')} {rec.get('mem_mb')}MB "
                     f"{params_text(rec.get('params'))}", "all",
                     cell(None, n[BASE]), cell(None, n[NEW]), "—", ""])
    return rows


def variant_header(variant: str) -> list[str]:
    return ["workload/mode", "configuration", "metric", BASE, variant,
            f"variant/{BASE} [95% CI]", "mark", f"{NEW}/{BASE} (headline)"]


def variant_rows(cs: ConfigStats, variant: str, fails: Fails
                 ) -> list[list[str]]:
    """The lane variant against BASE at one configuration, metric by
    metric, the headline's ratio beside each; a lane whose every boot
    there failed says so."""
    versus = cs.versus(variant)
    what = [f"{cs.key.workload}/{cs.key.mode}", config_text(cs.key)]
    failed = fails.get(key_of(cs.key, variant), 0)
    if not versus:
        return [what + ["all", "", cell(None, failed), "—", "", ""]] \
            if failed else []
    rows = []
    for name, c in versus.items():
        if c.base is None and c.new is None:
            continue
        m = metrics.lookup(name, cs.key.workload, cs.key.mode)
        own = cs.comparisons.get(name)
        rows.append((what if not rows else ["", ""]) + [
            metric_text(m), cell(c.base, fails.get(key_of(cs.key, BASE), 0)),
            cell(c.new, failed), ratio_cell(c.ratio), mark_cell(c),
            ratio_cell(own.ratio) if own else "—"])
    return rows


def variant_tables(exp: str, records: list[dict],
                   mine: list[ConfigStats], fails: Fails
                   ) -> list[str]:
    """A table per stack variant of experiment exp (context: the
    verdicts and the summary count the headline only)."""
    out = []
    for variant in sorted({lane(r) for r in records
                           if r.get("experiment") == exp and is_variant(r)}):
        rows = [row for c in mine for row in variant_rows(c, variant, fails)]
        if rows:
            out += [f"Variant **{variant}** (context, not counted in the "
                    f"verdicts) against the same {BASE} boots:", ""]
            out += table(variant_header(variant), rows) + [""]
    return out


def figure_setting(records: list[dict], exps: tuple[str, ...]) -> str:
    """How a figure's boots ran, from their records (its experiments'
    variants, 'fork-rate-smp' of 'fork-rate', included, as the figure
    draws them): accel and clock, vCPUs, and whether they swapped."""
    mine = [r for r in records if not is_failed(r)
            and any(figures.of_experiment(r, e) for e in exps)]
    if not mine:
        return ""
    runs = sorted({f"{r.get('accel')}, {r.get('clock') or 'host'} clock"
                   for r in mine})
    vcpus = sorted({int(r.get("vcpus") or 1) for r in mine})
    counts = [c for c in map(swapped_out, mine) if c is not None]
    swap = ("swap-out not counted" if not counts else
            "under memory pressure (pages swapped out)" if any(counts)
            else "no swap-out")
    return (f"Measured under {'; '.join(runs)}, on "
            f"{'/'.join(map(str, vcpus))} vCPU, {swap}.")


def plot_links(run_dir: Path, experiment: str, plot_files: list[Path],
               shown: set[Path], records: list[dict] | None = None
               ) -> list[str]:
    """Links to the figures of experiment not shown in an earlier
    section (each figure appears once, where its first experiment is),
    each with how its boots ran."""
    out = []
    for f in plot_files:
        exps = plots.figure_experiments(f)
        if f.suffix == ".png" and f not in shown and experiment in exps:
            shown.add(f)
            png = Path(os.path.relpath(f, run_dir)).as_posix()
            svg = Path(os.path.relpath(f.with_suffix(".svg"),
                                       run_dir)).as_posix()
            setting = figure_setting(records or [], tuple(exps))
            out += [f"![{f.stem}]({png})", ""]
            out += [setting, ""] if setting else []
            out += [f"([SVG]({svg}))", ""]
    return out


def experiments(run_dir: Path, records: list[dict], metadata: dict,
                analysis: list[ConfigStats], plot_files: list[Path]
                ) -> list[str]:
    failed = [r for r in records if is_failed(r)]
    fails = failed_counts(failed)
    out = ["## Experiments", ""]
    shown: set[Path] = set()
    for exp in experiment_names(records, metadata):
        out += [f"### {exp}", ""]
        text = workloads.experiment_text(exp)
        if text:
            out += [text + ".", ""]
        out += measured.how_measured(exp, metadata, records)
        mine = [c for c in analysis if c.key.experiment == exp]
        nfail = sum(r.get("experiment") == exp for r in failed)
        rows = [row for c in mine for row in config_rows(c, fails)]
        rows += failed_only_rows(exp, analysis, failed)
        if not rows:
            out += ["Not measured.", ""]
            continue
        if nfail:
            out += [f"{nfail} failed boot(s), listed under Failures.", ""]
        out += table(["workload/mode", "configuration", "metric", BASE, NEW,
                      RATIO, "mark"], rows) + [""]
        out += variant_tables(exp, records, mine, fails)
        out += plot_links(run_dir, exp, plot_files, shown,
                          headline(records))
    return out
