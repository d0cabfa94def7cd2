"""How many boots each point of a run gets, decided from the metric
declarations (each Mode's Metrics say which are exact counts and which are
timed), in the manner of mmtests and LKP deciding from spread.

- FIXED (--reps N): N boots per point and stack.
- EXACT (every compared metric of the mode is an exact count): one boot
  per point and stack; the check point of each experiment, clock and
  arch gets a second (the configuration its mode's verdict stands on,
  Mode.main_params, where the experiment is one of the mode's main
  ones; else the middle of its sweep), and if its two boots
  disagree on any exact metric, every point of that experiment, clock
  and arch is repeated as a TIMED one.
- REPEATS (timed metrics on an instruction-counting clock, in guests
  with no disk: nothing the host schedules reaches the guest's
  instructions, so a boot of one plan with one seed executes the same
  ones every time, docs/measurements.md): as EXACT, but the check
  point's second boot runs with another seed (qemu.Boot.seed), and
  every compared metric (Metric.direction not NEUTRAL) must move by at
  most SEED_TOLERANCE of its value on each lane, or the experiment is
  repeated as TIMED, each repetition with its own seed.  A replay
  proves nothing about the spread: reclaim and contention turn a
  different page layout into a different run, and the seed is what
  shows how far.
- TIMED: START boots per point and stack, then one more per round to
  each point where some timed metric's anonmm/anon_vma ratio has a 95%
  interval reaching beyond +-TARGET of the ratio, until the cap
  (CAP per clock, or the experiment's max_reps).  For per-generation
  records only the last generation counts (the one the verdicts use).
  A point with a failed boot gets no more.

A point's stack variants (Experiment.variants) get the boots its
headline decides: their ratios are context, so they never add a round,
though a variant's exact counts that disagree do repeat the experiment
as timed.

The decision is a function of the stored records, so a resumed run
takes the same decisions again.  Boots whose timing is not at stake
(an instruction-counting clock, or an EXACT experiment) may share the
host with another boot (shares_host).
"""

from dataclasses import dataclass

from . import metrics, settings, stats, testbed, workloads
from .analysis import SEED_TOLERANCE, TARGET, ConfigStats, config_stats
from .experiments import Point
from .record import Config, group, is_failed, lane
from .testbed import HOST, clock as clock_entry
from .store import EXACT, REPEATS
from .workloads import Experiment

FIXED, TIMED = "fixed", "timed"
# Per clock, by whether its timings repeat (testbed.Clock.repeatable):
# host-clock timings under TCG (swap, bundles, SMP) vary by tens of
# percent between boots on a 2-core host, and more rounds do not bring
# their ratios within +-3% (docs/measurements.md).  Three boots show the
# direction and an honest (wide) interval; the report says the cap was
# reached.  The icount clocks' CPU-bound timings do converge, so they
# start at two and keep rounds
START = {c.name: 2 if c.repeatable else 3 for c in testbed.CLOCKS}
CAP = {c.name: 6 if c.repeatable else 3 for c in testbed.CLOCKS}


@dataclass(frozen=True)
class Policy:
    kind: str           # FIXED, EXACT or TIMED
    start: int          # boots per stack to begin with
    cap: int            # at most
    target: float = TARGET

    def text(self) -> str:
        if self.kind == FIXED:
            return f"fixed: {self.start} boot(s) per point and stack"
        if self.kind == EXACT:
            return ("exact counts: one boot per point and stack, a second "
                    "at the check point (the standing or the middle one) "
                    "to check that they repeat")
        if self.kind == REPEATS:
            return ("boots that repeat exactly (an instruction-counting "
                    "clock, no disk): one boot per point and stack, a "
                    "second at the check point (the standing or the "
                    "middle one) with another seed, to "
                    "check that no compared metric moves by more than "
                    f"{SEED_TOLERANCE:.1%}")
        return (f"timed: {self.start} boots per point and stack, then one "
                f"more at a time while a timed ratio's 95% interval is "
                f"wider than ±{self.target:.0%}, at most {self.cap}")


@dataclass(frozen=True)
class Decision:
    """How many boots per stack a point wants now, and why."""
    boots: int
    why: str
    policy: Policy


def timed_policy(exp: Experiment, clock: str) -> Policy:
    cap = CAP.get(clock, CAP[HOST])
    if exp.max_reps:
        cap = min(cap, exp.max_reps)
    return Policy(TIMED, min(START.get(clock, START[HOST]), cap), cap)


def policy(exp: Experiment, clock: str, fixed: int | None) -> Policy:
    """The policy of exp on clock (fixed: --reps N)."""
    if fixed:
        return Policy(FIXED, fixed, fixed)
    mode = workloads.mode(exp.workload, exp.mode)
    if mode and all(m.deterministic for m in mode.metrics):
        return Policy(EXACT, 1, 2)
    if repeats_exactly(exp, clock):
        return Policy(REPEATS, 1, 2)
    return timed_policy(exp, clock)


def repeats_exactly(exp: Experiment, clock: str) -> bool:
    """Whether a second boot of a point of exp on clock would execute
    the same instructions as the first: the clock counts them, no disk
    is attached (a disk request completes at an instruction the host
    decides), and the point is not packed (Experiment.packs: what ran
    before it in its boot differs between repetitions; its repetitions
    cost a boot per machine, not per point, anyway)."""
    return (clock_entry(clock).repeatable and not exp.packs
            and not settings.swap_disk_mb(exp.append, 1))


def shares_host(exp: Experiment, clock: str) -> bool:
    """Whether a boot of exp on clock may run beside another boot: its
    timings do not depend on the host, or it has none."""
    mode = workloads.mode(exp.workload, exp.mode)
    untimed = bool(mode) and not any(m.timed for m in mode.metrics)
    return clock_entry(clock).repeatable or untimed


Index = dict[Config, dict[str, dict[int, list[dict]]]]


def index(records: list[dict]) -> Index:
    """config -> lane (record.lane) -> rep -> records."""
    out: Index = {}
    for rec in records:
        reps = out.setdefault(Config.of(rec), {}).setdefault(lane(rec), {})
        reps.setdefault(int(rec.get("rep", 0)), []).append(rec)
    return out


def finished(reps: dict[str, dict[int, list[dict]]], stacks: list[str],
             n: int) -> bool:
    """Every lane of stacks has boots 0..n-1 stored."""
    return all(all(r in reps.get(s, {}) for r in range(n)) for s in stacks)


def taken(reps: dict[str, dict[int, list[dict]]], n: int) -> list[dict]:
    """The records of repetitions below n."""
    return [rec for stack in reps.values() for rep, recs in stack.items()
            if rep < n for rec in recs]


def compared(recs: list[dict], workload: str, mode: str
             ) -> list[ConfigStats]:
    """Statistics of the record kind the mode compares; of
    per-generation records only the last generation."""
    kind = metrics.primary_record(workload, mode)
    groups = [(k, s) for k, s in group(recs).configs.items()
              if k.record == kind]
    gens = [k.generation for k, _ in groups if k.generation is not None]
    if gens:
        groups = [(k, s) for k, s in groups if k.generation == max(gens)]
    return [config_stats(k, s) for k, s in groups]


def within(ratio: stats.Ratio, target: float) -> bool:
    """The ratio's interval lies within +-target of it (a ratio that
    does not exist, or is 0, has nothing repetitions could narrow)."""
    return not ratio.value or ratio.reach <= target


def wide(recs: list[dict], workload: str, mode: str,
         target: float) -> list[str]:
    """The timed metrics whose ratio is not yet within target."""
    timed = [m for m in metrics.primary(workload, mode)
             if m.timed and m.direction != metrics.NEUTRAL]
    return sorted({m.name for cs in compared(recs, workload, mode)
                   for m in timed
                   if not within(cs.comparisons[m.name].ratio, target)})


def moved(recs: list[dict], workload: str, mode: str, names: list[str],
          tol: float) -> list[str]:
    """The metrics of names whose value on some lane moves between the
    repetitions in recs by more than tol of its mean (tol 0: at all)."""
    out = set()
    for cs in compared(recs, workload, mode):
        for sums in cs.summaries.values():
            out |= {n for n in names if n in sums and
                    sums[n].max - sums[n].min > tol * abs(sums[n].mean)}
    return sorted(out)


def disagree(recs: list[dict], workload: str, mode: str) -> list[str]:
    """The exact metrics whose repetitions differ on some stack."""
    return moved(recs, workload, mode,
                 [m.name for m in metrics.primary(workload, mode)
                  if m.deterministic], 0.0)


def seed_moved(recs: list[dict], workload: str, mode: str) -> list[str]:
    """The compared metrics (the mode's, but those of context) that move
    by more than SEED_TOLERANCE between the repetitions in recs, which
    booted with different seeds."""
    return moved(recs, workload, mode,
                 [m.name for m in metrics.primary(workload, mode)
                  if m.direction != metrics.NEUTRAL], SEED_TOLERANCE)


def timed_decision(point: Point, pol: Policy,
                   reps: dict[str, dict[int, list[dict]]],
                   stacks: list[str]) -> Decision:
    """Grow from pol.start while the last round is in, nothing failed,
    some timed ratio is wide and the cap is not reached."""
    e, n = point.exp, pol.start
    while True:
        if not finished(reps, stacks, n):
            return Decision(n, "running", pol)
        recs = taken(reps, n)
        if any(is_failed(r) for r in recs):
            return Decision(n, "a boot failed: no more repetitions", pol)
        left = wide(recs, e.workload, e.mode, pol.target)
        if not left:
            return Decision(n, f"every timed ratio within "
                            f"±{pol.target:.0%}", pol)
        if n >= pol.cap:
            return Decision(n, f"cap of {pol.cap} reached, wider than "
                            f"±{pol.target:.0%}: {', '.join(left)}", pol)
        n += 1


def check_point(points: list[Point], point: Point) -> Point:
    """The point whose second boot checks an EXACT experiment on one
    clock and arch: the one its mode's verdict stands on (Mode.main and
    main_params: a seed that moves the standing ratio must not go
    unseen), else the middle of its sweep."""
    def machine(p: Point) -> tuple:
        return p.exp.name, p.config.clock, p.config.arch
    mine = [p for p in points if machine(p) == machine(point)]
    entry = metrics.entry(point.exp.workload, point.exp.mode)
    if entry and point.exp.name in entry.main:
        params = [dict(p.config.params) for p in mine]
        standing = [p for p, got in zip(mine, params) if all(
            got.get(k, v) == v for k, v in entry.main_params)]
        mine = standing or mine
    return mine[len(mine) // 2]


def checked_decision(points: list[Point], point: Point, pol: Policy,
                     idx: Index, stacks: list[str]) -> Decision | None:
    """One boot, two at the check point; None when the check point's
    boots disagree (on an exact count; under REPEATS on any metric), or
    one of them failed and so checked nothing (the caller repeats the
    experiment as timed)."""
    check = check_point(points, point)
    reps = idx.get(check.config, {})
    what = "exact counts" if pol.kind == EXACT else "repeats exactly"
    if finished(reps, stacks, 2):
        e = point.exp
        recs = taken(reps, 2)
        if any(is_failed(r) for r in recs) or (
                disagree(recs, e.workload, e.mode) if pol.kind == EXACT
                else seed_moved(recs, e.workload, e.mode)):
            return None
    if point == check:
        return Decision(2, f"{what}, checked by a second boot", pol)
    return Decision(1, f"{what} (checked at the check point)", pol)


def lanes(point: Point, stacks: list[str]) -> list[str]:
    """The lanes a repetition of point boots (Point.lanes)."""
    return [c.lane for c in point.cases(stacks, 0)]


def decide(points: list[Point], point: Point, records: Index,
           stacks: list[str], fixed: int | None) -> Decision:
    stacks = lanes(point, stacks)
    pol = policy(point.exp, point.config.clock, fixed)
    if pol.kind == FIXED:
        return Decision(pol.start, "fixed by --reps", pol)
    if pol.kind in (EXACT, REPEATS):
        found = checked_decision(points, point, pol, records, stacks)
        if found:
            return found
        what = "exact counts" if pol.kind == EXACT else "metrics"
        pol = timed_policy(point.exp, point.config.clock)
        found = timed_decision(point, pol, records.get(point.config, {}),
                               stacks)
        return Decision(found.boots, f"{what} disagreed between "
                        f"boots, so repeated as timed: {found.why}", pol)
    return timed_decision(point, pol, records.get(point.config, {}), stacks)


def decisions(points: list[Point], records: list[dict], stacks: list[str],
              fixed: int | None) -> dict[Point, Decision]:
    idx = index(records)
    return {p: decide(points, p, idx, stacks, fixed) for p in points}
