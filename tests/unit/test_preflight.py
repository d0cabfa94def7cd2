"""The harness as a new user starts it: executable as written, refusing an
interpreter without the report's modules before any boot, and a failed
step after the boots told in two lines with the command that redoes it."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import fabricate
import pytest

from rmapbench import analysis, cli, paths, plots, preflight, report, runner
from rmapbench import store
from rmapbench.errors import UserError

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = ["harness.py", *sorted(p.relative_to(REPO).as_posix()
                                 for p in (REPO / "tools").iterdir()
                                 if p.is_file())]


@pytest.mark.skipif(not shutil.which("git") or
                    not (REPO / ".git").exists(), reason="no git checkout")
def test_scripts_are_committed_executable():
    out = subprocess.run(["git", "ls-files", "-s", *SCRIPTS], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    modes = {line.split("\t")[1]: line.split()[0]
             for line in out.splitlines()}
    assert modes == {s: "100755" for s in SCRIPTS}


@pytest.mark.skipif(not os.path.exists(preflight.SYSTEM_PYTHON),
                    reason="no /usr/bin/python3 for the first line")
def test_harness_runs_as_written():
    res = subprocess.run(["./harness.py", "--help"], cwd=REPO,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "usage: harness.py" in res.stdout


def stub_packages(root: Path) -> Path:
    """A PYTHONPATH directory that shadows the installed packages: a
    matplotlib whose import raises, a scipy without stats."""
    (root / "matplotlib").mkdir(parents=True)
    (root / "matplotlib" / "__init__.py").write_text(
        "raise ImportError('matplotlib is blocked by the test')\n")
    (root / "scipy").mkdir()
    (root / "scipy" / "__init__.py").write_text("")
    return root


def harness(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """harness.py under an interpreter without matplotlib or scipy.stats,
    an empty kernel cache, a results directory not yet made, and a PATH
    whose QEMU would leave a mark."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for arch in ("i386", "x86_64"):
        qemu = bin_dir / f"qemu-system-{arch}"
        qemu.write_text(f"#!/bin/sh\ntouch {tmp_path}/qemu-ran\n")
        qemu.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin",
           "PYTHONPATH": str(stub_packages(tmp_path / "stubs")),
           "RMAPBENCH_CACHE": str(tmp_path / "cache"),
           "RMAPBENCH_RESULTS": str(tmp_path / "results"),
           "RMAPBENCH_PLOTS": str(tmp_path / "plots")}
    return subprocess.run([sys.executable, str(REPO / "harness.py"), *args],
                          capture_output=True, text=True, cwd=tmp_path,
                          env=env)


@pytest.mark.parametrize("args", [
    ("run", "--workload", "fork"),
    ("run", "--workload", "fork", "--no-report"),
    ("compare",),
    ("size", "--workload", "swap"),
    ("report", "some-run"),
    ("plot", "some-run"),
    ("reparse", "some-run")], ids=" ".join)
def test_a_wrong_interpreter_is_refused_before_any_boot(tmp_path, args):
    res = harness(tmp_path, *args)
    assert res.returncode == 2
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    line = lines[0]
    assert line.startswith("harness.py: error: no module named "
                           "scipy.stats; matplotlib does not import "
                           "(ImportError: matplotlib is blocked by the test) "
                           f"in {sys.executable} "), line
    assert "make setup" in line
    assert not (tmp_path / "results").exists()
    assert not (tmp_path / "cache").exists()
    assert not (tmp_path / "qemu-ran").exists()


@pytest.mark.parametrize("args", [
    ("--help",), ("params", "fork"), ("reparse", "no-such-run",
                                      "--no-report")], ids=" ".join)
def test_commands_without_a_report_skip_the_check(tmp_path, args):
    res = harness(tmp_path, *args)
    assert "matplotlib" not in res.stderr
    assert "Traceback" not in res.stderr


def test_the_fix_names_the_system_interpreter(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/opt/venv/bin/python3")
    with pytest.raises(UserError) as err:
        preflight.require("run", ("numpy", "rmapbench_no_such_module"))
    assert str(err.value) == (
        "no module named rmapbench_no_such_module in /opt/venv/bin/python3 "
        "(the statistics, plots and report import them): run "
        "/usr/bin/python3 harness.py run ... (or ./harness.py run ...), "
        "after make setup if it lacks them too")


def test_this_interpreter_has_every_module():
    assert preflight.problems() is None


def fail(*args: object, **kwargs: object) -> None:
    raise RuntimeError("no space left on device")


@pytest.mark.parametrize("step,redo", [
    ("stats", "'harness.py report {run}' redoes it, the plots and the "
              "report"),
    ("plots", "'harness.py plot {run}' redoes it, 'harness.py report "
              "{run}' it and the report"),
    ("report", "'harness.py report {run}' redoes it")])
def test_a_step_after_the_boots_fails_in_two_lines(tmp_path, monkeypatch,
                                                   capsys, step, redo):
    """The boots (faked) stored their records; the failing step is named
    with the command that redoes it, and the phases are still saved."""
    rdir = tmp_path / "results" / "run-fork-x"
    rec = fabricate.record("custom", "anonmm", "i386", "fork", "breadth",
                           {"N": 100}, {"fork_us": 10.0})
    store.save_boot(rdir, "b0", {"key": "b0", "records": [rec]})
    monkeypatch.setattr(paths, "PLOTS", tmp_path / "plots")
    monkeypatch.setattr(runner, "run_experiments", lambda *a, **k: rdir)
    monkeypatch.setattr(analysis, "analyse", lambda *a, **k: {})
    monkeypatch.setattr(plots, "make_plots", lambda *a, **k: [])
    target = {"stats": (analysis, "analyse"), "plots": (plots, "make_plots"),
              "report": (report, "write_report")}[step]
    monkeypatch.setattr(*target, fail)
    args = cli.make_parser().parse_args(
        ["run", "--workload", "fork", "--stack", "anonmm", "--arch", "i386"])
    assert cli.dispatch(args) == 2
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        f"harness.py: error: the {step} step failed after the boots "
        "(RuntimeError: no space left on device)",
        f"the records are kept in {rdir}: " + redo.format(run=rdir.name)]
    assert f"1 records, 0 failed, in {rdir}" in out
    assert store.load_metadata(rdir)["phases"]
