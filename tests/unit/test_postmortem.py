"""The post-mortem of a timed-out boot, against a fake QMP server."""

import json
import socket
import threading
from pathlib import Path

from rmapbench import console, postmortem

PATH = "/machine/peripheral-anon/device[0]/virtio-backend"
STATUS = f"""{PATH}:
  device_name:          virtio-blk
  inuse:                0
  used_idx:             36520
  last_avail_idx:       36520
  VRing:
    num:          256
    avail:        0x000000000348d000
    used:         0x000000000348d240
"""
ANSWERS = {
    "info registers -a": "CPU#0\nRIP=ffffffff81023abe HLT=1\nYMM00=0 0 0 0\n",
    "info virtio": f"{PATH} [virtio-blk]\n",
    f"info virtio-queue-status {PATH} 0": STATUS,
    f"info virtio-queue-status {PATH} 1": "Error: Invalid virtqueue number 1",
    "xp /1hu 0x348d002": "000000000348d002: 36520\n",
    "xp /1hu 0x348d204": "000000000348d204: 36488\n",
    "xp /1hu 0x348d242": "000000000348d242: 36520\n",
    **{f"sendkey alt-sysrq-{key}": "" for key in postmortem.SYSRQ_KEYS},
}


def serve(server: socket.socket, asked: list[str]) -> None:
    conn, _ = server.accept()
    out = conn.makefile("w")
    out.write(json.dumps({"QMP": {"version": {}}}) + "\n")
    out.flush()
    for line in conn.makefile("r"):
        msg = json.loads(line)
        if msg["execute"] == "qmp_capabilities":
            out.write(json.dumps({"event": "RESUME"}) + "\n")
            out.write(json.dumps({"return": {}}) + "\n")
        else:
            command = msg["arguments"]["command-line"]
            asked.append(command)
            out.write(json.dumps({"return": ANSWERS[command]}) + "\n")
        out.flush()
    conn.close()


def test_a_hung_guest_leaves_its_ring_in_the_log(tmp_path: Path,
                                                 monkeypatch):
    monkeypatch.setattr(postmortem, "SYSRQ_WAIT_S", 0.0)
    sock = tmp_path / "qmp.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(sock))
    server.listen(1)
    asked: list[str] = []
    thread = threading.Thread(target=serve, args=(server, asked))
    thread.start()
    log = tmp_path / "boot.log"
    log.write_text("RMB-STEP 2/2 section fio\n")
    postmortem.record(sock, log)
    thread.join(timeout=5)
    server.close()
    text = log.read_text()
    assert postmortem.MARKER in text
    assert "qemu| guest used_event: 000000000348d204: 36488" in text
    assert "qemu| guest used->idx: 000000000348d242: 36520" in text
    assert "HLT=1" in text and "YMM00" not in text
    # the RIP again, to tell a spin from a livelock
    assert text.count("qemu| ffffffff81023abe\n") == postmortem.RIP_SAMPLES
    assert asked[-1].endswith(" 1")           # no queue 1: stopped there
    # the guest was asked first: every CPU, every task, memory
    assert asked[:3] == ["sendkey alt-sysrq-l", "sendkey alt-sysrq-t",
                         "sendkey alt-sysrq-m"]
    assert not console.parse(text).faults


def test_a_qemu_that_does_not_answer_is_said_so(tmp_path: Path):
    log = tmp_path / "boot.log"
    log.write_text("")
    postmortem.record(tmp_path / "absent.sock", log)
    assert "QEMU did not answer over QMP" in log.read_text()
