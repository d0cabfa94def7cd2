"""The comparison report: results/<run-id>/report.md from records.

Sections: warnings (TCG, an anonmm stack that does not run anonmm), the
environment, the run's time by phase, the config diff, a summary table,
a verdict per workload, the configurations measured on two clocks, the
workloads' own sections (the memory-size recommendation of swap), one
section per experiment (its clock and repetitions and why, every
configuration, then its plots), where a boot's time went and the
failures.  A failed boot is named as failed, with its excerpt, and never
shown as a number.  One module per part: facts, compare, experiments,
measured, failures; tables.py formats the cells.
"""

import os
from pathlib import Path

from .. import repetitions, stats, workloads
from . import compare, experiments, facts, failures, measured


def write_report(run_dir: Path, records: list[dict], metadata: dict,
                 plot_files: list[Path],
                 analysis: list[stats.ConfigStats] | None = None) -> Path:
    """Write run_dir/report.md (atomically) and return its path."""
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "report.md"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(render(run_dir, records, metadata, plot_files, analysis))
    os.replace(tmp, path)
    return path


def render(run_dir: Path, records: list[dict], metadata: dict,
           plot_files: list[Path],
           analysis: list[stats.ConfigStats] | None = None) -> str:
    if analysis is None:
        analysis = stats.analyse(
            records, checked=repetitions.checked(metadata))
    failed = [r for r in records if stats.is_failed(r)]
    accel = facts.tcg(metadata, records)
    parts = [f"# rmapbench report: "
             f"{facts.run_id(run_dir, records, metadata)}", ""]
    parts += facts.warnings(records, accel, metadata)
    parts += facts.environment(metadata, records)
    parts += measured.run_time(metadata)
    parts += facts.config_diff(metadata)
    parts += compare.summary_table(analysis, failed)
    parts += compare.verdicts(records, analysis, accel)
    parts += measured.clocks_compared(analysis)
    for w in workloads.WORKLOADS.values():
        for section in w.sections:
            parts += section(records)
    parts += experiments.experiments(run_dir, records, metadata, analysis,
                                     plot_files)
    parts += measured.boot_time(run_dir)
    parts += failures.failures(failed)
    return "\n".join(parts).rstrip() + "\n"
