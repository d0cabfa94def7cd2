"""Judging a suite boot: a verdict for every test of it.

A kernel fault fails the test it happened in and taints the tests after
it; a step that never ran fails its test with why (timeout, guest
stopped).  Otherwise the test's kind decides: torture by its summary
line against its expectations and its scheme's, a selftest by TAP and
its exit status, stress-ng by its fail lines and exit status.
"""

import re
from .. import console as consolemod
from .. import guest, plan, record, testbed
from .boot_checks import StepProblem, boot_checks
from .catalogue import (SELFTEST_NA, SELFTEST_NA_END, SELFTEST_NO_SKIP,
                        SUMMARY_KINDS, Test, selftest_na_where,
                        selftest_name)
from .verdict import FAIL, PASS, SKIP, Verdict

STRESS_FAIL = re.compile(r"stress-ng: fail:|stress-ng: error:")
# stress-ng exit codes: 0 ok, 2 a stressor failed (--verify mismatch...),
# 3 out of resources, 4 not implemented
STRESS_SKIP_RC = {3: "stress-ng: not enough resources (exit 3)",
                  4: "stress-ng: stressor not implemented here (exit 4)"}
# what a torture verdict keeps of its summary line
TORTURE_DETAILS = ("verified_pages", "verify_mismatch_pages",
                   "pageout_candidate_pages", "pageout_missed_pages",
                   "pressure_swap_ptes_pages", "pswpout_pages",
                   "pswpin_pages", "mremap_anon_copy_pages",
                   "anon_rmap_orphan_pages", "anon_swapin_copy_pages",
                   "anon_rmap_walk_count", "exec_stack_shift_kb",
                   "elapsed_ns")
Judged = tuple[str, str, dict]        # verdict, reason, details


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


def tap_skips(lines: list[str]) -> list[int]:
    """The TAP subtests reported 'ok N ... # SKIP'."""
    return [int(m.group(1)) for m in
            (re.match(r"ok (\d+)\b.*#\s*SKIP", line) for line in lines) if m]


def last_message(lines: list[str]) -> str:
    """The last line a test printed (its skip or failure message), not
    counting kselftest's closing '# Totals:' line."""
    for line in reversed(lines):
        if line.startswith(("RMB-", "# Totals:")) or \
                re.match(r"\[\s*\d+\.\d+\]", line):
            continue
        if line.strip():
            return line.strip().lstrip("# ")[:200]
    return ""


def compare(value: int, op: str, n: int) -> bool:
    return {"==": value == n, ">": value > n, ">=": value >= n}[op]


def judge_torture(t: Test, step: consolemod.Step, scheme: str) -> Judged:
    summaries = [r for r in step.results if r.get("record") == "summary"]
    if step.errors:
        return FAIL, step.errors[0].get("message", "RMB-ERROR"), {}
    if step.rc != 0:
        return FAIL, f"exit status {step.rc}", {}
    if not summaries:
        return FAIL, "no summary result line", {}
    s = record.flat(summaries[-1])
    expect = list(t.expect) + testbed.expectations(
        scheme, s.get("workload", ""), s.get("mode", ""), s.get("pressure"))
    details = {k: s[k] for k in TORTURE_DETAILS if k in s}
    variant = testbed.current_variant()
    void = variant.void_metrics
    for key, op, n in expect:
        value = s.get(key)
        if key in void:
            continue
        if not isinstance(value, int) or not compare(value, op, n):
            return FAIL, f"{key} = {value}, expected {op} {n}", details
    unjudged = sorted({f"{k} = {s.get(k)}" for k, _, _ in expect
                       if k in void})
    note = (f"not judged, void on the {variant.name} variant: "
            f"{', '.join(unjudged)}") if unjudged else ""
    return PASS, note, details


def judge_selftest(t: Test, arch: str, scheme: str, features: dict,
                   step: consolemod.Step) -> Judged:
    lines = step.lines
    if step.rc == 4:
        return SKIP, f"the test skipped itself: {last_message(lines)}", {}
    name = selftest_name(t)
    failed = tap_failures(lines)
    na, why = SELFTEST_NA.get((name, arch), (set(), ""))
    skipped = [n for n in tap_skips(lines) if n not in na]
    if skipped and name in SELFTEST_NO_SKIP:
        return FAIL, f"subtest(s) {', '.join(map(str, skipped))} skipped: " \
            f"{SELFTEST_NO_SKIP[name]}", {"skipped": skipped}
    if step.rc == 0 and not failed:
        return PASS, "", {}
    for where in selftest_na_where(scheme, features):
        if (name, where) not in SELFTEST_NA_END:
            continue
        error, done, why_end = SELFTEST_NA_END[(name, where)]
        if step.rc == 1 and error in last_message(lines) and \
                any(line.startswith(done) for line in lines):
            return PASS, f"not applicable ({where}): {why_end}", {}
    if failed and set(failed) <= na:
        return PASS, f"not applicable on {arch}: {why}", \
            {"not_ok": failed}
    if failed:
        return FAIL, f"not ok: subtest(s) {', '.join(map(str, failed))}", \
            {"not_ok": failed}
    return FAIL, f"exit status {step.rc}: {last_message(lines)}", {}


def judge_stress(step: consolemod.Step) -> Judged:
    lines = step.lines
    bad = [line for line in lines if STRESS_FAIL.search(line)]
    if bad:
        return FAIL, bad[0].strip()[:200], {}
    if step.rc in STRESS_SKIP_RC:
        return SKIP, STRESS_SKIP_RC[step.rc], {}
    if step.rc != 0:
        return FAIL, f"stress-ng exit status {step.rc}: " \
            f"{last_message(lines)}", {}
    return PASS, "", {}


def judge_kind(t: Test, run: guest.GuestRun, step: consolemod.Step
               ) -> Judged:
    scheme = run.console.section_pairs("rmapbench").get("scheme", "unknown")
    if t.kind in SUMMARY_KINDS:
        return judge_torture(t, step, scheme)
    if t.kind == "selftest":
        return judge_selftest(t, run.arch, scheme, run.console.features,
                              step)
    return judge_stress(step)


def step_problems(run: guest.GuestRun, p: plan.Plan) -> StepProblem:
    """Why a plan step's outcome cannot count, or None: a kernel fault in
    or before it, or it never ran."""
    con = run.console
    fault = con.faults[0] if con.faults else None
    fault_step = con.step_of_line(fault.line_number) if fault else None
    last = max((s.number for s in con.steps), default=0)

    def problem(number: int) -> str | None:
        if fault and fault_step is not None and number >= fault_step:
            where = p.owner.get(fault_step, "boot")
            if number == fault_step or p.owner.get(number) == where:
                return f"kernel fault ({fault.kind}) at console line " \
                    f"{fault.line_number}"
            return f"after a kernel fault ({fault.kind}) in {where}"
        step = con.step(number)
        if step is not None and step.rc is not None:
            return None
        if run.boot.timed_out:
            return f"timed out after {run.boot.seconds:.0f}s" \
                if number == last else "not run: the boot timed out"
        return "not run: the guest stopped before it " \
            f"({run.failure or 'no end marker'})"
    return problem


def judge_test(t: Test, run: guest.GuestRun, p: plan.Plan,
               problem: StepProblem, kernel: str) -> Verdict:
    con = run.console
    main = p.main[t.name]
    mine = p.steps_of(t.name)
    problems = [x for x in map(problem, mine) if x]
    step = con.step(main)
    seconds = step.ms / 1000 if step and step.ms is not None else None
    if problems:
        return Verdict(t.name, kernel, FAIL, problems[0], seconds)
    setup = [n for n in mine if n != main and con.step(n).rc != 0]
    if setup:
        return Verdict(t.name, kernel, FAIL, f"plan step "
                       f"'{p.lines[setup[0] - 1]}' failed (rc "
                       f"{con.step(setup[0]).rc})", seconds)
    v, why, details = judge_kind(t, run, step)
    if v == PASS and t.group == "highmem" and \
            not con.meminfo_kb().get("HighTotal"):
        v, why = FAIL, "the guest has no highmem (HighTotal 0)"
    if v == PASS and t.swap and t.kind == "stress":
        out = vmstat_delta(con, t.name, "pswpout")
        details["pswpout_pages"] = out
        if not out:
            v, why = FAIL, f"pswpout grew by {out}: the test was " \
                "meant to push pages out to swap"
    return Verdict(t.name, kernel, v, why, seconds, details)


def judge_boot(run: guest.GuestRun, p: plan.Plan, tests: list[Test],
               kernel: str) -> list[Verdict]:
    """A verdict for every test of the boot and for the boot's checks."""
    problem = step_problems(run, p)
    verdicts = [judge_test(t, run, p, problem, kernel) for t in tests]
    return verdicts + boot_checks(run, p, problem, kernel)
