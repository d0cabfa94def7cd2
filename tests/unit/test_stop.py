"""Stopping the harness (SIGTERM: Slurm's time limit, kill; SIGINT):
its guests are killed, the boots they ran are not stored, and the same
command boots them again."""

import os
import signal
import threading
import time

import pytest

from rmapbench import executor, guest, qemu, store

BOOT = qemu.Boot("anonmm", "x86_64", "plan", mem_mb=128, timeout_s=60.0)


@pytest.fixture(autouse=True)
def not_stopping():
    qemu.STOPPING.clear()
    yield
    qemu.STOPPING.clear()


def test_a_stopped_guest_is_killed_and_its_boot_is_no_result(
        tmp_path, monkeypatch):
    """A guest that would run for a minute is killed at once, run()
    raises Stopped, and no boot starts afterwards."""
    monkeypatch.setattr(qemu, "command",
                        lambda *a: ["sh", "-c", "sleep 60", "guest"])
    raised: list[BaseException] = []

    def boot() -> None:
        try:
            qemu.run(BOOT, tmp_path / "k", tmp_path / "i", "tcg",
                     tmp_path / "k.log")
        except qemu.Stopped as why:
            raised.append(why)
    thread = threading.Thread(target=boot)
    start = time.monotonic()
    thread.start()
    while not qemu.LIVE and time.monotonic() - start < 10:
        time.sleep(0.01)
    assert qemu.LIVE, "the guest never started"
    qemu.stop_guests()
    thread.join(timeout=10)
    assert not thread.is_alive() and time.monotonic() - start < 10
    assert raised and not qemu.LIVE
    with pytest.raises(qemu.Stopped):
        qemu.run(BOOT, tmp_path / "k", tmp_path / "i", "tcg",
                 tmp_path / "k2.log")


def test_the_executor_stores_what_finished_and_not_what_was_stopped(
        tmp_path, monkeypatch):
    jobs = [executor.Job(k, k, BOOT) for k in ("first", "second", "third")]

    def run(boot, log, accel="tcg"):
        if log.stem == "second":
            qemu.stop_guests()
            raise qemu.Stopped(log.stem)
        if qemu.STOPPING.is_set():
            raise qemu.Stopped(log.stem)
        import fakeguest
        return fakeguest.run_of("RMB-DONE rc=0\n", log)
    monkeypatch.setattr(guest, "run", run)
    with pytest.raises(qemu.Stopped):
        executor.execute(jobs, tmp_path, "tcg", lambda job, r: {},
                         lambda job, r: None)
    assert store.boot_done(tmp_path, "first")
    assert not store.boot_done(tmp_path, "second")
    assert not store.boot_done(tmp_path, "third")


def test_sigterm_stops_the_guests_and_says_how_to_resume(capsys,
                                                         monkeypatch):
    """dispatch() turns SIGTERM into stop_guests() and exit 130 with one
    line saying what was kept."""
    import argparse

    from rmapbench import cli

    def subcommand(args) -> int:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        return 0
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM,
                                               signal.SIGINT)}
    try:
        rc = cli.dispatch(argparse.Namespace(func=subcommand,
                                             command="report"))
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
    assert rc == 130 and qemu.STOPPING.is_set()
    err = capsys.readouterr().err
    assert "SIGTERM" in err and "the same command runs the rest" in err


def test_a_guest_ended_by_a_signal_from_outside_is_no_result(
        tmp_path, monkeypatch):
    """At a time limit Slurm signals QEMU too, perhaps before the
    harness: QEMU says so and exits 0, and that boot is not stored as
    the kernel's failure either."""
    monkeypatch.setattr(qemu, "command", lambda *a: [
        "sh", "-c", "echo 'qemu-system-i386: terminating on signal 15 "
        "from pid 1 (slurmstepd)' >&2", "guest"])
    with pytest.raises(qemu.Stopped):
        qemu.run(BOOT, tmp_path / "k", tmp_path / "i", "tcg",
                 tmp_path / "k.log")
    assert not qemu.STOPPING.is_set()
