"""--slurm without a cluster: sbatch command lines, what Slurm's
commands answer, the shared-directory check, cutting a round into
slices, a submission end to end with sbatch faked, what a task runs,
and harness.py status, on fabricated runs."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rmapbench import clislurm, jobarray, runner, slurm, status, store
from rmapbench.cliargs import Inputs
from rmapbench.errors import UserError
from rmapbench.experiments import Experiment
from rmapbench.profiles import MINIMAL, Target
from rmapbench.testbed import HOST, ICOUNT

REPO = Path(__file__).resolve().parents[2]
STACKS = ["anon_vma", "anonmm"]
# fork rate is a timing: on the host clock its boots run alone; on
# icount they may share a node
HOSTED = Experiment("t-host", "fork", "rate", ("x86_64",),
                    sweep={"N": [5, 10]}, fixed={"V": 10}, clocks=(HOST,))
COUNTED = Experiment("t-icount", "fork", "rate", ("x86_64",),
                     sweep={"N": [5, 10, 20]}, fixed={"V": 10},
                     clocks=(ICOUNT,))
TARGETS = [Target(MINIMAL, "x86_64")]


# --- sbatch command lines and answers -----------------------------------

def test_an_exclusive_array_waits_for_nothing_and_wraps_its_line():
    job = slurm.Array("rmapbench-t", "python3 harness.py slurm-task x",
                      "/r/slurm/s1-r1-alone-%a.out", 0, 3, exclusive=True,
                      mem_mb=1792, minutes=25)
    cmd = slurm.sbatch_command(job, Path("/repo"), ["--partition=lab"])
    assert cmd == ["sbatch", "--parsable", "--job-name=rmapbench-t",
                   "--output=/r/slurm/s1-r1-alone-%a.out", "--chdir=/repo",
                   "--mem=1792M", "--time=25", "--array=0-3", "--exclusive",
                   "--partition=lab",
                   "--wrap=python3 harness.py slurm-task x"]


def test_a_dependent_job_shares_a_node_and_names_what_it_waits_for():
    job = slurm.Array("n", "true", "o", cpus=2, after=("12", "13"))
    cmd = slurm.sbatch_command(job, Path("/repo"), [])
    assert "--cpus-per-task=2" in cmd and "--exclusive" not in cmd
    assert "--dependency=afterany:12:13" in cmd
    assert not any(a.startswith("--array") for a in cmd)


def test_sbatch_answers_are_read_or_refused():
    assert slurm.job_id("123\n") == "123"
    assert slurm.job_id("124;lab") == "124"
    with pytest.raises(UserError, match="sbatch answered 'Submitted'"):
        slurm.job_id("Submitted")
    assert slurm.queued("12_3|RUNNING|None\n12_[4-5]|PENDING|Resources\n"
                        "junk\n") == [("12_3", "RUNNING", "None"),
                                      ("12_[4-5]", "PENDING", "Resources")]
    assert slurm.node_names("n1\nn2\nn1\n\n") == {"n1", "n2"}


def test_a_failing_slurm_command_is_one_line_with_its_message(tmp_path):
    fake = tmp_path / "sbatch"
    fake.write_text("#!/bin/sh\necho 'sbatch: error: Batch job submission "
                    "failed: Invalid partition name specified' >&2\n"
                    "exit 1\n")
    fake.chmod(0o755)
    with pytest.raises(UserError) as err:
        slurm.run([str(fake), "--parsable"], "submitting rmapbench-t")
    assert "submitting rmapbench-t" in str(err.value)
    assert str(err.value).endswith("Invalid partition name specified")


# --- what --slurm needs ---------------------------------------------------

MOUNTS = """\
/dev/sda1 / ext4 rw,relatime 0 0
tmpfs /tmp tmpfs rw 0 0
lab:/export/home /home nfs4 rw,vers=4.2 0 0
/dev/sdb1 /home/scratch xfs rw 0 0
"""


def test_a_directory_is_on_the_longest_mount_above_it():
    assert slurm.mount_of(Path("/home/me/rmapbench"), MOUNTS) == \
        ("/home", "nfs4")
    assert slurm.mount_of(Path("/home/scratch/r"), MOUNTS) == \
        ("/home/scratch", "xfs")
    assert slurm.mount_of(Path("/homework"), MOUNTS) == ("/", "ext4")


def test_several_nodes_need_the_directories_on_a_shared_filesystem():
    dirs = {"the repository": Path("/home/me/rmapbench"),
            "the cache": Path("/tmp/cache")}
    slurm.require_shared(dirs, {"n1"}, MOUNTS)          # one node: fine
    with pytest.raises(UserError) as err:
        slurm.require_shared(dirs, {"n1", "n2"}, MOUNTS)
    said = str(err.value)
    assert "the cluster has 2 nodes" in said
    assert "the cache /tmp/cache (tmpfs at /tmp)" in said
    assert "the repository" not in said.split(":")[1]
    slurm.require_shared({"the results": Path("/home/me/r")},
                         {"n1", "n2"}, MOUNTS)


def harness(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "harness.py"), *args],
                          capture_output=True, text=True, env=env)


@pytest.mark.parametrize("extra,says", [
    ((), "--slurm: no sbatch, squeue, sinfo on PATH: install Slurm's "
         "client"),
    (("--slurm-tasks", "0"), "--slurm-tasks 0: give at least 1"),
    (("--sbatch", "lab"), "--sbatch 'lab': 'lab' is not an option"),
])
def test_slurm_refuses_before_any_plan(tmp_path, extra, says):
    env = {**os.environ, "PATH": str(tmp_path),
           "RMAPBENCH_RESULTS": str(tmp_path / "results")}
    res = harness("compare", "--experiments", "vma-cost", "--slurm", *extra,
                  env=env)
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("harness.py: error: " + says)
    assert len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "results").exists()


def test_a_node_unlike_the_submitting_host_refuses_in_one_line():
    needs = {"QEMU": "QEMU emulator version 7.2.11", "Debian release": "12.11"}
    jobarray.check_node(needs, dict(needs), "n1")
    with pytest.raises(UserError) as err:
        jobarray.check_node(needs, {**needs, "Debian release": "12.5"}, "n2")
    assert str(err.value).startswith("node n2: Debian release is '12.5', "
                                     "the submitting host's '12.11'")


# --- cutting a round ------------------------------------------------------

def test_assign_balances_and_keeps_every_unit_whole():
    bins = jobarray.assign(["a", "b", "c", "d", "e"], [5, 4, 3, 2, 1], 2)
    assert sorted(sum(bins, [])) == ["a", "b", "c", "d", "e"]
    assert len(bins) == 2
    weights = dict(zip("abcde", [5, 4, 3, 2, 1]))
    assert sorted(sum(weights[u] for u in b) for b in bins) == [7, 8]
    assert jobarray.assign(["a"], [1.0], 8) == [["a"]]
    assert jobarray.assign([], [], 3) == []


@pytest.fixture
def planned(tmp_path, monkeypatch):
    """runner.prepare on fabricated experiments, kernels and metadata
    faked, results in tmp_path."""
    monkeypatch.setattr(store.paths, "RESULTS", tmp_path)
    monkeypatch.setattr(runner, "require_kernels", lambda cases: None)
    monkeypatch.setattr(runner.environment, "collect",
                        lambda *args: {"run_id": "t"})

    def plan(exps: list, reps: int = 2) -> runner.Run:
        return runner.prepare(exps, STACKS, TARGETS, reps, "t", "t", "tcg")
    return plan


def test_host_clock_boots_of_a_point_share_a_slice_and_a_node(planned):
    run = planned([HOSTED, COUNTED])
    _, todo = runner.wanted(run)
    slices = jobarray.boot_slices(run, todo, 100)
    alone = [s for s in slices if s.kind == jobarray.ALONE]
    shared = [s for s in slices if s.kind == jobarray.SHARED]
    # two host-clock points: each slice has both stacks, both reps
    assert len(alone) == 2
    for s in alone:
        cases = jobarray.cases_of(run, s.groups)
        assert len(cases) == 4
        assert {c.stack for c in cases} == set(STACKS)
        assert {c.rep for c in cases} == {0, 1}
        assert len({c.config for c in cases}) == 1      # one point
    # icount boots: a slice each, 3 points x 2 stacks x 2 reps
    assert len(shared) == 12 and all(len(s.groups) == 1 for s in shared)
    assert all(s.minutes == jobarray.SLACK_MIN + 5 for s in shared)
    assert slices[0].kind == jobarray.ALONE


def test_a_cap_on_tasks_packs_more_boots_into_each(planned):
    run = planned([COUNTED])
    _, todo = runner.wanted(run)
    slices = jobarray.boot_slices(run, todo, 5)
    assert len(slices) == 5
    assert sorted(len(s.groups) for s in slices) == [2, 2, 2, 3, 3]


def test_a_slice_makes_its_cases_again_or_says_the_plan_changed(planned):
    run = planned([COUNTED])
    _, todo = runner.wanted(run)
    (sl, *_) = jobarray.boot_slices(run, todo, 100)
    cases = jobarray.cases_of(run, sl.groups)
    assert [c.key() for c in cases] == list(sl.groups[0])
    with pytest.raises(UserError, match="the plan has no boot gone_r0"):
        jobarray.cases_of(run, (("gone_r0",),))


# --- a submission, sbatch faked -------------------------------------------

@pytest.fixture
def sbatch(monkeypatch):
    """slurm.submit and squeue faked: the jobs submitted, ids from 10."""
    submitted: list[slurm.Array] = []

    def submit(job, chdir, extra):
        submitted.append(job)
        return str(9 + len(submitted))
    monkeypatch.setattr(slurm, "submit", submit)
    monkeypatch.setattr(slurm, "jobs_named", lambda name: [])
    return submitted


def submit(run_exps: list, tmp_path: Path, sbatch, planned,
           argv=("compare", "--slurm"), reps: int = 2) -> dict:
    import argparse
    planned(run_exps)        # metadata as prepare writes it
    args = argparse.Namespace(run_id="t", accel="tcg", sbatch="",
                              slurm_tasks=100)
    got = Inputs(run_exps, [], STACKS, TARGETS, reps, "t")
    assert clislurm.submit(args, got, list(argv)) == 0
    return json.loads((tmp_path / "t" / jobarray.STATE).read_text())


def test_a_submission_is_an_array_per_kind_then_the_job_after(
        tmp_path, sbatch, planned, capsys):
    state = submit([HOSTED, COUNTED], tmp_path, sbatch, planned)
    alone, shared, after = sbatch
    assert (alone.first, alone.last, alone.exclusive) == (0, 1, True)
    assert (shared.first, shared.last, shared.exclusive) == (2, 13, False)
    assert after.after == ("10", "11") and after.first is None
    assert alone.command.endswith('slurm-task ' + str(tmp_path / "t") +
                                  ' --round 1 --slice "$SLURM_ARRAY_TASK_ID"')
    assert alone.output == str(tmp_path / "t/slurm/s1-r1-alone-%a.out")
    assert "slurm-next" in after.command
    (rnd,) = state["rounds"]
    assert rnd["jobs"] == {"alone": "10", "shared": "11", "next": "12"}
    assert state["argv"] == ["compare", "--slurm"]
    out = capsys.readouterr().out
    assert "job 10: 8 boots on the host clock, a node each, in 2 task(s)" \
        in out
    assert "job 11: 12 boots sharing nodes, in 12 task(s)" in out


def test_a_run_with_jobs_queued_is_not_submitted_again(
        tmp_path, sbatch, planned, monkeypatch):
    monkeypatch.setattr(slurm, "jobs_named", lambda name: [
        ("40_1", "RUNNING", "None"), ("41", "PENDING", "Dependency")])
    with pytest.raises(UserError) as err:
        submit([COUNTED], tmp_path, sbatch, planned)
    assert "run t has jobs still queued or running (40, 41)" in \
        str(err.value)
    assert not sbatch


def test_a_resubmission_skips_stored_boots_and_names_its_files_apart(
        tmp_path, sbatch, planned):
    first = submit([COUNTED], tmp_path, sbatch, planned)
    keys = [g[0] for s in first["rounds"][0]["slices"] for g in s["groups"]]
    for key in keys[:10]:
        store.save_boot(tmp_path / "t", key, {"key": key, "records": []})
    sbatch.clear()
    second = submit([COUNTED], tmp_path, sbatch, planned)
    assert second["submission"] == 2
    shared, _ = sbatch
    assert (shared.first, shared.last) == (0, 1)
    assert shared.output.endswith("s2-r1-shared-%a.out")
    (rnd,) = second["rounds"]
    assert sorted(g[0] for s in rnd["slices"] for g in s["groups"]) == \
        sorted(keys[10:])


# --- status ---------------------------------------------------------------

def test_status_counts_finished_of_planned_names_failures_and_stops(
        tmp_path, sbatch, planned, monkeypatch):
    state = submit([COUNTED], tmp_path, sbatch, planned)
    rdir = tmp_path / "t"
    keys = [g[0] for s in state["rounds"][0]["slices"] for g in s["groups"]]
    for key in keys[:3]:
        store.save_boot(rdir, key, {"key": key, "records": [],
                                    "failure": None, "node": "n1"})
    store.save_boot(rdir, keys[3], {"key": keys[3], "records": [],
                                    "failure": "timed out", "node": "n2"})
    (rdir / "slurm" / "s1-r1-shared-7.out").write_text(
        "run t: ...\nslurmstepd: error: *** JOB 18 ON n2 CANCELLED AT "
        "2026-12-06T18:00:00 DUE TO TIME LIMIT ***\n")
    (rdir / "slurm" / "s0-r1-shared-1.out").write_text(
        "harness.py: error: an older submission's\n")
    monkeypatch.setattr(slurm, "jobs_named", lambda name: [
        ("10_5", "RUNNING", "None"), ("10_6", "PENDING", "Resources"),
        ("10_7", "PENDING", "Resources"), ("11", "PENDING", "Dependency")])
    started = state["rounds"][0]["started"]
    text = status.text(rdir, now=started + 120)
    lines = text.splitlines()
    assert lines[1] == ("round 1: 4 of 12 boots finished, 1 failed; "
                        "elapsed 2m00s, ETA 4m00s")
    assert f"  failed: {keys[3]}: timed out (on n2)" in lines
    assert "  job 10 (boots sharing nodes): 1 running, 2 pending " \
           "(Resources)" in lines
    assert "  job 11 (the next step): 1 pending (Dependency)" in lines
    assert any("s1-r1-shared-7.out" in x and "DUE TO TIME LIMIT" in x
               for x in lines)
    assert "older submission" not in text


def test_status_of_a_local_run_and_of_no_run(tmp_path, monkeypatch):
    monkeypatch.setattr(store.paths, "RESULTS", tmp_path)
    with pytest.raises(UserError, match="no run at"):
        status.text(tmp_path / "none")
    store.save_boot(tmp_path / "l", "b1", {"key": "b1", "records": [],
                                           "failure": "kernel panic"})
    assert status.text(tmp_path / "l").startswith(
        "run l: 1 boots stored, 1 failed")


# --- after a round ----------------------------------------------------------

def test_what_a_round_did_not_store_is_missing(tmp_path):
    rnd = {"slices": [
        {"kind": jobarray.SHARED, "groups": [["a_r0"], ["b_r0"]],
         "minutes": 1, "mem_mb": 1},
        {"kind": jobarray.SEARCH, "groups": [["s:minimal:i386:anonmm"]],
         "minutes": 1, "mem_mb": 1}]}
    store.save_boot(tmp_path, "a_r0", {"key": "a_r0", "records": []})
    assert jobarray.missing(tmp_path, rnd) == ["b_r0",
                                               "s:minimal:i386:anonmm"]
    store.write_json(jobarray.answer_file(tmp_path, "s:minimal:i386:anonmm"),
                     {})
    assert jobarray.missing(tmp_path, rnd) == ["b_r0"]


# --- a task ---------------------------------------------------------------

def test_a_task_boots_its_slice_only_and_stores_each_boots_node(
        tmp_path, sbatch, planned, monkeypatch):
    import socket

    import fakeguest
    state = submit([HOSTED, COUNTED], tmp_path, sbatch, planned)
    booted = fakeguest.install(monkeypatch, lambda boot: "RMB-DONE rc=0\n")
    run = planned([HOSTED, COUNTED])
    jobarray.run_task(run, state, 1, 0, [])
    sl = jobarray.slice_at(state, 1, 0)
    assert sorted(log.stem for _, log in booted) == \
        sorted(g[0] for g in sl.groups)
    for key in (g[0] for g in sl.groups):
        assert json.loads(store.boot_file(run.rdir, key).read_text())[
            "node"] == socket.gethostname()
    # the same task again (a requeue): nothing boots twice
    jobarray.run_task(run, state, 1, 0, [])
    assert len(booted) == len(sl.groups)
    with pytest.raises(UserError, match="slice 14: round 1 of t has "
                       "slices 0 to 13"):
        jobarray.run_task(run, state, 1, 14, [])


# --- the report: where boots ran -------------------------------------------

def test_the_report_warns_of_a_host_clock_point_measured_on_two_nodes():
    import fabricate
    from rmapbench.report import nodes

    def boot(stack: str, node: str, clock: str = "host") -> dict:
        rec = fabricate.record("swap-smp", stack, "x86_64", "swap",
                               "family", {"N": 4}, {"walk_mean_ns": 100.0})
        rec.pop("clock", None)
        if clock != "host":
            rec["clock"] = clock
        return {"node": node, "records": [rec]}
    assert nodes.warnings([boot("anon_vma", "n1"), boot("anonmm", "n1")]) \
        == []
    # on icount, or stored before boots named their node: no warning
    assert nodes.warnings([boot("anon_vma", "n1", "icount"),
                           boot("anonmm", "n2", "icount")]) == []
    assert nodes.warnings([boot("anon_vma", "n1"),
                           {"records": boot("anonmm", "")["records"]}]) == []
    (text, _) = nodes.warnings([boot("anon_vma", "n1"), boot("anonmm", "n2")])
    assert text.startswith("> **WARNING: 1 host-clock configuration(s) were "
                           "measured on more than one machine**")
    assert text.endswith("on n1, n2.  Rerun them on one node (a --slurm run "
                         "keeps a point's boots of one round on one node).")


# --- the job after a round ------------------------------------------------

def after_round(tmp_path, sbatch, planned, reps_then: int, store_all: bool
                ) -> tuple[int | None, dict]:
    """Round 1 of COUNTED at one repetition, its boots stored (all, or
    all but one), then the job after it, planned with reps_then."""
    import argparse
    state = submit([COUNTED], tmp_path, sbatch, planned, reps=1)
    keys = [g[0] for s in state["rounds"][0]["slices"] for g in s["groups"]]
    for key in keys[: None if store_all else -1]:
        store.save_boot(tmp_path / "t", key, {"key": key, "records": []})
    sbatch.clear()
    run = planned([COUNTED], reps_then)
    got = Inputs([COUNTED], [], STACKS, TARGETS, reps_then, "t")
    plan = clislurm.Replanned(state, argparse.Namespace(), got, run)
    rc = clislurm.next_round(plan, 1)
    return rc, json.loads((tmp_path / "t" / jobarray.STATE).read_text())


def test_the_job_after_a_round_submits_the_boots_still_wanted(
        tmp_path, sbatch, planned):
    rc, state = after_round(tmp_path, sbatch, planned, 3, True)
    assert rc is None
    assert len(state["rounds"]) == 2
    second = [g[0] for s in state["rounds"][1]["slices"] for g in s["groups"]]
    assert len(second) == 12 and all(not k.endswith("_r0") for k in second)
    assert sbatch[-1].output.endswith("s1-r2-next.out")


def test_the_job_after_a_round_names_what_is_missing_and_concludes(
        tmp_path, sbatch, planned, capsys):
    rc, state = after_round(tmp_path, sbatch, planned, 2, False)
    assert rc == 1 and not sbatch and len(state["rounds"]) == 1
    out = capsys.readouterr().out
    assert "nothing stored: its task died, was cancelled or ran past its " \
           "time limit" in out
    assert "1 boot(s) or search(es) missing: run the same command again" \
        in out
    assert store.load_metadata(tmp_path / "t")["repetitions"]


def test_size_and_run_take_slurm_too(tmp_path, monkeypatch, capsys):
    from rmapbench import cli
    monkeypatch.setattr(store.paths, "RESULTS", tmp_path)
    monkeypatch.setattr(slurm.shutil, "which", lambda command: None)

    def said(*args: str) -> str:
        assert cli.dispatch(cli.make_parser().parse_args(args)) == 2
        return capsys.readouterr().err
    for args in (("size", "--workload", "vma", "--param", "V=100"),
                 ("run", "--workload", "vma", "--param", "V=100")):
        assert said(*args, "--slurm").startswith(
            "harness.py: error: --slurm: no sbatch, squeue, sinfo on PATH")
    # bad input is refused before Slurm is even looked for
    assert "size range 100..90 MB" in said(
        "size", "--workload", "vma", "--param", "V=100", "--lo", "100",
        "--hi", "90", "--slurm")
    assert not list(tmp_path.iterdir())


def test_status_says_when_it_cannot_ask_squeue(
        tmp_path, sbatch, planned, monkeypatch):
    submit([COUNTED], tmp_path, sbatch, planned)

    def no_squeue(name):
        raise UserError("asking squeue: 'squeue' did not run")
    monkeypatch.setattr(slurm, "jobs_named", no_squeue)
    assert "  jobs 10, 11: their states are unknown here (asking squeue: " \
           "'squeue' did not run)" in status.text(tmp_path / "t").splitlines()


# --- check --slurm ----------------------------------------------------------

def test_the_suite_is_cut_a_boot_a_task_sharing_nodes(tmp_path, sbatch,
                                                      monkeypatch, capsys):
    from rmapbench import checkarray
    from rmapbench.check import suite as checksuite
    monkeypatch.setattr(checksuite, "require_kernels", lambda *a: None)
    monkeypatch.setattr(checksuite, "files_and_skips",
                        lambda tests, arch: ((), {}))
    suite = checksuite.plan(STACKS, TARGETS, True, ("torture-cow",))
    assert len(suite.jobs) == 2
    out = tmp_path / "chk"
    assert checkarray.submit(suite, out, "tcg", ["check", "--quick",
                                                 "--out", str(out)],
                             [], 100) == 0
    shared, after = sbatch
    assert (shared.first, shared.last, shared.exclusive) == (0, 1, False)
    state = jobarray.load(out)
    assert [s["groups"] for s in state["rounds"][0]["slices"]] == \
        [[[sj.job.key]] for sj in suite.jobs]
    assert "slurm-next" in after.command
    # a slice whose boot the suite no longer has: one line
    state["rounds"][0]["slices"][0]["groups"] = [["gone"]]
    monkeypatch.setattr(jobarray, "check_here", lambda state: None)
    with pytest.raises(UserError, match="chk: the suite has no boot gone"):
        checkarray.run_task(suite, out, state, 1, 0)
