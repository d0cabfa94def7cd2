"""Figures from records, each saved as PNG and SVG: every figure the
workload modules declare, drawn when its records exist (figures.py has
the drawing helpers they share)."""

from pathlib import Path

from . import workloads


def figures() -> dict[str, tuple[str, ...]]:
    """Figure stem -> the experiments whose records it shows."""
    return {f.stem: f.experiments for f in workloads.figures()}


def make_plots(records: list[dict], out_dir: Path) -> list[Path]:
    """Every figure whose records exist; the files written."""
    files: list[Path] = []
    for figure in workloads.figures():
        files += figure.draw(records, out_dir)
    return files


def figure_experiments(path: Path) -> tuple[str, ...]:
    """The experiments a written figure shows (by its file name)."""
    return figures().get(path.stem, ())
