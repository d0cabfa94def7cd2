#!/usr/bin/python3
"""rmapbench: build, boot and compare the anonmm and anon_vma kernels.

Each subcommand is one step of build -> image -> boot -> parse -> store ->
stats -> plots -> report; `harness.py SUBCOMMAND --help` tells more.
"""

import sys

from rmapbench import cli


def main(argv: list[str]) -> int:
    parser = cli.make_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return cli.dispatch(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
