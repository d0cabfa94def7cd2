"""The comparison report: results/<run-id>/report.md from records.

Sections: warnings (TCG, an anonmm stack that does not run anonmm), the
decision (per regime, crossovers, memory size; decision.py, which also
writes the plain-text summary.txt), the environment, the run's time by
phase, the config diff, a summary table, a verdict per workload, the
configurations measured on two clocks, the workloads' own sections (the
memory-size recommendation of swap), one section per experiment (its
clock and repetitions and why, every configuration, then its plots),
where a boot's time went and the failures.  A failed boot is named as
failed, with its excerpt, and never shown as a number.  A stack
variant's boots (testbed.BOOT_OPTIONS) appear only as labelled rows
beside the headline (decision, experiments) and in the failures: the
verdicts, the workloads' sections and the figures read the headline
boots.  One module per part: facts, decision, compare, experiments,
measured, failures; tables.py formats the cells.
"""

from pathlib import Path

from .. import store, workloads
from ..analysis import ConfigStats, analyse
from ..record import headline, is_failed
from . import compare, decision, experiment_sections, facts, failures
from . import measured, nodes

TEXT = "summary.txt"


def write_report(run_dir: Path, records: list[dict], metadata: dict,
                 plot_files: list[Path],
                 analysis: list[ConfigStats] | None = None) -> Path:
    """Write run_dir/report.md (atomically) and return its path."""
    path = run_dir / "report.md"
    store.write_atomic(path, render(run_dir, records, metadata, plot_files,
                                    analysis))
    write_text(run_dir, records, metadata, analysis)
    return path


def write_text(run_dir: Path, records: list[dict], metadata: dict,
               analysis: list[ConfigStats] | None = None) -> str:
    """Write run_dir/summary.txt, the plain-text decision and summary,
    and return it."""
    if analysis is None:
        analysis = analyse(
            records, checked=store.checked(metadata))
    text = decision.text_summary(
        f"rmapbench: {facts.run_id(run_dir, records, metadata)}", records,
        analysis, [r for r in records if is_failed(r)],
        store.answer_lines(run_dir))
    store.write_atomic(run_dir / TEXT, text)
    return text


def render(run_dir: Path, records: list[dict], metadata: dict,
           plot_files: list[Path],
           analysis: list[ConfigStats] | None = None) -> str:
    if analysis is None:
        analysis = analyse(
            records, checked=store.checked(metadata))
    failed = [r for r in records if is_failed(r)]
    accel = facts.tcg(metadata, records)
    parts = [f"# rmapbench report: "
             f"{facts.run_id(run_dir, records, metadata)}", ""]
    parts += facts.warnings(records, accel, metadata)
    if run_dir.exists():
        parts += nodes.warnings(store.load_boots(run_dir))
    parts += decision.decision(records, analysis, store.answer_lines(run_dir))
    parts += facts.environment(metadata, records)
    parts += measured.run_time(metadata)
    parts += facts.config_diff(metadata)
    parts += facts.debian_diff(metadata)
    parts += compare.summary_table(analysis, failed)
    parts += compare.verdicts(headline(records), analysis, accel)
    parts += measured.clocks_compared(analysis)
    parts += measured.interval_widths(analysis)
    for w in workloads.WORKLOADS.values():
        for section in w.sections:
            parts += section(headline(records))
    parts += experiment_sections.experiments(run_dir, records, metadata,
                                             analysis, plot_files)
    parts += measured.boot_time(run_dir)
    parts += failures.failures(failed)
    return "\n".join(parts).rstrip() + "\n"
