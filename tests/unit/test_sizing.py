"""The memory-size search: bisection, goals and refused input, with the
boots replaced by a predicate."""

import subprocess
import sys
from pathlib import Path

import pytest

from rmapbench import sizing, store
from rmapbench.errors import UserError

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("threshold,want", [
    (200, (208, 192)), (128, (128, None)), (512, (512, 496)),
    (600, (None, 512)), (129, (144, 128))])
def test_bisect_finds_the_smallest_size_to_a_step(threshold, want):
    probed = []

    def held(mem):
        probed.append(mem)
        return mem >= threshold
    assert sizing.bisect(held, 128, 512, 16) == want
    assert len(probed) <= sizing.most_probes(128, 512, 16) == 2 + 5
    assert all((m - 128) % 16 == 0 for m in probed)


@pytest.mark.parametrize("lo,hi,step", [
    (64, 64, 16), (64, 80, 16), (64, 96, 16), (64, 512, 16), (64, 496, 16),
    (128, 512, 16), (64, 384, 32)])
def test_most_probes_bounds_every_bisection(lo, hi, step):
    for threshold in range(lo - step, hi + 2 * step, step // 2):
        probed = []

        def held(mem):
            probed.append(mem)
            return mem >= threshold
        sizing.bisect(held, lo, hi, step)
        assert len(probed) <= sizing.most_probes(lo, hi, step)


def rec(failed=False, **metrics):
    return {"failed": failed, "metrics": metrics}


def test_goals():
    assert sizing.completes([rec(pswpout_pages=5)])
    assert not sizing.completes([rec(failed=True)])
    assert not sizing.completes([])
    assert sizing.no_swap([rec(pswpout_pages=0)])
    assert not sizing.no_swap([rec(pswpout_pages=1)])
    assert not sizing.no_swap([rec(fill_pswpout_pages=0,
                                   passes_pswpout_pages=3)])


def test_bad_ranges_are_refused():
    for lo, hi, step in ((256, 128, 16), (128, 500, 16), (128, 512, 0)):
        with pytest.raises(UserError):
            sizing.check_range(lo, hi, step)


def test_cli_refuses_a_sweep_before_any_boot(tmp_path):
    res = subprocess.run(
        [sys.executable, str(ROOT / "harness.py"), "size", "--workload",
         "swap", "--param", "N=4,16", "--arch", "x86_64"],
        capture_output=True, text=True, cwd=tmp_path,
        env={"RMAPBENCH_RESULTS": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert res.returncode == 2
    assert "give one value of N" in res.stderr


def test_a_record_that_counts_no_swap_proves_no_no_swap():
    assert not sizing.no_swap([rec(faults_per_s=10.0)])


def test_too_small_a_guest_is_refused_before_a_boot():
    with pytest.raises(UserError, match="<= --lo"):
        sizing.check_range(32, 512, 16)


def test_answers_read_as_sentences():
    def answer(goal, smallest, below):
        return store.Answer("", "anonmm", "x86_64", goal, 64, 512, 16,
                            smallest, below, {}).text()
    assert answer("no-swap", 304, 288) == \
        "anonmm (x86_64): runs without swapping from 304 MB, not in 288 MB"
    assert answer("completes", 64, None) == \
        "anonmm (x86_64): completes from 64 MB, the smallest size tried"
    assert answer("completes", None, 512) == \
        "anonmm (x86_64): completes in no size up to 512 MB"


def test_a_guest_that_merely_completes_says_how_hard_it_swapped():
    def answer(goal, smallest, below, swapped):
        return store.Answer("", "anonmm", "x86_64", goal, 64, 512, 16,
                            smallest, below, {}, None, swapped).text()
    assert answer("completes", 256, 240, {240: None, 256: 21823.0}) == \
        ("anonmm (x86_64): completes from 256 MB (its probe there wrote "
         "21,823 pages to swap), not in 240 MB")
    assert answer("completes", 64, None, {64: 5.0}) == \
        ("anonmm (x86_64): completes from 64 MB, the smallest size tried "
         "(its probe there wrote 5 pages to swap)")
    assert answer("completes", 256, 240, {256: 0.0}).endswith(
        "from 256 MB, not in 240 MB")
    assert answer("no-swap", 304, 288, {304: 0.0, 288: 7.0}) == \
        "anonmm (x86_64): runs without swapping from 304 MB, not in 288 MB"


def fake_probes(monkeypatch, by_mem: dict) -> list:
    """Probes that boot nothing: each size's records (of anonmm) are
    by_mem's; returns the sizes probed, in order."""
    from types import SimpleNamespace
    probed = []

    def run_experiments(exps, *args):
        (mem,) = exps[0].mem_mb["x86_64"]
        probed.append(mem)
        return mem
    monkeypatch.setattr(sizing.runner, "run_experiments", run_experiments)
    monkeypatch.setattr(sizing.store, "load_records",
                        lambda mem: [dict(r, stack="anonmm")
                                     for r in by_mem[mem]])
    monkeypatch.setattr(sizing.experiments, "sweep_points",
                        lambda exp, arches: [SimpleNamespace(config="c")])
    monkeypatch.setattr(sizing, "Config", SimpleNamespace(of=lambda r: "c"))
    return probed


def test_a_probe_records_what_it_swapped(monkeypatch):
    """Each probe's pages swapped out are kept with the answer (None where
    a record counted none, as a failed boot's)."""
    from rmapbench import workloads
    fake_probes(monkeypatch, {
        512: [rec(pswpout_pages=0)], 80: [rec(failed=True)],
        288: [rec(pswpout_pages=2904)], 176: [rec(failed=True)],
        224: [rec(failed=True)], 256: [rec(pswpout_pages=21823)],
        240: [rec(failed=True)]})
    (s,) = [s for s in workloads.searches()
            if s.name == "size-mremap-completes"]
    a = sizing.search(s.experiment, "anonmm", "x86_64", s.goal, s.lo, s.hi,
                      s.step, "run", "tcg")
    assert (a.smallest, a.below) == (256, 240)
    assert a.swapped == {80: None, 176: None, 224: None, 240: None,
                         256: 21823.0, 288: 2904.0, 512: 0.0}
    assert "(its probe there wrote 21,823 pages to swap)" in a.text()


def test_saved_answers_reach_the_decision_section(tmp_path):
    import json
    from dataclasses import asdict
    from rmapbench.report import decision
    answer = store.Answer("mremap shared K=16", "anonmm", "i386",
                          "no-swap", 64, 512, 16, 304, 288,
                          {288: False, 304: True})
    (tmp_path / "sizing.json").write_text(json.dumps([asdict(answer)]))
    assert store.load_answers(tmp_path) == [answer]
    said = store.answer_lines(tmp_path)
    assert said == ["mremap shared K=16: anonmm (i386): runs without "
                    "swapping from 304 MB, not in 288 MB (goal no-swap: "
                    "bisected between 64 and 512 MB to 16 MB)"]
    section = decision.decision([], [], said)
    assert "### Memory size" in section and f"- {said[0]}" in section
    assert said[0] in decision.text_summary("t", [], [], [], said)
    assert store.answer_lines(tmp_path / "none") == []


def fake_search(calls):
    def search(exp, stack, where, goal, lo, hi, step, run_id, accel,
               text=""):
        (target,) = sizing.as_targets([where])
        arch = target.label()
        calls.append((exp.name, stack, arch, run_id))
        return store.Answer(text, stack, arch, goal, lo, hi, step, lo,
                            None, {lo: True})
    return search


def test_the_comparison_runs_each_declared_search_per_stack_and_arch(
        tmp_path, monkeypatch):
    """Every search on the arches asked for, both stacks, probes in a
    run directory of its own, answers in the comparison's sizing.json;
    a search of the same configuration replaces its older answers,
    another configuration's stay."""
    from rmapbench import workloads
    monkeypatch.setattr(sizing.store.paths, "RESULTS", tmp_path)
    calls = []
    monkeypatch.setattr(sizing, "search", fake_search(calls))
    (s,) = [s for s in workloads.searches()
            if s.name == "size-mremap-moves"]
    other = store.Answer("another", "anonmm", "x86_64", "no-swap", 64,
                         128, 16, 96, 80, {})
    store.save_answers(tmp_path / "cmp", [other])
    sizing.run_searches([s], ["anon_vma", "anonmm"], ["x86_64"], "cmp",
                        "tcg")
    # two searches at a time: in either order
    assert sorted(calls) == [("size-mremap-moves", st, "x86_64",
                              "cmp-size-mremap-moves")
                             for st in ("anon_vma", "anonmm")]
    sizing.run_searches([s], ["anon_vma", "anonmm"], ["x86_64"], "cmp",
                        "tcg")
    answers = store.load_answers(tmp_path / "cmp")
    assert len(answers) == 3 and other in answers
    assert all(a.what == s.text for a in answers if a != other)


def test_declared_searches_are_valid_before_any_boot():
    from rmapbench import programs, workloads
    searches = workloads.searches()
    assert searches
    for s in searches:
        sizing.check_range(s.lo, s.hi, s.step)
        sizing.check_single(s.experiment)
        assert s.goal in sizing.GOALS and s.text
        e = s.experiment
        programs.check(workloads.workload(e.workload).program, e.workload,
                       e.mode, {**e.sweep,
                                **{k: [v] for k, v in e.fixed.items()}})


def test_only_compare_full_runs_a_full_only_search(tmp_path):
    """The default comparison leaves out the searches whose probes may
    thrash for minutes; --full adds them, with every experiment's full
    sweep; naming one without --full is refused before any boot."""
    from rmapbench import experiments, workloads
    slow = {s.name for s in workloads.searches() if s.full_only}
    assert slow == {"size-mremap-completes", "size-swap-family-256"}
    _, default = experiments.chosen(None)
    exps, full = experiments.chosen(None, full=True)
    assert not slow & {s.name for s in default}
    assert slow <= {s.name for s in full}
    assert exps == [experiments.full_exp(e) for e in workloads.experiments()]
    with pytest.raises(UserError, match="only 'compare --full'"):
        experiments.chosen(["vma-cost", "size-mremap-completes"])
    res = subprocess.run(
        [sys.executable, str(ROOT / "harness.py"), "compare",
         "--experiments", "vma-cost,size-mremap-completes", "--build"],
        capture_output=True, text=True, cwd=tmp_path,
        env={"RMAPBENCH_RESULTS": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert res.returncode == 2
    assert "add --full" in res.stderr and "[build" not in res.stdout


def test_compare_refuses_searches_alone(tmp_path):
    res = subprocess.run(
        [sys.executable, str(ROOT / "harness.py"), "compare",
         "--experiments", "size-mremap-moves"],
        capture_output=True, text=True, cwd=tmp_path,
        env={"RMAPBENCH_RESULTS": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert res.returncode == 2
    assert "names only size searches" in res.stderr


def test_a_kernel_fault_in_a_probe_stops_the_search_as_a_failure(
        monkeypatch):
    """A probe whose kernel faulted says nothing about memory: the search
    stops there, its answer is a failure naming the probe and the fault
    (not "does not fit"), and the other probes are kept."""
    from rmapbench import workloads
    fault = "kernel fault (WARNING, cut here) at console line 615"
    probe_mem = fake_probes(monkeypatch, {
        512: [rec(pswpout_pages=3)], 64: [rec(failed=True)],
        288: [dict(rec(failed=True), failure=fault)]})
    (s,) = [s for s in workloads.searches() if s.name == "size-mremap-moves"]
    answer = sizing.search(s.experiment, "anonmm", "x86_64", "completes", 64,
                           512, 16, "run", "tcg")
    assert probe_mem == [512, 64, 288]
    assert answer.fault == f"288 MB: {fault}"
    assert answer.smallest is None and answer.probes == {512: True, 64: False}
    assert answer.text().startswith("anonmm (x86_64): FAILED, no answer: "
                                    "the kernel faulted in the probe of "
                                    "288 MB: kernel fault (WARNING")
    assert sizing.faulted([answer]) == [answer]
    assert sizing.kernel_fault([rec(failed=True)]) is None
