"""The command line's shared options: which stacks and kernels
(--stack, --arch, --profile), a run's options, a workload's."""

import argparse
from dataclasses import dataclass

from . import experiments, profiles, runner, settings, testbed, workloads


def stacks_arg(value: str) -> list[str]:
    return [testbed.stack(v).name for v in value.split(",")]


def arches_arg(value: str) -> list[str]:
    return [testbed.arch(v).name for v in value.split(",")]


def targets_arg(args: argparse.Namespace, full: bool = False
                ) -> list[profiles.Target]:
    """The kernels --profile and --arch name (neither: the comparison's,
    profiles.COMPARE), refused before any build or boot if a name is
    unknown or a profile does not build for an arch named."""
    names = args.profile.split(",") if args.profile else None
    arches = arches_arg(args.arch) if args.arch else None
    return profiles.targets(names, arches, full)


def add_targets(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stack", default=",".join(testbed.stack_names()),
                   help="comma-separated stacks (default: both)")
    p.add_argument("--arch", help="comma-separated arches (default: each "
                   "profile's; without --profile, the comparison's kernels)")
    p.add_argument("--profile", help="comma-separated build profiles: "
                   f"{', '.join(profiles.profile_names())} (default: the "
                   "comparison's: " + ", ".join(
                       f"{t.arch} {t.profile}" for t in profiles.COMPARE)
                   + ")")


def reps_arg(value: str) -> int | None:
    """'auto' (None: decided per point) or a number of repetitions."""
    if value == "auto":
        return None
    if not value.isdigit():
        raise argparse.ArgumentTypeError(f"'{value}': use auto or a number")
    return int(value)


def clocks_arg(value: str) -> tuple[str, ...]:
    return tuple(testbed.clock(v).name for v in value.split(","))


def add_run_options(p: argparse.ArgumentParser, reps: str) -> None:
    add_targets(p)
    p.add_argument("--reps", type=reps_arg, default=reps_arg(reps),
                   help="repetitions of every point, or auto: decided per "
                   "point from the declared metrics (docs/results-format"
                   f".md; default {reps})")
    p.add_argument("--run-id", help="results/<run-id>; the default names "
                   "the inputs, so running the same command again resumes")
    p.add_argument("--accel", default="auto", help="auto, kvm or tcg")
    p.add_argument("--jobs", type=int, default=runner.SHARED_JOBS,
                   help="guests at a time for boots whose timing is not at "
                   f"stake (default {runner.SHARED_JOBS}); boots timed on "
                   "the host clock always run alone")


def target_arches(targets: list[profiles.Target]) -> list[str]:
    return list(dict.fromkeys(t.arch for t in targets))


def add_workload_options(p: argparse.ArgumentParser, metavar: str,
                         param: str) -> None:
    """--workload, --mode and --param, as run and size take them."""
    p.add_argument("--workload", required=True,
                   help=f"one of {', '.join(workloads.WORKLOADS)}")
    p.add_argument("--mode", help="the workload's mode (default: its first)")
    p.add_argument("--param", action="append", metavar=metavar,
                   help=f"{param}; repeat for more")


@dataclass(frozen=True)
class Inputs:
    """What 'run' and 'compare' plan from: the experiments and size
    searches, stacks, kernels, repetitions (None: decided per point)
    and the prefix of the run's name."""
    exps: list
    searches: list
    stacks: list[str]
    targets: list[profiles.Target]
    reps: int | None
    prefix: str
    boots: bool = True      # False: the searches are the whole run (size)


def run_inputs(args: argparse.Namespace) -> Inputs:
    """harness.py run's: one custom experiment."""
    targets = targets_arg(args)
    exp = experiments.custom(args.workload, args.mode, args.param or [],
                             args.mem, target_arches(targets), args.timeout,
                             args.append, clocks_arg(args.clock),
                             experiments.parse_vcpus(args.vcpus),
                             tuple(args.variant))
    for setting in settings.parse(args.setting) if args.setting else ():
        exp = settings.with_setting(exp, setting.name)
    experiments.check_needs(exp, targets)
    return Inputs([exp], [], stacks_arg(args.stack), targets, args.reps,
                  f"run-{args.workload}")


def compare_inputs(args: argparse.Namespace) -> Inputs:
    """harness.py compare's: the chosen experiments and searches."""
    exps, searches = experiments.chosen(
        args.experiments.split(",") if args.experiments else None,
        args.full)
    return Inputs(exps, searches, stacks_arg(args.stack),
                  targets_arg(args, args.full), args.reps,
                  "compare-full" if args.full else "compare")


def size_inputs(args: argparse.Namespace) -> Inputs:
    """harness.py size's: one search over guest memory, refused before
    any boot if its range or configuration is not one."""
    from . import sizing
    sizing.check_range(args.lo, args.hi, args.step)
    targets = targets_arg(args)
    exp = experiments.custom(args.workload, args.mode, args.param or [],
                             None, target_arches(targets), args.timeout,
                             clocks=(testbed.clock(args.clock).name,))
    sizing.check_single(exp)
    search = workloads.SizeSearch(exp, args.goal, args.lo, args.hi,
                                  args.step, "")
    return Inputs([exp], [search], stacks_arg(args.stack),
                  [t for t in targets if t.arch in exp.arches], 1,
                  f"size-{args.workload}-{exp.mode}", boots=False)


def inputs_of(args: argparse.Namespace) -> Inputs:
    """What the command of args (run, compare or size) plans from."""
    return {"run": run_inputs, "compare": compare_inputs,
            "size": size_inputs}[args.command](args)
