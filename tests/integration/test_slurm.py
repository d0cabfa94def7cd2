"""Runs through Slurm on a real single-node cluster (conftest.slurm)."""

import subprocess
import time
from pathlib import Path


def wait_gone(env: dict, job: str, seconds: float = 60) -> None:
    """Until squeue lists none of job's tasks."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        out = subprocess.run(["squeue", "-h", "-j", job, "-o", "%i"],
                             capture_output=True, text=True, env=env)
        if not out.stdout.strip():
            return
        time.sleep(0.5)
    raise AssertionError(f"job {job} still queued after {seconds}s")


def test_an_array_and_a_dependent_job_run(slurm, tmp_path: Path):
    script = tmp_path / "task.sh"
    script.write_text("#!/bin/sh\necho \"$SLURM_ARRAY_TASK_ID\" > "
                      f"{tmp_path}/task-$SLURM_ARRAY_TASK_ID\n")
    array = subprocess.run(
        ["sbatch", "--parsable", "--array=0-2", "-o", "/dev/null",
         str(script)], capture_output=True, text=True, env=slurm, check=True
    ).stdout.strip()
    after = tmp_path / "after.sh"
    after.write_text(f"#!/bin/sh\nls {tmp_path} | grep -c '^task-' > "
                     f"{tmp_path}/counted\n")
    dep = subprocess.run(
        ["sbatch", "--parsable", f"--dependency=afterany:{array}",
         "-o", "/dev/null", str(after)], capture_output=True, text=True,
        env=slurm, check=True).stdout.strip()
    wait_gone(slurm, dep)
    assert sorted(p.read_text() for p in tmp_path.glob("task-*")) == \
        ["0\n", "1\n", "2\n"]
    assert (tmp_path / "counted").read_text() == "3\n"
