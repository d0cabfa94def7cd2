#!/usr/bin/python3
"""Where a boot's host time goes: boot a stored boot's kernel again and
print the host time at which each console line arrived.

    tools/boot-timeline.py results/RUN/boots/KEY.json [--append ARGS]
                           [--plan FILE] [--gap SECONDS] [--repeat N]

The boot's QEMU command comes from its stored result ("command"); the
initrd is the arch's base image with a plan of its own (default: swapon
and info, enough to reach /init and power off), the swap disk a fresh
sparse file.  Lines that arrived more than --gap seconds after the one
before are printed with both times; the last line gives the total and
the time to the kernel's first line.  Under icount the guest's own
timestamps count instructions, not host time: this is how the cost of
the timer polls that icount boots now skip was found (README, "The
guest").  Run it on an otherwise idle host, with the kernels built.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rmapbench import image, plan, testbed  # noqa: E402

DEFAULT_PLAN = plan.of(plan.swapon(), plan.info())


def command(stored: list[str], initrd: Path, swap: Path,
            append: str) -> list[str]:
    """The stored QEMU command with a new initrd, swap disk and extra
    kernel arguments, and no QMP socket (the run that made it is gone)."""
    cmd = list(stored)
    cmd[cmd.index("-initrd") + 1] = str(initrd)
    i = cmd.index("-append")
    cmd[i + 1] = f"{cmd[i + 1]} {append}".strip()
    if "-qmp" in cmd:
        j = cmd.index("-qmp")
        del cmd[j:j + 2]
    if "-drive" in cmd:
        j = cmd.index("-drive")
        cmd[j + 1] = f"file={swap},if=virtio,format=raw,cache=unsafe"
    return cmd


def timeline(cmd: list[str], gap: float) -> tuple[float, float | None]:
    """Boot once, printing slow lines; (total s, s to the first line)."""
    start = time.monotonic()
    last, first = start, None
    with subprocess.Popen(cmd, stdout=subprocess.PIPE,
                          stdin=subprocess.DEVNULL) as guest:
        assert guest.stdout is not None
        for raw in guest.stdout:
            now = time.monotonic()
            first = now - start if first is None else first
            if now - last > gap:
                text = raw.decode(errors="replace").rstrip()[:100]
                print(f"{now - start:7.3f} +{now - last:6.3f} {text}")
            last = now
    return time.monotonic() - start, first


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("boot", type=Path, help="results/RUN/boots/KEY.json")
    p.add_argument("--append", default="", help="extra kernel arguments")
    p.add_argument("--plan", type=Path, help="a plan file (default: "
                   "swapon, info)")
    p.add_argument("--gap", type=float, default=0.03,
                   help="print lines that came this many seconds after "
                   "the one before (default 0.03)")
    p.add_argument("--repeat", type=int, default=1, help="boots (default 1)")
    args = p.parse_args()
    try:
        stored = json.loads(args.boot.read_text())["command"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"boot-timeline: {args.boot}: not a stored boot with a "
                 f"QEMU command ({e}); give results/RUN/boots/KEY.json")
    arch = next(a.name for a in testbed.ARCHES
                if Path(stored[0]).name == a.qemu)
    steps = args.plan.read_text() if args.plan else DEFAULT_PLAN
    with tempfile.TemporaryDirectory(prefix="rmapbench-timeline-") as tmp:
        initrd = image.boot_initrd(image.build_image(arch), steps,
                                   Path(tmp) / "initrd.cpio")
        for n in range(args.repeat):
            swap = Path(tmp) / f"swap-{n}.img"
            with open(swap, "wb") as f:
                f.truncate(1 << 30)
            total, first = timeline(
                command(stored, initrd, swap, args.append), args.gap)
            print(f"boot {n + 1}: {total:.3f} s, first console line at "
                  f"{first if first is not None else float('nan'):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
