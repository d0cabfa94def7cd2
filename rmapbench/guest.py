"""Running a plan in a guest: image -> boot -> console -> verdict."""

import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from . import console as consolemod
from . import image, kbuild, qemu, scratch, testbed
from .errors import UserError
from .profiles import MINIMAL

PROBE_TIMEOUT_S = 25.0


@dataclass
class GuestRun:
    stack: str
    arch: str
    boot: qemu.BootResult
    console: consolemod.Console
    failure: str | None      # None: the plan ran to its end, no fault
    prep_seconds: float = 0.0    # host time to make its image and initrd
    profile: str = MINIMAL       # the build profile of its kernel


# how a verdict of a boot whose kernel faulted begins
KERNEL_FAULT = "kernel fault"


def verdict(boot: qemu.BootResult, con: consolemod.Console) -> str | None:
    """Why this boot failed, or None.  Kernel faults come first."""
    if con.faults:
        kinds = sorted({f.kind for f in con.faults})
        return f"{KERNEL_FAULT} ({', '.join(kinds)}) at console line " \
               f"{con.faults[0].line_number}"
    if boot.timed_out:
        return f"timed out after {boot.seconds:.0f}s"
    if con.done_rc is None:
        return "guest stopped before the end of its plan " \
               f"(qemu exit {boot.qemu_rc})"
    if con.clocksource in consolemod.COARSE_CLOCKS:
        return f"guest clock is {con.clocksource}: its timings would be " \
               "tick-sized (the TSC failed to calibrate)"
    failed = [s for s in con.steps if s.rc not in (0, None) or s.errors]
    if failed:
        return "failed step(s): " + ", ".join(
            f"{s.number} '{s.command}' rc={s.rc}" for s in failed) + \
            oom_note(con)
    return None


# how a failed step's verdict names the OOM killer's kills
OOM_NOTE = "; the OOM killer killed "


def oom_note(con: consolemod.Console) -> str:
    """What the OOM killer killed in the boot ('' if nothing): a step
    that fails after it ran out of memory, not because it went wrong."""
    kills = con.oom_kills()
    return f"{OOM_NOTE}{', '.join(kills)}" if kills else ""


def run(boot: qemu.Boot, log: Path, accel: str = "tcg") -> GuestRun:
    """Boot; the console goes to log; parse it once and judge it."""
    kernel = kbuild.kernel_image(boot.stack, boot.arch, boot.profile)
    if not kernel.exists():
        raise UserError(f"no {boot.stack} kernel for {boot.arch} "
                        f"({boot.profile}) at {kernel}: run 'harness.py "
                        f"build --stack {boot.stack} --arch {boot.arch} "
                        f"--profile {boot.profile}'")
    start = time.monotonic()
    base = image.build_image(boot.arch, boot.files)
    with scratch.directory("initrd") as tmp:
        initrd = image.boot_initrd(base, boot.plan,
                                   Path(tmp) / "initrd.cpio")
        prep = time.monotonic() - start
        result = qemu.run(boot, kernel, initrd, accel, log)
    con = consolemod.parse(log.read_text(errors="replace"))
    return GuestRun(boot.stack, boot.arch, result, con, verdict(result, con),
                    prep, boot.profile)


def view(run: GuestRun, name: str) -> GuestRun:
    """The run as case name of a boot several cases' lines shared sees
    it (console.marked), judged on its own steps; a copy of the run when
    its console has no marks (a case's records may add a failure)."""
    con = consolemod.marked(run.console, name)
    failure = run.failure if con is run.console else verdict(run.boot, con)
    return replace(run, console=con, failure=failure)


def phases(run: GuestRun) -> dict:
    """Where the boot's time went: host seconds to make its initrd and
    in QEMU; guest seconds to /init and in each kind of plan step (on
    the boot's own clock: host time only under a host clock)."""
    steps: dict[str, float] = {}
    for step in run.console.steps:
        if step.number and step.ms is not None:
            verb = step.command.split(" ", 1)[0]
            steps[verb] = round(steps.get(verb, 0.0) + step.ms / 1000, 3)
    init = run.console.init_seconds()
    return {"prep_s": round(run.prep_seconds, 3),
            "qemu_s": round(run.boot.seconds, 3),
            "guest_init_s": None if init is None else round(init, 3),
            "guest_steps_s": steps}


def choose_accel(requested: str) -> str:
    """'tcg', 'kvm', or for 'auto' KVM only if a probe boot proves it.

    The probe boots the anon_vma x86_64 kernel with an empty plan under
    KVM; its outcome is remembered per host kernel and QEMU version.
    """
    if requested in ("tcg", "kvm"):
        return requested
    if requested != "auto":
        raise UserError(f"unknown accel '{requested}': use auto, kvm or tcg")
    if not qemu.kvm_present():
        return "tcg"
    usable = qemu.kvm_usable_cached()
    if usable is None:
        usable = probe_kvm()
        qemu.remember_kvm(usable)
    return "kvm" if usable else "tcg"


def probe_kvm() -> bool:
    stack, arch = testbed.BASE, "x86_64"
    if not kbuild.kernel_image(stack, arch).exists():
        return False
    with tempfile.TemporaryDirectory(prefix="rmapbench-probe-") as tmp:
        boot = qemu.Boot(stack, arch, "", mem_mb=128,
                         timeout_s=PROBE_TIMEOUT_S)
        probe = run(boot, Path(tmp) / "probe.log", accel="kvm")
    return probe.failure is None
