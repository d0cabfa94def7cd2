"""Scratch directories of a boot in the cache (its initrd, its swap disk
and QMP socket), named after the process that made them and its host
(rmapbench-boot-<pid>-<host>@-<random>: a cache shared by the nodes of
a cluster holds the scratch of processes on other hosts).

A run that ends, or is interrupted, removes its own; one killed outright
(SIGKILL, the OOM killer, a lost machine) cannot, and leaves its
initrd and swap disk behind.  The next run's executor removes the
scratch directories of processes of its own host that no longer exist
(a name without a host is of this one, as before hosts were named).
"""

import os
import re
import shutil
import socket
import tempfile
from pathlib import Path

from . import paths

KINDS = ("boot", "initrd")
NAMED = re.compile(r"rmapbench-(?:boot|initrd)-(\d+)-(?:([^@/]+)@-)?")


def directory(kind: str) -> tempfile.TemporaryDirectory:
    """A scratch directory of this process in the cache."""
    assert kind in KINDS, kind
    root = paths.cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    return tempfile.TemporaryDirectory(
        prefix=f"rmapbench-{kind}-{os.getpid()}-{socket.gethostname()}@-",
        dir=root)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stale(path: Path) -> bool:
    """A scratch directory no live run owns: one of this host whose
    process is gone."""
    named = NAMED.match(path.name)
    if not named or named[2] not in (None, socket.gethostname()):
        return False
    return not alive(int(named[1]))


def sweep(root: Path | None = None) -> list[Path]:
    """Remove the stale scratch directories under root (the cache); the
    ones removed."""
    root = root or paths.cache_dir()
    if not root.is_dir():
        return []
    gone = [p for p in root.glob("rmapbench-*")
            if p.is_dir() and stale(p)]
    for p in gone:
        shutil.rmtree(p, ignore_errors=True)
    return gone
