"""Scratch directories: named after their process; a later run removes
those of dead processes, never a live run's."""

import os
import socket
import subprocess

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
    other = tmp_path / "rmapbench-kasan"            # not scratch
    for d in (mine, dead, other):
        d.mkdir()
        (d / "initrd.cpio").write_bytes(b"x")
    assert scratch.sweep(tmp_path) == [dead]
    assert mine.exists() and other.exists() and not dead.exists()


def test_sweep_leaves_another_hosts_scratch_alone(tmp_path):
    """On a cache the nodes of a cluster share, a pid names a process of
    its own host only."""
    here = socket.gethostname()
    dead = dead_pid()
    ours = tmp_path / f"rmapbench-boot-{dead}-{here}@-abcd1234"
    theirs = tmp_path / f"rmapbench-boot-{dead}-node-7.lab@-abcd1234"
    for d in (ours, theirs):
        d.mkdir()
    assert scratch.sweep(tmp_path) == [ours]
    assert theirs.exists()
