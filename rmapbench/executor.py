"""Running boots with resume: the one executor of run, check and smoke.

A Job is one guest boot with a stable key.  execute() boots every job
whose result is not yet in the store (results/<run>/boots/<key>.json,
its console in logs/<key>.log), turns each finished boot into a result
with the caller's judge, stores it atomically and says one line about
it, with the host that ran it (node: on a cluster, where the boot
ran).  An interrupted run keeps what it finished; the same command
again runs only the rest.  Several boots at a time (workers) share the
host.
"""

import json
import socket
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from . import guest, plan, qemu, scratch, store, testbed
from .progress import Progress


@dataclass(frozen=True)
class Job:
    key: str                 # file-name safe, unique within the run
    label: str               # what the progress line says
    boot: qemu.Boot


Judge = Callable[[Job, guest.GuestRun], dict]
Say = Callable[[Job, dict], None]


def execute(jobs: list[Job], rdir: Path, accel: str, judge: Judge,
            say: Say, workers: int = 1, what: str = "boot") -> list[dict]:
    """The result of every job, in order: stored ones as they were,
    the others booted now (workers at a time) and stored."""
    todo = [j for j in jobs if not store.boot_done(rdir, j.key)]
    scratch.sweep()         # what runs killed outright left in the cache
    if len(todo) < len(jobs):
        print(f"resuming {rdir.name}: {len(jobs) - len(todo)} of "
              f"{len(jobs)} {what}s already finished", flush=True)
    progress = Progress(len(todo), what,
                        work=sum(weight(j.boot) for j in todo))

    def one(job: Job) -> dict:
        progress.note(f"{job.label} ({clock_text(accel, job.boot.clock)})")
        run = guest.run(job.boot, store.log_file(rdir, job.key), accel)
        judged = judge(job, run)     # may find a failure in the results
        result = {"key": job.key, "seconds": round(run.boot.seconds, 2),
                  "failure": run.failure, "command": run.boot.command,
                  "timed_out": run.boot.timed_out,
                  "qemu_rc": run.boot.qemu_rc,
                  "node": socket.gethostname(),
                  "phases": guest.phases(run), **judged}
        store.save_boot(rdir, job.key, result)
        progress.step_done(weight(job.boot))
        say(job, result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        done = {r["key"]: r for r in pool.map(one, todo)}
    return [done.get(j.key) or stored(rdir, j.key) for j in jobs]


def weight(boot: qemu.Boot) -> int:
    """A boot's share of the work, for the ETA: the cases it runs (a
    pack's plan has one mark line per case), 1 for any other."""
    marks = sum(1 for line in boot.plan.splitlines()
                if line.split(" ", 1)[0] == plan.MARK)
    return max(1, marks)


def clock_text(accel: str, clock: str) -> str:
    """'tcg', or 'tcg, icount' for a boot on another clock."""
    entry = testbed.clock(clock)
    accel = qemu.accel_of(accel, entry)
    return accel if clock == testbed.HOST else f"{accel}, {clock}"


def stored(rdir: Path, key: str) -> dict:
    return json.loads(store.boot_file(rdir, key).read_text())
