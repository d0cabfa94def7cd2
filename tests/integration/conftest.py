"""A real single-node Slurm cluster for the tests that submit jobs:
tools/slurm-cluster.sh starts munged, slurmctld and slurmd with every
file in a temporary directory, and stops them when the tests are done."""

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLUSTER = REPO / "tools" / "slurm-cluster.sh"
DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch")


@pytest.fixture(scope="module")
def slurm(tmp_path_factory) -> Iterator[dict]:
    """The environment (SLURM_CONF set) under which sbatch, squeue and
    harness.py --slurm use the cluster."""
    missing = [d for d in DAEMONS if not shutil.which(d)]
    if missing:
        pytest.fail(f"no {', '.join(missing)} on PATH: 'make setup' "
                    "installs Debian's slurmctld, slurmd, slurm-client "
                    "and munge")
    # short: munged's socket path must fit a sockaddr_un
    where = Path(tmp_path_factory.mktemp("slurm"))
    started = subprocess.run(["sh", str(CLUSTER), "start", str(where)],
                             capture_output=True, text=True)
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        yield {**os.environ, "SLURM_CONF": str(where / "slurm.conf")}
    finally:
        subprocess.run(["sh", str(CLUSTER), "stop", str(where)], check=False)
