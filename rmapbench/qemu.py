"""Booting a kernel in QEMU: one guest, one console log, one timeout.

The guest gets the kernel, an initrd (image.boot_initrd), -m MEM, a fresh
sparse raw swap disk on virtio, and its serial console in a log file.  It
powers itself off with 'reboot -f' under -no-reboot; a panic reboots
(panic=-1), which also ends QEMU.  A guest still running at the timeout
is killed and the boot counts as timed out.
"""

import json
import os
import platform
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from . import paths, postmortem, qemusuite, scratch, testbed
from .errors import UserError
from .extras import Files
from .profiles import MINIMAL, profile as profile_of

# random.trust_cpu=on: the CRNG seeds from RDRAND at once; without it,
# the first getrandom() (mkswap's UUID) waits for entropy in every boot.
# rootfstype=ramfs: the initramfs (busybox and bench/'s programs) is
# unpacked into ramfs, whose pages reclaim cannot take, not into tmpfs:
# on tmpfs it is shmem on the anon LRU, older than any workload's data,
# and reclaim swaps the image out before the data.
# no_timer_check: the IO-APIC timer test counts timer ticks during a
# delay loop, and under TCG a host short of CPU delivers none in time;
# the kernel then panics ("IO-APIC + timer doesn't work!") at its first
# timer set-up.  QEMU routes the PIT to IO-APIC pin 2, where the kernel
# puts it first.
# Figures: docs/measurements.md (boot options).
BASE_APPEND = ("console=ttyS0 panic=-1 slab_nomerge tsc=reliable "
               "random.trust_cpu=on loglevel=7 rdinit=/init "
               "rootfstype=ramfs no_timer_check")
# Below this the kernel and the initramfs do not fit.
MIN_MEM_MB = 64


@dataclass(frozen=True)
class Boot:
    """One guest boot: the kernel (stack, arch, build profile), the plan
    it runs and the files it needs beyond the base image, and the
    machine: memory, vCPUs, swap disk, guest clock, kernel arguments
    beyond the harness's own, and the host time it may take.  The
    profile adds its own machine (NUMA nodes) and kernel arguments.
    seed: QEMU's -seed on a repeatable clock, where it makes the guest's
    random numbers (RDRAND, from which the kernel seeds its shuffled
    page allocator, slab freelists and address-space layout): one seed
    replays a boot instruction for instruction, another samples what
    that randomness moves (runner.job_of gives repetition r seed r + 1)."""
    stack: str
    arch: str
    plan: str
    mem_mb: int
    timeout_s: float
    swap_mb: int = 0
    smp: int = 1
    append: str = ""
    files: Files = ()        # extras.resolve(): added to the image
    clock: str = testbed.HOST   # testbed.CLOCKS
    profile: str = MINIMAL      # profiles.PROFILES
    seed: int = 1


# The guests running now, and whether the harness is being stopped: a
# boot cut short by stop_guests() is no result (run() raises Stopped,
# and nothing is stored, so the same command boots it again), and no
# boot starts after it.
LIVE: set[subprocess.Popen] = set()
LIVE_LOCK = threading.Lock()
STOPPING = threading.Event()


class Stopped(Exception):
    """The harness was stopped while the boot ran or before it began."""


def stop_guests() -> None:
    """Kill every guest now and start no other (on SIGTERM or SIGINT)."""
    STOPPING.set()
    with LIVE_LOCK:
        for proc in LIVE:
            proc.kill()


@dataclass
class BootResult:
    log: Path
    seconds: float
    timed_out: bool
    qemu_rc: int | None
    command: list[str]


def qemu_binary(arch: str, suite: str = "") -> str:
    """The QEMU for arch: the installed one, or suite's (qemusuite.py)."""
    name = testbed.arch(arch).qemu
    if suite:
        return qemusuite.binary(suite, name)
    binary = shutil.which(name)
    if binary is None:
        raise UserError(f"{name} not found: run 'make setup' "
                        "(Debian package qemu-system-x86)")
    return binary


def qemu_version(suite: str = "") -> str:
    res = subprocess.run([qemu_binary("x86_64", suite), "--version"],
                         capture_output=True, text=True)
    return res.stdout.splitlines()[0] if res.stdout else "unknown"


def seed_args(boot: Boot, clock: testbed.Clock) -> list[str]:
    """-seed on a repeatable clock (elsewhere the host's timing already
    differs from boot to boot)."""
    return ["-seed", str(boot.seed)] if clock.repeatable else []


def command(boot: Boot, kernel: Path, initrd: Path, accel: str,
            swap: Path | None) -> list[str]:
    """The QEMU command line of boot, with its kernel image and initrd,
    under the run's accel."""
    if boot.mem_mb < MIN_MEM_MB:
        raise UserError(f"guest memory {boot.mem_mb} MB is below the "
                        f"{MIN_MEM_MB} MB a guest needs to boot")
    if not kernel.exists():
        raise UserError(f"kernel {kernel} missing: run "
                        "'harness.py build' first")
    clock = testbed.clock(boot.clock)
    profile = profile_of(boot.profile)
    append = " ".join(a for a in (BASE_APPEND,
                                  profile.clock_args(clock.append),
                                  profile.append,
                                  boot.append) if a)
    smp, nodes = machine(boot, accel, clock)
    firmware = (qemusuite.firmware_args(clock.qemu_suite)
                if clock.qemu_suite else [])
    cmd = [qemu_binary(boot.arch, clock.qemu_suite), *firmware,
           "-accel", accel_of(accel, clock),
           *clock.qemu_args, *seed_args(boot, clock),
           "-cpu", testbed.arch(boot.arch).cpu,
           "-m", str(boot.mem_mb), "-smp", smp, *nodes,
           "-kernel", str(kernel), "-initrd", str(initrd),
           "-append", append,
           "-display", "none", "-monitor", "none", "-no-reboot",
           "-nodefaults", "-serial", "stdio"]
    if swap is not None:
        cmd += ["-drive", f"file={swap},if=virtio,format=raw,cache=unsafe"]
    return cmd


def smp_arg(vcpus: int, accel: str, clock: testbed.Clock) -> str:
    """-smp for a guest of vcpus: them, and at least two possible ones
    under multi-threaded TCG.

    QEMU 7.2 translates a TCG guest whose machine has one possible vCPU
    without CF_PARALLEL: the guest's fences are dropped and its locked
    instructions become plain loads and stores.  The device emulation
    and the I/O threads still run beside the vCPU thread, so the
    guest's "store used_event; smp_mb(); load used->idx" in
    virtqueue_enable_cb() is no longer ordered against QEMU's "store
    used->idx; smp_mb(); load used_event": now and then both read the
    old value, QEMU does not interrupt, and the guest waits for ever on
    requests the device has completed (seen as fio stopping with 32
    writes in flight, docs/anonmm-status.md).  x86's smp_mb() is a
    locked add, so QEMU 8.1's fix (commit c914d46d0a64, fences kept in
    system mode) may not cover it.  A second possible vCPU, never
    brought up, makes TCG translate for parallel vCPUs.  Round-robin
    TCG (icount) never does; its boots keep the exposure."""
    if accel_of(accel, clock) != "tcg" or not clock.mttcg:
        return str(vcpus)
    return f"{vcpus},maxcpus={max(vcpus, 2)}"


def machine(boot: Boot, accel: str, clock: testbed.Clock
            ) -> tuple[str, list[str]]:
    """-smp and the NUMA arguments of boot: its profile's nodes over the
    vCPUs smp_arg() makes possible (a profile without nodes: smp_arg's
    value as it is)."""
    smp = smp_arg(boot.smp, accel, clock)
    profile = profile_of(boot.profile)
    if not profile.numa_nodes:
        return smp, []
    count, _, rest = smp.partition(",")
    possible = int(rest.partition("maxcpus=")[2] or count)
    return profile.machine(boot.mem_mb, boot.smp, possible)


def accel_of(accel: str, clock: testbed.Clock) -> str:
    """The accel a boot of clock runs under, given the run's."""
    return clock.accel or accel


def make_swap(directory: Path, mb: int) -> Path | None:
    """A fresh sparse swap image of mb MiB, or None for no swap."""
    if mb <= 0:
        return None
    swap = directory / "swap.img"
    with open(swap, "wb") as f:
        f.truncate(mb * 1024 * 1024)
    return swap


def run(boot: Boot, kernel: Path, initrd: Path, accel: str, log: Path
        ) -> BootResult:
    """Boot once; the console goes to log.  Never raises on guest
    failure; raises Stopped if the harness is being stopped."""
    if STOPPING.is_set():
        raise Stopped(f"not booted: {log.stem}")
    log.parent.mkdir(parents=True, exist_ok=True)
    with scratch.directory("boot") as tmp:
        qmp = Path(tmp) / "qmp.sock"
        cmd = command(boot, kernel, initrd, accel,
                      make_swap(Path(tmp), boot.swap_mb))
        if len(bytes(qmp)) < postmortem.MAX_SOCKET_PATH:
            cmd += ["-qmp", f"unix:{qmp},server=on,wait=off"]
        start = time.monotonic()
        with open(log, "wb"):
            pass                      # emptied; QEMU and the post-mortem
        with open(log, "ab") as out:  # both append to it
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT)
            with LIVE_LOCK:
                LIVE.add(proc)
            try:
                rc, timed_out = wait(proc, boot, qmp, log, out)
            finally:
                with LIVE_LOCK:
                    LIVE.discard(proc)
    if STOPPING.is_set() or (not timed_out and signalled(log)):
        raise Stopped(f"stopped while booting: {log.stem}")
    return BootResult(log, time.monotonic() - start, timed_out, rc, cmd)


def signalled(log: Path) -> bool:
    """QEMU ended on a signal from outside (Slurm's time limit reaches
    every process of a task, QEMU perhaps before the harness): not a
    result of the kernel's."""
    with open(log, "rb") as f:
        f.seek(max(0, f.seek(0, os.SEEK_END) - 4096))
        return b": terminating on signal " in f.read()


def wait(proc: subprocess.Popen, boot: Boot, qmp: Path, log: Path,
         out) -> tuple[int | None, bool]:
    """QEMU's exit code and False, or None and True when the boot
    outlived its timeout (its post-mortem taken, QEMU killed)."""
    if STOPPING.is_set():       # stopped between the check and Popen
        proc.kill()
    try:
        return proc.wait(timeout=boot.timeout_s), False
    except subprocess.TimeoutExpired:
        out.flush()
        postmortem.record(qmp, log)
        proc.kill()
        proc.wait()
        return None, True


def kvm_usable_cached() -> bool | None:
    """The remembered outcome of the KVM probe on this host, if any."""
    probe = paths.cache_dir() / "kvm-probe.json"
    key = {"host": platform.release(), "qemu": qemu_version()}
    if probe.exists():
        saved = json.loads(probe.read_text())
        if saved.get("key") == key:
            return saved["usable"]
    return None


def remember_kvm(usable: bool) -> None:
    probe = paths.cache_dir() / "kvm-probe.json"
    key = {"host": platform.release(), "qemu": qemu_version()}
    probe.parent.mkdir(parents=True, exist_ok=True)
    probe.write_text(json.dumps({"key": key, "usable": usable}) + "\n")


def kvm_present() -> bool:
    return os.access("/dev/kvm", os.R_OK | os.W_OK)
