"""The workloads: every module of this package but base.py is
one workload (base.py says what a module declares).  Adding a workload
is bench/rmb-<name>.c, a module here and their tests; nothing else names
it.
"""

import importlib
import pkgutil

from ..errors import UserError
from ..testbed import HOST
from .base import (REGIMES, Crossover, Experiment, Figure, Metric, Mode,
                   SizeSearch, Workload)


def discover() -> dict[str, Workload]:
    """The WORKLOAD of every module here, by Workload.order: experiments
    run, and the report's verdicts and summary rows follow, in it."""
    found = [importlib.import_module(f"{__name__}.{m.name}").WORKLOAD
             for m in pkgutil.iter_modules(__path__) if m.name != "base"]
    return {w.name: w for w in sorted(found, key=lambda w: (w.order,
                                                            w.name))}


WORKLOADS = discover()

__all__ = ["REGIMES", "Crossover", "Experiment", "Figure", "Metric", "Mode",
           "SizeSearch", "Workload",
           "WORKLOADS", "workload", "experiments", "searches", "figures",
           "mode"]


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


def searches() -> tuple[SizeSearch, ...]:
    """The comparison's memory-size searches, in order."""
    return tuple(s for w in WORKLOADS.values() for s in w.searches)


def figures() -> tuple[Figure, ...]:
    return tuple(f for w in WORKLOADS.values() for f in w.figures)


def own_clock(name: str) -> str:
    """The clock whose configurations stand for an experiment in the
    verdicts: the first it names (the host's for others)."""
    found = [e for e in experiments() if e.name == name]
    return found[0].clocks[0] if found else HOST


def experiment_text(name: str) -> str | None:
    """The report's one line about an experiment."""
    return next((e.text for e in experiments() if e.name == name), None)
