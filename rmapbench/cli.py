"""The command line: argument parsing and one function per subcommand."""

import argparse
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from . import check, clislurm, debconfig, guest, kbuild, paths, phases
from . import preflight, profiles, programs, qemu, testbed
from .cliargs import add_run_options, add_targets, add_workload_options
from .cliargs import compare_inputs, run_inputs, size_inputs, stacks_arg
from .cliargs import targets_arg
from . import reparse, runner, settings, smoke
from . import store, workloads
from .errors import UserError
from .profiles import Target


def cmd_build(args: argparse.Namespace) -> int:
    kbuild.build_all(stacks_arg(args.stack), targets_arg(args))
    return 0


def debian_diff(target: Target) -> int:
    """A profile that stands for Debian's kernel: each stack's mm
    symbols against Debian's config, every difference with its reason;
    1 if one has none."""
    status = 0
    for stack in testbed.stack_names():
        lines, unexplained = debconfig.compare(stack, target.arch,
                                               target.profile)
        print(f"{target.arch} {target.profile} {stack} against Debian's "
              f"{debconfig.DEBIAN_PACKAGE} ({debconfig.DEBIAN_CONFIG.name}"
              f"): {len(lines)} mm symbol(s) differ")
        for line in lines:
            print(f"  {line}")
        if unexplained:
            print(f"{target.arch} {target.profile} {stack}: error: no "
                  f"reason for {', '.join(unexplained)} "
                  f"(rmapbench/debconfig.py REASONS)", file=sys.stderr)
            status = 1
    return status


def cmd_config_diff(args: argparse.Namespace) -> int:
    """Per kernel (profile and arch), the symbols the stacks' configs
    differ in: only the scheme's may; and, for a profile standing for
    Debian's kernel, how each stack differs from Debian's config."""
    status = 0
    for target in targets_arg(args):
        name = f"{target.arch} {target.profile}"
        lines, unfair = kbuild.config_diff(target.arch, target.profile)
        print(f"{name}: {len(lines)} symbol(s) differ between "
              f"{' and '.join(testbed.stack_names())}")
        for line in lines:
            print(f"  {line}")
        if unfair:
            print(f"{name}: error: the stacks differ beyond the scheme "
                  f"option: {', '.join(unfair)}", file=sys.stderr)
            status = 1
        if profiles.profile(target.profile).debian:
            status |= debian_diff(target)
    return status


def cmd_smoke(args: argparse.Namespace) -> int:
    logdir = Path(args.logdir) if args.logdir else smoke.default_logdir()
    status = smoke.run_smoke(stacks_arg(args.stack), targets_arg(args),
                             args.accel, logdir)
    print(f"consoles in {logdir}")
    return status


def cmd_run(args: argparse.Namespace) -> int:
    got = run_inputs(args)
    if args.slurm:
        clislurm.require(args)
        return clislurm.submit(args, got)
    watch = phases.Stopwatch()
    with watch.phase("boots"):
        rdir = runner.run_experiments(
            got.exps, got.stacks, got.targets, got.reps, args.run_id,
            got.prefix, args.accel, args.jobs)
    return finish(rdir, args.no_report, watch)


def cmd_size(args: argparse.Namespace) -> int:
    from . import sizing
    got = size_inputs(args)
    if args.slurm:
        clislurm.require(args)
        return clislurm.submit(args, got)
    (exp,), targets, stacks = got.exps, got.targets, got.stacks
    accel = guest.choose_accel(args.accel)
    # the inputs name the run (kernels, workloads, the configuration):
    # a changed kernel or parameter starts a new one, the same resumes
    run_id = args.run_id or runner.run_id_of(
        [exp], stacks, targets, 1, accel, got.prefix)
    answers = [sizing.search(exp, stack, target, args.goal, args.lo,
                             args.hi, args.step, run_id, accel)
               for target in targets for stack in stacks]
    store.save_answers(store.run_dir(run_id), answers)
    for a in answers:
        print(a.text())
    return 1 if sizing.faulted(answers) else 0


def cmd_compare(args: argparse.Namespace) -> int:
    from . import sizing
    got = compare_inputs(args)
    stacks, targets = got.stacks, got.targets
    if args.slurm:
        clislurm.require(args)
    watch = phases.Stopwatch()
    if args.build:
        with watch.phase("builds"):
            kbuild.build_all(stacks, targets)
    if args.slurm:
        return clislurm.submit(args, got)
    with watch.phase("boots"):
        rdir = runner.run_experiments(
            got.exps, stacks, targets, got.reps, args.run_id, got.prefix,
            args.accel, args.jobs)
    searches = got.searches
    answers = []
    if searches:
        with watch.phase("sizing"):
            answers = sizing.run_searches(searches, stacks, targets,
                                          rdir.name,
                                          guest.choose_accel(args.accel),
                                          max(1, args.jobs))
    try:
        rc = finish(rdir, args.no_report, watch)
    finally:
        for a in sizing.faulted(answers):
            print(f"size search {a.what}: {a.text()}")
    return 1 if sizing.faulted(answers) else rc


def finish(rdir: Path, no_report: bool,
           watch: "phases.Stopwatch | None" = None) -> int:
    """Plots and report for a finished run, the phases' wall times in
    its metadata; 1 if any boot failed.  A failed step after the boots
    is a UserError naming it and the command that redoes it."""
    watch = watch or phases.Stopwatch()
    records = store.load_records(rdir)
    failed = sum(1 for r in records if r["failed"])
    try:
        if not no_report:
            report_run(rdir, watch,
                       lambda name: after_boots(watch, name, rdir))
    finally:
        phases.save(rdir, watch)
        print(f"{len(records)} records, {failed} failed, in {rdir}")
    return 1 if failed else 0


# For each step after the boots: what redoes it from the stored records.
REDO = {"stats": "'harness.py report {run}' redoes it, the plots and the "
                 "report",
        "plots": "'harness.py plot {run}' redoes it, 'harness.py report "
                 "{run}' it and the report",
        "report": "'harness.py report {run}' redoes it"}


@contextmanager
def after_boots(watch: phases.Stopwatch, name: str,
                rdir: Path) -> Iterator[None]:
    """A step after the boots, timed on watch.  Its failure becomes a
    two-line UserError rather than a traceback: the records are stored
    already, and the step can be redone alone."""
    try:
        with watch.phase(name):
            yield
    except Exception as err:  # any failure of the step: its own fault
        raise UserError(
            f"the {name} step failed after the boots "
            f"({preflight.one_line(err)})\nthe records are kept in {rdir}: "
            + REDO[name].format(run=rdir.name)) from err


Step = Callable[[str], AbstractContextManager[None]]


def report_run(rdir: Path, watch: "phases.Stopwatch | None" = None,
               step: Step | None = None) -> Path:
    """Statistics, plots and report, each step run in step(name) (by
    default timed on watch)."""
    watch = watch or phases.Stopwatch()
    step = step or watch.phase
    records = store.load_records(rdir)
    metadata = store.load_metadata(rdir)
    from . import plots, report
    from .analysis import analyse
    with step("stats"):
        analysis = analyse(
            records, checked=store.checked(metadata))
    with step("plots"):
        plot_files = plots.make_plots(records, paths.PLOTS / rdir.name)
    phases.save(rdir, watch)
    with step("report"):
        out = report.write_report(rdir, records, metadata, plot_files,
                                  analysis)
    print(f"report: {out}")
    return out


def cmd_report(args: argparse.Namespace) -> int:
    watch = phases.Stopwatch()
    rdir = store.run_dir(args.run_id)
    if args.text:
        from . import report
        print(report.write_text(rdir, store.load_records(rdir),
                                store.load_metadata(rdir)), end="")
        return 0
    report_run(rdir, watch)
    phases.save(rdir, watch)
    return 0


def cmd_reparse(args: argparse.Namespace) -> int:
    rdir = store.run_dir(args.run_id)
    boots, records = reparse.reparse(rdir)
    print(f"{records} records rebuilt from the consoles of {boots} boots "
          f"in {rdir}")
    if not args.no_report:
        report_run(rdir)
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from . import plots
    rdir = store.run_dir(args.run_id)
    for path in plots.make_plots(store.load_records(rdir),
                                 paths.PLOTS / rdir.name):
        print(path)
    return 0


def cmd_params(args: argparse.Namespace) -> int:
    """The workloads' parameters, from each program's own table."""
    if args.readme:
        readme = paths.BENCH / "README.md"
        readme.write_text(programs.readme(readme.read_text()))
        print(f"rewrote the parameter tables of {readme}")
        return 0
    names = [args.workload] if args.workload else list(workloads.WORKLOADS)
    for name in names:
        w = workloads.workload(name)
        if not w.program:
            print(f"{name}: no parameters (no program of ours)")
            continue
        for mode in w.mode_names():
            specs = [p.spec(mode) for p in programs.table(w.program)
                     if p.key != "mode" and p.applies(mode)]
            print(f"{name} mode={mode}: {', '.join(specs)}")
    return 0


def cmd_slurm_task(args: argparse.Namespace) -> int:
    """One task of a --slurm run's array: its slice of the round."""
    if clislurm.is_check(args.run_dir):
        return clislurm.check_task(args.run_dir, make_parser(), args.round,
                                   args.slice)
    plan = clislurm.replan(args.run_dir, make_parser())
    return clislurm.task(plan, args.round, args.slice)


def cmd_slurm_next(args: argparse.Namespace) -> int:
    """After a --slurm run's round: the next round, or the report (its
    boots phase: from the first submission to now)."""
    if clislurm.is_check(args.run_dir):
        return clislurm.check_next(args.run_dir, make_parser(), args.round)
    plan = clislurm.replan(args.run_dir, make_parser())
    rc = clislurm.next_round(plan, args.round)
    if rc is None or not plan.got.boots:
        return rc or 0
    watch = phases.Stopwatch()
    watch.seconds["boots"] = round(
        watch.started - plan.state["rounds"][0]["started"], 1)
    return finish(plan.run.rdir, plan.args.no_report, watch) or rc


def cmd_check(args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else check.default_out_dir()
    if args.slurm:
        clislurm.require(args)
        return clislurm.submit_check(args, out)
    only = tuple(args.test.split(",")) if args.test else ()
    return check.run_check(stacks_arg(args.stack), targets_arg(args),
                           args.accel, args.quick, out, only)


Sub = argparse._SubParsersAction


def add_kernel_commands(sub: Sub) -> None:
    p = sub.add_parser("build", help="patch, configure and build kernels")
    add_targets(p)
    p.set_defaults(func=cmd_build)
    p = sub.add_parser("config-diff",
                       help="show how the stacks' .config files differ, "
                       "per kernel (profile and arch), and the distro "
                       "kernels' mm symbols from Debian's config")
    add_targets(p)
    p.set_defaults(func=cmd_config_diff)
    p = sub.add_parser("smoke", help="boot each kernel once and show its "
                       "scheme, struct sizes and counters")
    add_targets(p)
    p.add_argument("--accel", default="auto", help="auto, kvm or tcg")
    p.add_argument("--logdir", help="where the consoles go")
    p.set_defaults(func=cmd_smoke)
    p = sub.add_parser("check", help="the correctness suite: torture, the "
                       "kernel's mm selftests, stress-ng, on each kernel")
    add_targets(p)
    p.add_argument("--quick", action="store_true",
                   help="a subset: under 3 minutes for four kernels (TCG)")
    p.add_argument("--accel", default="auto", help="auto, kvm or tcg")
    p.add_argument("--out", help="result directory (default "
                   "results/check-<date>)")
    p.add_argument("--test", help="comma-separated test names: only "
                   "these (and their boots' own checks)")
    clislurm.add_options(p)
    p.set_defaults(func=cmd_check)


def add_run_commands(sub: Sub) -> None:
    p = sub.add_parser("run", help="run one workload over a custom sweep")
    add_workload_options(p, "KEY=V1,V2", "a parameter and its values")
    p.add_argument("--mem", metavar="MB1,MB2",
                   help="guest memory sizes (default per arch)")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds per boot (default 600)")
    p.add_argument("--append", default="", metavar="ARGS",
                   help="extra kernel command line arguments (every stack)")
    p.add_argument("--variant", action="append", default=[], metavar="ARG",
                   help="also boot a stack variant, its stack with ARG: "
                   f"{', '.join(testbed.variant_names())} (repeatable)")
    p.add_argument("--setting", metavar="NAME[,NAME]",
                   help="boot every stack's guests with guest settings: "
                   f"{', '.join(settings.setting_names())} (all but zram "
                   "need the distro profile's features: --profile distro)")
    p.add_argument("--clock", default=testbed.HOST,
                   help="guest clock(s), comma-separated: "
                   f"{', '.join(testbed.clock_names())} (default host)")
    p.add_argument("--vcpus", default="1", metavar="N1,N2",
                   help="the guest's vCPU counts, each a point of its own "
                   "(default 1)")
    p.add_argument("--no-report", action="store_true")
    add_run_options(p, reps="3")
    clislurm.add_options(p)
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("compare", help="the default comparison: every "
                       "experiment, both stacks, both arches, report")
    p.add_argument("--experiments", help="comma-separated subset of: " +
                   ", ".join([e.name for e in workloads.experiments()] +
                             [s.name for s in workloads.searches()]))
    p.add_argument("--full", action="store_true",
                   help="the experiments' full sweeps and the searches "
                   "only it runs (about 40 minutes on 2 cores)")
    p.add_argument("--build", action="store_true",
                   help="build the kernels first (incremental), timed as "
                   "a phase of the run")
    p.add_argument("--no-report", action="store_true")
    add_run_options(p, reps="auto")
    clislurm.add_options(p)
    p.set_defaults(func=cmd_compare)
    add_size_command(sub)
    p = sub.add_parser("params", help="the workloads' parameters, as "
                       "their programs declare them")
    p.add_argument("workload", nargs="?")
    p.add_argument("--readme", action="store_true",
                   help="rewrite bench/README.md's parameter tables")
    p.set_defaults(func=cmd_params)


def add_size_command(sub: Sub) -> None:
    p = sub.add_parser("size", help="bisect guest memory, per stack, for "
                       "the smallest guest in which a workload completes "
                       "(or swaps nothing out)")
    add_workload_options(p, "KEY=V", "a parameter and its one value")
    p.add_argument("--goal", choices=("completes", "no-swap"),
                   default="completes", help="completes: no failed boot "
                   "(no OOM kill, no fault); no-swap: and no page swapped "
                   "out (default completes)")
    p.add_argument("--lo", type=int, default=128, help="smallest size, MB")
    p.add_argument("--hi", type=int, default=512, help="largest size, MB")
    p.add_argument("--step", type=int, default=16,
                   help="the answer's precision, MB (default 16)")
    p.add_argument("--timeout", type=float, default=900.0,
                   help="seconds per boot (default 900)")
    p.add_argument("--clock", default=testbed.HOST,
                   help="the probes' guest clock: "
                   f"{', '.join(testbed.clock_names())} (default host; "
                   "icount makes a probe near the threshold repeat)")
    add_targets(p)
    p.add_argument("--run-id", help="results/<run-id> (default: "
                   "size-<workload>-<mode>-<digest of the inputs>; the same "
                   "search again resumes)")
    p.add_argument("--accel", default="auto", help="auto, kvm or tcg")
    clislurm.add_options(p)
    p.set_defaults(func=cmd_size)


def add_result_commands(sub: Sub) -> None:
    p = sub.add_parser("report", help="write results/<run-id>/report.md "
                       "and its plots")
    p.add_argument("run_id")
    p.add_argument("--text", action="store_true",
                   help="print the decision and the summary as plain text "
                   "(for a mailing-list post; also in "
                   "results/<run-id>/summary.txt), without plots")
    p.set_defaults(func=cmd_report)
    p = sub.add_parser("reparse", help="rebuild results/<run-id>'s records "
                       "from its stored consoles, then its report")
    p.add_argument("run_id")
    p.add_argument("--no-report", action="store_true")
    p.set_defaults(func=cmd_reparse)
    p = sub.add_parser("plot", help="write plots/<run-id>/*.png and .svg")
    p.add_argument("run_id")
    p.set_defaults(func=cmd_plot)


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="harness.py",
        description="Build, boot and compare the anonmm and anon_vma "
                    "Linux 6.1 kernels in QEMU.")
    sub = parser.add_subparsers(metavar="SUBCOMMAND", dest="command")
    add_kernel_commands(sub)
    add_run_commands(sub)
    add_result_commands(sub)
    clislurm.add_commands(sub)
    sub.choices["slurm-task"].set_defaults(func=cmd_slurm_task)
    sub.choices["slurm-next"].set_defaults(func=cmd_slurm_next)
    return parser


# The commands that write statistics, plots or a report, or boot for
# one (run, compare, size): they check the interpreter's modules before
# planning anything.  build, config-diff, params, smoke, check and
# reparse --no-report import none of those modules, so they skip it.
NEED_MODULES = frozenset({cmd_run, cmd_compare, cmd_size, cmd_report,
                          cmd_plot, cmd_slurm_next})


def needs_modules(args: argparse.Namespace) -> bool:
    if args.func is cmd_reparse:
        return not args.no_report
    return args.func in NEED_MODULES


def stop(signum: int, _frame: object) -> None:
    """SIGTERM (Slurm's time limit, kill) or SIGINT: the guests are
    killed and the boots they ran are not stored, so the same command
    boots them again; what finished is kept."""
    qemu.stop_guests()
    raise KeyboardInterrupt(signal.Signals(signum).name)


def dispatch(args: argparse.Namespace) -> int:
    """Run the subcommand; a UserError becomes one message and exit 2."""
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, stop)
    try:
        if needs_modules(args):
            preflight.require(args.command)
        return args.func(args)
    except UserError as err:
        print(f"harness.py: error: {err}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, qemu.Stopped) as why:
        print(f"harness.py: stopped ({why or 'SIGINT'}): the boots that "
              "finished are stored; the same command runs the rest",
              file=sys.stderr)
        return 130
