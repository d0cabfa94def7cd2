"""Reading a guest's serial console: faults, sections, steps, results.

The guest init (bench/init.sh) and the workloads write lines behind an
RMB- prefix; everything else is the kernel's.  Kernel messages may be
interleaved with ours, even in the middle of one of our lines (untangle
puts them apart first), and are never part of a section.  The console
is parsed once: every step keeps its results and its output (every
console line from its RMB-STEP line to the next), so the judges of the
correctness suite and the record makers read the same parse.
"""

import json
import re
from dataclasses import dataclass, field

from .plan import MARK

# A console line matching any of these marks the boot failed: the kernel
# is broken, whatever the workload printed.
FAULT_PATTERNS = [
    (re.compile(r"\bBUG[: ]|kernel BUG at"), "BUG"),
    (re.compile(r"\bWARNING:"), "WARNING"),
    (re.compile(r"\bOops\b"), "Oops"),
    (re.compile(r"Kernel panic"), "panic"),
    (re.compile(r"general protection fault"), "general protection fault"),
    (re.compile(r"Bad page"), "Bad page"),
    (re.compile(r"soft lockup"), "soft lockup"),
    (re.compile(r"blocked for more than \d+ seconds"), "hung task"),
    (re.compile(r"Unable to handle kernel"), "kernel fault"),
    (re.compile(r"\[ cut here \]"), "cut here"),
    (re.compile(r"rcu.*detected stalls"), "RCU stall"),
    (re.compile(r"\bsegfault at\b"), "user segfault"),
]
EXCERPT_LINES = 40
CLOCKSOURCE = re.compile(r"clocksource: Switched to clocksource (\S+)")
# A kernel message: the kernel writes each whole, under the port lock,
# but may write it into the middle of a line a program is writing.
KMSG = re.compile(r"\[\s*\d+\.\d{6}\] ")
# The kernel's timestamp when it starts the guest init.
RUN_INIT = re.compile(r"^\[\s*(\d+\.\d+)\] Run /init as init process")
# the kernel's count of the CPUs it brought up ("smp: Brought up 2
# nodes, 4 CPUs")
BROUGHT_UP = re.compile(r".*smp: Brought up \d+ nodes?, (\d+) CPUs?")
# the OOM killer's verdict, global or a memory cgroup's ("Out of memory:
# Killed process 92 (rmb-swap) total-vm:...")
OOM_KILL = re.compile(r"[Oo]ut of memory: Killed process (\d+) \(([^)]*)\)")
# Clocks too coarse to time anything with (one tick: 4 ms at HZ=250).
COARSE_CLOCKS = ("jiffies", "refined-jiffies")


@dataclass
class Fault:
    kind: str
    line_number: int
    excerpt: str


@dataclass
class Step:
    number: int
    command: str
    rc: int | None = None
    ms: int | None = None
    results: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)   # its console output


@dataclass
class Console:
    """What one boot's console said."""
    sections: dict[str, list[str]] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    done_rc: int | None = None
    swap: str | None = None
    clocksource: str | None = None
    samples: list[dict[str, int]] = field(default_factory=list)
    # what the guest's init turned on or found of the distro profile's
    # features (RMB-FEATURES: empty for a minimal kernel)
    features: dict[str, str] = field(default_factory=dict)
    bad_lines: list[str] = field(default_factory=list)
    preamble: list[str] = field(default_factory=list)  # before any step
    line_steps: list[int] = field(default_factory=list)  # line -> step

    def step(self, number: int) -> Step | None:
        return next((s for s in self.steps if s.number == number), None)

    def output(self, number: int) -> list[str]:
        """The console lines of plan step number ([] if it never ran)."""
        step = self.step(number)
        return step.lines if step else []

    def step_of_line(self, line_number: int) -> int:
        """The plan step console line line_number (1-based) is in."""
        if 0 < line_number <= len(self.line_steps):
            return self.line_steps[line_number - 1]
        return 0

    def init_seconds(self) -> float | None:
        """Guest seconds from the kernel's start to /init, if printed."""
        for line in self.preamble:
            match = RUN_INIT.match(line)
            if match:
                return float(match.group(1))
        return None

    def online_cpus(self) -> int:
        """The CPUs the kernel brought up (1 if it did not say)."""
        for line in self.preamble:
            match = BROUGHT_UP.match(line)
            if match:
                return int(match.group(1))
        return 1

    def oom_kills(self) -> list[str]:
        """The processes the OOM killer killed, as 'name (pid N)', in
        order."""
        kills = []
        lines = [*self.preamble,
                 *(line for step in self.steps for line in step.lines)]
        for line in lines:
            match = OOM_KILL.search(line)
            if match:
                kills.append(f"{match.group(2)} (pid {match.group(1)})")
        return kills

    def section_pairs(self, name: str) -> dict[str, str]:
        """A 'name value' section (/proc/vmstat, /proc/rmapbench)."""
        pairs = {}
        for line in self.sections.get(name, []):
            parts = line.split()
            if len(parts) == 2:
                pairs[parts[0]] = parts[1]
        return pairs

    def meminfo_kb(self) -> dict[str, int]:
        """/proc/meminfo as name -> kB (or pages for the unit-less)."""
        values = {}
        for line in self.sections.get("meminfo", []):
            name, _, rest = line.partition(":")
            if rest.split():
                values[name.strip()] = int(rest.split()[0])
        return values


def find_faults(lines: list[str]) -> list[Fault]:
    """Every line that shows a kernel fault, with context around it."""
    faults = []
    for i, line in enumerate(lines):
        if line.startswith("RMB-"):
            continue
        for pattern, kind in FAULT_PATTERNS:
            if pattern.search(line):
                lo, hi = max(0, i - 5), min(len(lines), i + EXCERPT_LINES)
                faults.append(Fault(kind, i + 1, "\n".join(lines[lo:hi])))
                break
    return faults


def parse_json_line(payload: str, console: Console) -> dict | None:
    try:
        value = json.loads(payload)
    except json.JSONDecodeError:
        console.bad_lines.append(payload)
        return None
    if not isinstance(value, dict):
        console.bad_lines.append(payload)
        return None
    return value


def current_step(console: Console) -> Step:
    """The step a result line belongs to (step 0 before any step)."""
    if not console.steps:
        console.steps.append(Step(0, "(before plan)"))
    return console.steps[-1]


def handle_marker(line: str, console: Console) -> None:
    """One RMB- line outside a section."""
    tag, _, rest = line.partition(" ")
    if tag == "RMB-STEP":
        number, _, command = rest.partition(" ")
        console.steps.append(Step(int(number.split("/")[0]), command))
    elif tag == "RMB-STEP-END":
        fields = dict(kv.split("=", 1) for kv in rest.split()[1:])
        step = current_step(console)
        step.rc, step.ms = int(fields["rc"]), int(fields["ms"])
    elif tag in ("RMB-RESULT", "RMB-ERROR"):
        value = parse_json_line(rest, console)
        if value is not None:
            step = current_step(console)
            (step.results if tag == "RMB-RESULT" else step.errors).append(
                value)
    elif tag == "RMB-DONE":
        console.done_rc = int(rest.split("=", 1)[1])
    elif tag == "RMB-SWAP":
        console.swap = rest
    elif tag == "RMB-FEATURES":
        console.features = dict(kv.split("=", 1) for kv in rest.split()
                                if "=" in kv)
    elif tag == "RMB-SAMPLE":
        console.samples.append({k: int(v) for k, v in (
            kv.split("=", 1) for kv in rest.split())})


def untangle(lines: list[str]) -> list[str]:
    """The console's lines with every kernel message on a line of its own,
    and a program's line that messages cut in two whole again after them:
    "anon_rmap_walk 204[    1.781443] clocksource: ..." then "8" reads
    as the message, then "anon_rmap_walk 2048"."""
    out: list[str] = []
    cut = ""                      # the head of a program's line, cut
    for line in lines:
        match = KMSG.search(line)
        if match:
            cut += line[:match.start()]
            out.append(line[match.start():])
        else:
            out.append(cut + line)
            cut = ""
    if cut:
        out.append(cut)
    return out


def kernel_line(console: Console, line: str) -> None:
    """A kernel message: it goes to the output of its step, never into a
    section; a clocksource switch is remembered."""
    keep_line(console, line)
    switched = CLOCKSOURCE.search(line)
    if switched:
        console.clocksource = switched.group(1)


def step_start(line: str) -> bool:
    """An RMB-STEP n/m line: the start of a plan step's output."""
    words = line.split(maxsplit=2)
    return len(words) > 1 and words[0] == "RMB-STEP" and "/" in words[1]


def keep_line(console: Console, line: str) -> None:
    """line goes to the output of the step it is in."""
    if console.steps and console.steps[-1].number:
        console.steps[-1].lines.append(line)
        console.line_steps.append(console.steps[-1].number)
    else:
        console.preamble.append(line)
        console.line_steps.append(0)


def parse(text: str) -> Console:
    """Parse a whole console log."""
    lines = untangle(text.replace("\r", "").splitlines())
    console = Console(faults=find_faults(lines))
    section = None
    for line in lines:
        if KMSG.match(line):
            kernel_line(console, line)
            continue
        if section is None and step_start(line):
            try:
                handle_marker(line, console)
            except ValueError:
                console.bad_lines.append(line)
        keep_line(console, line)
        if section is None and step_start(line):
            continue
        if section is not None:
            if line == f"RMB-END {section}":
                section = None
            else:
                console.sections[section].append(line)
        elif line.startswith("RMB-BEGIN "):
            section = line.split(" ", 1)[1]
            console.sections[section] = []
        elif line.startswith("RMB-"):
            try:
                handle_marker(line, console)
            except (ValueError, KeyError, IndexError):
                console.bad_lines.append(line)
    return console


def marked(console: Console, name: str) -> Console:
    """What the case name of a boot that ran several cases' plan lines
    (plan.mark) printed: the steps before the first mark (shared, such
    as swapon) and those from 'mark name' to the next mark, parsed on
    their own.  The kernel's faults, the end of the plan and the clock
    stay the whole boot's: a fault anywhere makes every case's kernel
    broken.  A console without marks is the case's whole."""
    def is_mark(step: Step) -> bool:
        return step.command.split(" ")[0] == MARK

    if not any(is_mark(s) for s in console.steps):
        return console
    lines, mine = list(console.preamble), None
    for step in console.steps:
        if is_mark(step):
            mine = step.command == f"{MARK} {name}"
        if mine is not False:
            lines += step.lines
    view = parse("\n".join(lines))
    view.faults, view.done_rc = console.faults, console.done_rc
    view.clocksource, view.swap = console.clocksource, console.swap
    view.features = console.features
    return view
