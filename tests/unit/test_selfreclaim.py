"""selfreclaim: its program's outcomes on the host (completed, killed
from outside as the OOM killer would, stalled until limit_s), and its
module's place in the comparison, the decision and the report."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

import benchmake

import fabricate
from rmapbench import experiments, repetitions, testbed, workloads
from rmapbench.analysis import analyse
from rmapbench.report import decision
from rmapbench.workloads import selfreclaim

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
PROG = BENCH / "out" / "x86_64" / "rmb-selfreclaim"
HOST = not Path("/proc/rmapbench").exists()


@pytest.fixture(scope="module")
def built():
    benchmake.built("x86_64")
    return PROG


def summary(stdout: str) -> dict:
    (line,) = [x for x in stdout.splitlines()
               if x.startswith("RMB-RESULT ")]
    value = json.loads(line.split(" ", 1)[1])
    return {**value["params"], **value["metrics"]}


def run(prog: Path, *args: str) -> tuple[int, dict]:
    res = subprocess.run([str(prog), *args], capture_output=True, text=True,
                         timeout=60)
    assert "RMB-ERROR" not in res.stdout, res.stdout
    return res.returncode, summary(res.stdout)


@pytest.mark.parametrize("args,calls", [
    (["mb=4", "threads=3"], True), (["mb=4", "contend=0"], False)])
def test_threads_complete_on_a_host(built, args, calls):
    """On a host the data is mb alone, written and verified page by page;
    the siblings call mprotect() only when they contend."""
    rc, rec = run(built, *args)
    assert rc == 0
    assert (rec["completed_count"], rec["oom_killed_count"],
            rec["stalled_count"]) == (1, 0, 0)
    if HOST:
        assert rec["data_pages"] == 4 * 256
    assert rec["filled_pages"] == rec["verified_pages"] == rec["data_pages"]
    assert (rec["mprotect_calls_count"] > 0) == calls
    assert rec["fill_ns"] > 0 and rec["verify_ns"] > 0
    assert rec["elapsed_ns"] >= rec["fill_ns"] + rec["verify_ns"]


def test_fork_keeps_every_child_until_the_last_fork(built):
    rc, rec = run(built, "mode=fork", "mb=4", "forks=6")
    assert rc == 0 and rec["completed_count"] == 1
    assert (rec["forks_done_count"], rec["fork_failed_count"],
            rec["children_killed_count"]) == (6, 0, 0)
    assert 0 < rec["fork_min_ns"] <= rec["fork_max_ns"] <= rec["forks_ns"]
    assert rec["verified_pages"] == rec["data_pages"]


def measured_child(proc: subprocess.Popen) -> int | None:
    """The measured process, once the program has forked it."""
    path = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    for _ in range(2000):
        kids = path.read_text().split() if path.exists() else []
        if kids:
            return int(kids[0])
        if proc.poll() is not None:
            return None
        time.sleep(0.001)
    return None


@pytest.mark.parametrize("sig,outcome", [
    (signal.SIGKILL, "oom_killed_count"), (signal.SIGSTOP, "stalled_count")])
def test_how_the_measured_process_ended(built, sig, outcome):
    """A SIGKILL the program did not send is the OOM killer's; a
    process that makes no progress is killed at limit_s.  Either is an
    outcome, not a failure: exit 0, nothing verified, nothing wrong."""
    proc = subprocess.Popen([str(built), "mb=64", "threads=2",
                             "limit_s=1"], stdout=subprocess.PIPE, text=True)
    pid = measured_child(proc)
    if pid is not None:
        os.kill(pid, sig)
    out, _ = proc.communicate(timeout=30)
    rec = summary(out)
    if rec["completed_count"]:
        pytest.skip("the measured process finished before the signal")
    assert proc.returncode == 0, out
    assert rec[outcome] == 1
    assert rec["oom_killed_count"] + rec["stalled_count"] == 1
    assert rec["verify_mismatch_pages"] == 0
    assert rec["verified_pages"] < rec["data_pages"]


def test_in_the_default_comparison_on_both_arches_and_icount():
    exps = {e.name: e for e in workloads.experiments()
            if e.workload == "selfreclaim"}
    assert set(exps) == {"selfreclaim-threads", "selfreclaim-fork"}
    threads, fork = exps["selfreclaim-threads"], exps["selfreclaim-fork"]
    assert threads.sweep == {"contend": [0, 1]} and fork.mode == "fork"
    for e in exps.values():
        assert e.arches == testbed.arch_names()
        assert e.clocks == (testbed.ICOUNT,) and e.vcpus == (1,)
        assert e.fixed["limit_s"] < 60 < e.timeout_s
    cases = experiments.expand(list(exps.values()), ["anon_vma", "anonmm"],
                               list(testbed.arch_names()), 1)
    assert len(cases) == (2 + 1) * 2 * 2
    assert all(c.plan().startswith("swapon\n") for c in cases)
    # completion is no exact count: a few boots per point, no rounds
    pol = repetitions.policy(threads, testbed.ICOUNT, None)
    assert pol.kind == repetitions.TIMED and pol.start >= 2


def records(outcomes: dict[tuple[str, int | None], int]) -> list[dict]:
    """Two boots per stack of each configuration; completed 1 or 0."""
    out = []
    for (stack, contend), done in outcomes.items():
        exp = "selfreclaim-fork" if contend is None else \
            "selfreclaim-threads"
        mode = "fork" if contend is None else "threads"
        params = {"mb": 32, "limit_s": 30,
                  **({"forks": 32} if contend is None else
                     {"threads": 1, "contend": contend})}
        for rep in range(2):
            out.append(fabricate.record(
                exp, stack, "x86_64", "selfreclaim", mode, params,
                {"completed_count": done, "oom_killed_count": 1 - done,
                 "stalled_count": 0, "oom_kill_count": 1 - done,
                 "pswpout_pages": 8000 if done else 900,
                 "anon_rmap_contended_keep_pages": 0 if done else 5000,
                 "anon_rmap_trylock_fail_count": 0 if done else 7000,
                 "elapsed_ns": 4e9}, rep=rep, mem_mb=128))
    return out


def test_the_decision_stands_at_contend_1_beside_the_other_rows():
    recs = records({("anon_vma", 0): 1, ("anonmm", 0): 1,
                    ("anon_vma", 1): 1, ("anonmm", 1): 0,
                    ("anon_vma", None): 1, ("anonmm", None): 0})
    rest = [r for r in fabricate.full_run(reps=2)
            if r["workload"] != "selfreclaim"]
    before = {(h.what, h.arch): h
              for h in decision.headlines(analyse(rest))}
    rows = {(h.what, h.arch): h
            for h in decision.headlines(analyse(rest + recs))}
    threads = rows[("selfreclaim/threads", "x86_64")]
    assert threads.regime == "reclaim" and "contend=1" in threads.config
    assert threads.outcome == "anon_vma" and threads.sure == "exact"
    assert threads.pressure is True
    assert rows[("selfreclaim/fork", "x86_64")].outcome == "anon_vma"
    # the other rows are those of the run without it
    assert {k: v for k, v in rows.items()
            if not k[0].startswith("selfreclaim/")} == before


def test_outcomes_side_by_side():
    recs = records({("anon_vma", 1): 1, ("anonmm", 1): 0})
    recs.append(fabricate.failed("selfreclaim-threads", "anonmm", "x86_64",
                                 "selfreclaim", "threads",
                                 {"mb": 32, "threads": 1, "contend": 1,
                                  "limit_s": 30}, rep=2, mem_mb=128))
    text = "\n".join(selfreclaim.outcomes(recs))
    assert text.startswith("## Reclaim of a process's own pages")
    config = "selfreclaim-threads x86_64 128 MB threads contend=1 mb=32 " \
        "threads=1"
    assert f"| {config} | anon_vma | 2 | 2/2 | 0/2 | 0/2 | 0 | 8,000 | 0 |" \
        in text
    assert f"| {config} | anonmm | 2 (+1 failed) | 0/2 | 2/2 | 0/2 | 2 " \
        "| 900 | 5,000 |" in text
    # a run without it gets no such section
    assert selfreclaim.outcomes([r for r in fabricate.full_run(reps=1)
                                 if r["workload"] != "selfreclaim"]) == []
