"""bench/'s make runs one at a time across harnesses sharing the tree."""

import subprocess
import threading
import time

from rmapbench import benchbuild, paths


def test_two_makes_never_overlap(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "BENCH", tmp_path)
    inside, overlaps = [], []

    def fake_run(cmd, **kwargs):
        if inside:
            overlaps.append(cmd)
        inside.append(cmd)
        time.sleep(0.2)
        inside.pop()
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(subprocess, "run", fake_run)
    threads = [threading.Thread(target=benchbuild.make, args=("x86_64",))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not overlaps
    assert (tmp_path / "out" / ".make.lock").exists()
