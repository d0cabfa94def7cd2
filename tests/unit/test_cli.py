"""The command line's answers to bad input: one line, non-zero exit."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def harness(*args, env=None):
    return subprocess.run([sys.executable, str(REPO / "harness.py"), *args],
                          capture_output=True, text=True, env=env)


def test_no_subcommand_prints_help():
    res = harness()
    assert res.returncode == 2
    assert "usage: harness.py" in res.stdout


def test_unknown_stack():
    res = harness("build", "--stack", "objrmap")
    assert res.returncode == 2
    assert res.stderr.strip() == ("harness.py: error: unknown stack "
                                  "'objrmap': choose one of anon_vma, anonmm")


def test_unknown_arch():
    res = harness("smoke", "--arch", "arm64")
    assert res.returncode == 2
    assert "unknown arch 'arm64'" in res.stderr


@pytest.mark.parametrize("args", [
    ("smoke", "--stack", "anonmm", "--arch", "i386", "--accel", "tcg"),
    ("run", "--workload", "vma", "--stack", "anonmm", "--arch", "i386")])
def test_missing_kernel_says_what_to_build(tmp_path, args):
    env = {"RMAPBENCH_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin"}
    res = harness(*args, env=env)
    assert res.returncode == 2
    assert "no anonmm kernel for i386" in res.stderr
    assert "harness.py build --stack anonmm --arch i386" in res.stderr


def test_run_unknown_workload():
    res = harness("run", "--workload", "vmas")
    assert res.returncode == 2
    assert "unknown workload 'vmas'" in res.stderr


def test_run_malformed_sweep():
    res = harness("run", "--workload", "fork", "--param", "N=1,,4")
    assert res.returncode == 2
    assert "malformed value list '1,,4'" in res.stderr


def test_run_memory_too_small():
    res = harness("run", "--workload", "vma", "--mem", "16")
    assert res.returncode == 2
    assert "guest memory 16 MB" in res.stderr
    assert "below the 64 MB" in res.stderr


def test_compare_unknown_experiment():
    res = harness("compare", "--experiments", "lowmem,vma")
    assert res.returncode == 2
    assert "unknown experiment(s) vma" in res.stderr


def test_report_of_a_missing_run():
    res = harness("report", "no-such-run-xyz")
    assert res.returncode == 2
    assert "no results at" in res.stderr
