"""What a workload module declares: its modes and metrics, experiments,
figures, plan extras and how its result lines become records.

A workload is one module of this package (vma.py, fork.py, ...) holding
one Workload; workloads/__init__.py lists them.  Generic code (the
experiment expansion, statistics, report and figures) reads these
declarations and knows no workload by name.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..record import Config
from ..testbed import FORK_ORDER, HOST, variants_of

# The other values of anonmm's fork order (testbed.FORK_ORDER), as the
# stack variants an experiment boots beside its headline (Experiment.variants)
FORK_ORDERS = variants_of(FORK_ORDER)

LOWER = "lower_better"
HIGHER = "higher_better"
# A metric shown for context; neither scheme "wins" on it.
NEUTRAL = "informational"


@dataclass(frozen=True)
class Metric:
    """A compared metric.  deterministic: an exact count the kernel gives
    (slab deltas, page tables, copied pages): equal repetitions are shown
    as one exact value without a spread, not as a timing with noise.
    timed: a time or a rate, read off the guest's clock: its repetitions
    go on until its ratio's interval is narrow (repetitions.py)."""
    name: str            # the field of records' metrics
    label: str           # for humans
    unit: str            # as shown in tables and on axes
    direction: str       # LOWER, HIGHER or NEUTRAL
    deterministic: bool  # an exact count: equal reps carry no spread
    timed: bool = False

    @property
    def lower_better(self) -> bool | None:
        """Whether less is better; None: neither scheme wins on it."""
        return {LOWER: True, HIGHER: False}.get(self.direction)


# Names of times and rates (units are in the names: README)
TIMED_SUFFIXES = ("_ns", "_per_s")


def metric(name: str, label: str, unit: str, direction: str = LOWER,
           exact: bool = False, timed: bool | None = None) -> Metric:
    """timed defaults to what the name says (..._ns, ..._per_s)."""
    if timed is None:
        timed = not exact and name.endswith(TIMED_SUFFIXES)
    return Metric(name, label, unit, direction, exact, timed)


# The regimes of the report's decision section, in its order: what a
# reader deciding between the schemes runs.  A mode names the regime it
# measures (Mode.regime); a regime no mode names is reported as not
# measured, never dropped.
REGIMES: tuple[tuple[str, str], ...] = (
    ("vma", "VMA-heavy and lowmem-bound"),
    ("fork", "fork-heavy"),
    ("mremap", "mremap-heavy"),
    ("reclaim", "big bundles and families under swap"),
    ("fastpath", "fast path, no memory pressure"),
    ("migration", "page migration: move_pages, compaction, NUMA "
     "balancing"),
    ("ksm", "KSM: merging duplicate pages, and reclaiming them"),
    ("collapse", "THP collapse: khugepaged and MADV_COLLAPSE"),
)


@dataclass(frozen=True)
class Mode:
    """One mode of a workload: the record kind compared (summary, or one
    line per generation...) and its metrics, the headline first.  main:
    the experiments whose configurations stand for the mode in the
    summary table and the verdicts.
    main_params: (parameter, value) pairs the standing configuration
    has, where it has the parameter, so that a larger sweep ('compare
    --full') does not move the decision to another setting; else the
    middle of the sweep stands.  regime: the key of REGIMES its headline
    decides ("": none; a ceiling or a context measurement).  needs:
    profile features every run of the mode needs (Experiment.needs)."""
    name: str
    metrics: tuple[Metric, ...]
    record: str = "summary"
    main: tuple[str, ...] = ()
    regime: str = ""
    main_params: tuple[tuple[str, object], ...] = ()
    needs: tuple[str, ...] = ()     # as Experiment.needs, for every run


@dataclass(frozen=True)
class Crossover:
    """A point of a sweep the decision section finds from the data: the
    smallest value of param, among experiment's configurations on its
    own clock, at which NEW is behind BASE on metric by more than pct
    percent with a significant (or exact) difference.  what: the point
    in words, e.g. "the width W at which anonmm's swap-out falls more
    than 5% behind"."""
    experiment: str
    param: str
    metric: str
    pct: float
    what: str


@dataclass(frozen=True)
class Experiment:
    """One workload in one mode swept over parameter values, guest
    memory sizes and arches.  text is for the report and takes no part
    in the run id (describe()).  clocks: the guest clocks it runs on
    (testbed.CLOCKS), its own first (the verdicts use it), any other a
    cross-check the report shows beside it; ICOUNT suits CPU-bound
    paths, HOST what waits on a device.  max_reps: a cap on its timed
    repetitions below the clock's (0: the clock's); full: its sweep
    and memory sizes in 'compare --full' where they differ.  packs: its
    points run one after another in one boot with the other packing
    points of the same machine (stack, arch, memory, clock, vCPUs,
    image) and repetition (runner.py), which saves each point a boot
    of its own.  Only for points whose compared metrics do not depend
    on what the kernel did before them (icount timings of CPU-bound
    paths, rates, counts of the workload's own objects), never for
    memory counted in pages or whole slabs nor for reclaim's walks:
    packed, those move outside their spread between fresh boots
    (docs/measurements.md).  variants: stack variants it also runs
    (testbed.stack_variant: a boot option's other value, by its kernel
    arguments), each on its own stack's boots only and compared against
    the same base boots; the headline boots run every option's
    default.  needs: profile features (profiles.FEATURES) its guests
    must have: it runs on the kernels of the profiles that have them
    only."""
    name: str
    workload: str
    mode: str
    arches: tuple[str, ...]
    sweep: dict = field(default_factory=dict)   # param -> list of values
    fixed: dict = field(default_factory=dict)   # param -> value
    mem_mb: dict = field(default_factory=dict)  # arch -> list of sizes
    timeout_s: float = 300.0
    append: str = ""                            # extra kernel arguments
    text: str = ""                              # one line for the report
    clocks: tuple[str, ...] = (HOST,)
    # the guest's vCPU counts: each a point of its own; SMP boots on the
    # host clock run alone (TCG runs a thread per vCPU)
    vcpus: tuple[int, ...] = (1,)
    max_reps: int = 0
    full: dict = field(default_factory=dict)    # sweep=, mem_mb= overrides
    packs: bool = False
    variants: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()


@dataclass(frozen=True)
class SizeSearch:
    """A memory-size search the comparison runs (sizing.py): per stack
    and arch, the smallest guest, to within step MB between lo and hi, in
    which the one configuration of experiment (its sweep one value per
    parameter; its mem_mb unused) reaches goal ('completes' or
    'no-swap').  text says what it runs, for the report.  full_only:
    run by 'compare --full' alone (its family is --full's, or its
    probes may thrash for minutes)."""
    experiment: Experiment
    goal: str
    lo: int
    hi: int
    step: int
    text: str
    full_only: bool = False

    @property
    def name(self) -> str:
        return self.experiment.name


Records = list[dict]
Draw = Callable[[Records, Path], list[Path]]


@dataclass(frozen=True)
class Figure:
    """A figure (stem.png and stem.svg) and the experiments whose records
    it shows; an experiment name also stands for its variants ('mremap'
    for 'mremap-shared').  draw returns the files written, [] (and a log
    line) when its records are missing."""
    stem: str
    experiments: tuple[str, ...]
    draw: Draw


# (boot identity, console) -> records; see record.py
RecordsOf = Callable[[dict, Any], Records]
# records -> Markdown lines of a report section
Section = Callable[[Records], list[str]]


@dataclass(frozen=True)
class Workload:
    name: str
    program: str | None                  # bench/<program>.c, None: no C
    modes: tuple[Mode, ...]
    experiments: tuple[Experiment, ...]
    figures: tuple[Figure, ...] = ()
    sample_s: int | None = None          # init's sampler interval
    extras: tuple[str, ...] = ()         # image extras (extras.py)
    # the plan lines that run a configuration of it (its mode and
    # parameters); None: plan.run(program, mode=..., params...)
    steps: Callable[[Config], list[str]] | None = None
    # its records from a console; None: one per RMB-RESULT line
    records: RecordsOf | None = None
    # report sections of its own, after the verdicts
    sections: tuple[Section, ...] = ()
    # the decision section's crossover points of its sweeps
    crossovers: tuple[Crossover, ...] = ()
    # the decision section's memory-size advice: a line per stack, []
    # when its records hold none
    sizing: Section | None = None
    # memory-size searches of the comparison (its decision's "Memory
    # size" list)
    searches: tuple[SizeSearch, ...] = ()
    # its place among the workloads (runs, verdicts, summary rows)
    order: int = 100

    def mode(self, name: str) -> Mode | None:
        return next((m for m in self.modes if m.name == name), None)

    def mode_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.modes)
