"""Experiments expand into boots; sweep specs parse or fail clearly."""

import pytest

from rmapbench import experiments, programs, testbed, workloads
from rmapbench.errors import UserError


def test_parse_values_and_params():
    assert experiments.parse_values("1,4,16") == [1, 4, 16]
    assert experiments.parse_values("split,gap") == ["split", "gap"]
    assert experiments.parse_params(["N=1,4", "kind=gap"]) == {
        "N": [1, 4], "kind": ["gap"]}


@pytest.mark.parametrize("spec", ["N", "=4", "N=", "N=1,,2"])
def test_malformed_sweeps_are_refused(spec):
    with pytest.raises(UserError, match="malformed"):
        experiments.parse_params([spec])


def test_expand_is_the_full_product():
    exp = experiments.Experiment("t", "fork", "breadth", ("i386", "x86_64"),
                                 sweep={"N": [1, 2]}, fixed={"V": 10},
                                 mem_mb={"x86_64": [128, 256]})
    cases = experiments.expand([exp], ["anon_vma", "anonmm"], ["x86_64"], 2)
    assert len(cases) == 2 * 2 * 2 * 2          # mem x N x stack x rep
    assert {c.config.arch for c in cases} == {"x86_64"}
    assert len({c.key() for c in cases}) == len(cases)
    first = cases[0]
    assert first.rep == 0 and first.config.params == (("N", 1), ("V", 10))
    assert "run rmb-fork mode=breadth N=1 V=10" in first.plan()
    assert first.plan().startswith("swapon\n")


def test_default_mem_per_arch():
    exp = experiments.Experiment("t", "vma", "count", ("i386",))
    (case,) = experiments.expand([exp], ["anonmm"], ["i386"], 1)
    assert case.config.mem_mb == testbed.arch("i386").mem_mb


def test_custom_checks_workload_mode_and_memory():
    with pytest.raises(UserError, match="unknown workload 'vmas'"):
        experiments.custom("vmas", None, [], None, ["x86_64"], 60)
    with pytest.raises(UserError, match="no mode 'wide'"):
        experiments.custom("fork", "wide", [], None, ["x86_64"], 60)
    with pytest.raises(UserError, match="malformed memory sizes"):
        experiments.custom("vma", None, [], "128,big", ["x86_64"], 60)
    exp = experiments.custom("swap", None, ["N=1,4"], "128,256",
                             ["x86_64"], 60)
    assert exp.mode == "family" and exp.mem_mb == {"x86_64": [128, 256]}


def test_fio_runs_where_the_registry_packs_it(monkeypatch):
    exp = experiments.custom("fio", None, [], None, ["i386", "x86_64"], 60)
    assert exp.arches == ("i386", "x86_64")
    monkeypatch.setattr(testbed, "arches_with", lambda tool: ("x86_64",))
    exp = experiments.custom("fio", None, [], None, ["i386", "x86_64"], 60)
    assert exp.arches == ("x86_64",)


def test_by_name():
    assert experiments.by_name(["lowmem"])[0].arches == ("i386",)
    with pytest.raises(UserError, match="unknown experiment"):
        experiments.by_name(["lowmen"])


def test_digest_changes_with_the_experiment():
    a = experiments.Experiment("t", "vma", "count", ("i386",), fixed={"V": 1})
    b = experiments.Experiment("t", "vma", "count", ("i386",), fixed={"V": 2})
    assert experiments.digest([a]) != experiments.digest([b])
    assert experiments.digest([a]) == experiments.digest([a])


def test_icount_boots_one_vcpu_only():
    with pytest.raises(UserError, match="at most 1 vCPU"):
        experiments.custom("fastpath", None, [], None, ["x86_64"], 60,
                           clocks=("icount",), vcpus=(1, 2))
    with pytest.raises(UserError, match="out of range"):
        experiments.custom("fastpath", None, [], None, ["x86_64"], 60,
                           vcpus=(0,))
    exp = experiments.custom("fastpath", None, [], None, ["x86_64"], 60,
                             vcpus=(1, 2))
    assert exp.vcpus == (1, 2)


def test_every_declared_experiment_can_boot_on_its_clocks():
    from rmapbench import workloads
    for e in workloads.experiments():
        experiments.check_vcpus(e.vcpus, e.clocks)


def test_full_comparison_widens_the_sweeps_it_names():
    """'compare --full' runs the larger sizes: bundles to W = 1,024,
    fork chains of 10,000 generations; every full override names only
    Experiment fields and every value it sets is within the program's
    parameter ranges (checked as the run would)."""
    exps = {e.name: e for e in workloads.experiments()}
    full = {n: experiments.full_exp(e) for n, e in exps.items()}
    assert full["bundle-pair"].sweep["W"][-1] == 1024
    assert full["fork-chain"].fixed["D"] == 10000
    assert exps["fork-chain"].fixed["D"] == 1000
    widened = [n for n in exps if full[n] != exps[n]]
    assert widened
    # the swap experiments' 64 MB of data and fio's 64 MB writes are
    # the default's, their 256 MB the full comparison's
    assert exps["swap-family"].fixed["mb"] == 64
    assert full["swap-family"].fixed["mb"] == 256
    assert full["swap-ceiling"].fixed["mb"] == 256
    for n in widened:
        e = full[n]
        program = workloads.workload(e.workload).program
        if not program:     # fio: no parameter table of ours
            continue
        values = {**e.sweep, **{k: [v] for k, v in e.fixed.items()}}
        programs.check(program, e.workload, e.mode, values)
