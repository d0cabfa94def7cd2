"""results/<run-id>/: one JSON file per finished boot, written atomically.

A boot's file appears only when the boot is over and its records are
complete, so an interrupted run keeps what it finished and the next run of
the same command skips it.  records.jsonl is rebuilt from the boot files.
Beside them: metadata.json (the environment, the phases' times, each
point's repetitions) and sizing.json (the answers of memory-size
searches, sizing.py).  What reads results (the report) needs this
module, not the code that boots.
"""

import json
import os
import re
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import paths
from .errors import UserError
from .record import Config

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def run_dir(run_id: str) -> Path:
    if not RUN_ID.match(run_id):
        raise UserError(f"bad run id '{run_id}': use letters, digits, "
                        "'.', '_' and '-'")
    return paths.RESULTS / run_id


def write_atomic(path: Path, text: str) -> None:
    """Write text to path via a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_json(path: Path, value: object) -> None:
    write_atomic(path, json.dumps(value, indent=1, sort_keys=True) + "\n")


def boot_file(rdir: Path, key: str) -> Path:
    return rdir / "boots" / f"{key}.json"


def log_file(rdir: Path, key: str) -> Path:
    return rdir / "logs" / f"{key}.log"


def boot_done(rdir: Path, key: str) -> bool:
    return boot_file(rdir, key).exists()


def save_boot(rdir: Path, key: str, boot: dict) -> None:
    write_json(boot_file(rdir, key), boot)


def load_boots(rdir: Path) -> list[dict]:
    boots = []
    for path in sorted((rdir / "boots").glob("*.json")):
        try:
            boots.append(json.loads(path.read_text()))
        except json.JSONDecodeError as err:
            raise UserError(f"{path} is corrupt ({err}): delete it to run "
                            "that boot again") from err
    return boots


def load_records(rdir: Path) -> list[dict]:
    if not rdir.exists():
        raise UserError(f"no results at {rdir}: run 'harness.py run' or "
                        "'harness.py compare' first")
    return [r for boot in load_boots(rdir) for r in boot["records"]]


def write_records(rdir: Path) -> Path:
    """records.jsonl from every finished boot."""
    out = rdir / "records.jsonl"
    lines = [json.dumps(r, sort_keys=True) for r in load_records(rdir)]
    write_atomic(out, "".join(line + "\n" for line in lines))
    return out


def load_metadata(rdir: Path) -> dict:
    path = rdir / "metadata.json"
    return json.loads(path.read_text()) if path.exists() else {}


def update_metadata(rdir: Path, fields: dict) -> None:
    """metadata.json with fields set (written atomically)."""
    write_json(rdir / "metadata.json", {**load_metadata(rdir), **fields})


# A point's policy in metadata.json when the run checked that its exact
# counts repeat, or that its boots repeat exactly, every metric
# (repetitions.py decides it).
EXACT = "exact"
REPEATS = "repeats"


def checked(metadata: dict) -> dict[Config, str]:
    """The configurations of a run whose repetition it checked (their
    experiment stayed EXACT or REPEATS: its check point's boots agreed),
    each with that policy."""
    return {Config.of(p): p["policy"]
            for p in metadata.get("repetitions") or []
            if p.get("policy") in (EXACT, REPEATS)}


# --- the answers of memory-size searches: sizing.json ---------------------

SIZING = "sizing.json"
# What a guest of the answer's size does (a smaller one failed, or
# swapped, which the probe lines tell apart)
SAYS = {"completes": "completes", "no-swap": "runs without swapping"}


@dataclass(frozen=True)
class Answer:
    """One search's answer for one stack and arch (sizing.py)."""
    what: str               # the configuration searched, for the report
    stack: str
    arch: str
    goal: str               # sizing.GOALS
    lo: int
    hi: int
    step: int
    smallest: int | None    # None: not even at hi
    below: int | None       # the largest size probed that fell short
    probes: dict[int, bool]  # size -> held
    fault: str | None = None  # the probe whose kernel faulted, and how
    # size -> pages its probe swapped out (None: not counted)
    swapped: dict[int, float | None] = field(default_factory=dict)

    def text(self) -> str:
        head = f"{self.stack} ({self.arch}): {SAYS[self.goal]}"
        if self.fault:
            return (f"{self.stack} ({self.arch}): FAILED, no answer: the "
                    f"kernel faulted in the probe of {self.fault} (a broken "
                    "kernel: see that boot's console)")
        if self.smallest is None:
            return f"{head} in no size up to {self.hi} MB"
        if self.below is None:
            return (f"{head} from {self.lo} MB, the smallest size tried"
                    f"{self.swapping(self.lo)}")
        return (f"{head} from {self.smallest} MB"
                f"{self.swapping(self.smallest)}, not in {self.below} MB")

    def swapping(self, mem: int) -> str:
        """How hard a guest that merely completes had to swap: its one
        probe's pswpout (a page written twice counts twice)."""
        pages = self.swapped.get(mem)
        if self.goal == "no-swap" or not pages:
            return ""
        return f" (its probe there wrote {pages:,.0f} pages to swap)"

    def key(self) -> tuple:
        """What a newer answer replaces: the same search, stack, arch
        and goal."""
        return self.what, self.stack, self.arch, self.goal

    def line(self) -> str:
        """The report's sentence."""
        return (f"{self.what + ': ' if self.what else ''}{self.text()} "
                f"(goal {self.goal}: bisected between {self.lo} and "
                f"{self.hi} MB to {self.step} MB)")


def answer_of(saved: dict) -> Answer:
    """An Answer from its JSON (whose keys are strings)."""
    sizes = {d: {int(k): v for k, v in saved[d].items()}
             for d in ("probes", "swapped")}
    return Answer(**{**saved, **sizes})


def load_answers(rdir: Path) -> list[Answer]:
    """The answers saved in rdir: none where no search ran."""
    path = rdir / SIZING
    if not path.exists():
        return []
    return [answer_of(a) for a in json.loads(path.read_text())]


def answer_lines(rdir: Path) -> list[str]:
    """The report's sentence for each answer saved in rdir."""
    return [a.line() for a in load_answers(rdir)]


def save_answers(rdir: Path, answers: list[Answer]) -> None:
    """Add answers to rdir's sizing.json; they replace older ones of the
    same search, stack, arch and goal."""
    new = {a.key() for a in answers}
    keep = [a for a in load_answers(rdir) if a.key() not in new]
    write_json(rdir / SIZING, [asdict(a) for a in keep + answers])
