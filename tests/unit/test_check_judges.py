"""The correctness suite's judge on made-up consoles (no kernel): a
kernel fault line or a data mismatch must turn into failures."""

import json

import fakeguest
from rmapbench import check


IDLE_COUNTS = ("before", "held", "after")    # the rmb-idle steps, in order


def idle_line(counts):
    return result_line({"workload": "idle", "mode": "slabs",
                        "record": "idle", "still": 1, "waited_ms": 1000,
                        **{f"slab_{c}_objs_count": n
                           for c, n in counts.items()}})


def fake_run(tmp_path, plan, step_output, arch="x86_64", slabs=None,
             rcs=None):
    """A console in which step n printed step_output.get(n, []) and ended
    with rcs.get(n, 0); the rmb-idle steps (before, held, after) count
    9 anon_vma, 11 anon_vma_chain and 30 vm_area_struct objects, or what
    slabs[when] says (cache -> count; an int: anon_vma)."""
    slabs, rcs = slabs or {}, rcs or {}
    lines = ["[    0.000000] Linux version 6.1", "RMB-CMDLINE x"]
    total = len(plan.lines)
    idle = iter(IDLE_COUNTS)
    for n, line in enumerate(plan.lines, 1):
        lines.append(f"RMB-STEP {n}/{total} {line}")
        if line.startswith("section rmapbench"):
            lines += ["RMB-BEGIN rmapbench", "scheme anon_vma",
                      "RMB-END rmapbench"]
        if line == check.IDLE and n not in step_output:
            want = slabs.get(next(idle), {})
            want = {"anon_vma": want} if isinstance(want, int) else want
            lines.append(idle_line({"anon_vma": 9, "anon_vma_chain": 11,
                                    "vm_area_struct": 30, **want}))
        if line == check.SETTLE and n not in step_output:
            lines.append("RMB-PROCS none waited=0s")
        lines += step_output.get(n, [])
        lines.append(f"RMB-STEP-END {n} rc={rcs.get(n, 0)} ms=10")
    lines.append("RMB-DONE rc=0")
    return fakeguest.run_of("\n".join(lines) + "\n",
                            tmp_path / "console.log", "anon_vma", arch)


def good_summary(mode):
    fields = {"workload": "torture", "mode": mode, "record": "summary",
              "pressure": 1, "verified_pages": 100,
              "verify_mismatch_pages": 0, "pageout_candidate_pages": 10,
              "pageout_missed_pages": 0, "pageout_unchecked_count": 0,
              "pswpout_pages": 10, "anon_rmap_walk_count": 10,
              "anon_rmap_pte_count": 10, "pressure_count": 1,
              "pressure_pswpout_pages": 10, "pressure_swap_ptes_pages": 10,
              "moves_count": 3, "execs_count": 1, "exec_blob_pages": 60,
              "exec_stack_shift_kb": 100, "swapoff_count": 1,
              "mremap_anon_copy_pages": 0, "anon_rmap_orphan_pages": 0,
              "anon_swapin_copy_pages": 0, "anon_pages_test_pte_count": 0}
    return fields


def judge(tmp_path, output_for, slabs=None, pageout_rc=0):
    tests = [check.torture_test("cow", "g", "pages=64"),
             check.torture_test("mremap", "g", "pages=64")]
    plan = check.make_plan("g", tests)
    step_output = {plan.main[t.name]: output_for(t) for t in tests}
    pageout = plan.lines.index(check.PAGEOUT_INIT) + 1
    step_output[pageout] = [result_line({
        "workload": "pageout", "record": "summary", "advised_kb": 400,
        "anon_rmap_walk_count": 100, "anon_rmap_orphan_pages": 3})]
    run = fake_run(tmp_path, plan, step_output, slabs=slabs,
                   rcs={pageout: pageout_rc})
    return {v.test: v for v in check.judge_boot(run, plan, tests,
                                                "anon_vma/x86_64")}


IDENTITY = ("workload", "mode", "record", "scheme", "arch")
PARAMS = ("pressure", "pages", "N", "rounds", "seed", "pid")


def result_line(fields):
    """A result line as the library writes it: identity, params and
    metrics apart."""
    line = {k: v for k, v in fields.items() if k in IDENTITY}
    line["params"] = {k: v for k, v in fields.items() if k in PARAMS}
    line["metrics"] = {k: v for k, v in fields.items()
                       if k not in IDENTITY and k not in PARAMS}
    return "RMB-RESULT " + json.dumps(line)


def test_judge_passes_a_clean_console(tmp_path):
    got = judge(tmp_path, lambda t: [result_line(good_summary(
        t.name.split("-")[1]))])
    assert {v.verdict for v in got.values()} == {check.PASS}, got


def test_a_kernel_fault_fails_its_test_and_taints_the_rest(tmp_path):
    def output(t):
        out = [result_line(good_summary(t.name.split("-")[1]))]
        if t.name == "torture-cow":
            out.insert(0, "[   12.345678] BUG: Bad rss-counter state "
                          "mm:00000000 type:MM_ANONPAGES val:1")
        return out
    got = judge(tmp_path, output)
    assert got["torture-cow"].verdict == check.FAIL
    assert "kernel fault" in got["torture-cow"].reason
    assert got["torture-mremap"].verdict == check.FAIL
    assert "after a kernel fault" in got["torture-mremap"].reason
    assert got["g: no kernel fault"].verdict == check.FAIL


def test_a_mismatch_or_a_missed_page_fails_the_test(tmp_path):
    def output(t):
        s = good_summary(t.name.split("-")[1])
        if t.name == "torture-cow":
            s["verify_mismatch_pages"] = 1
        else:
            s["pageout_missed_pages"] = 3
        return [result_line(s)]
    got = judge(tmp_path, output)
    assert got["torture-cow"].verdict == check.FAIL
    assert "verify_mismatch_pages" in got["torture-cow"].reason
    assert got["torture-mremap"].verdict == check.FAIL
    assert "pageout_missed_pages" in got["torture-mremap"].reason
    assert got["g: no kernel fault"].verdict == check.PASS


def test_anon_vma_must_not_copy_on_mremap(tmp_path):
    def output(t):
        s = good_summary(t.name.split("-")[1])
        s["mremap_anon_copy_pages"] = 5
        return [result_line(s)]
    got = judge(tmp_path, output)
    assert got["torture-mremap"].verdict == check.FAIL
    assert "mremap_anon_copy_pages" in got["torture-mremap"].reason


def clean(t):
    return [result_line(good_summary(t.name.split("-")[1]))]


def test_orphans_init_held_are_walked_before_the_count(tmp_path):
    """Objects held at the end of the tests but freed by the walk of
    init's pages pass; the details keep both counts and the orphans."""
    got = judge(tmp_path, clean, slabs={"held": 14})
    got = got["g: slabs back to idle"]
    assert got.verdict == check.PASS, got
    assert got.details["held"]["anon_vma"] == 14
    assert got.details["after"]["anon_vma"] == 9
    assert got.details["init_pageout"]["anon_rmap_orphan_pages"] == 3


def test_objects_left_after_the_walk_are_a_leak(tmp_path):
    got = judge(tmp_path, clean, slabs={"held": 14, "after": 12})
    v = got["g: slabs back to idle"]
    assert v.verdict == check.FAIL and "anon_vma +3" in v.reason


def test_one_object_of_the_schemes_own_cache_is_a_leak(tmp_path):
    """The scheme's cache must come back exactly; a generic cache (the
    shell's VMAs) may move by IDLE_SLAB_TOLERANCE."""
    v = judge(tmp_path, clean, slabs={"after": 10})["g: slabs back to idle"]
    assert v.verdict == check.FAIL and "anon_vma +1" in v.reason
    near = {"anon_vma": 9, "vm_area_struct": 30 + check.IDLE_SLAB_TOLERANCE}
    v = judge(tmp_path, clean, slabs={"after": near})
    assert v["g: slabs back to idle"].verdict == check.PASS
    far = {"anon_vma": 9,
           "vm_area_struct": 31 + check.IDLE_SLAB_TOLERANCE}
    v = judge(tmp_path, clean, slabs={"after": far})["g: slabs back to idle"]
    assert v.verdict == check.FAIL and "vm_area_struct +3" in v.reason


def test_counts_that_never_held_still_fail_the_slab_check(tmp_path):
    """rmb-idle fails (exit 1) when the counts kept moving: no count to
    trust."""
    tests = [check.torture_test("cow", "g", "pages=64")]
    plan = check.make_plan("g", tests)
    last = plan.main["boot-slabs"]
    run = fake_run(tmp_path, plan, {plan.main["torture-cow"]:
                                    clean(tests[0])}, rcs={last: 1})
    got = {v.test: v for v in check.judge_boot(run, plan, tests, "k")}
    v = got["g: slabs back to idle"]
    assert v.verdict == check.FAIL and "rmb-idle" in v.reason, v


def test_a_process_left_alive_fails_the_slab_check(tmp_path):
    tests = [check.torture_test("cow", "g", "pages=64")]
    plan = check.make_plan("g", tests)
    settle = plan.lines.index(check.SETTLE) + 1
    out = {plan.main["torture-cow"]: clean(tests[0]),
           settle: ["RMB-PROCS  77:rmb-torture waited=30s"]}
    run = fake_run(tmp_path, plan, out, rcs={settle: 1})
    got = {v.test: v for v in check.judge_boot(run, plan, tests, "k")}
    v = got["g: slabs back to idle"]
    assert v.verdict == check.FAIL and "77:rmb-torture" in v.reason, v


def test_a_failed_pageout_of_init_fails_the_slab_check(tmp_path):
    v = judge(tmp_path, clean, pageout_rc=1)["g: slabs back to idle"]
    assert v.verdict == check.FAIL and "rmb-pageout" in v.reason


def test_a_variant_voids_the_rows_it_names(tmp_path, monkeypatch):
    from rmapbench import testbed
    monkeypatch.setenv("RMAPBENCH_VARIANT", "kasan")
    monkeypatch.setattr(testbed, "VARIANTS", (testbed.Variant(
        "kasan", skip_rows=("slabs back to idle",)),))
    got = judge(tmp_path, clean, slabs={"held": 14, "after": 12})
    v = got["g: slabs back to idle"]
    assert v.verdict == check.SKIP and "void on the kasan variant" in \
        v.reason and "anon_vma +3" in v.reason
    assert got["g: no kernel fault"].verdict == check.PASS


def test_a_variant_adds_its_kernel_arguments_to_the_suite_boots(
        monkeypatch):
    from rmapbench import testbed
    from rmapbench.check import boots
    monkeypatch.delenv("RMAPBENCH_VARIANT", raising=False)
    assert boots.boot_append() == boots.CHECK_APPEND
    monkeypatch.setenv("RMAPBENCH_VARIANT", "kasan")
    assert testbed.variant_named("kasan").append == "pci=noacpi no5lvl"
    assert boots.boot_append() == boots.CHECK_APPEND + " pci=noacpi no5lvl"
    monkeypatch.setenv("RMAPBENCH_VARIANT", "lockdep")
    assert boots.boot_append() == boots.CHECK_APPEND


def orphan_step(left):
    from types import SimpleNamespace
    summary = {"workload": "orphan", "mode": "child", "record": "summary",
               "params": {}, "metrics": {
                   "checked_count": 1, "pinned_objs_count": 1,
                   "left_objs_count": left, "verify_mismatch_pages": 0,
                   "anon_rmap_orphan_pages": 32}}
    return SimpleNamespace(results=[summary], errors=[], rc=0)


def test_a_variant_voids_the_slab_counts_of_a_test_not_the_test(
        monkeypatch):
    """On KASAN, rmb-orphan's slab counts are not judged (its quarantine)
    and the verdict says so; its other expectations still are; on any
    other kernel the counts are judged."""
    from rmapbench.check import judges
    from importlib import import_module
    t = import_module("rmapbench.check.catalogue").orphan_test("g")
    monkeypatch.delenv("RMAPBENCH_VARIANT", raising=False)
    verdict, reason, _ = judges.judge_torture(t, orphan_step(-6), "anonmm")
    assert verdict == check.FAIL and "left_objs_count = -6" in reason
    monkeypatch.setenv("RMAPBENCH_VARIANT", "kasan")
    verdict, reason, _ = judges.judge_torture(t, orphan_step(-6), "anonmm")
    assert verdict == check.PASS
    assert reason == ("not judged, void on the kasan variant: "
                      "left_objs_count = -6, pinned_objs_count = 1")
    bad = orphan_step(0)
    bad.results[0]["metrics"]["verify_mismatch_pages"] = 3
    verdict, reason, _ = judges.judge_torture(t, bad, "anonmm")
    assert verdict == check.FAIL and "verify_mismatch_pages" in reason


def selftest_step(lines, rc):
    from types import SimpleNamespace
    return SimpleNamespace(lines=lines, rc=rc, results=[], errors=[])


USERFAULTFD_OUT = [
    "nr_pages: 4096, nr_pages_per_cpu: 2048",
    "bounces: 1, mode: rnd read, userfaults: 330 missing (115+215+) 740 wp",
    "bounces: 0, mode: read, userfaults: 9 missing (8+1+) 1079 wp (1062+17+)",
]
NOHUGE = ("testing uffd-wp with pagemap (pgsize=4096): ERROR: "
          "madvise(MADV_NOHUGEPAGE) failed (errno=22, line=1490)")


THP = {"thp": "always"}


def test_userfaultfd_thp_part_not_applicable_only_without_thp():
    """userfaultfd's last part needs THP: pass* on a guest without THP
    when that part alone failed after every bounce passed; a failure
    where THP is on, or when a bounce did not finish."""
    from importlib import import_module
    from rmapbench.check import judges
    t = import_module("rmapbench.check.catalogue").selftest("userfaultfd",
                                                            "g")
    step = selftest_step(USERFAULTFD_OUT + [NOHUGE], 1)
    got = judges.judge_selftest(t, "x86_64", "anonmm", {}, step)
    assert got[0] == check.PASS and "THP" in got[1]
    for scheme in ("anonmm", "anon_vma"):
        assert judges.judge_selftest(t, "x86_64", scheme, THP, step)[0] == \
            check.FAIL
    got = judges.judge_selftest(t, "x86_64", "anonmm", {},
                                selftest_step(USERFAULTFD_OUT[:2] + [NOHUGE],
                                              1))
    assert got[0] == check.FAIL
    other = "testing events (fork, remap, remove): ERROR: nr 3 (errno=0)"
    got = judges.judge_selftest(t, "x86_64", "anonmm", {},
                                selftest_step(USERFAULTFD_OUT + [other], 1))
    assert got[0] == check.FAIL


SOFT_DIRTY_OUT = ["TAP version 13", "1..15", "ok 1 Test test_simple",
                  "ok 2 Test test_vma_reuse dirty bit of allocated page",
                  "ok 3 Test test_vma_reuse dirty bit of reused address page"]
SOFT_DIRTY_END = ["Bail out! Open hpage_pmd_size failed",
                  "# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:0 error:0"]


def test_soft_dirty_thp_part_not_applicable_only_without_thp():
    """soft-dirty bails out at its huge page part without THP: pass*
    after subtests 1-3 there, else (or with THP) a failure."""
    from importlib import import_module
    from rmapbench.check import judges
    t = import_module("rmapbench.check.catalogue").selftest("soft-dirty",
                                                            "g")
    step = selftest_step(SOFT_DIRTY_OUT + SOFT_DIRTY_END, 1)
    got = judges.judge_selftest(t, "x86_64", "anonmm", {}, step)
    assert got[0] == check.PASS and "THP" in got[1]
    assert judges.judge_selftest(t, "x86_64", "anonmm", THP, step)[0] == \
        check.FAIL
    got = judges.judge_selftest(
        t, "x86_64", "anonmm", {},
        selftest_step(SOFT_DIRTY_OUT[:4] + SOFT_DIRTY_END, 1))
    assert got[0] == check.FAIL
    bad = SOFT_DIRTY_OUT[:4] + ["not ok 3 Test test_vma_reuse dirty bit "
                                "of reused address page"] + SOFT_DIRTY_END
    assert judges.judge_selftest(t, "x86_64", "anonmm", {},
                                 selftest_step(bad, 1))[0] == check.FAIL


SPLIT_OUT = ["Split huge pages successful"]
SPLIT_MREMAP = "Some THPs are missing during mremap"


def test_split_huge_page_test_mremap_part_not_applicable_on_anonmm():
    """split_huge_page_test's PTE-mapped part wants a THP kept across a
    one-page mremap, which anonmm splits by design: pass* on anonmm
    after split_pmd_thp passed; a failure on anon_vma, and on anonmm
    when the part before it did not pass."""
    from importlib import import_module
    from rmapbench.check import judges
    t = import_module("rmapbench.check.catalogue").selftest(
        "split_huge_page_test", "g")
    step = selftest_step(SPLIT_OUT + [SPLIT_MREMAP], 1)
    got = judges.judge_selftest(t, "x86_64", "anonmm", THP, step)
    assert got[0] == check.PASS and "anonmm" in got[1]
    assert judges.judge_selftest(t, "x86_64", "anon_vma", THP, step)[0] == \
        check.FAIL
    early = selftest_step(["No THP is allocated", SPLIT_MREMAP], 1)
    assert judges.judge_selftest(t, "x86_64", "anonmm", THP, early)[0] == \
        check.FAIL
