"""Memory sizing per scheme: the smallest guest, to within a step, in
which a workload completes (no boot failure: no OOM kill, no fault), or
completes without swapping a page out.  A probe whose kernel faulted
(BUG, WARNING, Oops...) says nothing about memory: the search stops
there, and its answer is a failure naming the fault.

A bisection over guest memory for each stack apart, one boot a probe,
assuming what is searched for holds from some size on (more memory never
makes a run fail or swap).  Every probe is a boot of the run directory
results/<run-id>/ like any other (resumable; its records feed the
report), and the answers (store.Answer) go to sizing.json there.  The
comparison runs the searches its workloads declare (SizeSearch) in run
directories of their own, results/<comparison>-<search>/, and keeps the
answers in its own sizing.json.
"""

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from . import experiments, guest, qemu, runner, store
from .errors import UserError
from .profiles import Target, Where, as_targets
from .record import Config, is_failed, swapped_out
from .store import Answer

# what must hold of a probe's records
Goal = Callable[[list[dict]], bool]


def completes(recs: list[dict]) -> bool:
    """It booted, ran and verified: no failed record."""
    return bool(recs) and not any(is_failed(r) for r in recs)


def no_swap(recs: list[dict]) -> bool:
    """It completed and counted no page swapped out (a record that
    counts none proves nothing)."""
    return completes(recs) and all(swapped_out(r) == 0 for r in recs)


GOALS: dict[str, Goal] = {"completes": completes, "no-swap": no_swap}


def check_range(lo: int, hi: int, step: int) -> None:
    if step < 1 or lo < qemu.MIN_MEM_MB or hi < lo:
        raise UserError(f"size range {lo}..{hi} MB step {step}: give "
                        f"{qemu.MIN_MEM_MB} <= --lo <= --hi and a positive "
                        "--step")
    if (hi - lo) % step:
        raise UserError(f"--hi {hi} is not --lo {lo} plus a multiple of "
                        f"--step {step}")


def bisect(held: Callable[[int], bool], lo: int, hi: int, step: int
           ) -> tuple[int | None, int | None]:
    """(smallest size that holds, largest probed that did not), sizes
    lo + k * step, probing hi and lo first."""
    if not held(hi):
        return None, hi
    if held(lo):
        return lo, None
    bad, good = lo, hi          # bad fails, good holds
    while good - bad > step:
        mid = bad + (good - bad) // step // 2 * step
        if held(mid):
            good = mid
        else:
            bad = mid
    return good, bad


class ProbeFault(Exception):
    """A probe's kernel faulted: the search cannot go on."""


def kernel_fault(recs: list[dict]) -> str | None:
    """The first kernel fault among a probe's failed records."""
    for r in recs:
        if is_failed(r) and \
                str(r.get("failure", "")).startswith(guest.KERNEL_FAULT):
            return str(r["failure"])
    return None


def what(exp: experiments.Experiment) -> str:
    """'mremap shared K=16 R_mb=16': the one configuration of exp."""
    (point,) = experiments.points(exp)
    return " ".join([exp.workload, exp.mode] +
                    [f"{k}={v}" for k, v in point])


def most_probes(lo: int, hi: int, step: int) -> int:
    """hi, lo, then halving the steps between them."""
    return 1 + (hi > lo) + max(0, ((hi - lo) // step - 1).bit_length())


def search(exp: experiments.Experiment, stack: str, where: str | Target,
           goal: str, lo: int, hi: int, step: int, run_id: str, accel: str,
           text: str = "") -> Answer:
    """Bisect guest memory for one stack on one kernel (a bare arch:
    its minimal kernel)."""
    probes: dict[int, bool] = {}
    swapped: dict[int, float | None] = {}
    (target,) = as_targets([where])
    arch = target.label()

    def held(mem: int) -> bool:
        probe = replace(exp, mem_mb={target.arch: [mem]})
        rdir = runner.run_experiments([probe], [stack], [target], 1, run_id,
                                      "size", accel)
        (point,) = experiments.sweep_points(probe, [target])
        recs = [r for r in store.load_records(rdir)
                if r.get("stack") == stack
                and Config.of(r) == point.config]
        fault = kernel_fault(recs)
        if fault:
            print(f"size {stack} {arch}: {mem} MB: {fault}: the search "
                  "stops", flush=True)
            raise ProbeFault(f"{mem} MB: {fault}")
        probes[mem] = GOALS[goal](recs)
        counts = [swapped_out(r) for r in recs]
        swapped[mem] = (None if None in counts or not counts
                        else sum(c for c in counts if c is not None))
        why = next((f" ({r.get('failure')})" for r in recs
                    if is_failed(r)), "")
        print(f"size {stack} {arch}, probe {len(probes)} of at most "
              f"{most_probes(lo, hi, step)}: {mem} MB: "
              f"{goal} {'yes' if probes[mem] else 'no'}{why}", flush=True)
        return probes[mem]

    try:
        smallest, below = bisect(held, lo, hi, step)
        fault = None
    except ProbeFault as e:
        smallest, below, fault = None, None, str(e)
    return Answer(text or what(exp), stack, arch, goal, lo, hi, step,
                  smallest, below, dict(sorted(probes.items())), fault,
                  dict(sorted(swapped.items())))


def check_single(exp: experiments.Experiment) -> None:
    """A search is over memory only: one value per parameter."""
    many = [k for k, v in exp.sweep.items() if len(v) > 1]
    if many:
        raise UserError(f"size searches memory for one configuration: "
                        f"give one value of {', '.join(many)}")


def faulted(answers: list[Answer]) -> list[Answer]:
    return [a for a in answers if a.fault]


def run_searches(searches: list, stacks: list[str], where: Where,
                 run_id: str, accel: str,
                 jobs: int = runner.SHARED_JOBS) -> list[Answer]:
    """The comparison's searches (workloads.SizeSearch) on the kernels
    asked for (bare arches: the minimal ones), each in
    results/<run_id>-<search>/, the answers saved in
    results/<run_id>/sizing.json.  The bisections of different stacks
    and arches are independent and judge memory, not time, so jobs of
    them run at once (as boots whose timing is not at stake do)."""
    todo = [(s, t, stack) for s in searches for a in s.experiment.arches
            for t in as_targets(where) if t.arch == a for stack in stacks]

    def one(job: tuple) -> Answer:
        s, arch, stack = job
        return search(s.experiment, stack, arch, s.goal, s.lo, s.hi,
                      s.step, f"{run_id}-{s.name}", accel, s.text)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        answers = list(pool.map(one, todo))
    store.save_answers(store.run_dir(run_id), answers)
    return answers
