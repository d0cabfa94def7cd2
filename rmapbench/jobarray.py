"""A run as Slurm job arrays (harness.py compare/run --slurm).

The submitting command plans the run as a local one does (runner.prepare,
runner.wanted) and, instead of booting, cuts the round's boots into
slices and submits them: boots timed on the host clock in an array whose
tasks each have a node of their own (--exclusive), each slice holding
every boot of its points, so both stacks of a point run on one node;
the other boots in an array whose tasks share nodes; each memory-size
search in a task of its own.  A job that waits for them (afterany,
`harness.py slurm-next`) decides the next round from what is stored and
submits it, or writes the records, plots and report.

Everything goes through the run directory, which every node must see:
results/<run>/slurm.json (the command, what a node must have, each
round's slices and job ids), the boots each task stores as a local run
does (executor.py: a boot's file appears only when it is complete, so a
task killed anywhere loses only the boot it was in), the tasks' output
in results/<run>/slurm/, the searches' answers there.  A task runs
`harness.py slurm-task RUN --round R --slice I`: the same command's
plan again, its slice's boots only.
"""

import json
import math
import shlex
import socket
import platform
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from . import paths, qemu, runner, sizing, slurm, store
from .errors import UserError
from .experiments import Case
from .profiles import Target
from .store import Answer

STATE = "slurm.json"
ALONE, SHARED, SEARCH = "alone", "shared", "search"
# Most tasks of one round (sbatch's MaxArraySize is 1001 by default)
MOST_TASKS = 1000
# Minutes a task gets beyond its boots' timeouts (planning, images)
SLACK_MIN = 10
# A guest's memory plus what QEMU and the harness take beside it
QEMU_MB = 768
FINISH_MB = 4096


@dataclass(frozen=True)
class Slice:
    """What one task runs: boots (groups of case keys, each one boot,
    runner.shared_boots) or one size search (its id, search_id)."""
    kind: str                      # ALONE, SHARED or SEARCH
    groups: tuple[tuple[str, ...], ...]
    minutes: int
    mem_mb: int
    cpus: int = 1


def facts() -> dict[str, str]:
    """What a node must share with the submitting host: the QEMU that
    boots the guests, the Debian release, the Python that runs us."""
    try:
        debian = Path("/etc/debian_version").read_text().strip()
    except OSError:
        debian = "none"
    return {"QEMU": qemu.qemu_version(), "Debian release": debian,
            "Python": platform.python_version()}


def check_node(needs: dict[str, str], have: dict[str, str],
               node: str) -> None:
    """Refuse to boot on a node unlike the submitting host."""
    for what, want in needs.items():
        if have.get(what) != want:
            raise UserError(f"node {node}: {what} is '{have.get(what)}', "
                            f"the submitting host's '{want}': install the "
                            "same Debian release and packages on every "
                            "node ('make setup'), or leave this node out "
                            "(sbatch --exclude)")


# --- cutting a round into slices ----------------------------------------

def boot_units(run: runner.Run, cases: list[Case]
               ) -> dict[str, list[list[list[Case]]]]:
    """The round's boots (groups of cases) in units no slice splits, by
    kind: for boots timed on the host clock (ALONE), every boot of one
    point (both stacks, every repetition: one node's numbers); for the
    others (SHARED), each boot alone."""
    together, alone = runner.shares(run, cases)
    by_point: dict[object, list[list[Case]]] = {}
    for group in runner.shared_boots(alone).values():
        by_point.setdefault(group[0].config, []).append(group)
    return {ALONE: list(by_point.values()),
            SHARED: [[g] for g in runner.shared_boots(together).values()]}


def cost(unit: list[list[Case]]) -> float:
    """The most seconds a unit's boots may take (their timeouts)."""
    return sum(runner.group_job(g).boot.timeout_s for g in unit)


def assign(units: list, weights: list[float], n: int) -> list[list]:
    """units in n bins of about equal weight, heaviest first into the
    lightest bin (no bin empty if there are n units)."""
    bins: list[list] = [[] for _ in range(max(1, min(n, len(units))))]
    load = [0.0] * len(bins)
    for i in sorted(range(len(units)), key=lambda i: -weights[i]):
        k = load.index(min(load))
        bins[k].append(units[i])
        load[k] += weights[i]
    return [b for b in bins if b]


def slice_of(kind: str, units: list[list[list[Case]]]) -> Slice:
    groups = [g for unit in units for g in unit]
    boots = [runner.group_job(g).boot for g in groups]
    seconds = sum(b.timeout_s for b in boots)
    return Slice(kind, tuple(tuple(c.key() for c in g) for g in groups),
                 SLACK_MIN + math.ceil(seconds / 60),
                 max(b.mem_mb for b in boots) + QEMU_MB,
                 max(b.smp for b in boots))


def boot_slices(run: runner.Run, todo: list[Case], most: int
                ) -> list[Slice]:
    """The round's boots as slices: those alone first, at most most
    slices of each kind."""
    out = []
    for kind, units in boot_units(run, todo).items():
        for b in assign(units, [cost(u) for u in units], most):
            out.append(slice_of(kind, b))
    return out


def search_id(search, target: Target, stack: str) -> str:
    return f"{search.name}:{target.profile}:{target.arch}:{stack}"


def search_jobs(searches: list, stacks: list[str],
                targets: list[Target]) -> list[tuple]:
    """(search, target, stack) of every bisection, as sizing.run_searches
    runs them."""
    return [(s, t, stack) for s in searches for a in s.experiment.arches
            for t in targets if t.arch == a for stack in stacks]


def search_slices(jobs: list[tuple], rdir: Path) -> list[Slice]:
    """A task per bisection whose answer is not stored yet."""
    out = []
    for s, t, stack in jobs:
        key = search_id(s, t, stack)
        if answer_file(rdir, key).exists():
            continue
        probes = sizing.most_probes(s.lo, s.hi, s.step)
        out.append(Slice(SEARCH, ((key,),), SLACK_MIN + math.ceil(
            probes * s.experiment.timeout_s / 60), s.hi + QEMU_MB))
    return out


# --- the state of a run on Slurm: slurm.json -------------------------------

def state_file(rdir: Path) -> Path:
    return rdir / STATE


def out_dir(rdir: Path) -> Path:
    return rdir / "slurm"


def answer_file(rdir: Path, key: str) -> Path:
    return out_dir(rdir) / "answers" / f"{key.replace(':', '_')}.json"


def load_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise UserError(f"{path} is corrupt ({err}): delete it and run "
                        "the command again") from err


def load(rdir: Path) -> dict:
    path = state_file(rdir)
    if not path.exists():
        raise UserError(f"{rdir} has no {STATE}: it was not run with "
                        "--slurm")
    return load_json(path)


def slices_of(rnd: dict) -> list[Slice]:
    return [Slice(s["kind"], tuple(tuple(g) for g in s["groups"]),
                  s["minutes"], s["mem_mb"], s.get("cpus", 1))
            for s in rnd["slices"]]


def job_name(run_id: str) -> str:
    return f"rmapbench-{run_id}"


def new_state(rdir: Path, accel: str, argv: list[str], extra: list[str],
              most: int) -> dict:
    """A submission's state: its command, what a node must have, its
    number (the run's earlier submissions', plus one: its tasks' output
    files are named apart)."""
    before = load(rdir).get("submission", 0) \
        if state_file(rdir).exists() else 0
    return {"argv": argv, "run_id": rdir.name, "accel": accel,
            "needs": facts(), "sbatch": extra, "tasks": most,
            "submission": before + 1, "rounds": []}


def out_prefix(state: dict, rnd: int) -> str:
    """'s2-r1-': the output files of round rnd of submission 2."""
    return f"s{state.get('submission', 1)}-r{rnd}-"


# --- submitting ------------------------------------------------------------

def harness_line(*args: str) -> str:
    """The shell line a job runs: this interpreter, this harness."""
    words = [sys.executable, str(paths.REPO / "harness.py"), *args]
    return " ".join(w if w.startswith('"$') else shlex.quote(w)
                    for w in words)


def arrays(rdir: Path, rnd: int, slices: list[Slice], prefix: str
           ) -> list[tuple[str, slurm.Array]]:
    """One array per kind of slice, its tasks numbered by slice."""
    out = []
    for kind in (ALONE, SHARED, SEARCH):
        idx = [i for i, s in enumerate(slices) if s.kind == kind]
        if not idx:
            continue
        mine = [slices[i] for i in idx]
        out.append((kind, slurm.Array(
            job_name(rdir.name),
            harness_line("slurm-task", str(rdir), "--round", str(rnd),
                         "--slice", '"$SLURM_ARRAY_TASK_ID"'),
            str(out_dir(rdir) / f"{prefix}{kind}-%a.out"), idx[0], idx[-1],
            exclusive=kind == ALONE, cpus=max(s.cpus for s in mine),
            mem_mb=max(s.mem_mb for s in mine),
            minutes=max(s.minutes for s in mine))))
    return out


def finish_job(rdir: Path, rnd: int, after: list[str], prefix: str
               ) -> slurm.Array:
    return slurm.Array(job_name(rdir.name),
                       harness_line("slurm-next", str(rdir), "--round",
                                    str(rnd)),
                       str(out_dir(rdir) / f"{prefix}next.out"),
                       mem_mb=FINISH_MB, minutes=120, after=tuple(after))


def describe(slices: list[Slice], jobs: dict[str, str]) -> list[str]:
    """What a submission says, a line per array."""
    lines = []
    for kind, what in ((ALONE, "boots on the host clock, a node each"),
                       (SHARED, "boots sharing nodes"),
                       (SEARCH, "size searches")):
        mine = [s for s in slices if s.kind == kind]
        if mine:
            n = sum(len(s.groups) for s in mine) if kind != SEARCH \
                else len(mine)
            lines.append(f"  job {jobs[kind]}: {n} {what}, in {len(mine)} "
                         "task(s)")
    lines.append(f"  job {jobs['next']}: when they end, the next round, "
                 "or the records, plots and report (a size run: the "
                 "answers)")
    return lines


def submit_round(run: runner.Run, state: dict, todo: list[Case],
                 searches: list[tuple]) -> dict:
    """Submit a round: its boots, the searches not answered yet, and
    the job after them.  The state saved, with the round's job ids."""
    return submit_slices(run.rdir, state, boot_slices(
        run, todo, state["tasks"]) + search_slices(searches, run.rdir))


def submit_slices(rdir: Path, state: dict, slices: list[Slice]) -> dict:
    """Submit slices as the state's next round, and the job after
    them; the state saved with the round's job ids."""
    rnd = len(state["rounds"]) + 1
    out_dir(rdir).mkdir(parents=True, exist_ok=True)
    jobs: dict[str, str] = {}
    prefix = out_prefix(state, rnd)
    for kind, job in arrays(rdir, rnd, slices, prefix):
        jobs[kind] = slurm.submit(job, paths.REPO, state["sbatch"])
    after = finish_job(rdir, rnd, list(jobs.values()), prefix)
    jobs["next"] = slurm.submit(after, paths.REPO, state["sbatch"])
    state["rounds"].append({
        "round": rnd, "started": time.time(), "jobs": jobs,
        "slices": [asdict(s) for s in slices]})
    store.write_json(state_file(rdir), state)
    print(f"submitted round {rnd} of {rdir.name}:", flush=True)
    print("\n".join(describe(slices, jobs)), flush=True)
    print(f"progress: harness.py status {rdir.name}", flush=True)
    return state


def refuse_busy(run_id: str) -> None:
    """A run whose jobs are still queued or running is not submitted
    again: its boots would run twice."""
    busy = slurm.jobs_named(job_name(run_id))
    if busy:
        ids = sorted({j.split("_")[0] for j, _, _ in busy})
        raise UserError(f"run {run_id} has jobs still queued or running "
                        f"({', '.join(ids)}): wait for them ('harness.py "
                        f"status {run_id}') or cancel them (scancel "
                        f"{' '.join(ids)}), then run the command again")


# --- a task ------------------------------------------------------------

def cases_of(run: runner.Run, groups: tuple[tuple[str, ...], ...]
             ) -> list[Case]:
    """The cases a slice names, made again from the run's points."""
    reps = 1 + max((int(k.rsplit("_r", 1)[1]) for g in groups for k in g),
                   default=0)
    known = {c.key(): c for p in run.points for rep in range(reps)
             for c in p.cases(run.stacks, rep)}
    missing = [k for g in groups for k in g if k not in known]
    if missing:
        raise UserError(f"{run.run_id}: the plan has no boot {missing[0]}: "
                        "the repository or kernels changed since the "
                        "submission; run the command again to plan anew")
    return [known[k] for g in groups for k in g]


def run_boots(run: runner.Run, sl: Slice) -> None:
    """A slice's boots, one at a time (the node's other tasks are other
    slices'), each stored as it ends; those stored already skipped."""
    runner.execute(cases_of(run, sl.groups), run.rdir, run.run_id,
                   run.accel, 1)


def run_search(run: runner.Run, key: str, jobs: list[tuple],
               apart: bool = True) -> Answer:
    """One bisection, its answer stored for the job after the round;
    its probes in results/<run>-<search>/ if apart (a comparison's
    searches, as sizing.run_searches does), else in the run's own
    directory (harness.py size)."""
    found = [(s, t, stack) for s, t, stack in jobs
             if search_id(s, t, stack) == key]
    if not found:
        raise UserError(f"{run.run_id}: no size search {key} in the plan: "
                        "run the command again to plan anew")
    s, t, stack = found[0]
    probes = f"{run.run_id}-{s.name}" if apart else run.run_id
    answer = sizing.search(s.experiment, stack, t, s.goal, s.lo, s.hi,
                           s.step, probes, run.accel, s.text)
    store.write_json(answer_file(run.rdir, key), asdict(answer))
    return answer


def slice_at(state: dict, rnd: int, index: int) -> Slice:
    rounds = state["rounds"]
    if not 1 <= rnd <= len(rounds):
        raise UserError(f"round {rnd}: {state['run_id']} has rounds 1 to "
                        f"{len(rounds)}")
    slices = slices_of(rounds[rnd - 1])
    if not 0 <= index < len(slices):
        raise UserError(f"slice {index}: round {rnd} of "
                        f"{state['run_id']} has slices 0 to "
                        f"{len(slices) - 1}")
    return slices[index]


def check_here(state: dict) -> None:
    """Refuse to boot on this node if it is unlike the submitting host,
    or lacks the KVM the run boots under."""
    check_node(state["needs"], facts(), socket.gethostname())
    if state["accel"] == "kvm" and not qemu.kvm_present():
        raise UserError(f"node {socket.gethostname()}: the run boots "
                        "under KVM (the submitting host's), and this node "
                        "has no usable /dev/kvm: give the nodes KVM, or "
                        "submit with --accel tcg")


def run_task(run: runner.Run, state: dict, rnd: int, index: int,
             jobs: list[tuple], apart: bool = True) -> None:
    """Slice index of round rnd, on this node (apart: run_search's)."""
    check_here(state)
    sl = slice_at(state, rnd, index)
    if sl.kind == SEARCH:
        print(run_search(run, sl.groups[0][0], jobs, apart).text(),
              flush=True)
    else:
        run_boots(run, sl)


# --- after a round -----------------------------------------------------

def missing(rdir: Path, rnd: dict) -> list[str]:
    """The boots and searches of a round that nothing stored: their
    task died, was cancelled or ran out of time."""
    out = []
    for sl in slices_of(rnd):
        for group in sl.groups:
            done = answer_file(rdir, group[0]).exists() \
                if sl.kind == SEARCH else store.boot_done(rdir, group[0])
            if not done:
                out.append(group[0])
    return out


def answers(rdir: Path) -> list[Answer]:
    """The searches' answers the tasks stored."""
    folder = out_dir(rdir) / "answers"
    return [store.answer_of(load_json(p))
            for p in sorted(folder.glob("*.json"))] \
        if folder.is_dir() else []
