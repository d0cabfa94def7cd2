"""The correctness suite's guest programs (rmb-race, rmb-idle,
rmb-inject) on the host: they run, print one well-formed line, and do
nothing a host could mind (no swap to push to, no rmapbench kernel: the
race rounds run unchecked, and injection is never set up)."""

import json
import subprocess
from pathlib import Path

import pytest

import benchmake

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
OUT = BENCH / "out" / "x86_64"


@pytest.fixture(scope="module")
def out():
    return benchmake.built("x86_64")


def one_result(out, prog, *args):
    res = subprocess.run([str(out / prog), *args], capture_output=True,
                         text=True, timeout=60)
    lines = res.stdout.splitlines()
    assert res.returncode == 0, res.stdout + res.stderr
    assert len(lines) == 1 and lines[0].startswith("RMB-RESULT "), lines
    rec = json.loads(lines[0].split(" ", 1)[1])
    return {**rec, **rec.pop("params"), **rec.pop("metrics")}


def test_race_rounds_run_unchecked_on_a_host(out):
    rec = one_result(out, "rmb-race", "pages=16", "rounds=3")
    assert rec["record"] == "summary" and rec["mode"] == "mremap-swapin"
    assert rec["rounds_count"] == 3 and rec["failed_rounds_count"] == 0
    if not Path("/proc/rmapbench").exists():
        assert rec["checked_count"] == 0
    assert rec["moved_pages"] == 3 * 16
    assert rec["cpus_count"] >= 1


def test_race_kill_rounds_run_on_a_host(out):
    """mremap-kill: round 0 moves whole, the others kill the mover
    somewhere; every round ends, none fails, the parent's pages hold."""
    rec = one_result(out, "rmb-race", "mode=mremap-kill", "pages=1024",
                     "rounds=4")
    assert rec["mode"] == "mremap-kill" and rec["rounds_count"] == 4
    assert rec["failed_rounds_count"] == 0 and rec["full_move_ns"] > 0
    assert rec["moved_pages"] >= 1024
    assert rec["killed_inside_count"] + rec["killed_after_count"] <= 3


@pytest.mark.parametrize("mode", ["thp-split", "collapse-fork", "thp-swap"])
def test_race_thp_modes_run_on_a_host(out, mode):
    """The THP modes' rounds run on a host without splitting its THPs or
    pressing its memory (those need a guest): the child's action, the
    parent's side and the checks, every round passing."""
    rec = one_result(out, "rmb-race", f"mode={mode}", "pages=1024",
                     "rounds=6")
    assert rec["mode"] == mode and rec["rounds_count"] == 6
    assert rec["failed_rounds_count"] == 0
    assert rec["child_op_failed_count"] == 0


def test_race_ksm_peer_answers_on_a_host(out):
    """ksm: the peer (rmb-race exec'd again) starts, answers each round
    and the end, and exits; the host's ksmd is left alone."""
    rec = one_result(out, "rmb-race", "mode=ksm", "pages=64", "rounds=2")
    assert rec["rounds_count"] == 2 and rec["peer_mismatch_count"] == 0
    assert rec["child_died_count"] == 0 and rec["failed_rounds_count"] == 0


def test_idle_reports_counts_that_held_still(out):
    rec = one_result(out, "rmb-idle", "still_ms=200", "poll_ms=20")
    assert rec["record"] == "idle" and rec["still"] == 1
    assert rec["waited_ms"] >= 200
    counts = [k for k in rec if k.startswith("slab_")]
    assert all(k.endswith("_objs_count") for k in counts)


def test_orphan_runs_unchecked_on_a_host(out):
    rec = one_result(out, "rmb-orphan", "pages=8")
    assert rec["verify_mismatch_pages"] == 0 and rec["verified_pages"] == 24
    if not Path("/proc/rmapbench").exists():
        assert rec["checked_count"] == 0 and rec["pinned_objs_count"] == 0


def test_forkcopy_children_see_every_page(out):
    rec = one_result(out, "rmb-forkcopy", "pages=8")
    assert rec["cases_count"] == 5 and rec["verify_mismatch_pages"] == 0
    assert rec["verified_pages"] == 2 * 5 * 8


def test_inject_never_touches_a_host(out):
    if Path("/proc/rmapbench").exists():
        pytest.skip("an rmapbench kernel: injection would run")
    rec = one_result(out, "rmb-inject")
    assert rec["injectable_count"] == 0 and rec["operations_count"] == 0
    assert rec["mismatch_pages"] == 0


def test_hwpoison_never_poisons_a_host(out):
    if Path("/proc/rmapbench").exists():
        pytest.skip("an rmapbench kernel: it would poison pages")
    rec = one_result(out, "rmb-hwpoison", "workers=2", "pages=8",
                     "rounds=3", "contend=1")
    assert rec["checked_count"] == 0 and rec["poisoned_pages"] == 0
    assert rec["verified_pages"] == 8 and rec["verify_mismatch_pages"] == 0
    assert rec["workers_failed_count"] == 0
