"""The workload catalogue: experiments, and the boots they expand into.

An experiment is one workload in one mode swept over parameter values,
guest memory sizes and arches; each point of the sweep, on each stack and
for each repetition, is one boot (a Case).  The default comparison is
DEFAULT_EXPERIMENTS.
"""

import hashlib
import itertools
import json
from dataclasses import dataclass, field

from . import plan, registry
from .errors import UserError

PROGRAMS = {"vma": "rmb-vma", "fork": "rmb-fork", "mremap": "rmb-mremap",
            "swap": "rmb-swap", "fio": None}
MODES = {"vma": ("count", "capacity"), "fork": ("breadth", "depth", "rate"),
         "mremap": ("unshared", "shared", "swapped"), "swap": ("family",),
         "fio": ("write4k",)}
SWAP_MB = 1024
FIO_ARGS = ("--name=ceiling --filename=/dev/vda --rw=write --bs=4k "
            "--direct=1 --ioengine=libaio --iodepth=32 --size=256M "
            "--output-format=json")


@dataclass(frozen=True)
class Experiment:
    name: str
    workload: str
    mode: str
    arches: tuple[str, ...]
    sweep: dict = field(default_factory=dict)   # param -> list of values
    fixed: dict = field(default_factory=dict)   # param -> value
    mem_mb: dict = field(default_factory=dict)  # arch -> list of sizes
    timeout_s: float = 300.0
    append: str = ""                            # extra kernel arguments


@dataclass(frozen=True)
class Case:
    """One boot: an experiment point on one stack, one repetition."""
    experiment: str
    stack: str
    arch: str
    mem_mb: int
    workload: str
    mode: str
    params: tuple[tuple[str, object], ...]
    rep: int
    timeout_s: float
    append: str = ""

    def key(self) -> str:
        """A file-name-safe, unique, stable name for this boot."""
        params = "-".join(f"{k}{v}" for k, v in self.params)
        return (f"{self.experiment}_{self.stack}_{self.arch}_m{self.mem_mb}"
                f"_{params or 'default'}_r{self.rep}").replace("/", "_")

    def plan(self) -> str:
        """The guest plan: swap on, state before, the workload, after."""
        if self.workload == "fio":
            return plan.of(plan.info(), plan.section("fio", f"fio {FIO_ARGS}"))
        args = {"mode": self.mode, **dict(self.params)}
        sample = [plan.sample(1)] if self.workload == "swap" else []
        return plan.of(plan.swapon(), plan.info(), *sample,
                       plan.run(PROGRAMS[self.workload], args), plan.info())

    def extras(self) -> tuple[str, ...]:
        """The image extras its boot needs."""
        return ("fio",) if self.workload == "fio" else ()


ALL = registry.arch_names()
DEFAULT_EXPERIMENTS = (
    Experiment("vma-cost", "vma", "count", ALL,
               sweep={"kind": ["split", "gap"]}, fixed={"V": 20000}),
    Experiment("lowmem", "vma", "count", ("i386",),
               sweep={"V": [5000, 20000, 80000]}),
    Experiment("capacity", "vma", "capacity", ("i386",),
               fixed={"low_floor_kb": 16384, "max_vmas": 50000},
               mem_mb={"i386": [1024]}, append="vmalloc=768M",
               timeout_s=900.0),
    Experiment("fork-breadth", "fork", "breadth", ALL,
               sweep={"N": [8, 32, 128]}, fixed={"V": 1000}),
    Experiment("fork-depth", "fork", "depth", ALL,
               fixed={"D": 16, "pages": 256}),
    Experiment("fork-rate", "fork", "rate", ALL,
               fixed={"V": 1000, "N": 300}),
    Experiment("mremap-unshared", "mremap", "unshared", ALL,
               fixed={"R_mb": 32, "moves": 10}),
    Experiment("mremap-shared", "mremap", "shared", ALL,
               sweep={"K": [1, 4, 16]}, fixed={"R_mb": 32, "moves": 10}),
    Experiment("mremap-swapped", "mremap", "swapped", ALL,
               fixed={"R_mb": 32, "moves": 10},
               mem_mb={"i386": [256], "x86_64": [256]}),
    Experiment("swap-mem", "swap", "family", ("x86_64",),
               fixed={"N": 4, "mb": 256, "passes": 2},
               mem_mb={"x86_64": [160, 224, 384]}, timeout_s=900.0),
    Experiment("swap-family", "swap", "family", ("x86_64",),
               sweep={"N": [1, 4, 16]}, fixed={"mb": 256, "passes": 2},
               mem_mb={"x86_64": [192]}, timeout_s=900.0),
    Experiment("swap-ceiling", "fio", "write4k", registry.arches_with("fio"),
               mem_mb={"x86_64": [512]}),
)


def by_name(names: list[str]) -> list[Experiment]:
    known = {e.name: e for e in DEFAULT_EXPERIMENTS}
    missing = [n for n in names if n not in known]
    if missing:
        raise UserError(f"unknown experiment(s) {', '.join(missing)}: "
                        f"choose from {', '.join(known)}")
    return [known[n] for n in names]


def points(exp: Experiment) -> list[tuple[tuple[str, object], ...]]:
    """Every parameter combination of the sweep, fixed values added."""
    keys = sorted(exp.sweep)
    combos = itertools.product(*(exp.sweep[k] for k in keys))
    return [tuple(sorted({**exp.fixed, **dict(zip(keys, c))}.items()))
            for c in combos]


def expand(experiments: list[Experiment], stacks: list[str],
           arches: list[str], reps: int) -> list[Case]:
    """All boots, repetition-major so an early stop still compares."""
    cases = []
    for rep in range(reps):
        for exp in experiments:
            for arch in (a for a in exp.arches if a in arches):
                for mem in exp.mem_mb.get(arch, [registry.arch(arch).mem_mb]):
                    for params in points(exp):
                        for stack in stacks:
                            cases.append(Case(
                                exp.name, stack, arch, mem, exp.workload,
                                exp.mode, params, rep, exp.timeout_s,
                                exp.append))
    return cases


def parse_values(text: str) -> list[object]:
    """'1,4,16' -> [1, 4, 16]; 'split,gap' -> ['split', 'gap']."""
    values = [v.strip() for v in text.split(",")]
    if not values or any(not v for v in values):
        raise UserError(f"malformed value list '{text}': use e.g. 1,4,16")
    return [int(v) if v.lstrip("-").isdigit() else v for v in values]


def parse_params(specs: list[str]) -> dict[str, list[object]]:
    """['N=1,4,16', 'mb=256'] -> {'N': [1, 4, 16], 'mb': [256]}."""
    sweep = {}
    for spec in specs:
        key, sep, values = spec.partition("=")
        if not sep or not key.strip():
            raise UserError(f"malformed parameter '{spec}': use KEY=V1,V2")
        sweep[key.strip()] = parse_values(values)
    return sweep


def custom(workload: str, mode: str | None, params: list[str],
           mem: str | None, arches: list[str],
           timeout_s: float, append: str = "") -> Experiment:
    """An experiment from the command line (harness.py run)."""
    if workload not in MODES:
        raise UserError(f"unknown workload '{workload}': choose one of "
                        f"{', '.join(MODES)}")
    mode = mode or MODES[workload][0]
    if mode not in MODES[workload]:
        raise UserError(f"workload {workload} has no mode '{mode}': choose "
                        f"one of {', '.join(MODES[workload])}")
    if workload == "fio":
        arches = [a for a in arches if a in registry.arches_with("fio")]
    sizes = {a: parse_values(mem) for a in arches} if mem else {}
    for arch, values in sizes.items():
        if not all(isinstance(v, int) and v > 0 for v in values):
            raise UserError(f"malformed memory sizes '{mem}': use MB "
                            "numbers, e.g. 128,256")
    return Experiment("custom", workload, mode, tuple(arches),
                      sweep=parse_params(params), mem_mb=sizes,
                      timeout_s=timeout_s, append=append)


def describe(experiments: list[Experiment]) -> str:
    """A stable text of the experiments, for hashing and metadata."""
    return json.dumps([e.__dict__ for e in experiments], sort_keys=True,
                      default=list)


def digest(experiments: list[Experiment]) -> str:
    return hashlib.sha256(describe(experiments).encode()).hexdigest()[:12]
