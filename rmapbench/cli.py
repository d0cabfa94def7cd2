"""The command line: argument parsing and one function per subcommand."""

import argparse
import sys
from pathlib import Path

from . import kbuild, paths, smoke
from .errors import UserError


def stacks_arg(value: str) -> list[str]:
    return [paths.check_choice("stack", v, paths.STACKS)
            for v in value.split(",")]


def arches_arg(value: str) -> list[str]:
    return [paths.check_choice("arch", v, paths.ARCHES)
            for v in value.split(",")]


def add_targets(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stack", default=",".join(paths.STACKS),
                   help="comma-separated stacks (default: both)")
    p.add_argument("--arch", default=",".join(paths.ARCHES),
                   help="comma-separated arches (default: both)")


def cmd_build(args: argparse.Namespace) -> int:
    kbuild.build_all(stacks_arg(args.stack), arches_arg(args.arch))
    return 0


def cmd_config_diff(args: argparse.Namespace) -> int:
    status = 0
    for arch in arches_arg(args.arch):
        lines, unfair = kbuild.config_diff(arch)
        print(f"{arch}: {len(lines)} symbol(s) differ between "
              f"{' and '.join(paths.STACKS)}")
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


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="harness.py",
        description="Build, boot and compare the anonmm and anon_vma "
                    "Linux 6.1 kernels in QEMU.")
    sub = parser.add_subparsers(metavar="SUBCOMMAND")
    p = sub.add_parser("build", help="patch, configure and build kernels")
    add_targets(p)
    p.set_defaults(func=cmd_build)
    p = sub.add_parser("config-diff",
                       help="show how the stacks' .config files differ")
    p.add_argument("--arch", default=",".join(paths.ARCHES))
    p.set_defaults(func=cmd_config_diff)
    p = sub.add_parser("smoke", help="boot each kernel once and show its "
                       "scheme, struct sizes and counters")
    add_targets(p)
    p.add_argument("--accel", default="auto", help="auto, kvm or tcg")
    p.add_argument("--logdir", help="where the consoles go")
    p.set_defaults(func=cmd_smoke)
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
