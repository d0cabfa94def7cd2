"""The tests' one fake guest: what guest.run returns, without QEMU.

run_of() is the run of a boot whose console was a given text; install()
puts in guest.run's place a function that answers each boot with the
console text console_of(boot) gives, and lists the boots it answered.
"""

from collections.abc import Callable
from pathlib import Path

from rmapbench import console, guest, qemu

SECONDS = 2.0       # how long every fake boot took
Booted = list[tuple[qemu.Boot, Path]]   # each boot, with its console log


def run_of(text: str, log: Path, stack: str = "anonmm",
           arch: str = "x86_64", timed_out: bool = False) -> guest.GuestRun:
    """The judged run of a boot whose console was text (written to
    log); a timed-out one has no QEMU exit code."""
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(text)
    result = qemu.BootResult(log, SECONDS, timed_out,
                             None if timed_out else 0, ["qemu"])
    con = console.parse(text)
    return guest.GuestRun(stack, arch, result, con,
                          guest.verdict(result, con))


def install(monkeypatch, console_of: Callable[[qemu.Boot], str]) -> Booted:
    """guest.run answering each boot with console_of(boot); the boots
    it answered, in order."""
    booted: Booted = []

    def run(boot: qemu.Boot, log: Path, accel: str = "tcg"
            ) -> guest.GuestRun:
        booted.append((boot, log))
        return run_of(console_of(boot), log, boot.stack, boot.arch)
    monkeypatch.setattr(guest, "run", run)
    return booted
