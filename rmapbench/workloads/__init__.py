"""The workload registry: one module per workload (base.py says what a
module declares).  Adding a workload is bench/rmb-<name>.c, a module
here and its entry in MODULES; nothing else names it.
"""

from . import fio, fork, mremap, swap, vma
from .base import Experiment, Figure, Metric, Mode, Workload
from ..errors import UserError

# In this order: experiments run, the report's verdicts and summary rows
# follow it.
MODULES = (vma, fork, mremap, swap, fio)
WORKLOADS: dict[str, Workload] = {m.WORKLOAD.name: m.WORKLOAD
                                  for m in MODULES}

__all__ = ["Experiment", "Figure", "Metric", "Mode", "Workload",
           "WORKLOADS", "workload", "experiments", "figures", "mode"]


def workload(name: str) -> Workload:
    """The workload called name, or a UserError naming the known ones."""
    if name not in WORKLOADS:
        raise UserError(f"unknown workload '{name}': choose one of "
                        f"{', '.join(WORKLOADS)}")
    return WORKLOADS[name]


def mode(workload_name: str, mode_name: str) -> Mode | None:
    w = WORKLOADS.get(workload_name)
    return w.mode(mode_name) if w else None


def experiments() -> tuple[Experiment, ...]:
    """The default comparison, in order."""
    return tuple(e for w in WORKLOADS.values() for e in w.experiments)


def figures() -> tuple[Figure, ...]:
    return tuple(f for w in WORKLOADS.values() for f in w.figures)


def experiment_text(name: str) -> str | None:
    """The report's one line about an experiment (older names too)."""
    for w in WORKLOADS.values():
        for e in w.experiments:
            if e.name == name:
                return e.text
        if name in w.old_texts:
            return w.old_texts[name]
    return None
