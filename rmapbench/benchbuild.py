"""Building bench/ (the guest programs and the kernel's selftests) for
an arch, with the compiler flag its testbed entry names."""

import fcntl
import subprocess

from . import paths, testbed


def make(arch: str, *targets: str) -> subprocess.CompletedProcess:
    """make -C bench [targets] for arch; the result, output captured.
    One make at a time: harnesses run side by side (two 'run's, a 'run'
    beside a 'check') share bench/out, and a make beside another can
    remove the file the other is about to rename (its progs.h.new)."""
    out = paths.BENCH / "out"
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".make.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return subprocess.run(["make", "-s", "-C", str(paths.BENCH),
                               *targets, f"ARCH={arch}",
                               f"MFLAG={testbed.arch(arch).mflag}"],
                              capture_output=True, text=True)
