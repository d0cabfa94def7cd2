"""Runs through Slurm on a real single-node cluster (conftest.slurm)."""

import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rmapbench import kbuild, testbed, workloads

REPO = Path(__file__).resolve().parents[2]


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


# The smallest comparison that boots every kind of slice on i386 (the
# comparison's own arch): mremap-unshared and fork-rate pack into one
# icount boot per stack, fork-depth's exact counts on the host clock
# share nodes (no timing at stake), swap-ceiling's host-clock timings
# (fio on the swap disk) run alone (--exclusive).
COMPARE = ["compare", "--experiments",
           "mremap-unshared,fork-rate,fork-depth,swap-ceiling",
           "--arch", "i386", "--reps", "1", "--accel", "tcg"]
# icount timings repeat within 0.5% between boots (docs/measurements.md)
ICOUNT_TOLERANCE = 0.01


def require_i386_kernels() -> None:
    for stack in testbed.stack_names():
        if not kbuild.kernel_image(stack, "i386").exists():
            pytest.fail(f"{stack} i386 kernel not built: run 'harness.py "
                        "build --arch i386'")


def harness(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "harness.py"), *args],
                          capture_output=True, text=True, env=env,
                          timeout=1800)


def records(results: Path, run: str) -> dict[tuple, dict]:
    """A run's records by boot and place among the boot's records."""
    out: dict[tuple, dict] = {}
    for line in (results / run / "records.jsonl").read_text().splitlines():
        rec = json.loads(line)
        n = sum(1 for k in out if k[0] == rec["boot"])
        out[(rec["boot"], n)] = rec
    return out


def wait_for_run(env: dict, run: str, seconds: float = 1200) -> None:
    """Until no job of the run is queued (the report job included)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        out = subprocess.run(["squeue", "-h", f"--name=rmapbench-{run}",
                              "-o", "%i"], capture_output=True, text=True,
                             env=env, check=True)
        if not out.stdout.strip():
            return
        time.sleep(2)
    raise AssertionError(f"run {run} still has jobs after {seconds}s")


def same_measure(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= ICOUNT_TOLERANCE * max(abs(a), abs(b))


def test_a_comparison_through_slurm_equals_the_local_one(slurm, tmp_path):
    """The same comparison run locally and with --slurm: the same
    records, field for field; every count the workloads declare exact
    equal; every icount timing within its repeatability."""
    require_i386_kernels()
    results = tmp_path / "results"
    env = {**slurm, "RMAPBENCH_RESULTS": str(results),
           "RMAPBENCH_PLOTS": str(tmp_path / "plots")}
    local = harness(env, *COMPARE, "--run-id", "local", "--no-report")
    assert local.returncode == 0, local.stdout + local.stderr
    sub = harness(env, *COMPARE, "--run-id", "onslurm", "--slurm")
    assert sub.returncode == 0, sub.stdout + sub.stderr
    assert "boots on the host clock, a node each, in 1 task(s)" in sub.stdout
    wait_for_run(env, "onslurm")
    state = harness(env, "status", "onslurm")
    (boots,) = re.findall(r"^round 1: (\d+) boots", local.stdout, re.M)
    assert f"round 1: {boots} of {boots} boots finished, 0 failed" in \
        state.stdout, state.stdout
    assert (results / "onslurm" / "report.md").exists(), state.stdout
    mine, theirs = records(results, "onslurm"), records(results, "local")
    assert sorted(mine) == sorted(theirs)
    for key, rec in mine.items():
        other = theirs[key]
        assert not rec["failed"] and not other["failed"]
        ignore = {"run_id", "metrics"}
        assert {k: v for k, v in rec.items() if k not in ignore} == \
            {k: v for k, v in other.items() if k not in ignore}
        mode = workloads.mode(rec["workload"], rec["mode"])
        for metric in mode.metrics:
            got, want = (r["metrics"].get(metric.name) for r in (rec, other))
            if metric.deterministic:
                assert got == want, (key, metric.name)
            elif rec["clock"] == testbed.ICOUNT:
                assert same_measure(got, want), (key, metric.name, got, want)
    boots = [json.loads(p.read_text())
             for p in (results / "onslurm" / "boots").glob("*.json")]
    assert {b["node"] for b in boots} == {socket.gethostname()}


def test_the_suite_through_slurm_gives_the_local_verdicts(slurm, tmp_path):
    """check --slurm: the same verdicts, test by test and kernel by
    kernel, as the same check run locally, and its tables written."""
    require_i386_kernels()
    env = {**slurm, "RMAPBENCH_RESULTS": str(tmp_path / "results")}
    check = ["check", "--quick", "--arch", "i386", "--test", "torture-cow",
             "--accel", "tcg"]
    local = harness(env, *check, "--out", str(tmp_path / "local"))
    assert local.returncode == 0, local.stdout + local.stderr
    out = tmp_path / "results" / "chk"
    sub = harness(env, *check, "--out", str(out), "--slurm")
    assert sub.returncode == 0, sub.stdout + sub.stderr
    wait_for_run(env, "chk")
    state = harness(env, "status", str(out))
    assert "round 1: 2 of 2 boots finished, 0 failed" in state.stdout, \
        state.stdout

    def verdicts(d: Path) -> list[tuple]:
        found = json.loads((d / "check.json").read_text())["verdicts"]
        return sorted((v["test"], v["kernel"], v["verdict"]) for v in found)
    assert verdicts(out) == verdicts(tmp_path / "local")
    assert (out / "check.md").exists()


# a boot of about half a minute on i386 (fork+exit 1,500 times on the
# icount clock): long enough to be stopped while its guest runs
LONG = ["run", "--workload", "fork", "--mode", "rate", "--param", "N=1500",
        "--param", "V=1000", "--arch", "i386", "--stack", "anonmm",
        "--clock", "icount", "--reps", "1", "--no-report", "--accel", "tcg",
        "--run-id", "stopped"]


def running_tasks(env: dict, run: str) -> list[str]:
    out = subprocess.run(["squeue", "-h", f"--name=rmapbench-{run}",
                          "-t", "RUNNING", "-o", "%i"], capture_output=True,
                         text=True, env=env, check=True)
    return out.stdout.split()


def test_a_task_stopped_mid_boot_stores_nothing_and_a_rerun_boots_it(
        slurm, tmp_path):
    """SIGTERM to every process of a task, as Slurm sends it at a time
    limit, while its guest runs: the guest is killed, no boot is stored,
    the task says so, the job after the round names the boot; the same
    command again boots it and the run completes."""
    require_i386_kernels()
    results = tmp_path / "results"
    env = {**slurm, "RMAPBENCH_RESULTS": str(results),
           "RMAPBENCH_PLOTS": str(tmp_path / "plots")}
    sub = harness(env, *LONG, "--slurm")
    assert sub.returncode == 0, sub.stdout + sub.stderr
    logs = results / "stopped" / "logs"
    deadline = time.monotonic() + 300

    def started() -> bool:
        return logs.is_dir() and any(p.stat().st_size
                                     for p in logs.glob("*.log"))
    while not started():
        assert time.monotonic() < deadline, "the guest never started"
        time.sleep(0.5)
    time.sleep(2)
    (task,) = running_tasks(env, "stopped")
    subprocess.run(["scancel", "--signal=TERM", "--full", task], env=env,
                   check=True)
    wait_for_run(env, "stopped")
    assert not list((results / "stopped" / "boots").glob("*.json"))
    outputs = "".join(p.read_text(errors="replace") for p in
                      (results / "stopped" / "slurm").glob("*"))
    assert "harness.py: stopped (SIGTERM)" in outputs, outputs
    assert "nothing stored: its task died" in outputs, outputs
    assert subprocess.run(["pgrep", "-f", "qemu-system-i386"],
                          capture_output=True).returncode == 1
    again = harness(env, *LONG, "--slurm")
    assert again.returncode == 0, again.stdout + again.stderr
    wait_for_run(env, "stopped")
    state = harness(env, "status", "stopped")
    assert "1 of 1 boots finished, 0 failed" in state.stdout, state.stdout
