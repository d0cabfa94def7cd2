"""Scratch directories: named after their process; a later run removes
those of dead processes (and old unnamed ones), never a live run's."""

import os
import subprocess
import time

from rmapbench import scratch


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_a_scratch_directory_names_its_process(tmp_path, monkeypatch):
    monkeypatch.setenv("RMAPBENCH_CACHE", str(tmp_path))
    with scratch.directory("boot") as d:
        assert os.path.basename(d).startswith(
            f"rmapbench-boot-{os.getpid()}-")
        assert scratch.sweep(tmp_path) == []       # ours: alive
    assert not os.path.exists(d)


def test_sweep_removes_what_killed_runs_left(tmp_path):
    mine = tmp_path / f"rmapbench-boot-{os.getpid()}-abcd1234"
    dead = tmp_path / f"rmapbench-initrd-{dead_pid()}-abcd1234"
    old = tmp_path / "rmapbench-boot-q1w2e3r4"
    fresh = tmp_path / "rmapbench-initrd-a1s2d3f4"
    other = tmp_path / "rmapbench-kasan"            # not scratch
    for d in (mine, dead, old, fresh, other):
        d.mkdir()
        (d / "initrd.cpio").write_bytes(b"x")
    day_ago = time.time() - scratch.UNNAMED_AGE_S - 60
    os.utime(old, (day_ago, day_ago))
    assert sorted(scratch.sweep(tmp_path)) == sorted([dead, old])
    assert mine.exists() and fresh.exists() and other.exists()
    assert not dead.exists() and not old.exists()
