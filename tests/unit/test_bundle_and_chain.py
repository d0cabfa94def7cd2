"""Issue 13's first two experiments as their modules declare them: the
bundle's patterns and the fork chain, in the default comparison at sizes
that fit its time, and drawn from 'harness.py run' sweeps too."""

import fabricate
from rmapbench import experiments, plots, workloads
from rmapbench.workloads import bundle, fork

NEW = ("bundle-private", "bundle-pair", "bundle-shared", "fork-chain")


def test_they_are_in_the_default_comparison_at_a_few_boots():
    names = [e.name for e in workloads.experiments()]
    assert all(n in names for n in NEW)
    cases = experiments.expand(experiments.by_name(list(NEW)),
                               ["anon_vma", "anonmm"], ["i386", "x86_64"],
                               3)
    # 3 patterns x 2 widths on both arches + 1 chain on x86_64, 2
    # stacks, and anonmm's other fork order for the pair pattern, 3
    # repetitions
    assert len(cases) == ((3 * 2 * 2 + 1) * 2 + 2 * 2) * 3
    assert {c.config.arch for c in cases
            if c.config.experiment != "fork-chain"} == \
        {"i386", "x86_64"}


def test_each_pattern_is_a_mode_comparing_reclaim_per_page():
    w = workloads.workload("bundle")
    assert w.mode_names() == ("private", "pair", "shared")
    for mode in w.modes:
        assert mode.metrics[0].name == "walk_mean_ns"
        assert "visited_per_reclaimed_count" in [m.name for m in mode.metrics]


def test_series_are_per_stack_and_pattern():
    recs = bundle.bundle_records(fabricate.full_run(reps=2))
    data = bundle.pattern_series(recs, bundle.fg.metric(
        "visited_per_reclaimed_count"))
    assert sorted(data) == sorted((s, p) for s in ("anon_vma", "anonmm")
                                  for p in bundle.PATTERNS)
    pair = dict(data[("anonmm", "pair")])
    assert pair[64].mean > 10 * dict(data[("anon_vma", "pair")])[64].mean


def test_sweeps_of_harness_run_are_drawn(tmp_path):
    """A custom experiment's records (harness.py run) are drawn too."""
    recs = [r for r in fabricate.full_run(reps=1)
            if r["experiment"] in NEW]
    for rec in recs:
        rec["experiment"] = "custom"
    files = plots.make_plots(recs, tmp_path)
    assert sorted(f.name for f in files) == [
        "bundle.png", "bundle.svg", "fork-chain.png", "fork-chain.svg"]
    assert len(fork.chain_records(recs)) == 12


def test_contention_is_its_own_figure_and_not_in_the_w_sweep(tmp_path):
    recs = fabricate.full_run(reps=2)
    assert not any(r["experiment"] == bundle.CONTEND
                   for r in bundle.bundle_records(recs))
    files = bundle.plot_contend(recs, tmp_path)
    assert {f.name for f in files} == {"bundle-contend.png",
                                       "bundle-contend.svg"}
