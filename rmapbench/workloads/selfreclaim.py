"""selfreclaim: reclaim of a process's own pages while its mmap_lock is
taken for write (bench/rmb-selfreclaim.c).  anonmm's rmap walk
try-locks the mmap_lock of every mm that may map a page, the page's own
included, and keeps the page when a lock is held for write or has a
writer queued; anon_vma's walk takes the anon_vma lock and never looks
at mmap_lock.  So where anon_vma reclaims, anonmm may reach the OOM
killer: a process one of whose threads writes more data than memory
holds while its siblings loop on mprotect() (mode threads; contend=0,
the same threads asleep, is the control), and a parent with such data
forking child after child (mode fork: dup_mmap() holds the parent's
mmap_lock for write while it allocates).  The headline is whether the
run completed; beside it the OOM kills, the pages swapped out and the
pages reclaim kept for want of a lock, stack against stack.
"""

from .. import testbed
from ..record import is_failed, metric_values
from ..testbed import BASE, ICOUNT, NEW
from ..tables import fmt, params_text, table
from .base import HIGHER, NEUTRAL, Experiment, Mode, Workload, metric

ALL = testbed.arch_names()
# 128 MB guests on both arches (i386's is all lowmem), 32 MB of data
# beyond MemAvailable: at least 8,192 of the process's own pages for
# reclaim to swap out, on one vCPU (icount boots no second one)
MEM = {"x86_64": [128], "i386": [128]}
# guest seconds before a run that neither completes nor is OOM-killed
# counts as stalled (the boot's timeout is the host's, several times
# longer under icount)
LIMIT_S = 30
THREADS = {"mb": 32, "threads": 1, "limit_s": LIMIT_S}
# each child copies the data's page tables: 32 children take about 9 MB
# (x86_64; i386 half that), which reclaim must find while the forks
# hold the parent's mmap_lock
FORK = {"mb": 32, "forks": 32, "limit_s": LIMIT_S}
THREADS_EXP = "selfreclaim-threads"
FORK_EXP = "selfreclaim-fork"


def outcome_metrics(*context) -> tuple:
    """Completion decides: a run did not complete if the OOM killer
    took its measured process (in fork, or one of the children), if it
    stalled until limit_s or if a fork was refused.  The OOM kills the
    guest counted follow; the pages swapped out and those kept because
    a walk met a contended lock are context: how far reclaim got, and
    what stopped it."""
    return (
        metric("completed_count", "runs completed (every page written "
               "and verified, nothing killed)", "runs", HIGHER),
        metric("oom_kill_count", "OOM kills in the guest", "kills"),
        metric("oom_killed_count", "runs the OOM killer ended", "runs"),
        metric("stalled_count", "runs stalled until limit_s", "runs"),
        metric("pswpout_pages", "pages swapped out", "pages", NEUTRAL),
        metric("anon_rmap_contended_keep_pages", "pages kept, walk "
               "contended", "pages", NEUTRAL),
        metric("anon_rmap_trylock_fail_count", "failed rmap try-locks",
               "try-locks", NEUTRAL),
        *context,
        metric("elapsed_ns", "wall time of the run (short when killed)",
               "ns", NEUTRAL))


THREADS_METRICS = outcome_metrics(
    metric("mprotect_calls_count", "siblings' mprotect() calls", "calls",
           NEUTRAL))
FORK_METRICS = outcome_metrics(
    metric("children_killed_count", "children killed before release",
           "children", NEUTRAL),
    metric("fork_median_ns", "fork() latency, median", "ns", NEUTRAL))

# Both modes decide the reclaim regime: a mode's row comes from its own
# configurations only (report/compare.main_config), so the rows of the
# other workloads stay as they are; the threads row stands at contend=1,
# the siblings at work (contend=0 is the control, in the tables).
MODES = (
    Mode("threads", THREADS_METRICS, main=(THREADS_EXP,), regime="reclaim",
         main_params=(("contend", 1),)),
    Mode("fork", FORK_METRICS, main=(FORK_EXP,), regime="reclaim"),
)

# The outcomes are counts, not timings: a point gets the icount clock's
# first boots (repetitions.START, two per stack) and no further round,
# since no compared metric is a timing that could narrow.
EXPERIMENTS = (
    Experiment(THREADS_EXP, "selfreclaim", "threads", ALL,
               sweep={"contend": [0, 1]}, fixed=THREADS, mem_mb=MEM,
               timeout_s=600.0, clocks=(ICOUNT,),
               text="a thread writes 32 MB more than memory holds while a "
                    "sibling loops on mprotect() (contend=1) or sleeps "
                    "(contend=0): completed or OOM-killed"),
    Experiment(FORK_EXP, "selfreclaim", "fork", ALL, fixed=FORK,
               mem_mb=MEM, timeout_s=600.0, clocks=(ICOUNT,),
               text="a parent with 32 MB more than memory holds forks 32 "
                    "children, each alive until the last fork: completed "
                    "or OOM-killed"),
)


# --- the outcomes side by side (a report section) -------------------------

def outcome_records(records: list[dict]) -> list[dict]:
    """Every selfreclaim summary, failed boots included."""
    return [r for r in records if r.get("workload") == "selfreclaim"
            and r.get("record", "summary") == "summary"]


def group_key(rec: dict) -> tuple:
    return (str(rec.get("experiment")), str(rec.get("arch")),
            int(rec.get("mem_mb") or 0), str(rec.get("mode")),
            params_text({k: v for k, v in (rec.get("params") or {}).items()
                         if k not in ("seed", "limit_s")}))


def count(recs: list[dict], name: str) -> int:
    return sum(1 for v in metric_values(recs, name) if v > 0)


def mean_text(recs: list[dict], name: str) -> str:
    values = metric_values(recs, name)
    return fmt(sum(values) / len(values)) if values else "—"


def outcome_cells(recs: list[dict]) -> list[str]:
    """One stack's boots of a configuration: how many, how they ended,
    the OOM kills counted, reclaim's mean pages out and kept."""
    ok = [r for r in recs if not is_failed(r)]
    n = len(ok)
    failed = len(recs) - n
    boots = f"{n}" + (f" (+{failed} failed)" if failed else "")
    kills = sum(metric_values(ok, "oom_kill_count"))
    return [boots, f"{count(ok, 'completed_count')}/{n}",
            f"{count(ok, 'oom_killed_count')}/{n}",
            f"{count(ok, 'stalled_count')}/{n}", fmt(kills),
            mean_text(ok, "pswpout_pages"),
            mean_text(ok, "anon_rmap_contended_keep_pages")]


HEADER = ["configuration", "stack", "boots", "completed", "OOM-killed",
          "stalled", "OOM kills (guest)", "pages swapped out (mean)",
          "pages kept, walk contended (mean)"]


def outcomes(records: list[dict]) -> list[str]:
    """The report's section: per configuration, both stacks' outcomes
    one above the other; nothing when the run has no selfreclaim."""
    recs = outcome_records(records)
    if not recs:
        return []
    groups: dict[tuple, list[dict]] = {}
    for rec in recs:
        groups.setdefault(group_key(rec), []).append(rec)
    rows = []
    for key, mine in sorted(groups.items()):
        exp, arch, mem, mode, ptext = key
        config = f"{exp} {arch} {mem} MB {mode} {ptext}".rstrip()
        for stack in (BASE, NEW):
            rows.append([config, stack] + outcome_cells(
                [r for r in mine if r.get("stack") == stack]))
    return ["## Reclaim of a process's own pages under its write-held "
            "mmap_lock (selfreclaim)", "",
            "Each configuration's boots on either stack: how many "
            "completed (every page written and verified, nothing "
            "killed), how many the OOM killer ended, how many stalled "
            "until limit_s; the OOM kills the guest counted (all boots), "
            "and the mean pages swapped out and kept by reclaim because "
            "a walk met a contended lock.", ""] + \
        table(HEADER, rows) + [""]


WORKLOAD = Workload(
    "selfreclaim", "rmb-selfreclaim",
    modes=MODES,
    experiments=EXPERIMENTS,
    sections=(outcomes,),
    order=47)
