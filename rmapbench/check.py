"""The correctness suite: every kernel must pass it, anonmm exactly as
anon_vma does.  A benchmark of a kernel that corrupts memory is worthless.

Three kinds of test run in QEMU guests of each kernel, grouped into a few
boots (docs/correctness.md has the list, what each checks and what is left
out and why):

- torture: bench/rmb-torture, families of processes sharing, COW-writing,
  moving, exec'ing, exiting, swapping and swapping off anonymous pages,
  every page of every process verified, plus the rmap-completeness check
  (a page MADV_PAGEOUT cannot reclaim is a mapping the walk missed);
- selftest: the 6.1 tree's own mm selftests that apply to this config
  (bench/selftests.mk builds them static for both arches);
- stress: Debian's stress-ng memory stressors under memory pressure with
  swap (x86_64 only: its Debian build is dynamic, its libraries are
  packed).

After every boot: no kernel fault line anywhere in the console, the slab
caches of the rmap (anonmm, anon_vma, anon_vma_chain, vm_area_struct,
mm_struct) back at their idle counts (see IDLE_SLAB_TOLERANCE), and a
final swapoff that releases every swap entry.

Files the base image (image.build_image) does not hold -- the selftests,
stress-ng and its libraries -- go into an extra cpio appended to the
base, like the per-boot /plan archive: the benchmark image stays as it
is and no benchmark guest pays for them in memory.
"""

import json
import os
import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import console as consolemod
from . import guest, iface, image, paths, qemu, registry
from .errors import UserError
from .progress import Progress, fmt_seconds

PASS, FAIL, SKIP = "pass", "fail", "skip"

# SLUB debugging (sanity checks, red zones, poisoning, owner tracking) on
# the caches of the rmap: a use-after-free or overflow of one of their
# objects prints "BUG <cache>: ..." (a kernel fault line), and debug
# caches keep no per-CPU slabs, so /proc/slabinfo's active_objs is exact.
RMAP_CACHES = iface.slabs(iface.RMAP)
CHECK_APPEND = "slub_debug=FZPU," + ",".join(RMAP_CACHES)

# "Near idle": with exact counts (above), the processes alive at both
# snapshots are the same (init's shell, the cat of the section), so a
# correct kernel returns to the idle count exactly.  The tolerance absorbs
# the shell's own VMAs shifting by a couple (its heap and stack may split
# or merge) and an RCU-deferred free racing the snapshot (see SETTLE).
# A leak does not hide in it: the suite forks hundreds of
# processes and maps thousands of pages per boot, so a leak of one object
# per process, per exec or per moved region shows as tens to hundreds.
IDLE_SLAB_TOLERANCE = 2

SWAP_MB = 512
GUEST_DIR = "bench/extra"           # where the extra files live in guests
SELFTEST_DIR = "bench/selftests"    # ... the selftests (run selftests/X)

# The selftests of tools/testing/selftests/vm that are built (selftests.mk
# SELFTESTS) and what the suite knows about them.
SELFTESTS = ("mremap_test", "mremap_dontunmap", "mlock2-tests",
             "mlock-random-test", "map_fixed_noreplace", "map_populate",
             "madv_populate", "mrelease_test", "soft-dirty")
QUICK_SELFTESTS = ("mremap_dontunmap", "madv_populate", "mrelease_test",
                   "mlock2-tests")
# Tests that cannot run on these kernels at all: skipped, not booted.
SELFTEST_SKIP = {
    "map_populate": "needs socketpair(2) for its parent/child handshake: "
                    "CONFIG_NET is off in both kernels",
}
# Subtests that cannot pass on an arch for reasons of the test itself, by
# TAP number; the rest of the test must pass.
SELFTEST_NA = {
    ("mremap_test", "i386"): (
        {10, 11, 12, 13, 14},
        "subtests 10-13 need 2 GB PUD-aligned regions (no room in a 3 GB "
        "address space), 14 parses addresses above 2 GB with strtol()"),
}
# Setup and tear-down plan lines around a selftest.
SELFTEST_WRAP = {
    # its 2 GB shared regions are only mapped, never touched: the
    # overcommit heuristic would refuse them in a small guest
    "mremap_test": (["sh echo 1 >/proc/sys/vm/overcommit_memory"],
                    ["sh echo 0 >/proc/sys/vm/overcommit_memory"]),
}

STRESS_NG = Path("/usr/bin/stress-ng")
STRESS_ARCHES = registry.arches_with("stress-ng")
STRESS_FAIL = re.compile(r"stress-ng: fail:|stress-ng: error:")
# stress-ng exit codes: 0 ok, 2 a stressor failed (--verify mismatch...),
# 3 out of resources, 4 not implemented
STRESS_SKIP_RC = {3: "stress-ng: not enough resources (exit 3)",
                  4: "stress-ng: stressor not implemented here (exit 4)"}


@dataclass(frozen=True)
class Test:
    name: str
    kind: str                   # torture | selftest | stress
    group: str                  # the boot it runs in
    command: str                # the main plan line
    what: str                   # one line for the docs and the table
    arches: tuple[str, ...] = registry.arch_names()
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    swap: bool = False          # it must push pages out (pswpout grows)
    expect: tuple[tuple[str, str, int], ...] = ()   # torture: (field, op, n)


@dataclass(frozen=True)
class Group:
    name: str
    mem_mb: dict
    timeout_s: float
    selftests: bool = False     # pack bench/out/<arch>/selftests
    stress: bool = False        # pack stress-ng (x86_64)
    smp: int = 1


@dataclass
class Verdict:
    test: str
    kernel: str                 # "<stack>/<arch>"
    verdict: str
    reason: str = ""
    seconds: float | None = None
    details: dict = field(default_factory=dict)


# ---- the catalogue --------------------------------------------------------

TORTURE_ALWAYS = (("verify_mismatch_pages", "==", 0),
                  ("pageout_missed_pages", "==", 0),
                  ("verified_pages", ">", 0),
                  ("pageout_candidate_pages", ">", 0),
                  ("pageout_unchecked_count", "==", 0),
                  ("pswpout_pages", ">", 0),
                  ("anon_rmap_walk_count", ">", 0),
                  ("anon_rmap_pte_count", ">", 0))
TORTURE_PRESSURE = (("pressure_count", ">", 0),
                    ("pressure_pswpout_pages", ">", 0),
                    ("pressure_swap_ptes_pages", ">", 0))
TORTURE_MODE = {
    "cow": ("a tree of members COW-writes its own pages of shared regions "
            "in rounds; pageout, pressure, verify", ()),
    "mremap": ("shared and unshared regions moved (whole page tables, "
               "every pte, split, MREMAP_DONTUNMAP, grown) before and "
               "after swap-out", (("moves_count", ">", 0),)),
    "exit": ("a chain of generations, parents exit before children; "
             "orphaned pages pushed out, moved, verified", ()),
    "exec": ("members re-exec with a 256 kB argument blob (the stack exec "
             "moves), fork new families; the old first mm exits",
             (("execs_count", ">", 0), ("exec_blob_pages", ">", 0),
              ("exec_stack_shift_kb", ">", 0))),
    "swapoff": ("shared, moved, partly swapped family; swapoff(2) while "
                "it lives, verify, swapon, pageout (pages unuse mapped must "
                "be found)", (("swapoff_count", ">", 0),)),
}
STRESSORS = {
    # name: (arguments, what); every run has --timeout and --metrics-brief
    "vm": ("--vm 2 --vm-bytes 48M --vm-method all --verify",
           "vm: every vm-method over 2 x 48 MB, verified"),
    "mmap": ("--mmap 2 --mmap-bytes 32M --verify",
             "mmap: map, touch, unmap anonymous regions, verified"),
    "mremap": ("--mremap 2 --mremap-bytes 32M --verify",
               "mremap: grow, shrink and move regions, verified"),
    "fork": ("--fork 2", "fork: fork and exit as fast as possible"),
    "brk": ("--brk 2", "brk: grow and shrink the heap"),
    "stack": ("--stack 2", "stack: grow the stack to its limit"),
    "madvise": ("--madvise 2", "madvise: every advice on anonymous pages"),
    "swap-pressure": ("--vm 2 --vm-bytes 120M --vm-keep --verify "
                      "--mremap 1 --mremap-bytes 32M --mmap 1 "
                      "--mmap-bytes 32M --fork 1",
                      "vm + mremap + mmap + fork, 300 MB in a 256 MB guest: "
                      "swap pressure"),
}


def torture_test(mode: str, group: str, args: str, name: str | None = None,
                 pressure: bool = True) -> Test:
    what, extra = TORTURE_MODE.get(mode, ("every scenario in turn", ()))
    expect = TORTURE_ALWAYS + extra + (TORTURE_PRESSURE if pressure else ())
    return Test(name or f"torture-{mode}", "torture", group,
                f"run rmb-torture mode={mode} {args}".strip(), what,
                expect=expect, swap=True)


def selftest(name: str, group: str) -> Test:
    before, after = SELFTEST_WRAP.get(name, ([], []))
    return Test(f"selftest-{name}", "selftest", group,
                f"run selftests/{name}", f"tools/testing/selftests/vm/{name}",
                before=tuple(before), after=tuple(after))


def stress_test(name: str, group: str, seconds: int) -> Test:
    args, what = STRESSORS[name]
    return Test(f"stress-{name}", "stress", group,
                f"sh cd /tmp && stress-ng {args} --timeout {seconds}s "
                "--metrics-brief", what, arches=STRESS_ARCHES,
                swap=name == "swap-pressure")


def catalogue(quick: bool) -> tuple[list[Group], list[Test]]:
    """The boots and the tests of the quick or the full suite."""
    if quick:
        groups = [Group("quick", {"i386": 192, "x86_64": 256}, 600.0,
                        selftests=True, stress=True)]
        tests = [torture_test(m, "quick", "pages=256 N=4")
                 for m in TORTURE_MODE]
        tests += [selftest(n, "quick") for n in QUICK_SELFTESTS]
        tests += [stress_test("swap-pressure", "quick", 8)]
        return groups, tests
    groups = [Group("torture", {"i386": 192, "x86_64": 192}, 1200.0),
              Group("highmem", {"i386": 1024}, 900.0),
              Group("selftests", {"i386": 192, "x86_64": 192}, 600.0,
                    selftests=True),
              # two vCPUs: the stressors (two of each) and kswapd really
              # run at once (MTTCG), racing faults, fork, mremap, exit
              # against the rmap walks of reclaim
              Group("stress", {"x86_64": 256}, 600.0, stress=True, smp=2)]
    tests = [torture_test(m, "torture", "pages=1024 N=4")
             for m in TORTURE_MODE]
    tests.append(torture_test("all", "torture",
                              "pages=512 N=8 rounds=3 seed=7",
                              name="torture-all-wide"))
    # i386 with 1 GB: the anonymous pages come from highmem; no balloon
    # (too slow under TCG), MADV_PAGEOUT alone walks the rmap
    hm = torture_test("all", "highmem", "pages=1024 N=4 pressure=0",
                      name="torture-highmem", pressure=False)
    tests.append(Test(hm.name, hm.kind, hm.group, hm.command,
                      "every scenario with the pages in highmem (i386, "
                      "1 GB guest, MADV_PAGEOUT only)", arches=("i386",),
                      expect=hm.expect, swap=True))
    tests += [selftest(n, "selftests") for n in SELFTESTS]
    tests += [stress_test(n, "stress", 5 if n != "swap-pressure" else 10)
              for n in STRESSORS]
    return groups, tests


# ---- extra files in the guest ---------------------------------------------

def selftest_files(arch: str) -> tuple[list[tuple[Path, str]], str | None]:
    """The built selftests of arch, or why there are none."""
    res = subprocess.run(["make", "-s", "-C", str(paths.BENCH), "selftests",
                          f"ARCH={arch}"], capture_output=True, text=True)
    if res.returncode != 0:
        lines = (res.stderr or res.stdout).strip().splitlines()
        return [], "building the selftests failed: " + (
            lines[-1] if lines else f"make exit {res.returncode}")
    out = paths.BENCH / "out" / arch / "selftests"
    return [(p, f"{SELFTEST_DIR}/{p.name}") for p in sorted(out.iterdir())
            if p.is_file() and os.access(p, os.X_OK)], None


def stress_files(arch: str) -> tuple[list[tuple[Path, str]], str | None]:
    """stress-ng and every library it loads, at their own paths.

    About 32 MB on Debian 12 (the binary 8.7 MB, libIPSec_MB 12.8 MB,
    libcrypto 4.7 MB, ...), in the guest's RAM: fine in a 256 MB guest
    that only runs the stressors.  i386 would need stress-ng:i386 and the
    i386 libraries of its dependencies (apt-get download + dpkg-deb -x,
    no ldd for a foreign arch), or a static build from the source."""
    if arch not in STRESS_ARCHES:
        return [], f"stress-ng is packed for {', '.join(STRESS_ARCHES)} only"
    if not STRESS_NG.exists():
        return [], "stress-ng not installed (make setup)"
    files = [(STRESS_NG, "usr/bin/stress-ng")]
    for lib in image.shared_libraries(STRESS_NG):
        files.append((lib.resolve(), str(lib.relative_to("/"))))
    return files, None


def boot(stack: str, arch: str, plan: str, log: Path, mem_mb: int,
         timeout_s: float, accel: str, files: list[tuple[Path, str]],
         smp: int = 1) -> guest.GuestRun:
    """guest.run_plan with the suite's extra files in the initramfs."""
    return guest.run_plan(stack, arch, plan, log, mem_mb=mem_mb,
                          timeout_s=timeout_s, swap_mb=SWAP_MB, accel=accel,
                          smp=smp, append=CHECK_APPEND, extra=tuple(files))


# ---- plans ------------------------------------------------------------------

SNAPSHOT = "sh sleep 1"
# Before the final slab count, every user process but init must have
# ended (a test's descendant may still be exiting after the test returned:
# a process still alive holds its mm, its anonmm and the anonmms of the
# exited parents whose pages it maps), then 3 s pass for the call_rcu()
# frees of anonmm objects.  Processes still alive then fail the row.
SETTLE_S = 30
SETTLE = f"settle {SETTLE_S}"
# init (the guest's shell, alive at both counts) may end the tests mapping
# pages whose anonmm is that of an exited child: after swap pressure, a
# forked child swapped a page they shared back in first, then exec'd or
# exited.  Such a page pins the dead anonmm until a walk of it re-points
# it (anonmm_adopt), as 2004's anonmm did; anon_vma has no such state.
# MADV_PAGEOUT of init's private memory walks each page init maps alone,
# in both kernels; a leaked reference survives it.
PAGEOUT_INIT = "run rmb-pageout pid=1"


@dataclass
class Plan:
    group: str
    lines: list[str] = field(default_factory=list)
    owner: dict = field(default_factory=dict)       # step number -> test
    main: dict = field(default_factory=dict)        # test -> step number

    def add(self, line: str, test: str | None = None,
            main: bool = False) -> int:
        self.lines.append(line)
        number = len(self.lines)
        if test:
            self.owner[number] = test
        if main:
            self.main[test] = number
        return number

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def make_plan(group: str, tests: list[Test]) -> Plan:
    """swapon, idle snapshot, the tests (vmstat around each), swapoff,
    idle snapshot again."""
    plan = Plan(group)
    plan.add("swapon", "boot-swapon", main=True)
    plan.add("section rmapbench cat /proc/rmapbench", "boot")
    plan.add("section meminfo cat /proc/meminfo", "boot")
    plan.add(SNAPSHOT, "boot")
    plan.add("section slab-before cat /proc/slabinfo", "boot")
    for t in tests:
        for line in t.before:
            plan.add(line, t.name)
        # torture reports its own counter deltas; the others get vmstat
        vmstat = t.swap and t.kind != "torture"
        if vmstat:
            plan.add(f"section vmstat-before-{t.name} cat /proc/vmstat",
                     t.name)
        plan.add(t.command, t.name, main=True)
        if vmstat:
            plan.add(f"section vmstat-after-{t.name} cat /proc/vmstat",
                     t.name)
        for line in t.after:
            plan.add(line, t.name)
    # what the tests left, then a walk of every page init maps alone:
    # anonmm orphans that init holds are re-pointed (see PAGEOUT_INIT)
    plan.add(SNAPSHOT, "boot-slabs")
    plan.add("section slab-held cat /proc/slabinfo", "boot-slabs")
    plan.add(PAGEOUT_INIT, "boot-slabs")
    plan.add("swapoff", "boot-swapoff", main=True)
    plan.add(SETTLE, "boot-slabs")
    plan.add("section slab-after cat /proc/slabinfo", "boot-slabs",
             main=True)
    return plan


# ---- reading a boot ---------------------------------------------------------

def step_chunks(text: str) -> tuple[dict[int, list[str]], dict[int, int]]:
    """Console lines by plan step, and the step each console line is in."""
    chunks: dict[int, list[str]] = {0: []}
    line_step: dict[int, int] = {}
    step = 0
    for number, line in enumerate(text.replace("\r", "").splitlines(), 1):
        if line.startswith("RMB-STEP ") and "/" in line.split()[1]:
            step = int(line.split()[1].split("/")[0])
            chunks[step] = []
        chunks[step].append(line)
        line_step[number] = step
    return chunks, line_step


def slab_counts(con: consolemod.Console, name: str) -> dict[str, int]:
    """active_objs of the rmap caches in the slabinfo section name."""
    counts = {}
    for line in con.sections.get(name, []):
        words = line.split()
        if len(words) > 2 and words[0] in RMAP_CACHES and words[1].isdigit():
            counts[words[0]] = int(words[1])
    return counts


def vmstat_delta(con: consolemod.Console, test: str, key: str) -> int | None:
    a = con.section_pairs(f"vmstat-before-{test}")
    b = con.section_pairs(f"vmstat-after-{test}")
    if key not in a or key not in b:
        return None
    return int(b[key]) - int(a[key])


def tap_failures(lines: list[str]) -> list[int]:
    numbers = []
    for line in lines:
        m = re.match(r"not ok (\d+)", line)
        if m:
            numbers.append(int(m.group(1)))
    return numbers


def last_message(lines: list[str]) -> str:
    """The last line a test printed (its skip or failure message)."""
    for line in reversed(lines):
        if line.startswith("RMB-") or re.match(r"\[\s*\d+\.\d+\]", line):
            continue
        if line.strip():
            return line.strip().lstrip("# ")[:200]
    return ""


def compare(value: int, op: str, n: int) -> bool:
    return {"==": value == n, ">": value > n, ">=": value >= n}[op]


def judge_torture(t: Test, step: consolemod.Step, scheme: str
                  ) -> tuple[str, str, dict]:
    summaries = [r for r in step.results if r.get("record") == "summary"]
    if step.errors:
        return FAIL, step.errors[0].get("message", "RMB-ERROR"), {}
    if step.rc != 0:
        return FAIL, f"exit status {step.rc}", {}
    if not summaries:
        return FAIL, "no summary result line", {}
    s = summaries[-1]
    expect = list(t.expect) + registry.expectations(
        scheme, s.get("mode", "all"), s.get("pressure"))
    keys = ("verified_pages", "verify_mismatch_pages",
            "pageout_candidate_pages", "pageout_missed_pages",
            "pressure_swap_ptes_pages", "pswpout_pages", "pswpin_pages",
            "mremap_anon_copy_pages", "anon_rmap_orphan_pages",
            "anon_swapin_copy_pages", "anon_rmap_walk_count",
            "exec_stack_shift_kb", "elapsed_ns")
    details = {k: s[k] for k in keys if k in s}
    for key, op, n in expect:
        value = s.get(key)
        if not isinstance(value, int) or not compare(value, op, n):
            return FAIL, f"{key} = {value}, expected {op} {n}", details
    return PASS, "", details


def judge_selftest(t: Test, arch: str, step: consolemod.Step,
                   lines: list[str]) -> tuple[str, str, dict]:
    name = t.command.split("/")[-1]
    if step.rc == 4:
        return SKIP, f"the test skipped itself: {last_message(lines)}", {}
    failed = tap_failures(lines)
    na, why = SELFTEST_NA.get((name, arch), (set(), ""))
    if step.rc == 0 and not failed:
        return PASS, "", {}
    if failed and set(failed) <= na:
        return PASS, f"not applicable on {arch}: {why}", \
            {"not_ok": failed}
    if failed:
        return FAIL, f"not ok: subtest(s) {', '.join(map(str, failed))}", \
            {"not_ok": failed}
    return FAIL, f"exit status {step.rc}: {last_message(lines)}", {}


def judge_stress(step: consolemod.Step, lines: list[str]
                 ) -> tuple[str, str, dict]:
    bad = [line for line in lines if STRESS_FAIL.search(line)]
    if bad:
        return FAIL, bad[0].strip()[:200], {}
    if step.rc in STRESS_SKIP_RC:
        return SKIP, STRESS_SKIP_RC[step.rc], {}
    if step.rc != 0:
        return FAIL, f"stress-ng exit status {step.rc}: " \
            f"{last_message(lines)}", {}
    return PASS, "", {}


def judge_boot(run: guest.GuestRun, plan: Plan, tests: list[Test],
               kernel: str) -> list[Verdict]:
    """A verdict for every test of the boot and for the boot's checks."""
    text = run.boot.log.read_text(errors="replace")
    chunks, line_step = step_chunks(text)
    steps = {s.number: s for s in run.console.steps}
    scheme = run.console.section_pairs("rmapbench").get("scheme", "unknown")
    # a kernel fault fails the test it happened in and taints what follows
    fault_step, fault = None, None
    if run.console.faults:
        fault = run.console.faults[0]
        fault_step = line_step.get(fault.line_number, 0)
    last = max(steps) if steps else 0
    verdicts = []

    def step_problem(number: int) -> str | None:
        if fault_step is not None and number >= fault_step:
            where = plan.owner.get(fault_step, "boot")
            if number == fault_step or plan.owner.get(number) == where:
                return f"kernel fault ({fault.kind}) at console line " \
                    f"{fault.line_number}"
            return f"after a kernel fault ({fault.kind}) in {where}"
        step = steps.get(number)
        if step is not None and step.rc is not None:
            return None
        if run.boot.timed_out:
            return f"timed out after {run.boot.seconds:.0f}s" \
                if number == last else "not run: the boot timed out"
        return "not run: the guest stopped before it " \
            f"({run.failure or 'no end marker'})"

    for t in tests:
        mine = sorted(n for n, owner in plan.owner.items()
                      if owner == t.name)
        main = plan.main[t.name]
        problems = [p for p in map(step_problem, mine) if p]
        step = steps.get(main)
        seconds = step.ms / 1000 if step and step.ms is not None else None
        if problems:
            verdicts.append(Verdict(t.name, kernel, FAIL, problems[0],
                                    seconds))
            continue
        setup = [n for n in mine if n != main and steps[n].rc != 0]
        if setup:
            verdicts.append(Verdict(
                t.name, kernel, FAIL, f"plan step '{plan.lines[setup[0]-1]}'"
                f" failed (rc {steps[setup[0]].rc})", seconds))
            continue
        lines = chunks.get(main, [])
        if t.kind == "torture":
            v, why, details = judge_torture(t, step, scheme)
        elif t.kind == "selftest":
            v, why, details = judge_selftest(t, run.arch, step, lines)
        else:
            v, why, details = judge_stress(step, lines)
        if v == PASS and t.group == "highmem" and \
                not run.console.meminfo_kb().get("HighTotal"):
            v, why = FAIL, "the guest has no highmem (HighTotal 0)"
        if v == PASS and t.swap and t.kind == "stress":
            out = vmstat_delta(run.console, t.name, "pswpout")
            details["pswpout_pages"] = out
            if not out:
                v, why = FAIL, f"pswpout grew by {out}: the test was " \
                    "meant to push pages out to swap"
        verdicts.append(Verdict(t.name, kernel, v, why, seconds, details))
    verdicts += judge_boot_checks(run, plan, steps, step_problem, kernel,
                                  fault)
    verdicts.append(judge_slabs(run, plan, steps, step_problem, kernel,
                                chunks.get(plan.lines.index(SETTLE) + 1, [])))
    return verdicts


def judge_boot_checks(run, plan, steps, step_problem, kernel, fault
                      ) -> list[Verdict]:
    group = plan.group
    out = []
    # 1. no kernel fault line anywhere in the console
    if fault is not None:
        out.append(Verdict(f"{group}: no kernel fault", kernel, FAIL,
                           f"{fault.kind} at console line "
                           f"{fault.line_number}",
                           details={"excerpt": fault.excerpt}))
    elif run.boot.timed_out or run.console.done_rc is None:
        out.append(Verdict(f"{group}: no kernel fault", kernel, FAIL,
                           run.failure or "the plan did not finish"))
    else:
        out.append(Verdict(f"{group}: no kernel fault", kernel, PASS))
    # 2. swap goes on, and the final swapoff releases every swap entry
    problem = None
    for name in ("boot-swapon", "boot-swapoff"):
        n = plan.main[name]
        problem = problem or step_problem(n) or (
            f"'{plan.lines[n - 1]}' failed (rc {steps[n].rc})"
            if steps[n].rc else None)
    out.append(Verdict(f"{group}: swapon, final swapoff", kernel,
                       FAIL if problem else PASS, problem or ""))
    return out


def left_alive(procs_line: str | None) -> str:
    """The processes SETTLE's RMB-PROCS line names ("" if none or no
    line: a settle step that printed nothing is caught by its rc)."""
    left = procs_line.split()[1:-1] if procs_line else []
    return "" if left == ["none"] else " ".join(left)


def judge_slabs(run, plan, steps, step_problem, kernel,
                settle_lines: list[str]) -> Verdict:
    """Every rmap cache back within IDLE_SLAB_TOLERANCE of its idle count,
    once the tests' processes ended (SETTLE) and init's pages were walked
    (PAGEOUT_INIT)."""
    name = f"{plan.group}: slabs back to idle"
    mine = sorted(n for n, o in plan.owner.items() if o == "boot-slabs")
    problem = next((p for p in map(step_problem, mine) if p), None)
    procs_line = next((ln for ln in settle_lines
                       if ln.startswith("RMB-PROCS ")), None)
    alive = left_alive(procs_line)
    if not problem and alive:
        problem = f"processes still alive {SETTLE_S} s after the tests: " \
            f"{alive}"
    failed = [n for n in mine if steps[n].rc] if not problem else []
    if failed:
        problem = f"'{plan.lines[failed[0] - 1]}' failed " \
            f"(rc {steps[failed[0]].rc})"
    before = slab_counts(run.console, "slab-before")
    held = slab_counts(run.console, "slab-held")
    after = slab_counts(run.console, "slab-after")
    details = {"before": before, "held": held, "after": after,
               "init_pageout": pageout_summary(plan, steps),
               "settle": procs_line}
    if not problem and not before:
        problem = "no slabinfo before the tests"
    scheme = run.console.section_pairs("rmapbench").get("scheme")
    own = registry.by_scheme(str(scheme))
    cache = own.cache if own else None
    if not problem and cache not in before:
        problem = f"the {scheme} kernel has no {cache} " \
            "cache in /proc/slabinfo"
    leaks = {c: after.get(c, 0) - before.get(c, 0) for c in RMAP_CACHES
             if c in before or c in after}
    grown = {c: d for c, d in leaks.items() if abs(d) > IDLE_SLAB_TOLERANCE}
    if not problem and grown:
        problem = "not back to idle (objects): " + ", ".join(
            f"{c} {d:+d}" for c, d in grown.items())
    return Verdict(name, kernel, FAIL if problem else PASS, problem or "",
                   details=details)


def pageout_summary(plan: Plan, steps: dict) -> dict:
    """The counters of the pageout of init: orphans re-pointed, walks."""
    number = plan.lines.index(PAGEOUT_INIT) + 1
    step = steps.get(number)
    rec = next((r for r in (step.results if step else [])
                if r.get("record") == "summary"), {})
    keys = ("advised_kb", "anon_rmap_walk_count", "anon_rmap_orphan_pages",
            "pswpout_pages")
    return {k: rec[k] for k in keys if k in rec}


# ---- the suite --------------------------------------------------------------

def kernel_name(stack: str, arch: str) -> str:
    return f"{stack}/{arch}"


def run_group(stack: str, arch: str, group: Group, tests: list[Test],
              accel: str, logdir: Path) -> tuple[list[Verdict], dict]:
    kernel = kernel_name(stack, arch)
    files, verdicts, skipped = [], [], {}
    if group.selftests:
        more, why = selftest_files(arch)
        files += more
        if why:
            skipped.update({t.name: why for t in tests
                            if t.kind == "selftest"})
    if group.stress:
        more, why = stress_files(arch)
        files += more
        if why:
            skipped.update({t.name: why for t in tests if t.kind == "stress"})
    for t in tests:
        if t.kind == "selftest":
            name = t.command.split("/")[-1]
            if name in SELFTEST_SKIP:
                skipped[t.name] = SELFTEST_SKIP[name]
    verdicts += [Verdict(t.name, kernel, SKIP, skipped[t.name])
                 for t in tests if t.name in skipped]
    run_tests = [t for t in tests if t.name not in skipped]
    plan = make_plan(group.name, run_tests)
    log = logdir / f"{stack}-{arch}-{group.name}.log"
    run = boot(stack, arch, plan.text(), log, group.mem_mb[arch],
               group.timeout_s, accel, files, group.smp)
    verdicts += judge_boot(run, plan, run_tests, kernel)
    mem = run.console.meminfo_kb()
    info = {"kernel": kernel, "group": group.name, "log": str(log),
            "mem_total_kb": mem.get("MemTotal"),
            "high_total_kb": mem.get("HighTotal", 0),
            "seconds": round(run.boot.seconds, 1),
            "scheme": run.console.section_pairs("rmapbench").get(
                "scheme", "unknown"),
            "mem_mb": group.mem_mb[arch], "smp": group.smp,
            "failure": run.failure}
    return verdicts, info


def order(tests: list[Test], groups: list[Group]) -> list[str]:
    names = [t.name for t in tests]
    for g in groups:
        names += [f"{g.name}: no kernel fault",
                  f"{g.name}: swapon, final swapoff",
                  f"{g.name}: slabs back to idle"]
    return names


def verdict_mismatches(verdicts: list[Verdict], stacks: list[str],
                       arches: list[str]) -> list[str]:
    """Tests whose verdict on anonmm differs from anon_vma's (same arch)."""
    if not {"anon_vma", "anonmm"} <= set(stacks):
        return []
    table = {(v.test, v.kernel): v.verdict for v in verdicts}
    out = []
    for test in sorted({v.test for v in verdicts}):
        for arch in arches:
            a = table.get((test, kernel_name("anon_vma", arch)))
            b = table.get((test, kernel_name("anonmm", arch)))
            if a != b:
                out.append(f"{test} on {arch}: anon_vma {a}, anonmm {b}")
    return out


def markdown(verdicts: list[Verdict], kernels: list[str], rows: list[str],
             meta: dict, mismatches: list[str]) -> str:
    table = {(v.test, v.kernel): v for v in verdicts}
    schemes = meta.get("schemes", {})
    head = [f"{k} (runs {schemes[k]})" if schemes.get(k) not in
            (None, k.split("/")[0]) else k for k in kernels]
    variant = meta.get("variant", "none")
    lines = [f"# rmapbench correctness suite ({meta['suite']}"
             + ("" if variant == "none" else f", variant {variant}") + ")",
             "",
             f"{meta['date']}, accel {meta['accel']}, "
             f"{fmt_seconds(meta['seconds'])} in {meta['boots']} boots.", "",
             "| test | " + " | ".join(head) + " |",
             "|---|" + "---|" * len(kernels)]
    for row in rows:
        cells = []
        for k in kernels:
            v = table.get((row, k))
            cells.append("" if v is None else
                         {"pass": "pass", "fail": "**FAIL**",
                          "skip": "skip"}[v.verdict] +
                         ("*" if v and v.verdict == PASS and v.reason else ""))
        if any(cells):
            lines.append(f"| {row} | " + " | ".join(cells) + " |")
    notes = [v for v in verdicts if v.verdict != PASS or v.reason]
    if notes:
        lines += ["", "## Not plain passes", ""]
        for v in sorted(notes, key=lambda v: (rows.index(v.test)
                                              if v.test in rows else 999,
                                              v.kernel)):
            mark = "pass*" if v.verdict == PASS else v.verdict
            lines.append(f"- {v.test} on {v.kernel}: {mark}: {v.reason}")
    lines += ["", "## anonmm against anon_vma", ""]
    lines.append("Every test has the same verdict on both stacks."
                 if not mismatches else
                 "Verdicts differ: " + "; ".join(mismatches))
    lines += ["", "Consoles: " + ", ".join(
        f"`{Path(b['log']).name}`" for b in meta["boot_info"]), ""]
    return "\n".join(lines)


def plain_table(verdicts: list[Verdict], kernels: list[str],
                rows: list[str]) -> str:
    table = {(v.test, v.kernel): v.verdict for v in verdicts}
    width = max(len(r) for r in rows) if rows else 10
    cols = [max(len(k), 4) for k in kernels]
    out = ["  ".join([" " * width] + [k.ljust(c) for k, c in
                                      zip(kernels, cols)])]
    for row in rows:
        cells = [table.get((row, k), "") for k in kernels]
        if any(cells):
            out.append("  ".join([row.ljust(width)] + [
                (c.upper() if c == FAIL else c).ljust(w)
                for c, w in zip(cells, cols)]))
    return "\n".join(out)


def default_out_dir() -> Path:
    return paths.RESULTS / (f"check-{time.strftime('%Y%m%d-%H%M%S')}"
                            f"{paths.variant_suffix()}")


def run_check(stacks: list[str], arches: list[str], accel: str, quick: bool,
              out_dir: Path) -> int:
    """Run the quick or full suite on every stack x arch; write
    check.md and check.json into out_dir and print the table.
    0: no test failed and anonmm's verdicts equal anon_vma's; else 1."""
    for stack in stacks:
        for arch in arches:
            if not paths.kernel_image(stack, arch).exists():
                raise UserError(f"no {stack} kernel for {arch}: run "
                                f"'harness.py build --stack {stack} "
                                f"--arch {arch}' (or 'make kernels')")
    accel = guest.choose_accel(accel)
    groups, tests = catalogue(quick)
    logdir = out_dir / "logs"
    logdir.mkdir(parents=True, exist_ok=True)
    jobs = [(s, a, g) for s in stacks for a in arches for g in groups
            if a in g.mem_mb and any(t.group == g.name and a in t.arches
                                     for t in tests)]
    progress = Progress(len(jobs), "check")
    start = time.monotonic()
    verdicts, boots = [], []
    for stack, arch, group in jobs:
        mine = [t for t in tests if t.group == group.name and arch in t.arches]
        progress.note(f"{stack} {arch} {group.name}: {len(mine)} tests "
                      f"({accel})")
        v, info = run_group(stack, arch, group, mine, accel, logdir)
        progress.step_done()
        bad = [x for x in v if x.verdict == FAIL]
        print(f"  {stack} {arch} {group.name}: "
              f"{sum(x.verdict == PASS for x in v)} pass, {len(bad)} fail, "
              f"{sum(x.verdict == SKIP for x in v)} skip "
              f"({info['seconds']:.0f}s)", flush=True)
        for x in bad:
            print(f"    FAIL {x.test}: {x.reason}", flush=True)
        verdicts += v
        boots.append(info)
    kernels = [kernel_name(s, a) for s in stacks for a in arches]
    rows = order(tests, groups)
    mismatches = verdict_mismatches(verdicts, stacks, arches)
    schemes = {}
    for b in boots:
        schemes.setdefault(b["kernel"], b["scheme"])
    meta = {"suite": "quick" if quick else "full", "accel": accel,
            "variant": paths.variant() or "none",
            "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            "seconds": round(time.monotonic() - start, 1),
            "boots": len(boots), "boot_info": boots, "schemes": schemes,
            "qemu": qemu.qemu_version(), "slub_debug": CHECK_APPEND,
            "idle_slab_tolerance_objs": IDLE_SLAB_TOLERANCE}
    failed = [v for v in verdicts if v.verdict == FAIL]
    (out_dir / "check.md").write_text(markdown(verdicts, kernels, rows,
                                               meta, mismatches))
    (out_dir / "check.json").write_text(json.dumps({
        **meta, "kernels": kernels, "tests": rows,
        "verdicts": [v.__dict__ for v in verdicts],
        "mismatches": mismatches,
        "tests_info": [{"name": t.name, "kind": t.kind, "group": t.group,
                        "command": t.command, "what": t.what,
                        "arches": list(t.arches)} for t in tests]},
        indent=1) + "\n")
    print(plain_table(verdicts, kernels, rows))
    for m in mismatches:
        print(f"verdicts differ: {m}")
    print(f"{len(failed)} failed, {len(mismatches)} differing between the "
          f"stacks, in {fmt_seconds(meta['seconds'])}; "
          f"table: {out_dir / 'check.md'}", flush=True)
    return 1 if failed or mismatches else 0
