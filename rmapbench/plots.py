"""Figures from records, each saved as PNG and SVG: every figure the
workload modules declare, drawn when its records exist (figures.py has
the drawing helpers they share).  Figures draw the stacks' headline
boots; a stack variant's numbers are in the report's tables (its
records carry the stack's name, and a figure would draw them as the
stack's)."""

from pathlib import Path

from . import workloads
from .record import headline


def figures() -> dict[str, tuple[str, ...]]:
    """Figure stem -> the experiments whose records it shows."""
    return {f.stem: f.experiments for f in workloads.figures()}


def make_plots(records: list[dict], out_dir: Path) -> list[Path]:
    """Every figure whose records exist; the files written."""
    files: list[Path] = []
    main = headline(records)
    for figure in workloads.figures():
        files += figure.draw(main, out_dir)
    return files


def figure_experiments(path: Path) -> tuple[str, ...]:
    """The experiments a written figure shows (by its file name)."""
    return figures().get(path.stem, ())
