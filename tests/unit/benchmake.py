"""The guest workloads built for the unit tests that run them on the
host: make -C bench ARCH=<arch>, its output directory."""

import subprocess
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def make_bench(arch: str = "x86_64") -> subprocess.CompletedProcess:
    """Build the workloads of arch; the result, for the caller to judge
    (an i386 build may be missing its 32-bit libraries)."""
    return subprocess.run(["make", "-s", "-C", str(BENCH), f"ARCH={arch}"],
                          capture_output=True, text=True, timeout=120)


def built(arch: str = "x86_64") -> Path:
    """Build the workloads of arch, which must succeed: out/<arch>."""
    res = make_bench(arch)
    assert res.returncode == 0, res.stdout + res.stderr
    return BENCH / "out" / arch
