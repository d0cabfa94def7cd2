"""The suite's boots: their plan, kernel arguments and image extras.

Each boot runs the tests of one group on one kernel: swap on, an idle
count of the rmap's slab caches, the tests (vmstat around those that
must swap), then what the tests left, swapoff, a walk of init's pages,
a settle and the final idle count (boot_checks.py judges the two).
"""

from .. import extras, iface, paths, plan, qemu, settings, testbed
from .catalogue import SELFTEST_SKIP, Group, Test, selftest_name
from ..profiles import MINIMAL

# SLUB debugging (sanity checks, red zones, poisoning, owner tracking) on
# the caches of the rmap: a use-after-free or overflow of one of their
# objects prints "BUG <cache>: ..." (a kernel fault line), and debug
# caches keep no per-CPU slabs, so /proc/slabinfo's active_objs is exact.
RMAP_CACHES = iface.slabs(iface.RMAP)
CHECK_APPEND = "slub_debug=FZPU," + ",".join(RMAP_CACHES)
SWAP_MB = 512

# The rmap caches' counts, read once they have held still for a second
# (bench/rmb-idle): objects freed through call_rcu() (anonmm's, the
# reading process's own forked member among them) are then gone, so two
# counts of the same idle state are equal, however slow the grace period.
IDLE = plan.run("rmb-idle")
# Before the final slab count, every user process but init must have
# ended (a test's descendant may still be exiting after the test returned:
# a process still alive holds its mm, its anonmm and the anonmms of the
# exited parents whose pages it maps), then 3 s pass for the call_rcu()
# frees of anonmm objects.  Processes still alive then fail the row.
SETTLE_S = 30
SETTLE = plan.settle(SETTLE_S)
# init (the guest's shell, alive at both counts) may end the tests mapping
# pages whose anonmm is that of an exited child: after swap pressure, a
# forked child swapped a page they shared back in first, then exec'd or
# exited.  Such a page pins the dead anonmm until a walk of it re-points
# it (anonmm_adopt), as 2004's anonmm did; anon_vma has no such state.
# MADV_PAGEOUT of init's private memory walks each page init maps alone,
# in both kernels; a leaked reference survives it.  It runs after swapoff:
# with swap on, a child of init forked later (swapoff itself, settle's
# helpers) could swap in one of init's pages first and leave it pinning
# its anonmm again after the walk (an orphan the final slab count takes
# for a leak).  With swap off nothing can, and the walk still happens
# (reclaim checks references before it looks for swap).
PAGEOUT_INIT = plan.run("rmb-pageout", "pid=1")
# DEBUG_VM kernels list their live anonmm objects: owner, refcount, pages
# pointing at each (kernels/anonmm 0013); the row's details keep it.
ANONMM_LIST = plan.sh("test -r /proc/anonmm && cat /proc/anonmm; true")

# The owners of the boot's own steps (plan.Plan.owner) and the rows the
# boot checks add to the table, in order.
SWAPON, SWAPOFF, SLABS = "boot-swapon", "boot-swapoff", "boot-slabs"
IDLE_BEFORE = "boot-idle"
BOOT_ROWS = ("no kernel fault", "swapon, final swapoff", "slabs back to idle")


def vmstat_section(test: Test, when: str) -> str:
    return plan.proc(f"vmstat-{when}-{test.name}", "/proc/vmstat")


def make_plan(group: str, tests: list[Test]) -> plan.Plan:
    """swapon, idle count, the tests (vmstat around each that must swap),
    swapoff, a walk of init's pages, idle count again."""
    p = plan.Plan(name=group)
    p.add(plan.swapon(), SWAPON, main=True)
    p.add(plan.proc("rmapbench", "/proc/rmapbench"), "boot")
    p.add(plan.proc("meminfo", "/proc/meminfo"), "boot")
    p.add(IDLE, IDLE_BEFORE, main=True)
    for t in tests:
        for line in t.before:
            p.add(line, t.name)
        # torture reports its own counter deltas; the others get vmstat
        vmstat = t.swap and t.kind != "torture"
        if vmstat:
            p.add(vmstat_section(t, "before"), t.name)
        p.add(t.command, t.name, main=True)
        if vmstat:
            p.add(vmstat_section(t, "after"), t.name)
        for line in t.after:
            p.add(line, t.name)
    # what the tests left; swap off; a walk of every page init maps
    # alone, re-pointing the anonmm orphans init holds (PAGEOUT_INIT);
    # every process but init gone; the idle count again
    p.add(IDLE, SLABS)
    p.add(plan.swapoff(), SWAPOFF, main=True)
    p.add(PAGEOUT_INIT, SLABS)
    p.add(SETTLE, SLABS)
    p.add(IDLE, SLABS, main=True)
    p.add(ANONMM_LIST, SLABS)
    return p


def files_and_skips(tests: list[Test], arch: str
                    ) -> tuple[extras.Files, dict[str, str]]:
    """The image extras the tests need on arch, and the tests that
    cannot run (name -> why): their extra is missing, the test is known
    not to run on these kernels, or it needs a debug variant these are
    not."""
    needed = tuple(dict.fromkeys(t.extra for t in tests if t.extra))
    files, missing = extras.resolve(needed, arch)
    skipped = {t.name: missing[t.extra] for t in tests
               if t.extra in missing}
    variant = paths.variant()
    for t in tests:
        if t.kind == "selftest" and selftest_name(t) in SELFTEST_SKIP:
            skipped[t.name] = SELFTEST_SKIP[selftest_name(t)]
        if t.variants and variant not in t.variants:
            skipped[t.name] = "runs on the " + " or ".join(
                v or "measured" for v in t.variants) + " kernels only " \
                f"({how_to_run(t.variants[0])})"
    return files, skipped


def how_to_run(variant: str) -> str:
    """The make command that runs the suite on variant's kernels."""
    if variant:
        return f"make check-variant VARIANT={variant}"
    return "make check-kernels"


def boot_append(group_append: str = "") -> str:
    """The suite's kernel arguments, the debug variant's and the
    group's added."""
    extra = testbed.current_variant().append
    return " ".join(a for a in (CHECK_APPEND, extra, group_append) if a)


def boot_of(stack: str, arch: str, group: Group, smp: int,
            test_plan: plan.Plan, files: extras.Files,
            profile: str = MINIMAL) -> qemu.Boot:
    return qemu.Boot(stack, arch, test_plan.text(),
                     mem_mb=group.mem_mb[arch], timeout_s=group.timeout_s,
                     swap_mb=settings.swap_disk_mb(group.append, SWAP_MB),
                     smp=smp, append=boot_append(group.append),
                     files=files, clock=group.clock, profile=profile)
