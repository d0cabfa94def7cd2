"""Boot smoke: every kernel boots, names its scheme, shows its counters."""

import time
from pathlib import Path

from . import executor, guest, iface, kbuild, paths, plan, qemu, testbed
from . import store
from .profiles import Target, as_targets, profile as profile_of

COUNTERS = tuple(c.name for c in iface.counters(iface.SMOKE))
SIZES = tuple(f"sizeof_{s}" for s in iface.sizes())
SUMS = iface.sums()
SMOKE_TIMEOUT_S = 180.0
# Push a few MB out with MADV_PAGEOUT so that reclaim walks the anon rmap:
# the counters must then have moved.
SMOKE_PLAN = plan.of(plan.swapon(), plan.run(
    "rmb-mremap", "mode=swapped R_mb=8 moves=2"), plan.info())
SMOKE_SWAP_MB = 64
MUST_MOVE = ("anon_rmap_walk", "anon_rmap_visit", "anon_rmap_pte", "pswpout")
# the walks that kept their cpu; a short boot may switch none out, so
# the slept sums may stay 0
SUMS_MUST_MOVE = ("anon_rmap_walk_ns", "anon_rmap_walk_timed")


def check(run: guest.GuestRun) -> list[str]:
    """What is wrong with a smoke boot (empty: nothing)."""
    problems = [run.failure] if run.failure else []
    info = run.console.section_pairs("rmapbench")
    want = kbuild.built_scheme(run.stack, run.arch, run.profile)
    if info.get("scheme") != want:
        problems.append(f"/proc/rmapbench says scheme "
                        f"'{info.get('scheme')}', its .config selects "
                        f"'{want}'")
    problems += [f"/proc/rmapbench lacks {s}" for s in SIZES + SUMS
                 if s not in info]
    problems += [f"{s} stayed 0 although pages were swapped out"
                 for s in SUMS_MUST_MOVE if info.get(s, "0") == "0"]
    vmstat = run.console.section_pairs("vmstat")
    problems += [f"/proc/vmstat lacks {c}" for c in COUNTERS
                 if c not in vmstat]
    problems += [f"{c} stayed 0 although pages were swapped out"
                 for c in MUST_MOVE if vmstat.get(c, "0") == "0"]
    highmem = testbed.arch(run.arch).highmem
    if highmem and "LowTotal" not in run.console.meminfo_kb():
        problems.append("/proc/meminfo lacks LowTotal (HIGHMEM off?)")
    return problems + feature_problems(run)


def feature_problems(run: guest.GuestRun) -> list[str]:
    """What the guest's init found of its profile's features that is
    not what the profile asks for: its NUMA nodes (none: no
    RMB-FEATURES at all)."""
    nodes = profile_of(run.profile).numa_nodes
    got = run.console.features
    if not nodes:
        return [f"a {run.profile} kernel showed features {got}"] \
            if got else []
    want = {"numa_nodes": str(nodes), "cgroup2": "1", "memcg": "1"}
    wrong = [f"{k}={got.get(k, '(none)')}, not {v}" for k, v in want.items()
             if got.get(k) != v]
    if not switched_on(got.get("lru_gen", "")):
        wrong.append(f"lru_gen={got.get('lru_gen', '(none)')}: MGLRU off")
    return [f"the guest's features: {w}" for w in wrong]


def switched_on(mask: str) -> bool:
    """Whether a sysfs mask such as lru_gen's '0x0007' has a bit set."""
    try:
        return int(mask, 16) != 0
    except ValueError:
        return False


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
    parts += [f"{s}={info.get(s)}" for s in SUMS]
    parts += [f"{k}={v}" for k, v in run.console.features.items()]
    return " ".join(parts)


def boot_of(stack: str, where: str | Target) -> qemu.Boot:
    """The smoke boot of stack's kernel (a bare arch: its minimal one)."""
    (target,) = as_targets([where])
    return qemu.Boot(stack, target.arch, SMOKE_PLAN,
                     mem_mb=testbed.arch(target.arch).smoke_mem_mb,
                     timeout_s=SMOKE_TIMEOUT_S, swap_mb=SMOKE_SWAP_MB,
                     profile=target.profile)


def judge(job: executor.Job, run: guest.GuestRun) -> dict:
    return {"stack": run.stack, "arch": run.arch, "profile": run.profile,
            "problems": check(run), "summary": summary(run)}


def say(result: dict, log: Path) -> None:
    stack, arch = result["stack"], result["arch"]
    profile = result.get("profile", "minimal")
    if kbuild.built_scheme(stack, arch, profile) != \
            testbed.stack(stack).scheme:
        sym = testbed.stack(stack).scheme_symbol
        print(f"note: the {stack} stack does not select its scheme yet "
              f"({sym} unset): it runs {testbed.BASE}")
    state = "FAIL" if result["problems"] else "ok"
    print(f"{state} {stack} {Target(profile, arch).label()} boot "
          f"{result['seconds']:.1f}s: "
          f"{result['summary']}", flush=True)
    for problem in result["problems"]:
        print(f"  {problem} (console: {log})")


def job_key(stack: str, target: Target) -> str:
    """'anonmm-i386'; another profile's kernel: 'anonmm-x86_64-distro'."""
    return "-".join([stack, *target.label().split()])


def run_smoke(stacks: list[str], targets: list[Target], accel: str,
              logdir: Path) -> int:
    """Boot each kernel once; print what it shows; 0 if all are sound.
    The consoles go to logdir/logs (a logdir used before resumes)."""
    accel = guest.choose_accel(accel)
    jobs = [executor.Job(job_key(stack, t), f"booting {stack} {t.label()}",
                         boot_of(stack, t))
            for stack in stacks for t in targets]
    results = executor.execute(
        jobs, logdir, accel, judge,
        lambda job, r: say(r, store.log_file(logdir, job.key)), what="smoke")
    return 1 if any(r["problems"] for r in results) else 0


def default_logdir() -> Path:
    return paths.cache_dir() / "logs" / "smoke" / time.strftime(
        "%Y%m%d-%H%M%S")
