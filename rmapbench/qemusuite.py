"""A QEMU from another suite of Debian's archive, for a clock that the
installed one cannot give: downloaded and unpacked into the cache, never
installed on the machine.

Bookworm's QEMU 7.2 runs an icount guest's vCPUs round-robin but gives
the first the whole instruction budget up to the next timer, so a vCPU
that spins without PAUSE starves the others (the boot hangs in
do_boot_cpu()).  QEMU 8.1 splits the budget among the vCPUs (commit
83ecdb18eb65, "accel/tcg/tcg-accel-ops-rr: ensure fairness with
icount"); bookworm-backports carries QEMU 10.  tools/setup-debian.sh
adds that suite to apt's sources (backports are never installed unless
asked for by name), and 'apt-get download PKG/SUITE' fetches the
packages here: the emulator, its data and the SeaBIOS it requires.
"""

import functools
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import debs, paths
from .errors import UserError

# what a QEMU for x86 guests needs beyond the machine's libraries
PACKAGES = ("qemu-system-x86", "qemu-system-common", "qemu-system-data",
            "seabios")


def root(suite: str) -> Path:
    return paths.cache_dir() / "qemu" / suite


def ensure(suite: str) -> Path:
    """The unpacked packages of suite's QEMU, downloaded the first time."""
    top = root(suite)
    if (top / "usr" / "bin").is_dir():
        return top
    top.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rmapbench-qemu-",
                                     dir=top.parent) as tmp:
        work = Path(tmp)
        try:
            debs.run(["apt-get", "download",
                      *(f"{p}/{suite}" for p in PACKAGES)], cwd=work)
        except UserError as err:
            raise UserError(f"cannot download QEMU from {suite}: {err}; "
                            "run 'make setup' (it adds the suite to apt's "
                            "sources), or choose another clock") from None
        for deb in sorted(work.glob("*.deb")):
            debs.run(["dpkg-deb", "-x", str(deb), str(work / "root")])
        debs.place(work / "root", top)
    return top


@functools.lru_cache(maxsize=None)
def binary(suite: str, name: str) -> str:
    """suite's QEMU called name (qemu-system-x86_64), checked to find
    every library it loads on this machine."""
    path = ensure(suite) / "usr" / "bin" / name
    if not path.exists():
        raise UserError(f"{path} missing: remove {root(suite)} and run "
                        "again to download it afresh")
    missing = unresolved(path)
    if missing:
        raise UserError(f"{path} needs libraries this machine lacks: "
                        f"{', '.join(missing)}; install them (apt-get "
                        "install the packages that carry them)")
    return str(path)


def unresolved(path: Path) -> list[str]:
    """The libraries ldd finds no file for."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return []
    out = subprocess.run([ldd, str(path)], capture_output=True,
                         text=True).stdout
    return [line.split()[0] for line in out.splitlines()
            if "not found" in line]


def firmware_args(suite: str) -> list[str]:
    """-L for its own SeaBIOS and option ROMs, before the machine's."""
    top = ensure(suite) / "usr" / "share"
    return ["-L", str(top / "seabios"), "-L", str(top / "qemu")]
