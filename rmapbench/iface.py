"""The guest interface, read from bench/lib/rmb-iface.h.

The header is the one list of the slab caches, /proc/vmstat counters,
sizeof fields and sampled /proc/meminfo fields; the C library expands it
and the harness parses it here, so the two never disagree.
"""

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from . import paths
from .errors import UserError

HEADER = paths.BENCH / "lib" / "rmb-iface.h"
FLAGS = {"RMB_F_COST": 1, "RMB_F_RMAP": 2, "RMB_F_SAMPLE": 4,
         "RMB_F_SMOKE": 8, "0": 0}
COST, RMAP, SAMPLE, SMOKE = 1, 2, 4, 8
ENTRY = re.compile(r"^\s*X\(([^)]*)\)\s*\\?\s*$")
LIST = re.compile(r"^#define (RMB_[A-Z]+)\(X\)")


@dataclass(frozen=True)
class Slab:
    name: str
    flags: int


@dataclass(frozen=True)
class Counter:
    name: str            # the /proc/vmstat line
    unit: str            # count or pages
    flags: int

    @property
    def field(self) -> str:
        """What a result line calls its growth."""
        return f"{self.name}_{self.unit}"


def flag_value(text: str, where: str) -> int:
    value = 0
    for word in (w.strip() for w in text.split("|")):
        if word not in FLAGS:
            raise UserError(f"{HEADER}: unknown flag '{word}' in {where}")
        value |= FLAGS[word]
    return value


@cache
def lists(header: Path = HEADER) -> dict[str, list[list[str]]]:
    """Every X-macro list of the header: name -> entries' arguments."""
    out: dict[str, list[list[str]]] = {}
    current = None
    for line in header.read_text().splitlines():
        start = LIST.match(line)
        if start:
            current = out.setdefault(start.group(1), [])
            continue
        entry = ENTRY.match(line)
        if entry and current is not None:
            current.append([a.strip() for a in entry.group(1).split(",")])
        elif not line.rstrip().endswith("\\"):
            current = None
    return out


def slabs(flag: int = 0) -> tuple[str, ...]:
    """The slab caches (with flag, if given), in the header's order."""
    return tuple(s.name for s in all_slabs() if not flag or s.flags & flag)


def all_slabs() -> tuple[Slab, ...]:
    return tuple(Slab(name, flag_value(flags, name))
                 for _, name, flags in lists()["RMB_SLABS"])


def counters(flag: int = 0) -> tuple[Counter, ...]:
    return tuple(c for c in (
        Counter(name, unit, flag_value(flags, name))
        for _, name, unit, flags in lists()["RMB_COUNTERS"])
        if not flag or c.flags & flag)


def sums() -> tuple[str, ...]:
    """The 64-bit sums /proc/rmapbench shows (its lines' names)."""
    return tuple(line for _, line, _ in lists()["RMB_SUMS"])


def sum_fields() -> tuple[str, ...]:
    """What a result line calls each sum's growth."""
    return tuple(field for _, _, field in lists()["RMB_SUMS"])


def sizes() -> tuple[str, ...]:
    """The structures whose sizeof_<name> /proc/rmapbench shows."""
    return tuple(name for (name,) in lists()["RMB_SIZES"])


def meminfo(flag: int = 0) -> tuple[str, ...]:
    return tuple(name for name, flags in lists()["RMB_MEMINFO"]
                 if not flag or flag_value(flags, name) & flag)


def sampler_config() -> str:
    """What init.sh's sampler reads (/etc/rmb-iface.sh in the image):
    awk patterns of the fields it prints."""
    def alt(names: tuple[str, ...]) -> str:
        return "|".join(names)
    vmstat = tuple(c.name for c in counters(SAMPLE))
    return (f"RMB_SAMPLE_MEMINFO='{alt(meminfo(SAMPLE))}'\n"
            f"RMB_SAMPLE_VMSTAT='{alt(vmstat)}'\n"
            f"RMB_SAMPLE_SLABS='{alt(slabs(SAMPLE))}'\n")
