"""The guest workloads (bench/) build, run at tiny sizes on the host and
print well-formed result lines, with the fields bench/lib/rmb-iface.h
declares and every metric the workload modules declare; bad parameters
give one RMB-ERROR line and exit code 2.

Run with: /usr/bin/python3 -m pytest tests/unit/test_bench_output.py
Sizes stay tiny (a few MB): the host is not a guest.
"""

import functools
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

import benchmake

from rmapbench import iface, metrics, programs, workloads

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
OUT = BENCH / "out" / "x86_64"
# every bench/rmb-*.c is a program (bench/Makefile)
PROGRAMS = tuple(sorted(p.stem for p in BENCH.glob("rmb-*.c")))
# and the helpers the programs exec, which take no parameters
HELPERS = ("inject-probe",)
# the multi-call binary every program is a link to (bench/multicall.c)
MULTICALL = "rmb"
LIB = sorted((BENCH / "lib").glob("*.c"))     # the helper library
UNITS = ("_ns", "_bytes", "_kb", "_pages", "_per_s", "_count")
# fields that are names or indices, not measurements
IDENTITY = {"workload", "mode", "record", "scheme", "arch", "kind",
            "generation", "stop", "phase1_stop", "stop_errno",
            "pageout_method"}


@functools.cache
def declared_params() -> frozenset[str]:
    """Every parameter any program declares (its rmb_param table)."""
    return frozenset(n for p in PROGRAMS for n in programs.names(p)
                     if n != "mode")


COMMON = ("workload", "mode", "record", "scheme", "arch", "page_size_bytes",
          "low_total_kb", "seed", "verified_pages", "verify_mismatch_pages")


def slab_fields(what: str) -> tuple[str, ...]:
    return tuple(f"slab_{name}_{what}" for name in iface.slabs())


# What the library writes of a snapshot (rmb_json_snap) and of the growth
# between two (rmb_json_delta), from the caches and counters of
# bench/lib/rmb-iface.h as iface.py reads them.
ABSOLUTE = (*slab_fields("bytes"), *slab_fields("objs_count"),
            "page_tables_kb", "mem_free_kb", "low_free_kb", "high_free_kb")
DELTA = (*slab_fields("delta_bytes"), *slab_fields("delta_objs_count"),
         "slab_total_delta_bytes", "page_tables_delta_kb",
         "memfree_consumed_kb", "lowfree_consumed_kb",
         *(c.field for c in iface.counters()), *iface.sum_fields())
BUNDLE = ("workers_count", "processes_count", "data_pages",
          "mms_per_data_page_count", "lock_failed_count", "data_swapped_pages",
          "spawn_ns", "spawn_pswpout_pages", "floor_ns",
          "floor_pswpout_pages", "pressure_ns",
          "balloon_locked_kb", "data_swapout_per_s",
          "swapout_per_s", "visited_per_reclaimed_count",
          "anon_rmap_walk_per_reclaimed_count",
          "anon_rmap_visit_per_reclaimed_count",
          "anon_rmap_skip_per_reclaimed_count",
          "anon_rmap_pte_per_reclaimed_count",
          "anon_rmap_trylock_fail_per_reclaimed_count",
          "anon_rmap_contended_keep_per_reclaimed_count", "kswapd_cpu_ns",
          "balloon_sys_ns", "reclaim_cpu_per_reclaimed_ns", "verify_ns",
          "verify_pswpin_pages", "elapsed_ns", "members_majflt_count", *DELTA)
SELFRECLAIM = ("data_pages", "mem_available_kb", "swap_total_kb",
               "completed_count", "oom_killed_count", "stalled_count",
               "filled_pages", "fill_ns", "verify_ns", "elapsed_ns",
               "swapout_per_s", "kswapd_cpu_ns", "oom_kill_count", *DELTA)
STATS = ("_min_ns", "_median_ns", "_p90_ns", "_max_ns", "_mean_ns")


def per(unit: str) -> tuple[str, ...]:
    """What the library writes of a growth per unit (rmb_json_per)."""
    return (*slab_fields(f"per_{unit}_bytes"), f"slab_total_per_{unit}_bytes",
            f"page_tables_per_{unit}_bytes",
            f"memfree_consumed_per_{unit}_bytes",
            f"lowfree_consumed_per_{unit}_bytes")


def stats(prefix):
    return tuple(prefix + s for s in STATS)


@pytest.fixture(scope="session")
def built():
    benchmake.built("x86_64")
    for prog in PROGRAMS:
        assert os.access(OUT / prog, os.X_OK), prog
    # the image packs every executable of out/<arch>: programs and the
    # helpers they exec only
    execs = {p.name for p in OUT.iterdir()
             if p.is_file() and os.access(p, os.X_OK)}
    assert execs == set(PROGRAMS) | set(HELPERS) | {MULTICALL}
    for prog in PROGRAMS:      # one binary: the image holds it once
        assert os.readlink(OUT / prog) == MULTICALL, prog
    return OUT


def run(out, prog, *args, timeout=30):
    return subprocess.run([str(out / prog), *args], capture_output=True,
                          text=True, timeout=timeout)


@functools.cache
def case_run(case: str) -> subprocess.CompletedProcess:
    """The run of one of CASES (once per session: two tests read it)."""
    prog, args, _ = CASES[case]
    return run(OUT, prog, *args)


LINE = {"workload", "mode", "record", "scheme", "arch", "params",
        "metrics"}


def apart(value):
    """A result line holds its identity, its parameters and its metrics
    apart: no parameter among the metrics, every metric with a unit.
    Returns the three in one dict, for the checks below."""
    assert set(value) == LINE, sorted(value)
    params, metrics = value["params"], value["metrics"]
    known = declared_params()
    assert set(params) <= known, sorted(set(params) - known)
    assert not set(metrics) & known, sorted(set(metrics) & known)
    check_units(metrics)
    return {**{k: value[k] for k in LINE - {"params", "metrics"}},
            **params, **metrics}


def parse(stdout):
    """Every stdout line is RMB-RESULT/RMB-ERROR + one JSON object."""
    results, errors = [], []
    for line in stdout.splitlines():
        tag, _, payload = line.partition(" ")
        assert tag in ("RMB-RESULT", "RMB-ERROR"), line
        value = json.loads(payload)
        assert isinstance(value, dict), line
        if tag == "RMB-RESULT":
            results.append(apart(value))
        else:
            errors.append(value)
    return results, errors


def check_units(rec):
    for key, value in rec.items():
        if key in IDENTITY or key in declared_params():
            continue
        assert key.endswith(UNITS), f"field {key} carries no unit"
        assert isinstance(value, (int, float)), (key, value)


CASES = {
    "vma-count": ("rmb-vma", ["V=200"],
                  ("vmas_count", "create_ns", "create_per_vma_ns",
                   "sizeof_vm_area_struct_bytes", "slab_total_delta_bytes",
                   *DELTA, *per("vma"))),
    "vma-count-gap": ("rmb-vma", ["V=200", "kind=gap"],
                      ("vmas_count", *DELTA, *per("vma"))),
    "vma-capacity": ("rmb-vma", ["mode=capacity", "max_vmas=300", "procs=3",
                                 "low_floor_kb=0"],
                     ("procs_count", "vmas_count", "vmas_per_proc_count",
                      "stop", "phase1_stop", *ABSOLUTE, *DELTA,
                      *per("vma"))),
    "fork-breadth": ("rmb-fork", ["V=200", "N=4"],
                     ("children_count", "vmas_count", *stats("fork"),
                      *DELTA, *per("child"))),
    "fork-depth": ("rmb-fork", ["mode=depth", "D=4", "pages=64"],
                   ("generations_count", *ABSOLUTE, *DELTA)),
    "fork-chain": ("rmb-fork", ["mode=chain", "D=30", "pages=16", "touch=4"],
                   ("generations_count", "elapsed_ns", "forks_per_s",
                    *stats("fork"), "processes_count",
                    "rmap_slab_delta_objs_count", "rmap_slab_delta_bytes",
                    "rmap_slab_per_process_bytes", "pageout_candidate_pages",
                    "pageout_missed_pages", *ABSOLUTE, *DELTA)),
    "fork-rate": ("rmb-fork", ["mode=rate", "N=20", "V=50"],
                  ("rounds_count", "forks_per_s", "elapsed_ns",
                   *stats("round"))),
    "fork-thp": ("rmb-fork", ["mode=thp", "huge=8", "N=5", "cow=1"],
                 ("rounds_count", "fork_median_ns", "round_median_ns",
                  "split_pmd_per_round_count", "region_thp_kb")),
    "mremap-unshared": ("rmb-mremap", ["R_mb=8", "moves=6"],
                        ("region_pages", *stats("move"), "moves_total_ns",
                         "move_per_page_ns", *DELTA)),
    "mremap-ptemap": ("rmb-mremap", ["R_mb=8", "moves=3", "ptemap=1"],
                      ("region_pages", "region_thp_kb", "ptemapped_count",
                       *stats("move"))),
    "mremap-unaligned": ("rmb-mremap", ["R_mb=8", "moves=3", "aligned=0"],
                         ("region_pages", *stats("move"), *DELTA)),
    "mremap-shared": ("rmb-mremap", ["mode=shared", "R_mb=8", "K=2",
                                     "moves=4"],
                      ("region_pages", "children_count", *stats("move"),
                       *DELTA)),
    "mremap-swapped": ("rmb-mremap", ["mode=swapped", "R_mb=8", "moves=4"],
                       ("region_pages", "pageout_method",
                        "pageout_pswpout_pages", "swap_ptes_pages",
                        "nonresident_pages", "verify_pswpin_pages",
                        *stats("move"), *DELTA)),
    "swap": ("rmb-swap", ["N=4", "mb=32", "passes=1"],
             ("members_count", "shared_pages", "private_per_member_pages",
              "working_set_pages", "swap_total_kb", "fill_ns", "passes_ns",
              "elapsed_ns", "swapout_per_s", "passes_swapout_per_s",
              "fill_pswpout_pages", "passes_pswpout_pages",
              "anon_rmap_walk_per_swapout_count",
              "anon_rmap_visit_per_swapout_count",
              "anon_rmap_pte_per_swapout_count", "kswapd_cpu_ns",
              "members_majflt_count", "members_minflt_count",
              "members_sys_ns", "members_user_ns", *DELTA)),
    "bundle-private": ("rmb-bundle", ["W=4", "mb=4"], BUNDLE),
    "bundle-pair": ("rmb-bundle", ["mode=pair", "W=3", "mb=2"], BUNDLE),
    "bundle-shared": ("rmb-bundle", ["mode=shared", "W=5", "mb=2",
                                     "push_pct=30"], BUNDLE),
    "fastpath-fault": ("rmb-fastpath", ["T=2", "L=2", "R_mb=2"],
                       ("tasks_count", "elapsed_ns", "tasks_failed_count",
                        "faults_per_s")),
    "fastpath-brk": ("rmb-fastpath", ["mode=brk", "L=200"],
                     ("tasks_count", "elapsed_ns", "brk_ops_per_s")),
    "fastpath-sdet": ("rmb-fastpath", ["mode=sdet", "T=2", "L=2"],
                      ("tasks_count", "elapsed_ns", "scripts_per_s")),
    "swap-orphans": ("rmb-swap", ["N=3", "mb=32", "exit_parent=1",
                                  "shared_pct=80", "passes=2"],
                     ("members_count", "swapout_per_s", *DELTA)),
    "selfreclaim-threads": ("rmb-selfreclaim", ["mb=4", "threads=2"],
                            (*SELFRECLAIM, "mprotect_calls_count")),
    "selfreclaim-quiet": ("rmb-selfreclaim", ["mb=4", "contend=0"],
                          (*SELFRECLAIM, "mprotect_calls_count")),
    "selfreclaim-fork": ("rmb-selfreclaim", ["mode=fork", "mb=4",
                                             "forks=4"],
                         (*SELFRECLAIM, "forks_done_count",
                          "fork_failed_count", "children_killed_count",
                          "forks_ns", *stats("fork"))),
    # on the host (no rmapbench kernel): set up, verified, nothing moved
    "migrate-compact": ("rmb-migrate", ["workers=2", "pages=32",
                                        "rounds=2"],
                        ("checked_count", "compact_rounds_count",
                         "workers_failed_count", "verified_pages", *DELTA)),
    "migrate-move": ("rmb-migrate", ["mode=move", "workers=2", "pages=32",
                                     "rounds=2", "pattern=cow"],
                     ("checked_count", "moved_pages", "not_moved_pages",
                      "move_per_page_ns", *stats("move"), "verified_pages",
                      *DELTA)),
    "migrate-balance": ("rmb-migrate", ["mode=balance", "workers=2",
                                        "pages=32", "seconds=5"],
                        ("checked_count", "copies_pages", "converge_ns",
                         "visited_per_migrated_count",
                         "hint_faults_per_migrated_count",
                         "workers_failed_count", "verified_pages", *DELTA)),
    "migrate-offline": ("rmb-migrate", ["mode=offline", "workers=2",
                                        "pages=32", "rounds=2"],
                        ("checked_count", "offlined_count",
                         "offline_busy_count", "offline_interrupted_count",
                         "workers_failed_count", *DELTA)),
    # on the host: the processes set up and verified, nothing merged
    "ksm-merge": ("rmb-ksm", ["workers=2", "procs=1", "pages=32",
                              "patterns=4"],
                  ("merged_pages", "saved_pages", "merged_per_s",
                   "ksmd_per_merged_ns", "merge_shared_skip_count",
                   "ksm_walk_mean_ns", "visits_per_walk_count",
                   "verified_pages", *DELTA)),
    # on the host: THP's settings left alone, nothing timed
    "collapse-khugepaged": ("rmb-collapse", ["W=2", "mb=4", "holes=2"],
                            ("collapsed_per_s", "full_scans_count",
                             "khugepaged_per_thp_ns", "data_thp_count",
                             "verified_pages", *DELTA)),
    # the host's own MADV_COLLAPSE, where it has one: counted, not checked
    "collapse-madvise": ("rmb-collapse", ["mode=madvise", "W=2", "mb=2"],
                         ("collapsed_per_s", "madvise_collapsed_count",
                          "verified_pages", *DELTA)),
    "migrate-compact-steady": ("rmb-migrate", ["workers=2", "pages=32",
                                               "rounds=2", "churn=0",
                                               "pageout=0"],
                               ("migrated_per_s",
                                "visited_per_migrated_count",
                                "workers_failed_count", *DELTA)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_program_output(built, case):
    prog, args, fields = CASES[case]
    res = case_run(case)
    results, errors = parse(res.stdout)
    assert res.returncode == 0 and not errors, res.stdout + res.stderr
    assert results
    summary = [r for r in results if r["record"] == "summary"]
    assert len(summary) == 1
    for rec in results:
        check_units(rec)
        for key in COMMON:
            assert key in rec, (case, key)
        assert rec["workload"] == prog.split("-", 1)[1]
        assert rec["arch"] == "x86_64"
        assert rec["verify_mismatch_pages"] == 0
        for arg in args:                 # parameters are echoed
            key, value = arg.split("=")
            assert str(rec[key]) == value, (case, key)
    for key in fields:
        assert key in summary[0], (case, key)
    assert summary[0]["verified_pages"] > 0
    if not Path("/proc/rmapbench").exists():
        assert summary[0]["scheme"] == "unknown"


# Workloads whose metrics no program of bench/ prints, and why: a tool
# of a guest image's extras writes them and the workload's records()
# read its output (from a sample of it: test_runner.py, test_stressng.py).
NO_PROGRAM = {"fio": "fio's JSON, in a guest with the fio extra",
              "stressng": "stress-ng's YAML, in a guest with its extra"}


def mode_case(w: workloads.Workload, mode: str) -> str:
    """The first of CASES that runs w's program in mode."""
    for name, (prog, args, _) in sorted(CASES.items()):
        given = dict(a.split("=", 1) for a in args)
        if prog == w.program and \
                given.get("mode", w.mode_names()[0]) == mode:
            return name
    raise AssertionError(f"no case of CASES runs {w.program} mode={mode}: "
                         "add one")


def test_every_workload_without_a_program_says_why():
    assert {w.name for w in workloads.WORKLOADS.values()
            if w.program is None} == set(NO_PROGRAM)


@pytest.mark.parametrize("workload,mode", [
    (w, m.name) for w, m in metrics.declared_modes()
    if workloads.workload(w).program])
def test_every_declared_metric_is_printed(built, workload, mode):
    """A metric a mode declares (its tables and verdicts compare it)
    appears in a host run's lines of the mode's record kind: a name the
    program does not print would show only as "not measured"."""
    w = workloads.workload(workload)
    declared = w.mode(mode)
    results, _ = parse(case_run(mode_case(w, mode)).stdout)
    lines = [r for r in results if r["record"] == declared.record]
    assert lines, (workload, mode, declared.record)
    missing = [m.name for m in declared.metrics
               if not any(m.name in r for r in lines)]
    assert not missing, (workload, mode, missing)


def test_depth_has_a_line_per_generation(built):
    results, _ = parse(run(built, "rmb-fork", "mode=depth", "D=5",
                           "pages=16").stdout)
    gens = [r["generation"] for r in results if r["record"] == "generation"]
    assert gens == [0, 1, 2, 3, 4]
    for rec in results:
        if rec["record"] == "generation":
            for key in ABSOLUTE + ("processes_count", "cow_ns"):
                assert key in rec


@pytest.mark.parametrize("mode,procs,mms,verified", [
    ("private", 5, 1, 512), ("pair", 9, 2, 1024), ("shared", 5, 5, 1024)])
def test_bundle_family_and_what_it_verifies(built, mode, procs, mms,
                                            verified):
    """W=4, 2 MB: private pages verified once, a pair's by the worker and
    its helper, shared ones by the master and (a slice each) the
    workers.  On a host: no balloon, nothing reclaimed, no lock failed
    (root may mlock)."""
    results, _ = parse(run(built, "rmb-bundle", f"mode={mode}", "W=4",
                           "mb=2").stdout)
    (rec,) = results
    assert (rec["processes_count"], rec["mms_per_data_page_count"],
            rec["verified_pages"]) == (procs, mms, verified)
    assert rec["data_pages"] == 512 and rec["verify_mismatch_pages"] == 0
    if not Path("/proc/rmapbench").exists():
        assert rec["balloon_locked_kb"] == 0
        assert rec["data_swapped_pages"] == 0
    if os.geteuid() == 0:
        assert rec["lock_failed_count"] == 0


def test_chain_lines_at_1_2_5_and_the_last(built):
    """A line at generations 1, 2, 5, 10, 20 and the last; each verified
    what the generations before it did: 29 quick checks and 5 full ones
    of 16 pages by the end."""
    results, _ = parse(run(built, "rmb-fork", "mode=chain", "D=30",
                           "pages=16", "touch=4").stdout)
    lines = [r for r in results if r["record"] == "generation"]
    assert [r["generation"] for r in lines] == [1, 2, 5, 10, 20, 29]
    for rec in lines:
        assert rec["processes_count"] == 1
        assert rec["fork_median_ns"] > 0
    assert results[-1]["record"] == "summary"
    assert results[-1]["generations_count"] == 30
    assert results[-1]["verified_pages"] == (29 + 6) * 16


def test_capacity_steps(built):
    results, _ = parse(run(built, "rmb-vma", "mode=capacity", "max_vmas=100",
                           "procs=4", "low_floor_kb=0").stdout)
    steps = [r for r in results if r["record"] == "step"]
    assert [s["procs_count"] for s in steps] == [1, 2, 3, 4]
    summary = results[-1]
    assert summary["vmas_count"] == 400 and summary["stop"] == "procs"


def test_no_swap_reports_zero(built):
    if Path("/proc/swaps").read_text().count("\n") > 1:
        pytest.skip("this machine has swap")
    results, _ = parse(run(built, "rmb-swap", "N=2", "mb=16").stdout)
    assert results[0]["pswpout_pages"] == 0
    assert results[0]["swapout_per_s"] == 0


BAD = [
    ("rmb-vma", ["V=0"]),
    ("rmb-vma", ["V=abc"]),
    ("rmb-vma", ["V="]),
    ("rmb-vma", ["V=-5"]),
    ("rmb-vma", ["foo=1"]),
    ("rmb-vma", ["V"]),
    ("rmb-vma", ["mode=bogus"]),
    ("rmb-vma", ["kind=huge"]),
    ("rmb-vma", ["procs=3"]),                 # capacity only
    ("rmb-fork", ["N=0"]),
    ("rmb-fork", ["N=5000"]),                 # breadth: at most 4096
    ("rmb-fork", ["mode=depth", "N=3"]),
    ("rmb-fork", ["mode=depth", "D=0"]),
    ("rmb-fork", ["V=1", "V=2"]),
    ("rmb-fork", ["mode=depth", "D=5000"]),   # depth: at most 4096
    ("rmb-fork", ["mode=chain", "D=100001"]),
    ("rmb-fork", ["mode=chain", "pages=16", "touch=17"]),
    ("rmb-fork", ["mode=chain", "pageout=2"]),
    ("rmb-fork", ["mode=thp", "huge=2"]),     # whole 4 MB spans
    ("rmb-mremap", ["mode=swapped", "ptemap=1"]),  # unshared|shared
    ("rmb-fork", ["mode=thp", "cow=2"]),
    ("rmb-fork", ["mode=rate", "huge=8"]),    # thp only
    ("rmb-fork", ["mode=depth", "touch=4"]),  # chain only
    ("rmb-mremap", ["R_mb=0"]),
    ("rmb-mremap", ["R_mb=99999999"]),
    ("rmb-mremap", ["R_mb=1048576"]),         # 1 TB: no memory for it
    ("rmb-mremap", ["mode=unshared", "K=2"]),
    ("rmb-mremap", ["moves=0"]),
    ("rmb-swap", ["N=0"]),
    ("rmb-swap", ["mb=0"]),
    ("rmb-swap", ["shared_pct=101"]),
    ("rmb-swap", ["exit_parent=2"]),
    ("rmb-swap", ["mb=1048576"]),
    ("rmb-swap", ["mode=other"]),
    ("rmb-bundle", ["W=0"]),
    ("rmb-bundle", ["mode=all"]),
    ("rmb-bundle", ["push_pct=95"]),
    ("rmb-bundle", ["W=4096", "mb=1"]),       # no page for each worker
    ("rmb-bundle", ["mode=shared", "W=1022"]),  # looks DMA-pinned
    ("rmb-bundle", ["mb=65536"]),             # 64 GB of data
    ("rmb-pageout", ["pid=0"]),
    ("rmb-pageout", ["mode=shared"]),
    ("rmb-race", ["pages=0"]),
    ("rmb-race", ["mode=fork"]),
    ("rmb-idle", ["still_ms=0"]),
    ("rmb-inject", ["mode=bogus"]),
    ("rmb-inject", ["max_nth=0"]),
    ("rmb-orphan", ["pages=0"]),
    ("rmb-forkcopy", ["pages=1"]),
    ("rmb-hwpoison", ["mode=now"]),
    ("rmb-hwpoison", ["rounds=8", "pages=8"]),  # a page left unpoisoned
    ("rmb-selfreclaim", ["mb=0"]),
    ("rmb-selfreclaim", ["mode=exec"]),
    ("rmb-selfreclaim", ["threads=65"]),
    ("rmb-selfreclaim", ["contend=2"]),
    ("rmb-selfreclaim", ["forks=4"]),               # fork only
    ("rmb-selfreclaim", ["mode=fork", "contend=1"]),  # threads only
    ("rmb-selfreclaim", ["mode=fork", "forks=1025"]),
    ("rmb-selfreclaim", ["limit_s=0"]),
    ("rmb-selfreclaim", ["mb=1048576"]),            # 1 TB: no memory
]


@pytest.mark.parametrize("prog,args", BAD,
                         ids=[f"{p}:{' '.join(a)}" for p, a in BAD])
def test_bad_parameters(built, prog, args):
    res = run(built, prog, *args)
    assert res.returncode == 2, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("RMB-ERROR "), lines
    err = json.loads(lines[0].split(" ", 1)[1])
    assert err["workload"] == prog.split("-", 1)[1] and err["message"]
    assert "Segmentation" not in res.stderr


def test_region_too_large_for_i386():
    """R_mb beyond a 32-bit address space: exit 2 before any mmap."""
    res = benchmake.make_bench("i386")
    if res.returncode != 0:
        pytest.skip("no i386 build: " + res.stderr[-200:])
    try:
        res = run(BENCH / "out" / "i386", "rmb-mremap", "R_mb=1023")
    except OSError as e:            # ENOEXEC: no IA32 emulation here
        pytest.skip(f"this host cannot run i386 programs: {e}")
    assert res.returncode == 2
    assert "address space" in res.stdout and res.stdout.startswith(
        "RMB-ERROR ")


def test_pageout_of_a_child(built):
    """rmb-pageout advises every private mapping of another process and
    skips the special ones; a process that is gone is a run-time error."""
    child = subprocess.Popen(["sleep", "30"])
    try:
        res = run(built, "rmb-pageout", f"pid={child.pid}")
    finally:
        child.kill()
        child.wait()
    results, errors = parse(res.stdout)
    if res.returncode and "Operation not permitted" in res.stdout:
        pytest.skip("process_madvise needs CAP_SYS_NICE: " + res.stdout)
    assert res.returncode == 0 and not errors, res.stdout + res.stderr
    (rec,) = results
    check_units(rec)
    assert rec["pid"] == child.pid and rec["ranges_count"] > 0
    assert 0 <= rec["refused_ranges_count"] < rec["ranges_count"]
    gone = run(built, "rmb-pageout", f"pid={child.pid}")
    assert gone.returncode == 1 and "pidfd_open" in gone.stdout


def test_help(built):
    res = run(built, "rmb-swap", "help")
    assert res.returncode == 0 and "shared_pct=50" in res.stdout


PATTERN_TEST = r"""
#include "rmb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void)
{
	struct rmb_json j;
	size_t n = 16;
	char *m, *tmp;

	rmb_init("selftest");
	m = malloc(n * rmb_page);
	tmp = malloc(rmb_page);
	rmb_fill(m, n, 7, 0);
	if (rmb_verify(m, n, 7, 0, 0) || rmb_verify(m, n, 7, 0, 1))
		return 10;
	if (rmb_verify(m, n, 8, 0, 0) != n || rmb_verify(m, n, 7, 1, 1) != n)
		return 11;			/* other seed, shifted index */
	memset(m + 3 * rmb_page, 0, rmb_page);	/* a zeroed page */
	memcpy(tmp, m + 5 * rmb_page, rmb_page);	/* two swapped pages */
	memcpy(m + 5 * rmb_page, m + 6 * rmb_page, rmb_page);
	memcpy(m + 6 * rmb_page, tmp, rmb_page);
	m[9 * rmb_page + 100] ^= 1;		/* one flipped bit */
	if (rmb_verify(m, n, 7, 0, 0) != 4 || rmb_verify(m, n, 7, 0, 1) != 3)
		return 12;
	rmb_json_begin(&j);
	rmb_json_str(&j, "s", "a\"b\\c\nd\te");
	rmb_json_int(&j, "i_count", -42);
	rmb_json_dbl(&j, "d_ns", 0.5);
	rmb_json_dbl(&j, "e_ns", 1e-9);
	rmb_json_end(&j);
	return 0;
}
"""


def test_pattern_and_json_helpers(tmp_path):
    src = tmp_path / "selftest.c"
    src.write_text(PATTERN_TEST)
    exe = tmp_path / "selftest"
    res = subprocess.run(["gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror",
                          "-I", str(BENCH / "lib"), "-o", str(exe), str(src),
                          *map(str, LIB), "-lm"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    res = subprocess.run([str(exe)], capture_output=True, text=True,
                         timeout=10)
    assert res.returncode == 0, res.stdout
    line = res.stdout.strip()
    assert line.startswith("RMB-RESULT ")
    value = json.loads(line.split(" ", 1)[1])
    assert value == {"s": "a\"b\\c\nd\te", "i_count": -42, "d_ns": 0.5,
                     "e_ns": 1e-9}


@pytest.mark.parametrize("mflag", ["-m64", "-m32"])
def test_sources_compile_without_warnings(mflag):
    for src in [*LIB, *(BENCH / f"{p}.c" for p in PROGRAMS)]:
        res = subprocess.run(["gcc", mflag, "-std=gnu11", "-O2", "-Wall",
                              "-Wextra", "-Werror", "-D_FILE_OFFSET_BITS=64",
                              "-c", "-o", os.devnull, "-I",
                              str(BENCH / "lib"), str(src)],
                             capture_output=True, text=True,
                             timeout=60)
        assert res.returncode == 0, f"{src.name} {mflag}:\n{res.stderr}"
        assert not re.search(r"warning", res.stderr), res.stderr


def test_the_multicall_binary_runs_the_program_its_name_says(built, tmp_path):
    """rmb-<name> runs that program; rmb under another name says what it
    is and fails, rather than running some program."""
    res = run(built, "rmb-fork", "--help")
    assert res.returncode == 0 and "mode=breadth" in res.stdout
    stray = tmp_path / "rmb-nosuch"
    stray.symlink_to(built / MULTICALL)
    res = subprocess.run([str(stray)], capture_output=True, text=True,
                         timeout=10)
    assert res.returncode == 2
    assert "'rmb-nosuch' is none of its programs" in res.stderr
