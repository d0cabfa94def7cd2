"""harness.py status RUN: how far a run is, from what it stored.

For a run submitted with --slurm: each round's boots finished of those
planned, the failed ones named, an ETA from the round's pace, its jobs
as squeue sees them, and the lines of its tasks' output that say why a
task stopped (an error of ours, a time limit, a node lost).  For a
local run: the boots stored and the failed ones.
"""

import time
from pathlib import Path

from . import jobarray, slurm, store
from .errors import UserError
from .progress import fmt_seconds

# What a task's output says when the task ended early: ours, then
# slurmstepd's ('*** JOB 12 ON n1 CANCELLED AT ... DUE TO TIME LIMIT ***')
STOPPED = ("harness.py: error:", "Traceback", "CANCELLED", "DUE TO",
           "slurmstepd: error:")
KINDS = {jobarray.ALONE: "boots on the host clock",
         jobarray.SHARED: "boots sharing nodes",
         jobarray.SEARCH: "size searches", "next": "the next step"}


def boots_of(rdir: Path) -> dict[str, dict]:
    """The stored boots by key."""
    if not (rdir / "boots").is_dir():
        return {}
    return {b["key"]: b for b in store.load_boots(rdir)}


def eta(elapsed: float, done: int, left: int) -> str:
    if not left:
        return "none left"
    if not done:
        return "? (no boot finished yet)"
    return fmt_seconds(elapsed / done * left)


def round_lines(rdir: Path, rnd: dict, boots: dict[str, dict],
                now: float) -> list[str]:
    """A round's progress and its failed boots."""
    slices = jobarray.slices_of(rnd)
    keys = [g[0] for s in slices if s.kind != jobarray.SEARCH
            for g in s.groups]
    searches = [s.groups[0][0] for s in slices if s.kind == jobarray.SEARCH]
    done = [k for k in keys if k in boots]
    failed = [k for k in done if boots[k].get("failure")]
    answered = [k for k in searches
                if jobarray.answer_file(rdir, k).exists()]
    elapsed = now - rnd["started"]
    left = len(keys) - len(done) + len(searches) - len(answered)
    parts = [f"{len(done)} of {len(keys)} boots finished, {len(failed)} "
             "failed"] if keys or not searches else []
    if searches:
        parts.append(f"{len(answered)} of {len(searches)} size searches "
                     "answered")
    head = f"round {rnd['round']}: {'; '.join(parts)}"
    lines = [f"{head}; elapsed {fmt_seconds(elapsed)}, ETA "
             f"{eta(elapsed, len(done) + len(answered), left)}"]
    lines += [f"  failed: {k}: {boots[k]['failure']} (on "
              f"{boots[k].get('node', '?')})" for k in failed]
    return lines


def job_lines(run_id: str, rnd: dict) -> list[str]:
    """The round's jobs as squeue sees them (one line saying so if
    squeue cannot be asked here)."""
    try:
        rows = slurm.jobs_named(jobarray.job_name(run_id))
    except UserError as err:
        return [f"  jobs {', '.join(sorted(rnd['jobs'].values(), key=int))}"
                f": their states "
                f"are unknown here ({err})"]
    lines = []
    for kind, job in sorted(rnd["jobs"].items(),
                            key=lambda kv: list(KINDS).index(kv[0])):
        mine = [(state, why) for jid, state, why in rows
                if jid == job or jid.startswith(f"{job}_")]
        counts: dict[str, int] = {}
        for state, why in mine:
            what = state.lower() + (f" ({why})" if state == "PENDING"
                                    and why not in ("None", "") else "")
            counts[what] = counts.get(what, 0) + 1
        said = ", ".join(f"{n} {w}" for w, n in counts.items()) or \
            "not queued (ended)"
        lines.append(f"  job {job} ({KINDS.get(kind, kind)}): {said}")
    return lines


def stopped_lines(rdir: Path, state: dict) -> list[str]:
    """The lines of the tasks' output (this submission's) that say why
    a task stopped."""
    out = []
    mine = f"s{state.get('submission', 1)}-*.out"
    for path in sorted(jobarray.out_dir(rdir).glob(mine)):
        for line in path.read_text(errors="replace").splitlines():
            if any(mark in line for mark in STOPPED):
                out.append(f"  {path.name}: {line.strip()}")
                break
    return out


def local_text(rdir: Path, boots: dict[str, dict]) -> str:
    failed = [k for k, b in boots.items() if b.get("failure")]
    lines = [f"run {rdir.name}: {len(boots)} boots stored, {len(failed)} "
             "failed (a local run: its own progress lines tell what it "
             "plans; 'harness.py status' counts the planned boots of "
             "--slurm runs)"]
    return "\n".join(lines + [f"  failed: {k}: {boots[k]['failure']}"
                              for k in failed])


def text(rdir: Path, now: float | None = None) -> str:
    """The status of the run in rdir."""
    if not rdir.is_dir():
        raise UserError(f"no run at {rdir}: see 'ls {rdir.parent}'")
    boots = boots_of(rdir)
    if not jobarray.state_file(rdir).exists():
        return local_text(rdir, boots)
    state = jobarray.load(rdir)
    now = time.time() if now is None else now
    lines = [f"run {rdir.name} on Slurm: submission "
             f"{state.get('submission', 1)}, {len(state['rounds'])} "
             f"round(s); {len(boots)} cases stored in all"]
    for rnd in state["rounds"]:
        lines += round_lines(rdir, rnd, boots, now)
    if state["rounds"]:
        lines += job_lines(state["run_id"], state["rounds"][-1])
    lines += stopped_lines(rdir, state)
    report = rdir / "report.md"
    if report.exists():
        when = time.localtime(report.stat().st_mtime)
        lines.append(f"report: {report} (written "
                     f"{time.strftime('%Y-%m-%d %H:%M', when)})")
    return "\n".join(lines)
