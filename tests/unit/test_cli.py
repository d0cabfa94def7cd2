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


# (arguments, what stderr must say): each is one error line, exit 2
BAD_INPUT = [
    (("smoke", "--arch", "arm64"), ("unknown arch 'arm64'",)),
    (("run", "--workload", "vmas"), ("unknown workload 'vmas'",)),
    (("run", "--workload", "fork", "--param", "N=1,,4"),
     ("malformed value list '1,,4'",)),
    (("run", "--workload", "fork", "--param", "Q=3"),
     ("unknown parameter 'Q' of workload fork",
      "mode breadth takes: V=1000 [1..4194304], N=100 [1..4096], "
      "kind=split (split|gap), seed=1 [0..2147483647]")),
    (("run", "--workload", "fork", "--param", "N=100000"),
     ("N=100000 out of range [1, 4096] in mode breadth",)),
    (("run", "--workload", "vma", "--param", "kind=huge"),
     ("kind=huge: must be one of split|gap",)),
    (("run", "--workload", "mremap", "--param", "K=2"),
     ("parameter K does not apply to mode unshared (only to shared)",)),
    (("run", "--workload", "vma", "--mem", "16"),
     ("guest memory 16 MB", "below the 64 MB")),
    (("size", "--workload", "swap", "--clock", "host,icount"),
     ("unknown clock 'host,icount'", "choose one of host, icount")),
    (("compare", "--experiments", "lowmem,vma"),
     ("unknown experiment(s) vma",)),
    (("report", "no-such-run-xyz"), ("no results at",)),
    (("run", "--workload", "bundle", "--variant",
      "anonmm_fork_order=sideways"),
     ("unknown anonmm_fork_order 'sideways': choose one of tail, "
      "after_parent",)),
    (("run", "--workload", "bundle", "--append", "anonmm_fork_order=head"),
     ("unknown anonmm_fork_order 'head'",)),
    (("build", "--profile", "debian"),
     ("unknown profile 'debian': choose one of minimal, distro",)),
    (("run", "--workload", "vma", "--profile", "minimal,debian"),
     ("unknown profile 'debian'",)),
    (("compare", "--profile", "distro", "--arch", "i386"),
     ("profile distro builds for x86_64 only, not i386",)),
    (("check", "--profile", "distro", "--arch", "i386,x86_64"),
     ("profile distro builds for x86_64 only, not i386",)),
    (("run", "--workload", "bundle", "--setting", "hugepages"),
     ("unknown setting 'hugepages': choose one of memcg, classic, zswap",)),
    (("run", "--workload", "swap", "--setting", "zswap", "--profile",
      "minimal"),
     ("custom-zswap needs zswap, which no kernel chosen has (i386, x86_64)",
      "choose --profile distro")),
    (("run", "--workload", "migrate", "--mode", "move", "--arch", "i386"),
     ("custom needs numa, which no kernel chosen has (i386)",)),
]


@pytest.mark.parametrize("args,says", BAD_INPUT,
                         ids=[" ".join(a) for a, _ in BAD_INPUT])
def test_bad_input_is_named(args, says):
    res = harness(*args)
    assert res.returncode == 2
    for text in says:
        assert text in res.stderr, res.stderr
    assert "Traceback" not in res.stderr


def test_an_unknown_fork_order_is_one_line_before_any_boot(tmp_path):
    env = {"RMAPBENCH_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin"}
    res = harness("run", "--workload", "bundle", "--variant",
                  "anonmm_fork_order=tail", env=env)
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    assert "anonmm_fork_order=tail is anonmm's default" in res.stderr


def test_a_debug_variant_cannot_be_measured(tmp_path):
    env = {"RMAPBENCH_VARIANT": "lockdep", "PATH": "/usr/bin:/bin",
           "RMAPBENCH_CACHE": str(tmp_path)}
    res = harness("run", "--workload", "vma", env=env)
    assert res.returncode == 2
    assert "timings mean nothing" in res.stderr


@pytest.mark.parametrize("args", [
    ("smoke", "--stack", "anonmm", "--arch", "i386", "--accel", "tcg"),
    ("run", "--workload", "vma", "--stack", "anonmm", "--arch", "i386")])
def test_missing_kernel_says_what_to_build(tmp_path, args):
    env = {"RMAPBENCH_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin"}
    res = harness(*args, env=env)
    assert res.returncode == 2
    assert "no anonmm kernel for i386" in res.stderr
    assert "harness.py build --stack anonmm --arch i386" in res.stderr
