"""Building bench/ (the guest programs and the kernel's selftests) for
an arch, with the compiler flag its testbed entry names."""

import subprocess

from . import paths, testbed


def make(arch: str, *targets: str) -> subprocess.CompletedProcess:
    """make -C bench [targets] for arch; the result, output captured."""
    return subprocess.run(["make", "-s", "-C", str(paths.BENCH), *targets,
                           f"ARCH={arch}",
                           f"MFLAG={testbed.arch(arch).mflag}"],
                          capture_output=True, text=True)
