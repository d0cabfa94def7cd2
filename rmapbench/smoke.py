"""Boot smoke: every kernel boots, names its scheme, shows its counters."""

import time
from pathlib import Path

from . import guest, iface, kbuild, paths, registry
from .errors import UserError
from .progress import Progress

COUNTERS = tuple(c.name for c in iface.counters(iface.SMOKE))
SIZES = tuple(f"sizeof_{s}" for s in iface.sizes())
SMOKE_TIMEOUT_S = 180.0
# Push a few MB out with MADV_PAGEOUT so that reclaim walks the anon rmap:
# the counters must then have moved.
SMOKE_PLAN = "swapon\nrun rmb-mremap mode=swapped R_mb=8 moves=2\ninfo\n"
MUST_MOVE = ("anon_rmap_walk", "anon_rmap_visit", "anon_rmap_pte", "pswpout")


def check(run: guest.GuestRun) -> list[str]:
    """What is wrong with a smoke boot (empty: nothing)."""
    problems = [run.failure] if run.failure else []
    info = run.console.section_pairs("rmapbench")
    want = kbuild.built_scheme(run.stack, run.arch)
    if info.get("scheme") != want:
        problems.append(f"/proc/rmapbench says scheme "
                        f"'{info.get('scheme')}', its .config selects "
                        f"'{want}'")
    problems += [f"/proc/rmapbench lacks {s}" for s in SIZES
                 if s not in info]
    vmstat = run.console.section_pairs("vmstat")
    problems += [f"/proc/vmstat lacks {c}" for c in COUNTERS
                 if c not in vmstat]
    problems += [f"{c} stayed 0 although pages were swapped out"
                 for c in MUST_MOVE if vmstat.get(c, "0") == "0"]
    if registry.arch(run.arch).highmem and "LowTotal" not in run.console.meminfo_kb():
        problems.append("/proc/meminfo lacks LowTotal (HIGHMEM off?)")
    return problems


def summary(run: guest.GuestRun) -> str:
    info = run.console.section_pairs("rmapbench")
    vmstat = run.console.section_pairs("vmstat")
    mem = run.console.meminfo_kb()
    parts = [f"scheme={info.get('scheme')}"]
    parts += [f"{s[len('sizeof_'):]}={info.get(s)}" for s in SIZES]
    for name in ("MemTotal", "LowTotal", "LowFree"):
        if name in mem:
            parts.append(f"{name}={mem[name]}kB")
    parts += [f"{c}={vmstat.get(c)}" for c in COUNTERS]
    return " ".join(parts)


def run_smoke(stacks: list[str], arches: list[str], accel: str,
              logdir: Path) -> int:
    """Boot each kernel once; print what it shows; 0 if all are sound."""
    accel = guest.choose_accel(accel)
    progress = Progress(len(stacks) * len(arches), "smoke")
    bad = 0
    for stack in stacks:
        for arch in arches:
            progress.note(f"booting {stack} {arch} ({accel})")
            run = guest.run_plan(stack, arch, SMOKE_PLAN,
                                 logdir / f"{stack}-{arch}.log",
                                 mem_mb=registry.arch(arch).smoke_mem_mb, swap_mb=64,
                                 timeout_s=SMOKE_TIMEOUT_S, accel=accel)
            progress.step_done()
            problems = check(run)
            if kbuild.built_scheme(stack, arch) != stack:
                print(f"note: the {stack} stack does not select its scheme "
                      f"yet (CONFIG_ANONMM unset): it runs anon_vma")
            state = "FAIL" if problems else "ok"
            print(f"{state} {stack} {arch} boot {run.boot.seconds:.1f}s: "
                  f"{summary(run)}", flush=True)
            for problem in problems:
                print(f"  {problem} (console: {run.boot.log})")
            bad += bool(problems)
    return 1 if bad else 0


def default_logdir() -> Path:
    return paths.cache_dir() / "logs" / "smoke" / time.strftime(
        "%Y%m%d-%H%M%S")
