"""The checks every suite boot adds to its tests' verdicts.

1. no kernel fault line anywhere in the console;
2. swap goes on, and the final swapoff releases every swap entry;
3. the rmap's slab caches back at their idle counts once the tests'
   processes ended and init's pages were walked (IDLE_SLAB_TOLERANCE).
"""

from collections.abc import Callable

from .. import console as consolemod
from .. import guest, paths, plan, record, registry
from .boots import PAGEOUT_INIT, RMAP_CACHES, SETTLE, SETTLE_S, SLABS, \
    SWAPOFF, SWAPON
from .verdict import FAIL, PASS, SKIP, Verdict

# "Near idle": with exact counts (boots.CHECK_APPEND), the processes alive
# at both snapshots are the same (init's shell, the cat of the section),
# so a correct kernel returns to the idle count exactly.  The tolerance
# absorbs the shell's own VMAs shifting by a couple (its heap and stack
# may split or merge) and an RCU-deferred free racing the snapshot (see
# boots.SETTLE).  A leak does not hide in it: the suite forks hundreds of
# processes and maps thousands of pages per boot, so a leak of one object
# per process, per exec or per moved region shows as tens to hundreds.
IDLE_SLAB_TOLERANCE = 2

StepProblem = Callable[[int], str | None]


def boot_checks(run: guest.GuestRun, p: plan.Plan, problem: StepProblem,
                kernel: str) -> list[Verdict]:
    return voided([no_fault(run, p.name, kernel),
                   swap(run, p, problem, kernel),
                   slabs(run, p, problem, kernel)], p.name)


def voided(verdicts: list[Verdict], group: str) -> list[Verdict]:
    """The rows the debug variant being checked voids, as skips."""
    name = paths.variant()
    rows = registry.variant_named(name).skip_rows if name else ()
    for v in verdicts:
        row = v.test[len(group) + 2:]
        if row in rows:
            v.verdict, v.reason = SKIP, f"void on the {name} variant " \
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


def slab_counts(con: consolemod.Console, name: str) -> dict[str, int]:
    """active_objs of the rmap caches in the slabinfo section name."""
    counts = {}
    for line in con.sections.get(name, []):
        words = line.split()
        if len(words) > 2 and words[0] in RMAP_CACHES and words[1].isdigit():
            counts[words[0]] = int(words[1])
    return counts


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
    mine = p.steps_of(SLABS)
    why = next((x for x in map(problem, mine) if x), None)
    alive = left_alive(procs_line)
    if not why and alive:
        why = f"processes still alive {SETTLE_S} s after the tests: {alive}"
    failed = [n for n in mine if run.console.step(n).rc] if not why else []
    return why or (failed_step(run, p, failed[0]) if failed else None)


def slabs(run: guest.GuestRun, p: plan.Plan, problem: StepProblem,
          kernel: str) -> Verdict:
    """Every rmap cache back within IDLE_SLAB_TOLERANCE of its idle count,
    once the tests' processes ended (SETTLE) and init's pages were walked
    (PAGEOUT_INIT)."""
    con = run.console
    procs_line = next((ln for ln in con.output(p.number(SETTLE))
                       if ln.startswith("RMB-PROCS ")), None)
    why = slabs_problem(run, p, problem, procs_line)
    before = slab_counts(con, "slab-before")
    after = slab_counts(con, "slab-after")
    details = {"before": before, "held": slab_counts(con, "slab-held"),
               "after": after, "init_pageout": pageout_summary(run, p),
               "settle": procs_line}
    if not why and not before:
        why = "no slabinfo before the tests"
    scheme = con.section_pairs("rmapbench").get("scheme")
    own = registry.by_scheme(str(scheme))
    cache = own.cache if own else None
    if not why and cache not in before:
        why = f"the {scheme} kernel has no {cache} cache in /proc/slabinfo"
    leaks = {c: after.get(c, 0) - before.get(c, 0) for c in RMAP_CACHES
             if c in before or c in after}
    grown = {c: d for c, d in leaks.items() if abs(d) > IDLE_SLAB_TOLERANCE}
    if not why and grown:
        why = "not back to idle (objects): " + ", ".join(
            f"{c} {d:+d}" for c, d in grown.items())
    return Verdict(f"{p.name}: slabs back to idle", kernel,
                   FAIL if why else PASS, why or "", details=details)
