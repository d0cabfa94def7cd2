"""What a guest that did not finish was doing, asked of QEMU before the
kill.

A boot that times out with a silent console says nothing by itself: the
guest may be spinning, or idle with every task asleep on an interrupt
that never came.  Before the kill, the harness asks QEMU over QMP for
the vCPU registers (HLT=1 and IF set: idle, waiting), then each vCPU's
RIP again a few times (one address: a spin; several: a livelock or
work going on), and for the state
of every virtqueue (the device's indices, and the guest's own used_event
and used->idx read from guest memory): together they tell a lost
interrupt (device done, guest's used_event behind used->idx) from
requests the guest never made available.  The answers are appended to
the boot's log under one marker line, each line prefixed, so the console
parser reads none of them as the kernel's.

First the guest is asked itself: SysRq keys pressed on its PS/2
keyboard (every kernel is built with MAGIC_SYSRQ, all of it enabled)
make the kernel print, on its console and before the marker, a
backtrace of every CPU (l), the state and stack of every task (t) and
its memory counters per node and zone (m).  A guest too far gone to
take the keyboard interrupt prints nothing, and QEMU's answers still
follow.
"""

import json
import re
import socket
import time
from pathlib import Path

MARKER = "RMB-HOST-POSTMORTEM"
PREFIX = "qemu| "
TIMEOUT_S = 3.0
# sun_path holds 108 bytes: a deeper cache directory gets no socket, and
# its timed-out boots no post-mortem (record() says QEMU did not answer)
MAX_SOCKET_PATH = 108
VECTOR_REGISTERS = ("FPR", "XMM", "YMM", "ZMM")   # nothing to say here
RIP = re.compile(r"\bRIP=([0-9a-f]+)")
RIP_SAMPLES, RIP_GAP_S = 10, 0.1
SYSRQ_KEYS, SYSRQ_WAIT_S = "ltm", 2.0


class QMP:
    """A minimal QMP client: human monitor commands, text answers."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(TIMEOUT_S)
        self.sock.connect(str(path))
        self.buf = b""
        self.reply()                                   # the greeting
        self.send({"execute": "qmp_capabilities"})
        self.reply()

    def send(self, msg: dict) -> None:
        self.sock.sendall(json.dumps(msg).encode() + b"\n")

    def reply(self) -> dict:
        """The next answer to a command; events are skipped."""
        while True:
            while b"\n" not in self.buf:
                data = self.sock.recv(65536)
                if not data:
                    raise OSError("QMP connection closed")
                self.buf += data
            line, self.buf = self.buf.split(b"\n", 1)
            msg = json.loads(line)
            if "event" not in msg:
                return msg

    def hmp(self, command: str) -> str:
        self.send({"execute": "human-monitor-command",
                   "arguments": {"command-line": command}})
        msg = self.reply()
        if "error" in msg:
            return f"(error: {msg['error'].get('desc', msg['error'])})"
        return str(msg.get("return", ""))

    def close(self) -> None:
        self.sock.close()


def virtqueue_paths(listing: str) -> list[str]:
    """The QOM paths of 'info virtio'."""
    return re.findall(r"^(/\S+)\s", listing, re.MULTILINE)


def ring_words(qmp: QMP, status: str) -> list[str]:
    """The guest's side of a split ring, from guest memory: avail->idx,
    used_event (after avail->ring[num]), used->idx."""
    found = {k: re.search(rf"^\s*{k}:\s+(\S+)", status, re.MULTILINE)
             for k in ("num", "avail", "used")}
    if not all(found.values()):
        return []
    num = int(found["num"].group(1))
    avail = int(found["avail"].group(1), 16)
    used = int(found["used"].group(1), 16)
    words = [("guest avail->idx", avail + 2), ("guest used_event",
             avail + 4 + 2 * num), ("guest used->idx", used + 2)]
    return [f"{name}: {qmp.hmp(f'xp /1hu {addr:#x}').strip()}"
            for name, addr in words]


def rip_samples(qmp: QMP) -> list[str]:
    """Every vCPU's RIP at RIP_SAMPLES moments RIP_GAP_S apart."""
    out = []
    for _ in range(RIP_SAMPLES):
        time.sleep(RIP_GAP_S)
        out.append(" ".join(RIP.findall(qmp.hmp("info registers -a"))))
    return [f"RIP of every vCPU, {RIP_SAMPLES} times {RIP_GAP_S} s apart:",
            *out]


def questions(qmp: QMP) -> list[str]:
    """Every answer, as lines."""
    registers = [line for line in qmp.hmp("info registers -a").splitlines()
                 if not line.startswith(VECTOR_REGISTERS)]
    lines = ["info registers -a:", *registers, *rip_samples(qmp)]
    listing = qmp.hmp("info virtio")
    lines += ["info virtio:", *listing.splitlines()]
    for path in virtqueue_paths(listing):
        for queue in range(8):
            status = qmp.hmp(f"info virtio-queue-status {path} {queue}")
            if status.startswith(("(error", "Error")):
                break
            lines += [f"queue {queue}:", *status.splitlines(),
                      *ring_words(qmp, status)]
    return lines


def ask_guest(qmp: QMP) -> None:
    """Press SysRq with each of SYSRQ_KEYS, giving the kernel time to
    print each answer on its console."""
    for key in SYSRQ_KEYS:
        qmp.hmp(f"sendkey alt-sysrq-{key}")
        time.sleep(SYSRQ_WAIT_S)


def record(qmp_path: Path, log: Path) -> None:
    """Append QEMU's view of the guest to log, after the guest's own
    (QEMU appends its console output to log too); never raises (a QEMU
    that does not answer is said so in the log)."""
    try:
        qmp = QMP(qmp_path)
        try:
            ask_guest(qmp)
            lines = questions(qmp)
        finally:
            qmp.close()
    except (OSError, ValueError) as err:
        lines = [f"QEMU did not answer over QMP: {err}"]
    with open(log, "a", errors="replace") as out:
        out.write(f"\n{MARKER} QEMU's state at the timeout, before the "
                  "kill\n")
        out.writelines(f"{PREFIX}{line}\n" for line in lines)
