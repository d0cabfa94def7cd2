"""Wall times of a run's phases, kept in its metadata.json.

One entry per invocation of compare/run/report on a run, under
"phases": when it started, the host's load average at its start and
end (timings taken under load are not final figures), and the seconds
of each phase it went through: setup (the Debian packages: `make
compare` passes its start as RMAPBENCH_SETUP_STARTED), builds, boots,
stats, plots, report.
"""

import os
import shlex
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from . import store

SETUP_ENV = "RMAPBENCH_SETUP_STARTED"
ORDER = ("setup", "builds", "boots", "sizing", "stats", "plots", "report")


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


class Stopwatch:
    """The phases of one invocation."""

    def __init__(self) -> None:
        self.started = time.time()
        self.load_start = load()
        self.seconds: dict[str, float] = {}
        setup = os.environ.get(SETUP_ENV)
        if setup:
            try:
                self.seconds["setup"] = round(self.started - float(setup), 1)
            except ValueError:
                pass

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.monotonic()
        try:
            yield
        finally:
            took = time.monotonic() - start
            self.seconds[name] = round(self.seconds.get(name, 0.0) + took, 1)

    def entry(self) -> dict:
        return {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                         time.gmtime(self.started)),
                "command": " ".join(shlex.quote(a) for a in sys.argv),
                "seconds": dict(self.seconds),
                "total_s": round(time.time() - self.started
                                 + self.seconds.get("setup", 0.0), 1),
                "load_start": self.load_start, "load_end": load()}


def save(rdir: Path, watch: Stopwatch) -> None:
    """This invocation's entry in rdir's metadata (replacing an earlier
    save of the same invocation)."""
    entry = watch.entry()
    old = store.load_metadata(rdir).get("phases") or []
    kept = [e for e in old if e.get("started") != entry["started"]]
    store.update_metadata(rdir, {"phases": kept + [entry]})
