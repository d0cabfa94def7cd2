"""The command line's Slurm side: --slurm on run and compare, the
hidden commands a cluster's jobs run (slurm-task, slurm-next), and
status.  The planning is the local commands' own (cliargs.Inputs,
runner.prepare); jobarray.py cuts it into tasks."""

import argparse
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from . import checkarray, guest, jobarray, paths, runner, sizing, slurm
from . import status, store
from .check.suite import plan as check_plan, run_check
from .cliargs import Inputs, inputs_of, stacks_arg, targets_arg
from .errors import UserError


def add_options(p: argparse.ArgumentParser) -> None:
    """--slurm and its knobs, on run, compare, size and check."""
    p.add_argument("--slurm", action="store_true",
                   help="submit the boots to Slurm as job arrays (on a "
                   "directory every node sees: README 'Past one machine') "
                   "and return; 'harness.py status RUN' follows them")
    p.add_argument("--slurm-tasks", type=int, default=jobarray.MOST_TASKS,
                   metavar="N", help="with --slurm: at most N tasks per "
                   "array (default: a task per point, up to "
                   f"{jobarray.MOST_TASKS})")
    p.add_argument("--sbatch", default="", metavar="ARGS",
                   help="with --slurm: more sbatch options for every job, "
                   "e.g. '--partition=lab --account=mm'")


def require(args: argparse.Namespace) -> None:
    """What --slurm needs, checked before a build or a plan: Slurm's
    commands, sane knobs, and on a cluster of several nodes, the
    repository, results and cache on a filesystem they all see."""
    if args.slurm_tasks < 1:
        raise UserError(f"--slurm-tasks {args.slurm_tasks}: give at least 1")
    sbatch_args(args.sbatch)
    slurm.require()
    dirs = {"the repository": paths.REPO, "the results": paths.RESULTS,
            "the cache": paths.cache_dir()}
    slurm.require_shared({k: v.resolve() for k, v in dirs.items()},
                         slurm.nodes(), Path("/proc/mounts").read_text())


def sbatch_args(text: str) -> list[str]:
    try:
        words = shlex.split(text)
    except ValueError as err:
        raise UserError(f"--sbatch '{text}': {err}") from err
    bad = [w for w in words if not w.startswith("-")]
    if bad:
        raise UserError(f"--sbatch '{text}': '{bad[0]}' is not an option: "
                        "give sbatch options only, as --name=value")
    return words


def submit(args: argparse.Namespace, got: Inputs,
           argv: list[str] | None = None) -> int:
    """Plan as the local command does, then submit the first round."""
    run = runner.prepare(got.exps, got.stacks, got.targets, got.reps,
                         args.run_id, got.prefix, args.accel)
    jobarray.refuse_busy(run.run_id)
    state = jobarray.new_state(run.rdir, run.accel,
                               sys.argv[1:] if argv is None else argv,
                               sbatch_args(args.sbatch), args.slurm_tasks)
    todo = runner.wanted(run)[1] if got.boots else []
    runner.say_resumed(run.rdir, len(todo))
    jobarray.submit_round(run, state, todo, jobarray.search_jobs(
        got.searches, got.stacks, got.targets))
    return 0


@dataclass(frozen=True)
class Replanned:
    """A submitted run planned again on a node, from its stored
    command."""
    state: dict
    args: argparse.Namespace
    got: Inputs
    run: runner.Run


def replan(rdir: Path, parser: argparse.ArgumentParser) -> Replanned:
    """The plan of the run in rdir, as its submission made it: the same
    command, run id and accel."""
    state = jobarray.load(rdir)
    args = parser.parse_args(state["argv"])
    args.run_id, args.accel = state["run_id"], state["accel"]
    if store.run_dir(args.run_id).resolve() != rdir.resolve():
        raise UserError(f"this task finds results in {paths.RESULTS}, but "
                        f"the run is {rdir}: submit with RMAPBENCH_RESULTS "
                        "exported to the jobs (sbatch's default "
                        "--export=ALL)")
    got = inputs_of(args)
    run = runner.prepare(got.exps, got.stacks, got.targets, got.reps,
                         args.run_id, got.prefix, args.accel)
    return Replanned(state, args, got, run)


def search_jobs(plan: Replanned) -> list[tuple]:
    return jobarray.search_jobs(plan.got.searches, plan.got.stacks,
                                plan.got.targets)


def task(plan: Replanned, rnd: int, index: int) -> int:
    jobarray.run_task(plan.run, plan.state, rnd, index, search_jobs(plan),
                      apart=plan.got.boots)
    return 0


def next_round(plan: Replanned, rnd: int) -> int | None:
    """After round rnd: submit the next one (None), or conclude the
    run: its repetitions and searches' answers stored; 1 if a boot or
    search of the round is missing or a search's kernel faulted, else 0
    (the caller then writes the report)."""
    state, run = plan.state, plan.run
    if rnd != len(state["rounds"]):
        raise UserError(f"round {rnd} of {run.run_id} is not its last "
                        f"({len(state['rounds'])}): a newer submission "
                        "follows the run")
    lost = jobarray.missing(run.rdir, state["rounds"][-1])
    decided, todo = runner.wanted(run) if plan.got.boots else ({}, [])
    if todo and not lost:
        jobarray.submit_round(run, state, todo, [])
        return None
    say_lost(run.run_id, lost)
    if plan.got.boots:
        runner.conclude(run, decided)
    answers = jobarray.answers(run.rdir)
    if answers:
        store.save_answers(run.rdir, answers)
    said = sizing.faulted(answers) if plan.got.boots else answers
    for a in said:
        print(f"size search {a.what}: {a.text()}" if plan.got.boots
              else a.text(), flush=True)
    return 1 if lost or sizing.faulted(answers) else 0


def say_lost(run_id: str, lost: list[str]) -> None:
    for key in lost:
        print(f"{key}: nothing stored: its task died, was cancelled or "
              "ran past its time limit (its output: harness.py status "
              f"{run_id})", flush=True)
    if lost:
        print(f"{len(lost)} boot(s) or search(es) missing: run the same "
              "command again to run them; what the others stored is kept",
              flush=True)


# --- check --slurm -----------------------------------------------------------

def check_inputs(args: argparse.Namespace
                 ) -> tuple[list[str], list, tuple[str, ...]]:
    """check's stacks, kernels and test names."""
    only = tuple(args.test.split(",")) if args.test else ()
    return stacks_arg(args.stack), targets_arg(args), only


def submit_check(args: argparse.Namespace, out: Path,
                 argv: list[str] | None = None) -> int:
    """Plan the suite as check does and submit its boots into out (the
    stored command names out, so its tasks and a rerun find it)."""
    stacks, targets, only = check_inputs(args)
    suite = check_plan(stacks, targets, args.quick, only)
    argv = list(sys.argv[1:] if argv is None else argv)
    if not args.out:
        argv += ["--out", str(out)]
    return checkarray.submit(suite, out, guest.choose_accel(args.accel),
                             argv, sbatch_args(args.sbatch),
                             args.slurm_tasks)


def is_check(rdir: Path) -> bool:
    return jobarray.load(rdir)["argv"][:1] == ["check"]


def check_replan(rdir: Path, parser: argparse.ArgumentParser
                 ) -> tuple[dict, argparse.Namespace]:
    state = jobarray.load(rdir)
    return state, parser.parse_args(state["argv"])


def check_task(rdir: Path, parser: argparse.ArgumentParser, rnd: int,
               index: int) -> int:
    state, args = check_replan(rdir, parser)
    stacks, targets, only = check_inputs(args)
    checkarray.run_task(check_plan(stacks, targets, args.quick, only),
                        rdir, state, rnd, index)
    return 0


def check_next(rdir: Path, parser: argparse.ArgumentParser,
               rnd: int) -> int:
    """After the suite's boots: its tables from what is stored, or the
    boots no task stored named."""
    state, args = check_replan(rdir, parser)
    lost = jobarray.missing(rdir, state["rounds"][-1])
    if lost:
        say_lost(rdir.name, lost)
        return 1
    stacks, targets, only = check_inputs(args)
    return run_check(stacks, targets, state["accel"], args.quick, rdir, only,
                     state["rounds"][0]["started"])


def cmd_status(args: argparse.Namespace) -> int:
    """RUN: a run id under the results, or a directory (check --out)."""
    rdir = Path(args.run_id) if "/" in args.run_id \
        else store.run_dir(args.run_id)
    print(status.text(rdir))
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    """status, and the two commands the jobs run (no help: not for
    people)."""
    p = sub.add_parser("status", help="a run's progress: boots finished "
                       "of planned, failed ones, ETA (and its Slurm jobs); "
                       "RUN: a run id, or a directory (check --out)")
    p.add_argument("run_id")
    p.set_defaults(func=cmd_status)
    for name in ("slurm-task", "slurm-next"):
        p = sub.add_parser(name)
        p.add_argument("run_dir", type=Path)
        p.add_argument("--round", type=int, required=True)
        if name == "slurm-task":
            p.add_argument("--slice", type=int, required=True)
