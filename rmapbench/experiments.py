"""Experiments and the boots they expand into.

An experiment (declared by its workload's module) is one workload in one
mode swept over parameter values, guest memory sizes, arches and guest
clocks; each point of the sweep (a Point), on each stack and for each
repetition, is one boot (a Case), and so is each stack variant the
experiment declares (its own stack's boots only: the base stack's boots
of the point serve every lane).  How many repetitions a point gets is
repetitions.py's business.  The default comparison is every workload's
experiments.
"""

import hashlib
import itertools
import json
from dataclasses import dataclass, replace

from . import plan as guestplan
from . import programs, testbed, workloads
from .errors import UserError
from .profiles import MINIMAL, PROFILES, Where, as_targets, profile
from .record import Config
from .testbed import HOST
from .workloads import Experiment, SizeSearch


SWAP_MB = 1024


@dataclass(frozen=True)
class Case:
    """One boot: a configuration (an experiment point) on one stack, one
    repetition."""
    config: Config
    stack: str
    rep: int
    timeout_s: float
    packs: bool = False     # Experiment.packs
    variant: str = ""       # a stack variant's kernel arguments (testbed)

    def key(self) -> str:
        """A file-name-safe, unique, stable name for this boot (the
        host clock, one vCPU and the minimal profile name nothing; a
        stack variant's names its arguments)."""
        c = self.config
        params = "-".join(f"{k}{v}" for k, v in c.params)
        clock = "" if c.clock == HOST else f"_{c.clock}"
        smp = "" if c.vcpus == 1 else f"_smp{c.vcpus}"
        variant = f"_{self.variant}".replace(" ", "+") if self.variant \
            else ""
        profile = "" if c.profile == MINIMAL else f"_{c.profile}"
        return (f"{c.experiment}_{self.stack}_{c.arch}{profile}_m{c.mem_mb}"
                f"_{params or 'default'}{clock}{smp}{variant}_r{self.rep}"
                ).replace("/", "_")

    @property
    def lane(self) -> str:
        """Its stack, and its variant if it boots one (testbed.lane)."""
        return testbed.lane(self.stack, self.variant)

    def kernel_args(self) -> str:
        """What its boot adds to the harness's own kernel arguments:
        the experiment's, then its variant's."""
        return " ".join(a for a in (self.config.kernel_args, self.variant)
                        if a)

    def plan(self) -> str:
        """The guest plan: swap on, state before, the workload (sampled
        if it asks to be), state after; or the workload's own steps."""
        w = workloads.workload(self.config.workload)
        if w.steps:
            return guestplan.of(*w.steps(self.config))
        args = {"mode": self.config.mode, **dict(self.config.params)}
        sample = [guestplan.sample(w.sample_s)] if w.sample_s else []
        return guestplan.of(guestplan.swapon(), guestplan.info(), *sample,
                            guestplan.run(str(w.program), args),
                            guestplan.info())

    def extras(self) -> tuple[str, ...]:
        """The image extras its boot needs."""
        return workloads.workload(self.config.workload).extras


def by_name(names: list[str]) -> list[Experiment]:
    known = {e.name: e for e in workloads.experiments()}
    missing = [n for n in names if n not in known]
    if missing:
        searches = [s.name for s in workloads.searches()]
        raise UserError(f"unknown experiment(s) {', '.join(missing)}: "
                        f"choose from {', '.join([*known, *searches])}")
    return [known[n] for n in names]


def chosen(names: list[str] | None, full: bool = False
           ) -> tuple[list[Experiment], list[SizeSearch]]:
    """The comparison's experiments and memory-size searches of those
    names (None: all of them; a full_only search only if full), each
    experiment as 'compare --full' runs it if full."""
    searches = {s.name: s for s in workloads.searches()}
    if names is None:
        exps = list(workloads.experiments())
        picked = [s for s in searches.values() if full or not s.full_only]
    else:
        only_full = [n for n in names if n in searches
                     and searches[n].full_only and not full]
        if only_full:
            raise UserError(f"{', '.join(only_full)}: only 'compare "
                            "--full' runs this search; add --full, or "
                            "run 'harness.py size'")
        if all(n in searches for n in names):
            raise UserError(f"--experiments {','.join(names)} names only "
                            "size searches: add an experiment, or run "
                            "'harness.py size' for one configuration")
        exps = by_name([n for n in names if n not in searches])
        picked = [searches[n] for n in names if n in searches]
    return [full_exp(e) if full else e for e in exps], picked


def points(exp: Experiment) -> list[tuple[tuple[str, object], ...]]:
    """Every parameter combination of the sweep, fixed values added."""
    keys = sorted(exp.sweep)
    combos = itertools.product(*(exp.sweep[k] for k in keys))
    return [tuple(sorted({**exp.fixed, **dict(zip(keys, c))}.items()))
            for c in combos]


@dataclass(frozen=True, eq=False)
class Point:
    """One configuration of an experiment: its boots are its
    repetitions on every stack.  Points are told apart by identity
    (their experiments hold dicts); config names one."""
    exp: Experiment
    config: Config

    def case(self, stack: str, rep: int, variant: str = "") -> Case:
        return Case(self.config, stack, rep, self.exp.timeout_s,
                    self.exp.packs, variant)

    def lanes(self, stacks: list[str]) -> list[tuple[str, str]]:
        """(stack, variant) of every boot a repetition of the point
        wants: each stack's headline, then each variant the experiment
        declares whose stack is among stacks (an unknown variant is a
        UserError here, before any boot)."""
        variants = [testbed.stack_variant(v) for v in self.exp.variants]
        return [(s, "") for s in stacks] + [
            (v.stack, v.args) for v in variants if v.stack in stacks]

    def cases(self, stacks: list[str], rep: int) -> list[Case]:
        """The boots of repetition rep: one per lane."""
        return [self.case(s, rep, v) for s, v in self.lanes(stacks)]


def needs_of(exp: Experiment) -> tuple[str, ...]:
    """The profile features exp needs: its own and its mode's."""
    mode = workloads.mode(exp.workload, exp.mode)
    return tuple(dict.fromkeys((*exp.needs, *(mode.needs if mode else ()))))


def sweep_points(exp: Experiment, where: Where) -> list[Point]:
    """Every point of exp on the kernels where names (its arches, in
    exp's order: a bare arch is its minimal kernels) whose profile has
    what exp needs, each of its clocks and vCPU counts."""
    needs = needs_of(exp)
    targets = [t for t in as_targets(where)
               if profile(t.profile).has(needs)]
    return [Point(exp, Config(exp.name, t.arch, mem, exp.workload,
                              exp.mode, params, clock, vcpus, exp.append,
                              t.profile))
            for clock in exp.clocks for vcpus in exp.vcpus
            for a in exp.arches for t in targets if t.arch == a
            for mem in exp.mem_mb.get(a, [testbed.arch(a).mem_mb])
            for params in points(exp)]


def expand(experiments: list[Experiment], stacks: list[str],
           where: Where, reps: int) -> list[Case]:
    """All boots of reps repetitions each, repetition-major so an early
    stop still compares."""
    pts = [p for exp in experiments for p in sweep_points(exp, where)]
    return [case for rep in range(reps) for p in pts
            for case in p.cases(stacks, rep)]


def full_exp(exp: Experiment) -> Experiment:
    """exp as 'compare --full' runs it: its full sweep and sizes."""
    return replace(exp, **exp.full) if exp.full else exp


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
           timeout_s: float, append: str = "",
           clocks: tuple[str, ...] = (HOST,),
           vcpus: tuple[int, ...] = (1,),
           variants: tuple[str, ...] = ()) -> Experiment:
    """An experiment from the command line (harness.py run)."""
    w = workloads.workload(workload)
    modes = w.mode_names()
    mode = mode or modes[0]
    if mode not in modes:
        raise UserError(f"workload {workload} has no mode '{mode}': choose "
                        f"one of {', '.join(modes)}")
    for extra in w.extras:     # only where its image extras can be packed
        arches = [a for a in arches if a in testbed.arches_with(extra)]
    sweep = parse_params(params)
    if w.program:       # refused here, not by a guest after a boot
        programs.check(w.program, workload, mode, sweep)
    sizes = {a: parse_values(mem) for a in arches} if mem else {}
    for arch, values in sizes.items():
        if not all(isinstance(v, int) and v > 0 for v in values):
            raise UserError(f"malformed memory sizes '{mem}': use MB "
                            "numbers, e.g. 128,256")
    for clock in clocks:
        testbed.clock(clock)       # an unknown clock is refused here
    check_vcpus(vcpus, clocks)
    testbed.check_append(append)
    for variant in variants:
        testbed.stack_variant(variant)     # refused here, not by a boot
    return Experiment("custom", workload, mode, tuple(arches),
                      sweep=sweep, mem_mb=sizes,
                      timeout_s=timeout_s, append=append, clocks=clocks,
                      vcpus=vcpus, variants=variants)


def check_needs(exp: Experiment, where: Where) -> None:
    """A UserError, before any boot, if no kernel of where has every
    feature exp needs."""
    targets, needs = as_targets(where), needs_of(exp)
    if any(profile(t.profile).has(needs) for t in targets):
        return
    have = [p.name for p in PROFILES if p.has(needs)]
    chosen = ", ".join(t.label() for t in targets)
    raise UserError(f"{exp.name} needs {', '.join(needs)}, which no "
                    f"kernel chosen has ({chosen}): choose --profile "
                    f"{','.join(have) or '(none has it)'}")


MAX_VCPUS = 8


def parse_vcpus(value: str) -> tuple[int, ...]:
    """'1,2' -> (1, 2); a malformed list is refused before any boot."""
    parts = [v.strip() for v in value.split(",")]
    if not all(p.isdigit() for p in parts):
        raise UserError(f"malformed vCPU counts '{value}': use e.g. 1,2")
    return tuple(int(p) for p in parts)


def check_vcpus(vcpus: tuple[int, ...], clocks: tuple[str, ...]) -> None:
    """vCPU counts a guest can have on each clock, or a UserError before
    any boot."""
    bad = [n for n in vcpus if not 1 <= n <= MAX_VCPUS]
    if not vcpus or bad:
        raise UserError(f"vCPU count(s) {', '.join(map(str, bad)) or '(none)'}"
                        f" out of range: give 1 to {MAX_VCPUS}, e.g. "
                        "--vcpus 1,2")
    for clock in clocks:
        most = testbed.clock(clock).max_vcpus
        if max(vcpus) > most:
            others = [c.name for c in testbed.CLOCKS
                      if c.max_vcpus >= max(vcpus)]
            raise UserError(f"the {clock} clock boots guests of at most "
                            f"{most} vCPU(s), not {max(vcpus)}: run SMP "
                            f"points on another clock (--clock "
                            f"{' or --clock '.join(others)})")


# Experiment fields for the report only: not part of what a run is.
PRESENTATION = ("text",)


def describe(experiments: list[Experiment]) -> str:
    """A stable text of the experiments, for hashing and metadata."""
    return json.dumps([{k: v for k, v in e.__dict__.items()
                        if k not in PRESENTATION} for e in experiments],
                      sort_keys=True, default=list)


def digest(experiments: list[Experiment]) -> str:
    return hashlib.sha256(describe(experiments).encode()).hexdigest()[:12]
