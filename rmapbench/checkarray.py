"""harness.py check --slurm: the correctness suite's boots as a Slurm
job array, with jobarray.py's state, slices and submission.  The suite
judges correctness, not time, so its boots share nodes, a boot a task
(or more under --slurm-tasks); the job after them writes check.md and
check.json from what the tasks stored (check.run_check, which boots
nothing already stored), or names the boots no task stored."""

import math
from pathlib import Path

from . import jobarray, store
from .check.suite import Suite, SuiteJob, boot
from .errors import UserError


def slices(jobs: list[SuiteJob], most: int) -> list[jobarray.Slice]:
    """jobs in at most most slices of about equal timeouts."""
    bins = jobarray.assign(jobs, [sj.job.boot.timeout_s for sj in jobs],
                           most)
    return [jobarray.Slice(
        jobarray.SHARED, tuple((sj.job.key,) for sj in b),
        jobarray.SLACK_MIN + math.ceil(
            sum(sj.job.boot.timeout_s for sj in b) / 60),
        max(sj.job.boot.mem_mb for sj in b) + jobarray.QEMU_MB,
        max(sj.job.boot.smp for sj in b)) for b in bins]


def submit(suite: Suite, rdir: Path, accel: str, argv: list[str],
           extra: list[str], most: int) -> int:
    """Submit the suite's boots not stored in rdir yet."""
    jobarray.refuse_busy(rdir.name)
    state = jobarray.new_state(rdir, accel, argv, extra, most)
    todo = [sj for sj in suite.jobs if not store.boot_done(rdir, sj.job.key)]
    if len(todo) < len(suite.jobs):
        print(f"resuming {rdir.name}: {len(suite.jobs) - len(todo)} of "
              f"{len(suite.jobs)} checks already finished", flush=True)
    jobarray.submit_slices(rdir, state, slices(todo, most))
    return 0


def run_task(suite: Suite, rdir: Path, state: dict, rnd: int,
             index: int) -> None:
    """A slice's boots of the suite, on this node."""
    jobarray.check_here(state)
    keys = [g[0] for g in jobarray.slice_at(state, rnd, index).groups]
    known = {sj.job.key: sj for sj in suite.jobs}
    missing = [k for k in keys if k not in known]
    if missing:
        raise UserError(f"{rdir.name}: the suite has no boot {missing[0]}: "
                        "the repository or kernels changed since the "
                        "submission; run the command again to plan anew")
    boot([known[k] for k in keys], rdir, state["accel"])
