"""Guest plans: the plan language of bench/init.sh, written in one place.

A plan is what a guest does after boot, one verb a line (init.sh runs
them in order and brackets each with RMB-STEP / RMB-STEP-END):

  swapon / swapoff      swap on the virtio disk (mkswap first) / off
  info                  the state sections (rmapbench, meminfo, vmstat,
                        slabinfo, swaps)
  run PROGRAM ARGS      /bench/PROGRAM ARGS
  section NAME CMD      CMD's output as section NAME
  sh CMD                a shell command
  sample SECONDS        from now on, RMB-SAMPLE lines every SECONDS
  settle SECONDS        wait up to SECONDS for user processes to end
  mark NAME             nothing: the lines up to the next mark are NAME's
                        (one boot running several cases' lines in turn)

Every plan line is built by a function below; a Plan also remembers
which lines belong to which test and each test's main line, for the
correctness suite's judges.
"""

from dataclasses import dataclass, field


def swapon() -> str:
    return "swapon"


def swapoff() -> str:
    return "swapoff"


def info() -> str:
    return "info"


def run(program: str, args: str | dict = "") -> str:
    """run PROGRAM k=v ...; args as text or as a dict (in its order)."""
    if isinstance(args, dict):
        args = " ".join(f"{k}={v}" for k, v in args.items())
    return f"run {program} {args}".strip()


def section(name: str, command: str) -> str:
    return f"section {name} {command}"


def proc(name: str, path: str) -> str:
    """A /proc file as section name."""
    return section(name, f"cat {path}")


def sh(command: str) -> str:
    return f"sh {command}"


def sample(seconds: int) -> str:
    return f"sample {seconds}"


def settle(seconds: int) -> str:
    return f"settle {seconds}"


MARK = "mark"


def mark(name: str) -> str:
    if not name or any(c.isspace() for c in name):
        raise ValueError(f"a mark names one word, not {name!r}")
    return f"{MARK} {name}"


@dataclass
class Plan:
    """Plan lines, numbered from 1 as the guest's RMB-STEP numbers;
    owner: step number -> the test (or boot check) it belongs to;
    main: test -> the number of its main step; name: what the boot is
    (the suite's group)."""
    lines: list[str] = field(default_factory=list)
    owner: dict[int, str] = field(default_factory=dict)
    main: dict[str, int] = field(default_factory=dict)
    name: str = ""

    def add(self, line: str, owner: str | None = None,
            main: bool = False) -> int:
        self.lines.append(line)
        number = len(self.lines)
        if owner:
            self.owner[number] = owner
            if main:
                self.main[owner] = number
        return number

    def steps_of(self, owner: str) -> list[int]:
        """The step numbers owned by owner, in order."""
        return sorted(n for n, o in self.owner.items() if o == owner)

    def number(self, line: str) -> int:
        """The step number of the first plan line equal to line."""
        return self.lines.index(line) + 1

    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines)


def of(*lines: str) -> str:
    """The text of a plan of lines."""
    return Plan(list(lines)).text()
