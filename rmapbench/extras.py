"""Image extras: files a boot needs beyond the base image.

The base initramfs (image.build_image) holds busybox, the guest init and
the workloads.  Debian's fio (the swap device's ceiling), the kernel's mm
selftests and stress-ng (the correctness suite) go only into the images
of the boots that use them: in every other guest they would take memory
the workloads measure.  Each extra gives, for an arch, the (host file,
path in the guest) pairs to pack, or why it cannot be packed there.
"""

import functools
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import benchbuild, debs, paths, testbed
from .errors import UserError

Files = tuple[tuple[Path, str], ...]      # (host file, path in the guest)
SELFTEST_DIR = "bench/selftests"          # selftests run as selftests/X
FilesOf = Callable[[str], tuple[Files, str | None]]   # arch -> files, why


@dataclass(frozen=True)
class Extra:
    name: str
    files: FilesOf


def shared_libraries(binary: Path) -> list[Path]:
    """The libraries ldd says binary needs, the dynamic loader included."""
    res = subprocess.run(["ldd", str(binary)], capture_output=True,
                         text=True)
    if res.returncode != 0:
        raise UserError(f"ldd {binary} failed: {res.stderr.strip()}")
    libs = []
    for line in res.stdout.splitlines():
        words = line.split()
        if "=>" in words and len(words) > words.index("=>") + 1:
            libs.append(Path(words[words.index("=>") + 1]))
        elif words and words[0].startswith("/"):
            libs.append(Path(words[0]))
    return libs


def dynamic_tool(tool: str, binary: Path) -> FilesOf:
    """Debian's package tool (its program binary) with every library it
    loads, at their own paths: on the host's arch the installed one
    (ldd), on another the package of that arch, downloaded and unpacked
    into the cache (debs.py).  Only the arches whose testbed entry
    lists the tool have it."""
    def files(arch: str) -> tuple[Files, str | None]:
        entry = testbed.arch(arch)
        if tool not in entry.tools:
            return (), f"{tool} is packed for " \
                f"{', '.join(testbed.arches_with(tool))} only, not {arch}"
        if entry.deb_arch != host_deb_arch():
            try:
                return debs.tool_files(tool, str(binary),
                                       entry.deb_arch), None
            except UserError as err:
                return (), f"{tool} for {arch}: {err}"
        if not binary.exists():
            return (), f"{tool} not installed: run 'make setup'"
        out = [(binary, str(binary.relative_to("/")))]
        out += [(lib.resolve(), str(lib.relative_to("/")))
                for lib in shared_libraries(binary)]
        return tuple(out), None
    return files


@functools.cache
def host_deb_arch() -> str:
    return debs.host_arch()


def selftest_files(arch: str) -> tuple[Files, str | None]:
    """The kernel's mm selftests built static for arch (selftests.mk)."""
    res = benchbuild.make(arch, "selftests")
    if res.returncode != 0:
        lines = (res.stderr or res.stdout).strip().splitlines()
        return (), "building the selftests failed: " + (
            lines[-1] if lines else f"make exit {res.returncode}")
    out = paths.BENCH / "out" / arch / "selftests"
    return tuple((p, f"{SELFTEST_DIR}/{p.name}") for p in sorted(
        out.iterdir()) if p.is_file() and os.access(p, os.X_OK)), None


EXTRAS: dict[str, Extra] = {e.name: e for e in (
    # fio and its ~80 MB of libraries (x86_64 and i386 alike: librbd,
    # libglusterfs and libicudata 30 MB)
    Extra("fio", dynamic_tool("fio", Path("/usr/bin/fio"))),
    # about 32 MB on Debian 12 (the binary 8.7 MB, libIPSec_MB 12.8 MB,
    # libcrypto 4.7 MB, ...), 16.4 MB on i386 (no libIPSec_MB there)
    Extra("stress-ng", dynamic_tool("stress-ng", Path("/usr/bin/stress-ng"))),
    Extra("selftests", selftest_files),
)}


def resolve(names: tuple[str, ...], arch: str) -> tuple[Files, dict[str,
                                                                    str]]:
    """The files of the extras names for arch, and why each missing
    one is missing (name -> reason)."""
    files: list[tuple[Path, str]] = []
    missing = {}
    for name in names:
        got, why = EXTRAS[name].files(arch)
        if why:
            missing[name] = why
        files += got
    return tuple(files), missing


def require(names: tuple[str, ...], arch: str) -> Files:
    """The files of names for arch, or a UserError saying what is
    missing."""
    files, missing = resolve(names, arch)
    if missing:
        raise UserError("; ".join(missing.values()))
    return files
