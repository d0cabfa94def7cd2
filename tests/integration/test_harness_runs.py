"""harness.py run end to end: records, resume after a kill, a panicking
kernel reported as a failure, and the report."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rmapbench import kbuild, paths, testbed

REPO = Path(__file__).resolve().parents[2]


def require_kernels():
    for stack in testbed.stack_names():
        if not kbuild.kernel_image(stack, "x86_64").exists():
            pytest.fail(f"{stack} x86_64 kernel not built: run "
                        "'harness.py build'")


def env_for(tmp_path):
    return {**os.environ, "RMAPBENCH_RESULTS": str(tmp_path / "results"),
            "RMAPBENCH_PLOTS": str(tmp_path / "plots")}


def harness(tmp_path, *args, **kw):
    return subprocess.run([sys.executable, str(REPO / "harness.py"), *args],
                          capture_output=True, text=True,
                          env=env_for(tmp_path), **kw)


# x86_64's minimal kernels, which require_kernels() names: the
# comparison's x86_64 kernels are the distro profile's
RUN = ["run", "--workload", "vma", "--param", "V=200,400", "--arch",
       "x86_64", "--profile", "minimal", "--reps", "1", "--accel", "tcg",
       "--run-id", "t"]


def records(tmp_path):
    lines = (tmp_path / "results/t/records.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_run_resumes_after_a_kill(tmp_path):
    require_kernels()
    boots = tmp_path / "results" / "t" / "boots"
    proc = subprocess.Popen([sys.executable, str(REPO / "harness.py"), *RUN,
                             "--no-report"], env=env_for(tmp_path),
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (
            boots.exists() and list(boots.glob("*.json"))):
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = list(boots.glob("*.json"))
    assert 1 <= len(finished) < 4, "the kill came too late to test resume"
    left = list(paths.cache_dir().glob(f"rmapbench-*-{proc.pid}-*"))
    res = harness(tmp_path, *RUN)
    assert res.returncode == 0, res.stderr
    assert f"{len(finished)} of 4 boots already finished" in res.stdout
    # what the killed run left in the cache, the resumed one removed
    assert not any(d.exists() for d in left)
    recs = records(tmp_path)
    assert len(recs) == 4 and not any(r["failed"] for r in recs)
    assert {r["stack"] for r in recs} == set(testbed.stack_names())
    assert {r["params"]["V"] for r in recs} == {200, 400}
    assert all(r["metrics"]["vmas_count"] == r["params"]["V"] for r in recs)
    report = (tmp_path / "results/t/report.md").read_text()
    assert "## Summary" in report


def test_a_panicking_kernel_is_a_failure_in_the_report(tmp_path):
    require_kernels()
    res = harness(tmp_path, "run", "--workload", "vma", "--param", "V=100",
                  "--arch", "x86_64", "--profile", "minimal",
                  "--stack", "anon_vma", "--reps", "1",
                  "--accel", "tcg", "--run-id", "t", "--timeout", "60",
                  "--append", "rdinit=/no-such-init")
    assert res.returncode == 1, res.stderr
    (rec,) = records(tmp_path)
    assert rec["failed"] and "panic" in rec["failure"]
    assert rec["metrics"] == {}
    report = (tmp_path / "results/t/report.md").read_text()
    assert "Kernel panic" in report


def test_packing_points_share_a_boot_and_keep_their_own_results(tmp_path):
    """fastpath-fault and fastpath-sdet pack: one boot per stack runs
    both, each case's records from its own steps."""
    require_kernels()
    res = harness(tmp_path, "compare", "--experiments",
                  "fastpath-fault,fastpath-sdet", "--arch", "x86_64",
                  "--profile", "minimal",
                  "--reps", "1", "--accel", "tcg", "--run-id", "t",
                  "--no-report")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "round 1: 2 boots" in res.stdout
    recs = records(tmp_path)
    assert not any(r["failed"] for r in recs)
    assert sorted((r["experiment"], r["stack"]) for r in recs) == sorted(
        (e, s) for e in ("fastpath-fault", "fastpath-sdet")
        for s in testbed.stack_names())
    assert all("faults_per_s" in r["metrics"] for r in recs
               if r["experiment"] == "fastpath-fault")
    assert all("scripts_per_s" in r["metrics"] for r in recs
               if r["experiment"] == "fastpath-sdet")
    boots = [json.loads(p.read_text()) for p in
             (tmp_path / "results/t/boots").glob("*.json")]
    assert sum("shared_with" in b for b in boots) == 2
