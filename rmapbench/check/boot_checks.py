"""The checks every suite boot adds to its tests' verdicts.

1. no kernel fault line anywhere in the console;
2. swap goes on, and the final swapoff releases every swap entry;
3. the rmap's slab caches back at their idle counts once the tests'
   processes ended and init's pages were walked: the scheme's own cache
   exactly, the others within IDLE_SLAB_TOLERANCE.
"""

from collections.abc import Callable

from .. import console as consolemod
from .. import guest, plan, record, testbed
from .boots import ANONMM_LIST, IDLE_BEFORE, PAGEOUT_INIT, RMAP_CACHES, \
    SETTLE, SETTLE_S, SLABS, SWAPOFF, SWAPON
from .verdict import FAIL, PASS, SKIP, Verdict

# Counts are exact (boots.CHECK_APPEND: no per-CPU slabs), taken once
# they held still (boots.IDLE), with the same processes alive at both
# (init's shell, rmb-idle), and after a walk of init's pages with swap
# off (boots.PAGEOUT_INIT).  So the scheme's own cache (anonmm: one per
# live mm, plus one per exited mm some page still points at) must be back
# exactly: a single leaked object fails the row.  The generic caches
# (vm_area_struct, mm_struct) follow the shell's own VMAs, which may
# split or merge by a couple, and a dead mm_struct a CPU still holds as
# its lazy TLB mm: they get IDLE_SLAB_TOLERANCE.  Every CPU but the one
# counting may hold one (an idle CPU keeps the last mm it ran as its
# lazy TLB mm): mm_struct gets one per other CPU where that is more.
IDLE_SLAB_TOLERANCE = 2
MM_CACHE = "mm_struct"

StepProblem = Callable[[int], str | None]


def boot_checks(run: guest.GuestRun, p: plan.Plan, problem: StepProblem,
                kernel: str) -> list[Verdict]:
    return voided([no_fault(run, p.name, kernel),
                   swap(run, p, problem, kernel),
                   slabs(run, p, problem, kernel)], p.name)


def voided(verdicts: list[Verdict], group: str) -> list[Verdict]:
    """The rows the debug variant being checked voids, as skips."""
    variant = testbed.current_variant()
    for v in verdicts:
        row = v.test[len(group) + 2:]
        if row in variant.skip_rows:
            v.verdict, v.reason = SKIP, f"void on the {variant.name} " \
                "variant " \
                f"(was {v.verdict}{': ' + v.reason if v.reason else ''})"
    return verdicts


def no_fault(run: guest.GuestRun, group: str, kernel: str) -> Verdict:
    name = f"{group}: no kernel fault"
    if run.console.faults:
        fault = run.console.faults[0]
        return Verdict(name, kernel, FAIL, f"{fault.kind} at console line "
                       f"{fault.line_number}",
                       details={"excerpt": fault.excerpt})
    if run.boot.timed_out or run.console.done_rc is None:
        return Verdict(name, kernel, FAIL,
                       run.failure or "the plan did not finish")
    return Verdict(name, kernel, PASS)


def failed_step(run: guest.GuestRun, p: plan.Plan, number: int
                ) -> str | None:
    step = run.console.step(number)
    if step is not None and step.rc:
        return f"'{p.lines[number - 1]}' failed (rc {step.rc})"
    return None


def swap(run: guest.GuestRun, p: plan.Plan, problem: StepProblem,
         kernel: str) -> Verdict:
    why = None
    for owner in (SWAPON, SWAPOFF):
        n = p.main[owner]
        why = why or problem(n) or failed_step(run, p, n)
    return Verdict(f"{p.name}: swapon, final swapoff", kernel,
                   FAIL if why else PASS, why or "")


def slab_counts(con: consolemod.Console, number: int) -> dict[str, int]:
    """The rmap caches' object counts rmb-idle printed in plan step
    number (slab_<cache>_objs_count), by cache."""
    step = con.step(number)
    rec = record.flat(next((r for r in (step.results if step else [])
                            if r.get("record") == "idle"), {}))
    return {c: rec[f"slab_{c}_objs_count"] for c in RMAP_CACHES
            if isinstance(rec.get(f"slab_{c}_objs_count"), int)}


def anonmm_list(run: guest.GuestRun, p: plan.Plan) -> list[str]:
    """/proc/anonmm at the end (DEBUG_VM anonmm kernels; else [])."""
    return [ln for ln in run.console.output(p.number(ANONMM_LIST))
            if not ln.startswith(("RMB-", "["))]


def tolerance(cache: str, own: str | None, cpus: int = 1) -> int:
    """How far cache may end from its idle count on a guest of cpus
    (see above)."""
    if cache == own:
        return 0
    if cache == MM_CACHE:
        return max(IDLE_SLAB_TOLERANCE, cpus - 1)
    return IDLE_SLAB_TOLERANCE


def left_alive(procs_line: str | None) -> str:
    """The processes SETTLE's RMB-PROCS line names ("" if none or no
    line: a settle step that printed nothing is caught by its rc)."""
    left = procs_line.split()[1:-1] if procs_line else []
    return "" if left == ["none"] else " ".join(left)


def pageout_summary(run: guest.GuestRun, p: plan.Plan) -> dict:
    """The counters of the pageout of init: orphans re-pointed, walks."""
    step = run.console.step(p.number(PAGEOUT_INIT))
    rec = record.flat(next((r for r in (step.results if step else [])
                            if r.get("record") == "summary"), {}))
    keys = ("advised_kb", "anon_rmap_walk_count", "anon_rmap_orphan_pages",
            "pswpout_pages")
    return {k: rec[k] for k in keys if k in rec}


def slabs_problem(run: guest.GuestRun, p: plan.Plan, problem: StepProblem,
                  procs_line: str | None) -> str | None:
    """Why the final count cannot be trusted (or is missing), if so."""
    mine = p.steps_of(IDLE_BEFORE) + p.steps_of(SLABS)
    why = next((x for x in map(problem, mine) if x), None)
    alive = left_alive(procs_line)
    if not why and alive:
        why = f"processes still alive {SETTLE_S} s after the tests: {alive}"
    failed = [n for n in mine if run.console.step(n).rc] if not why else []
    return why or (failed_step(run, p, failed[0]) if failed else None)


def slabs(run: guest.GuestRun, p: plan.Plan, problem: StepProblem,
          kernel: str) -> Verdict:
    """The scheme's own cache back at its idle count exactly, the other
    rmap caches within IDLE_SLAB_TOLERANCE, once the tests' processes
    ended (SETTLE) and init's pages were walked (PAGEOUT_INIT)."""
    con = run.console
    procs_line = next((ln for ln in con.output(p.number(SETTLE))
                       if ln.startswith("RMB-PROCS ")), None)
    why = slabs_problem(run, p, problem, procs_line)
    before = slab_counts(con, p.main[IDLE_BEFORE])
    after = slab_counts(con, p.main[SLABS])
    held = slab_counts(con, p.steps_of(SLABS)[0])
    details = {"before": before, "held": held, "after": after,
               "init_pageout": pageout_summary(run, p),
               "settle": procs_line, "anonmm_list": anonmm_list(run, p)}
    if not why and not before:
        why = "no idle count before the tests"
    scheme = con.section_pairs("rmapbench").get("scheme")
    own = testbed.by_scheme(str(scheme))
    cache = own.cache if own else None
    if not why and cache not in before:
        why = f"the {scheme} kernel has no {cache} cache in /proc/slabinfo"
    leaks = {c: after.get(c, 0) - before.get(c, 0) for c in RMAP_CACHES
             if c in before or c in after}
    cpus = con.online_cpus()
    grown = {c: d for c, d in leaks.items()
             if abs(d) > tolerance(c, cache, cpus)}
    if not why and grown:
        why = "not back to idle (objects): " + ", ".join(
            f"{c} {d:+d}" for c, d in grown.items())
    return Verdict(f"{p.name}: slabs back to idle", kernel,
                   FAIL if why else PASS, why or "", details=details)
