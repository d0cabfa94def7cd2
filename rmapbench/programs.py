"""The workloads' parameters, as each program declares them.

A program's rmb_param table (bench/rmb-*.c) is the one statement of its
parameters: names, integer ranges or string choices, defaults, the modes
they apply to and a line of help.  `rmb-X params` prints it as RMB-PARAM
lines; the harness reads them from the host's x86_64 build to refuse a
bad --param before any boot and to write bench/README.md's tables.
"""

import json
import re
import subprocess
from dataclasses import dataclass
from functools import cache

from . import benchbuild, paths
from .errors import UserError

HOST_ARCH = "x86_64"      # the build the host can run


@dataclass(frozen=True)
class Param:
    key: str
    default: int | str
    help: str
    choices: tuple[str, ...] = ()      # a string parameter's values
    min: int | None = None             # an integer parameter's range
    max: int | None = None
    modes: tuple[str, ...] = ()        # () : every mode
    mode_max: tuple[tuple[str, int], ...] = ()   # tighter maxima by mode

    def applies(self, mode: str) -> bool:
        return not self.modes or mode in self.modes

    def max_in(self, mode: str) -> int | None:
        return dict(self.mode_max).get(mode, self.max)

    def spec(self, mode: str) -> str:
        """e.g. 'N=100 [1..4096]' or 'kind=split (split|gap)'."""
        if self.choices:
            return f"{self.key}={self.default} ({'|'.join(self.choices)})"
        return f"{self.key}={self.default} [{self.min}..{self.max_in(mode)}]"

    def problem(self, value: object, mode: str) -> str | None:
        """Why value is not a valid value in mode, if it is not."""
        if self.choices:
            if str(value) not in self.choices:
                return f"{self.key}={value}: must be one of " \
                    f"{'|'.join(self.choices)}"
            return None
        if not isinstance(value, int):
            return f"{self.key}={value}: not an integer"
        top = self.max_in(mode)
        assert self.min is not None and top is not None
        if not self.min <= value <= top:
            return f"{self.key}={value} out of range [{self.min}, {top}]" \
                f" in mode {mode}"
        return None


def parse_line(line: str) -> Param:
    d = json.loads(line.split(" ", 1)[1])

    def listed(key: str) -> tuple[str, ...]:
        return tuple(d[key].split("|")) if key in d else ()
    mode_max = tuple((m, int(n)) for m, _, n in
                     (e.partition(":") for e in listed("mode_max")))
    return Param(d["key"], d["default"], d["help"], listed("choices"),
                 d.get("min"), d.get("max"), listed("modes"), mode_max)


@cache
def table(program: str) -> tuple[Param, ...]:
    """The parameters of bench/<program>, from its host build."""
    res = benchbuild.make(HOST_ARCH)
    binary = paths.BENCH / "out" / HOST_ARCH / program
    if res.returncode != 0 or not binary.exists():
        raise UserError(f"building bench/ for {HOST_ARCH} failed, so the "
                        f"parameters of {program} are unknown:\n"
                        f"{res.stdout}{res.stderr}")
    out = subprocess.run([str(binary), "params"], capture_output=True,
                         text=True)
    lines = [ln for ln in out.stdout.splitlines()
             if ln.startswith("RMB-PARAM ")]
    if out.returncode != 0 or not lines:
        raise UserError(f"{binary} params printed no parameter table "
                        f"(exit {out.returncode})")
    return tuple(parse_line(ln) for ln in lines)


def names(program: str) -> tuple[str, ...]:
    return tuple(p.key for p in table(program))


def check(program: str, workload: str, mode: str,
          values: dict[str, list[object]]) -> None:
    """Refuse parameters program does not take in mode, or values out of
    their range, with the list of what it takes."""
    params = {p.key: p for p in table(program)}
    valid = [p.spec(mode) for p in params.values()
             if p.key != "mode" and p.applies(mode)]
    listing = f"workload {workload} mode {mode} takes: {', '.join(valid)}"
    for key, vals in values.items():
        p = params.get(key)
        if p is None or key == "mode":
            raise UserError(f"unknown parameter '{key}' of workload "
                            f"{workload}; {listing}")
        if not p.applies(mode):
            raise UserError(f"parameter {key} does not apply to mode "
                            f"{mode} (only to {'|'.join(p.modes)}); "
                            f"{listing}")
        for v in vals:
            why = p.problem(v, mode)
            if why:
                raise UserError(f"{why} (workload {workload}); {listing}")


def markdown(program: str) -> list[str]:
    """bench/README.md's table of program's parameters."""
    rows = ["| parameter | default | values | modes | what |",
            "|---|---|---|---|---|"]
    for p in table(program):
        values = "|".join(p.choices) if p.choices else \
            f"{p.min}..{p.max}" + "".join(f", {m}: ..{n}"
                                          for m, n in p.mode_max)
        modes = "" if p.key == "mode" else ", ".join(p.modes) or "all"
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in (
            f"`{p.key}`", str(p.default), values, modes, p.help)) + " |")
    return rows


BLOCK = re.compile(r"(<!-- params: (rmb-[\w-]+) -->\n).*?"
                   r"(<!-- end params -->)", re.S)


def readme(text: str) -> str:
    """text (bench/README.md) with every parameter table between
    '<!-- params: PROGRAM -->' and '<!-- end params -->' made anew from
    PROGRAM's own table."""
    return BLOCK.sub(lambda m: m.group(1) + "\n".join(
        markdown(m.group(2))) + "\n" + m.group(3), text)
