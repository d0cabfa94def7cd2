"""The command line: argument parsing and one function per subcommand."""

import argparse
import sys
from pathlib import Path

from . import check, experiments, kbuild, paths, programs, registry, reparse
from . import runner, smoke
from . import store, workloads
from .errors import UserError


def stacks_arg(value: str) -> list[str]:
    return [registry.stack(v).name for v in value.split(",")]


def arches_arg(value: str) -> list[str]:
    return [registry.arch(v).name for v in value.split(",")]


def add_targets(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stack", default=",".join(registry.stack_names()),
                   help="comma-separated stacks (default: both)")
    p.add_argument("--arch", default=",".join(registry.arch_names()),
                   help="comma-separated arches (default: both)")


def cmd_build(args: argparse.Namespace) -> int:
    kbuild.build_all(stacks_arg(args.stack), arches_arg(args.arch))
    return 0


def cmd_config_diff(args: argparse.Namespace) -> int:
    status = 0
    for arch in arches_arg(args.arch):
        lines, unfair = kbuild.config_diff(arch)
        print(f"{arch}: {len(lines)} symbol(s) differ between "
              f"{' and '.join(registry.stack_names())}")
        for line in lines:
            print(f"  {line}")
        if unfair:
            print(f"{arch}: error: the stacks differ beyond the scheme "
                  f"option: {', '.join(unfair)}", file=sys.stderr)
            status = 1
    return status


def cmd_smoke(args: argparse.Namespace) -> int:
    logdir = Path(args.logdir) if args.logdir else smoke.default_logdir()
    status = smoke.run_smoke(stacks_arg(args.stack), arches_arg(args.arch),
                             args.accel, logdir)
    print(f"consoles in {logdir}")
    return status


def add_run_options(p: argparse.ArgumentParser, reps: int) -> None:
    add_targets(p)
    p.add_argument("--reps", type=int, default=reps,
                   help=f"repetitions of every point (default {reps})")
    p.add_argument("--run-id", help="results/<run-id>; the default names "
                   "the inputs, so running the same command again resumes")
    p.add_argument("--accel", default="auto", help="auto, kvm or tcg")
    p.add_argument("--jobs", type=int, default=1,
                   help="guests at a time (default 1: a 2-core machine)")


def cmd_run(args: argparse.Namespace) -> int:
    exp = experiments.custom(args.workload, args.mode, args.param or [],
                             args.mem, arches_arg(args.arch), args.timeout,
                             args.append)
    rdir = runner.run_experiments(
        [exp], stacks_arg(args.stack), list(exp.arches), args.reps,
        args.run_id, f"run-{args.workload}", args.accel, args.jobs)
    return finish(rdir, args.no_report)


def cmd_compare(args: argparse.Namespace) -> int:
    names = args.experiments.split(",") if args.experiments else [
        e.name for e in workloads.experiments()]
    rdir = runner.run_experiments(
        experiments.by_name(names), stacks_arg(args.stack),
        arches_arg(args.arch), args.reps, args.run_id, "compare",
        args.accel, args.jobs)
    return finish(rdir, args.no_report)


def finish(rdir: Path, no_report: bool) -> int:
    """Plots and report for a finished run; 1 if any boot failed."""
    records = store.load_records(rdir)
    failed = sum(1 for r in records if r["failed"])
    if not no_report:
        report_run(rdir)
    print(f"{len(records)} records, {failed} failed, in {rdir}")
    return 1 if failed else 0


def report_run(rdir: Path) -> Path:
    records = store.load_records(rdir)
    from . import plots, report
    plot_files = plots.make_plots(records, paths.PLOTS / rdir.name)
    out = report.write_report(rdir, records, store.load_metadata(rdir),
                              plot_files)
    print(f"report: {out}")
    return out


def cmd_report(args: argparse.Namespace) -> int:
    report_run(store.run_dir(args.run_id))
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


def cmd_check(args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else check.default_out_dir()
    return check.run_check(stacks_arg(args.stack), arches_arg(args.arch),
                           args.accel, args.quick, out)


Sub = argparse._SubParsersAction


def add_kernel_commands(sub: Sub) -> None:
    p = sub.add_parser("build", help="patch, configure and build kernels")
    add_targets(p)
    p.set_defaults(func=cmd_build)
    p = sub.add_parser("config-diff",
                       help="show how the stacks' .config files differ")
    p.add_argument("--arch", default=",".join(registry.arch_names()))
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
    p.set_defaults(func=cmd_check)


def add_run_commands(sub: Sub) -> None:
    p = sub.add_parser("run", help="run one workload over a custom sweep")
    p.add_argument("--workload", required=True,
                   help=f"one of {', '.join(workloads.WORKLOADS)}")
    p.add_argument("--mode", help="the workload's mode (default: its first)")
    p.add_argument("--param", action="append", metavar="KEY=V1,V2",
                   help="a parameter and its values; repeat for more")
    p.add_argument("--mem", metavar="MB1,MB2",
                   help="guest memory sizes (default per arch)")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds per boot (default 600)")
    p.add_argument("--append", default="", metavar="ARGS",
                   help="extra kernel command line arguments")
    p.add_argument("--no-report", action="store_true")
    add_run_options(p, reps=3)
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("compare", help="the default comparison: every "
                       "experiment, both stacks, both arches, report")
    p.add_argument("--experiments", help="comma-separated subset of: " +
                   ", ".join(e.name for e in workloads.experiments()))
    p.add_argument("--no-report", action="store_true")
    add_run_options(p, reps=3)
    p.set_defaults(func=cmd_compare)
    p = sub.add_parser("params", help="the workloads' parameters, as "
                       "their programs declare them")
    p.add_argument("workload", nargs="?")
    p.add_argument("--readme", action="store_true",
                   help="rewrite bench/README.md's parameter tables")
    p.set_defaults(func=cmd_params)


def add_result_commands(sub: Sub) -> None:
    p = sub.add_parser("report", help="write results/<run-id>/report.md "
                       "and its plots")
    p.add_argument("run_id")
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
    sub = parser.add_subparsers(metavar="SUBCOMMAND")
    add_kernel_commands(sub)
    add_run_commands(sub)
    add_result_commands(sub)
    return parser


def dispatch(args: argparse.Namespace) -> int:
    """Run the subcommand; a UserError becomes one message and exit 2."""
    try:
        return args.func(args)
    except UserError as err:
        print(f"harness.py: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("harness.py: interrupted", file=sys.stderr)
        return 130
