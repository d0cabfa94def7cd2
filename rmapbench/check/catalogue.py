"""The correctness suite's catalogue: its tests and the boots they run in.

docs/correctness.md has the list, what each test checks and what is
left out and why.  A test is one main plan line (with set-up and
tear-down lines around it) of a kind whose judge reads its output
(judges.py) and whose files come from an image extra (extras.py).
"""

from dataclasses import dataclass

from .. import plan, settings, testbed

# The selftests of tools/testing/selftests/vm that are built (selftests.mk
# SELFTESTS) and what the suite knows about them.
SELFTESTS = ("mremap_test", "mremap_dontunmap", "mlock2-tests",
             "mlock-random-test", "map_fixed_noreplace", "map_populate",
             "madv_populate", "mrelease_test", "soft-dirty", "userfaultfd",
             "split_huge_page_test", "ksm_tests")
# What a selftest needs beyond the base kernels, where it runs and how:
# its arguments, the profile features it needs, its arches (migration
# links libnuma, static for amd64 only), its vCPUs (migration runs a
# thread per CPU but one, and skips every subtest with fewer than two of
# them: it needs three CPUs)
SELFTEST_ARGS = {"userfaultfd": "anon 16 8"}
# Selftests run more than once, each run a test of its own (its name
# suffixed): the runs run_vmtests.sh makes
SELFTEST_RUNS = {"ksm_tests": (("merge", "-M -p 10"), ("unmerge", "-U"),
                               ("zero-pages", "-Z -p 10 -z 0"),
                               ("zero-pages-merged", "-Z -p 10 -z 1"),
                               ("numa-merge-across", "-N -m 1"),
                               ("numa-merge-within", "-N -m 0"))}
SELFTEST_NEEDS = {"userfaultfd": ("userfaultfd",), "migration": ("numa",),
                  "split_huge_page_test": ("thp",), "ksm_tests": ("ksm",)}
SELFTEST_ARCHES = {"migration": ("x86_64",),
                   "split_huge_page_test": ("x86_64",),
                   "ksm_tests": ("x86_64",)}
SELFTEST_VCPUS = {"migration": 4}
# Selftests whose skipped subtests tested nothing the suite can do
# without: a skip fails them
SELFTEST_NO_SKIP = {"migration": "a skipped subtest migrated nothing"}
QUICK_SELFTESTS = ("mremap_dontunmap", "madv_populate", "mrelease_test",
                   "mlock2-tests", "userfaultfd")
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
# Selftests without TAP numbers whose run ends in a part that cannot
# pass where it runs, for reasons of the test itself: (name, where) ->
# the error line that part fails with, the line that shows everything
# before it passed, and why.  where is a scheme ("anonmm": a difference
# by design) or "no-thp" (a guest without THP: RMB-FEATURES has no
# thp).  The test passes (pass*) when it failed with that error alone.
SELFTEST_NA_END = {
    ("userfaultfd", "no-thp"): (
        "ERROR: madvise(MADV_NOHUGEPAGE) failed (errno=22",
        "bounces: 0,",
        "its last part, uffd-wp with pagemap, needs MADV_NOHUGEPAGE (THP), "
        "off in both stacks until issue 27; every bounce of its stress "
        "(missing and write-protect faults) passed before it"),
    # it runs where MEM_SOFT_DIRTY is on (the distro kernels)
    ("soft-dirty", "no-thp"): (
        "Bail out! Open hpage_pmd_size failed",
        "ok 3 ",
        "its huge page part (subtests 4 on) reads THP's hpage_pmd_size, "
        "off in both stacks until issue 27; subtests 1 to 3 passed "
        "before it"),
    ("split_huge_page_test", "anonmm"): (
        "Some THPs are missing during mremap",
        "Split huge pages successful",
        "split_pte_mapped_thp mremaps one page out of each of four THPs "
        "and wants it still backed by its THP; under anonmm a page's "
        "address is its folio's index plus its offset, so mremap splits "
        "a folio it moves part of (docs/thp-design.md 1.4); "
        "split_pmd_thp passed before it, and the file-backed part that "
        "follows is shmem's rmap, the same in both stacks (it runs on "
        "anon_vma)"),
}


def selftest_na_where(scheme: str, features: dict) -> tuple[str, ...]:
    """The SELFTEST_NA_END conditions a guest meets: its scheme, and
    no-thp where its init found no THP."""
    return (scheme,) + (() if "thp" in features else ("no-thp",))


# Setup and tear-down plan lines around a selftest.
SELFTEST_WRAP = {
    # its 2 GB shared regions are only mapped, never touched: the
    # overcommit heuristic would refuse them in a small guest
    "mremap_test": ([plan.sh("echo 1 >/proc/sys/vm/overcommit_memory")],
                    [plan.sh("echo 0 >/proc/sys/vm/overcommit_memory")]),
}

# The image extra each kind of test needs (torture, race and inject are
# programs of the base image, judged by their summary line).
KIND_EXTRA = {"torture": None, "race": None, "inject": None, "orphan": None,
              "forkcopy": None, "migrate": None, "hwpoison": None,
              "family": None, "selftest": "selftests", "stress": "stress-ng"}
SUMMARY_KINDS = ("torture", "race", "inject", "orphan", "forkcopy",
                 "migrate", "hwpoison", "family")


@dataclass(frozen=True)
class Test:
    name: str
    kind: str                   # torture | selftest | stress (KIND_EXTRA)
    group: str                  # the boot it runs in
    command: str                # the main plan line
    what: str                   # one line for the docs and the table
    arches: tuple[str, ...] = testbed.arch_names()
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    swap: bool = False          # it must push pages out (pswpout grows)
    expect: tuple[tuple[str, str, int], ...] = ()   # torture: (field, op, n)
    # vCPUs of its boot; None: the group's.  Tests of a group that ask
    # for other counts run in boots of their own.
    vcpus: int | None = None
    # the debug variants it runs on (kernels/debug/<name>.config);
    # empty: every kernel
    variants: tuple[str, ...] = ()
    # profile features it needs (profiles.FEATURES): it runs on the
    # kernels of the profiles that have them only
    needs: tuple[str, ...] = ()

    @property
    def extra(self) -> str | None:
        return KIND_EXTRA[self.kind]


@dataclass(frozen=True)
class Group:
    name: str
    mem_mb: dict
    timeout_s: float
    smp: int = 1
    append: str = ""            # kernel arguments its boots add
    clock: str = testbed.HOST   # testbed.CLOCKS


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
    "numa": ("--numa 2", "numa: mbind, migrate_pages and move_pages of "
             "anonymous pages between the nodes"),
    "userfaultfd": ("--userfaultfd 2 --userfaultfd-bytes 16M",
                    "userfaultfd: missing-page faults served by "
                    "UFFDIO_COPY and ZEROPAGE"),
    "ksm-thp": ("--vm 2 --vm-bytes 32M --vm-madvise mergeable --verify "
                "--madvise 2 --mmaphuge 1",
                "vm over mergeable buffers with ksmd running, madvise "
                "(MADV_MERGEABLE and MADV_HUGEPAGE among its advice) and "
                "mmaphuge (THP-sized mappings), verified"),
}
# the profile features a stressor needs (Test.needs)
STRESS_NEEDS = {"numa": ("numa",), "userfaultfd": ("userfaultfd",),
                "ksm-thp": ("ksm", "thp")}
# plan lines around a stressor: ksmd running fast, then everything
# unmerged and ksmd stopped
KSMD_ON = plan.sh("echo 5 >/sys/kernel/mm/ksm/sleep_millisecs && "
                  "echo 1000 >/sys/kernel/mm/ksm/pages_to_scan && "
                  "echo 1 >/sys/kernel/mm/ksm/run")
KSMD_OFF = plan.sh("echo 2 >/sys/kernel/mm/ksm/run")
STRESS_WRAP = {"ksm-thp": ([KSMD_ON], [KSMD_OFF])}


def smp_suffix(vcpus: int | None) -> str:
    """What names a test's SMP copy apart: '-smp2', or '' for the
    group's own vCPUs."""
    return f"-smp{vcpus}" if vcpus else ""


def torture_test(mode: str, group: str, args: str, name: str | None = None,
                 pressure: bool = True) -> Test:
    what, extra = TORTURE_MODE.get(mode, ("every scenario in turn", ()))
    expect = TORTURE_ALWAYS + extra + (TORTURE_PRESSURE if pressure else ())
    return Test(name or f"torture-{mode}", "torture", group,
                plan.run("rmb-torture", f"mode={mode} {args}".strip()), what,
                expect=expect, swap=True)


# rmb-race: every round must pass, and its pages must have gone out (else
# nothing was checked); mremap-swapin only races on two CPUs or more,
# mremap-kill (a kill against a move) on one too
RACE_EXPECT = (("rounds_count", ">", 0), ("failed_rounds_count", "==", 0),
               ("checked_count", "==", 1), ("not_swapped_count", "==", 0))
# a race opens on two CPUs or more; a THP mode must have faulted THPs
TWO_CPUS = ("cpus_count", ">=", 2)
THP_FAULTED = ("thp_fault_alloc_count", ">", 0)
RACE_MODE = {
    "mremap-swapin": ("mremap racing a sibling's swap-in of the same pages, "
                      "pinned to two CPUs, round after round",
                      (TWO_CPUS,)),
    "mremap-kill": ("a child killed in the middle of moving whole page "
                    "tables it shares with its parent: the move goes "
                    "back; the parent's pages hold and are found", ()),
    "thp-mremap": ("THPs shared by fork moved (pmd-aligned, then one page "
                   "off) while the child pushes them out, COW-writes them "
                   "or mprotects half of them, on two CPUs",
                   (TWO_CPUS,
                    THP_FAULTED)),
    "thp-split": ("THPs shared by fork split by the parent (debugfs) while "
                  "the child mprotects (a contended member), swaps in, "
                  "moves a huge page away and back, forks and exits, or "
                  "drops a page of each THP, on two CPUs",
                  (TWO_CPUS,
                   THP_FAULTED,
                   ("thp_split_page_count", ">", 0))),
    "collapse-fork": ("base pages shared by fork, a PTE-mapped THP and swap "
                      "entries among them, collapsed by the parent "
                      "(MADV_COLLAPSE) while the child forks and exits, "
                      "COW-writes or swaps in, on two CPUs",
                      (TWO_CPUS,
                       ("thp_collapse_alloc_count", ">", 0))),
    "thp-swap": ("THPs shared by fork pushed out by a balloon's pressure "
                 "while the child mprotects (a contended member) or swaps "
                 "them in, on two CPUs",
                 (TWO_CPUS,
                  THP_FAULTED)),
    "ksm": ("pages merged by ksmd, shared with an unrelated process, moved, "
            "pressed out, migrated while a forked child swaps, COW-writes or "
            "unmerges them, on two CPUs; then everything unmerged",
            (TWO_CPUS, ("not_merged_count", "==", 0),
             ("ksm_rmap_walk_count", ">", 0))),
}
# the profile features a race mode needs (Test.needs)
RACE_NEEDS = {"thp-mremap": ("thp",), "thp-split": ("thp",),
              "collapse-fork": ("thp",), "thp-swap": ("thp",),
              "ksm": ("ksm",)}

# 16 MB: four page tables on i386, eight on x86_64; 19 rounds: two kills
# at each tenth of a move from 10% to 90%
RACE_KILL_ARGS = "pages=4096 rounds=19"
# two 4 MB spans of THPs; 36 rounds: each of the child's three actions
# against both kinds of move, six times
RACE_THP_ARGS = "pages=2048 rounds=36"
# two 4 MB spans; thp-split: each of the child's five actions six times;
# collapse-fork: each of three actions with and without a PTE-mapped THP,
# three times; thp-swap: each of two actions six times (a balloon a round)
RACE_THP_MODE_ARGS = {"thp-split": "pages=2048 rounds=30",
                      "collapse-fork": "pages=2048 rounds=18",
                      "thp-swap": "pages=2048 rounds=12"}
# 18 rounds: each of the child's three actions against each of the
# parent's three, twice
RACE_KSM_ARGS = "pages=512 rounds=18"


def race_test(mode: str, group: str, args: str, vcpus: int | None = None
              ) -> Test:
    suffix = smp_suffix(vcpus)
    what, extra = RACE_MODE[mode]
    return Test(f"race-{mode}{suffix}", "race", group,
                plan.run("rmb-race", f"mode={mode} {args}".strip()),
                what, swap=True, expect=RACE_EXPECT + extra, vcpus=vcpus,
                needs=RACE_NEEDS.get(mode, ()))


# rmb-inject: injection set up, operations done (moves of whole tables
# failed too, and moves that had to come back with every allocation and
# folio trylock failing), no page wrong, and no sweep cut off before the
# operation ran out of allocations to fail
INJECT_EXPECT = (("injectable_count", "==", 1), ("operations_count", ">", 0),
                 ("failed_calls_count", ">", 0), ("mismatch_pages", "==", 0),
                 ("exhausted_sweeps_count", "==", 0),
                 ("tables_failed_count", ">", 0),
                 ("back_failed_count", ">", 0))


# rmb-orphan: what an orphan pins, a walk frees (the scheme's own rule in
# the testbed says what it pins)
ORPHAN_EXPECT = (("checked_count", "==", 1), ("left_objs_count", "==", 0),
                 ("verify_mismatch_pages", "==", 0))


def orphan_test(group: str) -> Test:
    return Test("orphan", "orphan", group, plan.run("rmb-orphan"),
                "pages a child swapped in first, then exited: they pin "
                "its rmap object until a walk (anonmm), or nothing "
                "(anon_vma); the slab count shows which", swap=True,
                expect=ORPHAN_EXPECT)


def forkcopy_test(group: str) -> Test:
    return Test("fork-file-cow", "forkcopy", group, plan.run("rmb-forkcopy"),
                "fork of private file mappings holding anon pages (written, "
                "swapped, written through /proc/self/mem, made read-only) "
                "and of one holding none: the child sees each page right",
                swap=True, expect=(("cases_count", ">", 0),
                                   ("verified_pages", ">", 0),
                                   ("verify_mismatch_pages", "==", 0)))


# rmb-migrate: every page right in every member; on a kernel with
# compaction the program itself fails a run that migrated nothing
MIGRATE_EXPECT = (("checked_count", "==", 1), ("verified_pages", ">", 0),
                  ("verify_mismatch_pages", "==", 0),
                  ("workers_failed_count", "==", 0))


def migrate_test(group: str, args: str, vcpus: int | None = None) -> Test:
    suffix = smp_suffix(vcpus)
    return Test(f"migrate-compact{suffix}", "migrate", group,
                plan.run("rmb-migrate", args),
                "pages a bundle shares, migrated by compaction round after "
                "round while its members mprotect, mremap, page out, exit "
                "and fork", swap=False, expect=MIGRATE_EXPECT, vcpus=vcpus,
                needs=("migration",))


def memcg_test(group: str) -> Test:
    t = torture_test("all", group, "pages=512 N=4", name="torture-memcg")
    return Test(t.name, t.kind, t.group, t.command,
                "every scenario on 2 vCPUs inside a memory cgroup (75% of "
                "the guest): the bundle's pages reclaimed by memcg "
                "reclaim", arches=("x86_64",), expect=t.expect, swap=True,
                needs=("memcg",))


def zram_tests(group: str) -> list[Test]:
    """The torture and the swap races swapping to zram: a synchronous
    swap device, whose swap-in of a page mapped once skips the swap cache
    (SWP_SYNCHRONOUS_IO), and a non-rotational one, where THPs are
    swapped out whole: paths the disk never takes."""
    t = torture_test("all", group, "pages=512 N=4", name="torture-zram")
    r = race_test("mremap-swapin", group, "pages=256 rounds=600")
    h = race_test("thp-swap", group, RACE_THP_MODE_ARGS["thp-swap"])
    return [Test(t.name, t.kind, t.group, t.command,
                 "every scenario on 2 vCPUs, swapping to zram",
                 expect=t.expect, swap=True),
            Test(f"{r.name}-zram", r.kind, r.group, r.command,
                 f"{r.what}, swapping to zram", expect=r.expect, swap=True),
            # zram is not rotational: swap clusters, so a THP goes out
            # whole (THP_SWAP), which a disk's swap (no clusters) never
            # does: thp_swpout must count
            Test(f"{h.name}-zram", h.kind, h.group, h.command,
                 f"{h.what}, swapping to zram (THPs swapped out whole)",
                 expect=h.expect + (("thp_swpout_count", ">", 0),),
                 swap=True, needs=h.needs)]


# rmb-swap's family at the points where a kernel hung in reclaim
# (docs/correctness.md, "Small nodes"): its members and working set, and
# what hung there; every page is verified when the run ends
FAMILY_POINTS = (("N=16 mb=64", "16 members, 64 MB: anonmm hung while "
                  "the leader forked, every walk stopped at the child "
                  "fork was building"),
                 ("N=12 mb=72", "12 members, 72 MB: anon_vma hung with "
                  "its members throttled on node 0, which kswapd "
                  "calls balanced"),
                 ("N=20 mb=72", "20 members, 72 MB: anon_vma hung so "
                  "too"))
# The measured kernels ("") and debugvm: lockdep's tables leave a 64 MB
# guest too little for the family, which is OOM-killed (docs/correctness.md)
FAMILY_VARIANTS = ("", "debugvm")
FAMILY_EXPECT = (("verified_pages", ">", 0),
                 ("verify_mismatch_pages", "==", 0),
                 ("fill_pswpout_pages", ">", 0))


def family_tests(group: str) -> list[Test]:
    """The swap family at the points where a kernel hung in reclaim: a
    hang times the boot out and fails every test of it."""
    return [Test(f"family-{args.replace('=', '').replace(' ', '-')}",
                 "family", group,
                 plan.run("rmb-swap", f"mode=family {args} passes=2"),
                 what, arches=("x86_64",), swap=True, expect=FAMILY_EXPECT,
                 needs=("numa",), variants=FAMILY_VARIANTS)
            for args, what in FAMILY_POINTS]


def offline_test(group: str, args: str) -> Test:
    return Test("migrate-offline", "migrate", group,
                plan.run("rmb-migrate", f"mode=offline {args}"),
                "pages a bundle shares, migrated by memory blocks of "
                "ZONE_MOVABLE taken offline and online again, round after "
                "round, while its members mprotect, mremap, page out, exit "
                "and fork", swap=False, arches=("x86_64",),
                expect=(*MIGRATE_EXPECT, ("offlined_count", ">", 0),
                        ("offline_interrupted_count", "==", 0)),
                needs=("migration", "hotremove"))


# rmb-hwpoison: every touch of the poisoned page in every member ends in
# SIGBUS BUS_MCEERR_AR (and, early, every member had BUS_MCEERR_AO first),
# the injection never failed, and no other page changed
HWPOISON_EXPECT = (("checked_count", "==", 1), ("poisoned_pages", ">", 0),
                   ("inject_failed_count", "==", 0),
                   ("sigbus_ar_count", ">", 0), ("missed_count", "==", 0),
                   ("wrong_signal_count", "==", 0),
                   ("early_missed_count", "==", 0),
                   ("workers_failed_count", "==", 0),
                   ("verified_pages", ">", 0),
                   ("verify_mismatch_pages", "==", 0))
HWPOISON_MODE = {
    "hwpoison": ("mode=late", "a page a bundle maps, poisoned "
                 "(MADV_HWPOISON): every member's touch gets SIGBUS "
                 "BUS_MCEERR_AR, every other page holds"),
    "hwpoison-contend": ("mode=late contend=1", "the same while every "
                         "member mprotects in a loop (mmap_lock write "
                         "contention under the unmap's walk)"),
    "hwpoison-early": ("mode=early contend=1", "early-kill members, "
                       "mprotecting: each gets BUS_MCEERR_AO at once "
                       "(collect_procs finds it), then BUS_MCEERR_AR"),
}
# 8 members, 8 pages poisoned, 32 kB of the guest lost per test
HWPOISON_ARGS = "workers=8 pages=64 rounds=8"


def hwpoison_test(name: str, group: str, vcpus: int | None = None) -> Test:
    """Memory failure: CONFIG_MEMORY_FAILURE is in the distro profile
    only (the test needs memory_failure)."""
    args, what = HWPOISON_MODE[name]
    return Test(f"{name}{smp_suffix(vcpus)}", "hwpoison", group,
                plan.run("rmb-hwpoison", f"{args} {HWPOISON_ARGS}"), what,
                expect=HWPOISON_EXPECT, vcpus=vcpus,
                needs=("memory_failure",))


def inject_test(group: str) -> Test:
    return Test("inject", "inject", group, plan.run("rmb-inject"),
                "the n-th allocation of mremap (alone, shared, swapped; "
                "then every allocation and folio trylock of its move "
                "back), fork, exec and a swap-in copy fails, for every n: "
                "data intact, nothing leaked", swap=True, expect=INJECT_EXPECT,
                variants=("faultinject",))


def selftest(name: str, group: str, run: str = "",
             args: str | None = None) -> Test:
    before, after = SELFTEST_WRAP.get(name, ([], []))
    args = SELFTEST_ARGS.get(name, "") if args is None else args
    suffix = f"-{run}" if run else ""
    return Test(f"selftest-{name}{suffix}", "selftest", group,
                plan.run(f"selftests/{name}", args),
                f"tools/testing/selftests/vm/{name} {args}".strip(),
                arches=SELFTEST_ARCHES.get(name, testbed.arch_names()),
                before=tuple(before), after=tuple(after),
                vcpus=SELFTEST_VCPUS.get(name),
                needs=SELFTEST_NEEDS.get(name, ()))


def selftests(name: str, group: str) -> list[Test]:
    """A selftest's test, or one per run of SELFTEST_RUNS."""
    return [selftest(name, group, run, args)
            for run, args in SELFTEST_RUNS.get(name, (("", None),))]


def selftest_name(t: Test) -> str:
    """The selftest program a selftest Test runs."""
    return t.command.split("/")[-1].split()[0]


def stress_test(name: str, group: str, seconds: int) -> Test:
    args, what = STRESSORS[name]
    before, after = STRESS_WRAP.get(name, ([], []))
    return Test(f"stress-{name}", "stress", group,
                plan.sh(f"cd /tmp && stress-ng {args} --timeout {seconds}s "
                        "--metrics-brief"), what,
                arches=testbed.arches_with("stress-ng"),
                before=tuple(before), after=tuple(after),
                swap=name == "swap-pressure",
                needs=STRESS_NEEDS.get(name, ()))


# A 64 MB guest of the distro profile: two 32 MB nodes, the kernel image
# in node 0's DMA32 zone (whose watermarks are 0), swapping to zram,
# whose compressed pages fill node 0; on the icount clock, where a boot
# repeats closely enough for a hang found at a point to be met again.
SMALL_NODES = Group("smallnodes", {"x86_64": 64}, 600.0,
                    append=settings.setting("zram").args,
                    clock=testbed.ICOUNT)


def quick_catalogue() -> tuple[list[Group], list[Test]]:
    # two vCPUs: the torture's members, kswapd and the race's two sides
    # really run at once (MTTCG)
    groups = [Group("quick", {"i386": 192, "x86_64": 256}, 900.0, smp=2),
              SMALL_NODES]
    tests = [torture_test(m, "quick", "pages=256 N=4") for m in TORTURE_MODE]
    tests.append(race_test("mremap-swapin", "quick", "pages=256 rounds=300"))
    tests.append(race_test("mremap-kill", "quick", RACE_KILL_ARGS))
    tests.append(orphan_test("quick"))
    tests.append(forkcopy_test("quick"))
    tests.append(migrate_test("quick", "workers=8 pages=512 rounds=12"))
    tests.append(hwpoison_test("hwpoison-contend", "quick"))
    tests += [selftest(n, "quick") for n in QUICK_SELFTESTS]
    tests += [stress_test("swap-pressure", "quick", 8)]
    tests += family_tests(SMALL_NODES.name)
    return groups, tests


def ksm_torture_test(group: str, vcpus: int) -> Test:
    """The torture with ksmd merging what its members write alike."""
    t = torture_test("ksm", group, "pages=512 N=4",
                     name=f"torture-ksm-smp{vcpus}")
    return Test(t.name, t.kind, t.group, t.command,
                f"every scenario on {vcpus} vCPUs over MERGEABLE regions "
                "that the members write alike, ksmd merging them across "
                "the family and its exec'd members", expect=t.expect +
                (("ksm_rmap_walk_count", ">", 0),), swap=True, vcpus=vcpus,
                before=(KSMD_ON,), after=(KSMD_OFF,), needs=("ksm",))


def smp_tests(group: str, vcpus: int) -> list[Test]:
    """The torture and the race on an SMP guest of vcpus vCPUs."""
    t = torture_test("all", group, "pages=512 N=4",
                     name=f"torture-all-smp{vcpus}")
    return [Test(t.name, t.kind, t.group, t.command,
                 f"every scenario on {vcpus} vCPUs", expect=t.expect,
                 swap=True, vcpus=vcpus),
            race_test("mremap-swapin", group, "pages=256 rounds=600",
                      vcpus=vcpus),
            race_test("mremap-kill", group, RACE_KILL_ARGS, vcpus=vcpus),
            race_test("thp-mremap", group, RACE_THP_ARGS, vcpus=vcpus),
            *(race_test(mode, group, args, vcpus=vcpus)
              for mode, args in RACE_THP_MODE_ARGS.items()),
            race_test("ksm", group, RACE_KSM_ARGS, vcpus=vcpus),
            ksm_torture_test(group, vcpus),
            migrate_test(group, "workers=8 pages=512 rounds=12", vcpus=vcpus),
            hwpoison_test("hwpoison-contend", group, vcpus=vcpus),
            hwpoison_test("hwpoison-early", group, vcpus=vcpus)]


def full_catalogue() -> tuple[list[Group], list[Test]]:
    groups = [Group("torture", {"i386": 192, "x86_64": 192}, 1200.0),
              Group("highmem", {"i386": 1024}, 900.0),
              # x86_64 256 MB: a THP fault of a MADV_HUGEPAGE range takes
              # its node's memory only (6.1), and in 192 MB node 0 of a
              # KASAN kernel had no free 2 MB block for
              # split_huge_page_test (docs/correctness.md)
              Group("selftests", {"i386": 192, "x86_64": 256}, 600.0),
              # two vCPUs: the stressors (two of each) and kswapd really
              # run at once (MTTCG), racing faults, fork, mremap, exit
              # against the rmap walks of reclaim
              Group("stress", {"i386": 256, "x86_64": 256}, 600.0, smp=2),
              # every process of the boot in a memory cgroup whose
              # memory.max is 75% of the guest (settings.py's memcg):
              # reclaim is the cgroup's, its walks filtered by memcg
              Group("memcg", {"x86_64": 256}, 900.0, smp=2,
                    append=settings.setting("memcg").args),
              # swap on zram (settings.py's zram) instead of the disk
              Group("zram", {"i386": 192, "x86_64": 256}, 900.0, smp=2,
                    append=settings.setting("zram").args),
              # memory hot-remove: 128 MB blocks, the upper half of each
              # node's memory in ZONE_MOVABLE, whose blocks can go offline
              Group("offline", {"x86_64": 1024}, 900.0, smp=2,
                    append="movablecore=50%"),
              SMALL_NODES]
    tests = [torture_test(m, "torture", "pages=1024 N=4")
             for m in TORTURE_MODE]
    tests.append(torture_test("all", "torture",
                              "pages=512 N=8 rounds=3 seed=7",
                              name="torture-all-wide"))
    tests.append(inject_test("torture"))
    tests.append(race_test("mremap-kill", "torture", RACE_KILL_ARGS))
    tests.append(orphan_test("torture"))
    tests.append(forkcopy_test("torture"))
    tests.append(migrate_test("torture", "workers=16 pages=1024 rounds=20"))
    tests.append(offline_test("offline", "workers=8 pages=4096 rounds=6"))
    tests.append(memcg_test("memcg"))
    tests += zram_tests("zram")
    tests += family_tests(SMALL_NODES.name)
    tests += [hwpoison_test(n, "torture") for n in HWPOISON_MODE]
    tests += smp_tests("torture", 2) + smp_tests("torture", 4)
    # i386 with 1 GB: the anonymous pages come from highmem; no balloon
    # (too slow under TCG), MADV_PAGEOUT alone walks the rmap
    hm = torture_test("all", "highmem", "pages=1024 N=4 pressure=0",
                      name="torture-highmem", pressure=False)
    tests.append(Test(hm.name, hm.kind, hm.group, hm.command,
                      "every scenario with the pages in highmem (i386, "
                      "1 GB guest, MADV_PAGEOUT only)", arches=("i386",),
                      expect=hm.expect, swap=True))
    tests += [t for n in SELFTESTS for t in selftests(n, "selftests")]
    tests += [stress_test(n, "stress", 5 if n != "swap-pressure" else 10)
              for n in STRESSORS]
    return groups, tests


def catalogue(quick: bool) -> tuple[list[Group], list[Test]]:
    """The boots and the tests of the quick or the full suite."""
    return quick_catalogue() if quick else full_catalogue()
