"""Statistics on known samples: summaries, ratio intervals, marks."""

import math

import pytest

import fabricate
from rmapbench import metrics, stats
from rmapbench.analysis import analyse
from rmapbench.record import config_key, group, metric_values


def approx(x, rel=1e-6, abs=1e-9):
    return pytest.approx(x, rel=rel, abs=abs)


def test_known_sample_median_mean_ci():
    s = stats.summarize([1.0, 2.0, 3.0, 4.0, 5.0])
    assert (s.n, s.median, s.mean, s.min, s.max) == (5, 3, 3, 1, 5)
    assert s.stddev == approx(math.sqrt(2.5))
    half = 2.7764451052 * math.sqrt(2.5) / math.sqrt(5)   # t(0.975, 4)
    assert s.ci_low == approx(3 - half) and s.ci_high == approx(3 + half)
    assert s.ci_half == approx(half)


def test_even_sample_median():
    assert stats.summarize([4.0, 1.0, 3.0, 2.0]).median == 2.5


def test_empty_is_none_and_n1_has_no_ci():
    assert stats.summarize([]) is None
    s = stats.summarize([7.0])
    assert s.n == 1 and s.mean == 7 and s.median == 7
    assert s.stddev is None and s.ci_low is None and s.ci_half is None


def test_identical_samples_have_no_spread():
    s = stats.summarize([5.0, 5.0, 5.0])
    assert s.stddev == 0 and (s.ci_low, s.ci_high) == (5, 5)
    assert s.constant and not s.exact
    assert stats.summarize([5.0, 5.0], deterministic=True).exact
    assert not stats.summarize([5.0], deterministic=True).exact   # n=1


def test_t_table_without_scipy_matches_scipy(monkeypatch):
    scipy_t = pytest.importorskip("scipy.stats").t
    for df in (1, 1.1, 1.6, 2, 2.7, 4, 7.3, 30, 35, 90, 700, 1e6):
        assert stats.table_t975(df) == pytest.approx(scipy_t.ppf(0.975, df),
                                                     rel=0.004)
    monkeypatch.setattr(stats, "_scipy_t", False)
    assert stats.t_quantile(4) == 2.776
    assert stats.t_quantile(1e9) == pytest.approx(1.96, abs=1e-3)
    assert stats.t_pvalue(3.0, 4) is None
    with pytest.raises(ValueError):
        stats.t_quantile(4, confidence=0.9)


def test_welch_mark_without_scipy(monkeypatch):
    monkeypatch.setattr(stats, "_scipy_t", False)
    c = stats.compare("m", stats.summarize([100.0, 101, 99, 100, 102]),
                      stats.summarize([150.0, 149, 151, 150, 148]))
    assert c.mark == "*" and c.p_value is None


def test_ratio_with_exact_denominator_is_t_on_the_numerator():
    base = stats.summarize([10.0, 10.0, 10.0])
    new = stats.summarize([18.0, 20.0, 22.0])
    r = stats.ratio_of_means(base, new)
    half = 4.302652730 * (2 / math.sqrt(3)) / 10        # t(0.975, 2)
    assert r.value == approx(2.0)
    assert r.low == approx(2 - half) and r.high == approx(2 + half)


def test_fieller_interval_solves_its_equation():
    base = stats.summarize([9.0, 10.0, 11.0, 10.5])
    new = stats.summarize([18.0, 20.0, 22.0, 21.0])
    r = stats.ratio_of_means(base, new)
    a, b = base.mean, new.mean
    va, vb = base.sem ** 2, new.sem ** 2
    rr = b / a
    df = (vb + rr * rr * va) ** 2 / (vb ** 2 / 3 + rr ** 4 * va ** 2 / 3)
    t = stats.t_quantile(df)
    assert r.low < rr < r.high
    for end in (r.low, r.high):
        assert (b - end * a) ** 2 == approx(t * t * (vb + end * end * va),
                                            rel=1e-6)


def test_ratio_zero_means_missing_stack_and_n1():
    some = stats.summarize([1.0, 2.0, 3.0])
    zero = stats.summarize([0.0, 0.0, 0.0])
    assert stats.ratio_of_means(zero, some).value is None
    r = stats.ratio_of_means(some, zero)
    assert (r.value, r.low, r.high) == (0, 0, 0)
    assert stats.ratio_of_means(some, None).value is None
    assert stats.ratio_of_means(None, some).value is None
    one = stats.ratio_of_means(some, stats.summarize([4.0]))
    assert one.value == 2 and one.low is None and one.high is None


def test_unbounded_ratio_interval_is_none():
    # the denominator's CI includes 0: Fieller's interval is unbounded
    base = stats.summarize([-5.0, 1.0, 7.0])
    r = stats.ratio_of_means(base, stats.summarize([2.0, 3.0, 4.0]))
    assert r.value == 3 and r.low is None and r.high is None


def test_clearly_different_samples_are_marked():
    c = stats.compare("fork_median_ns",
                      stats.summarize([100.0, 101, 99, 100, 102]),
                      stats.summarize([150.0, 149, 151, 150, 148]),
                      ("anon_vma", "anonmm"))
    assert c.mark == "*" and c.p_value < 0.001 and c.t_stat > 0
    assert c.winner(True) == "anon_vma"
    assert c.winner(False) == "anonmm"
    assert c.winner(None) is None


def test_overlapping_and_identical_samples_are_not_marked():
    c = stats.compare("m", stats.summarize([10.0, 11, 9]),
                      stats.summarize([10.2, 10.8, 9.1]))
    assert c.mark == "" and c.p_value > 0.05
    assert c.winner(True) is None
    same = stats.compare("m", stats.summarize([5.0, 5, 5]),
                         stats.summarize([5.0, 5, 5]))
    assert same.mark == "" and same.ratio.value == 1 and same.note == "equal"


def test_deterministic_counts_exact_or_unmarked():
    det = dict(deterministic=True)
    diff = stats.compare("slab_total_per_vma_bytes",
                         stats.summarize([184.0] * 3, **det),
                         stats.summarize([160.0] * 3, **det))
    assert diff.mark == "exact" and diff.winner(True) == "new"
    assert (diff.ratio.low, diff.ratio.high) == (diff.ratio.value,) * 2
    equal = stats.compare("x", stats.summarize([12.5] * 3, **det),
                          stats.summarize([12.5] * 3, **det))
    assert equal.mark == "" and not equal.differs
    # a deterministic count that did vary gets the t-test
    varied = stats.compare("x", stats.summarize([100.0, 101, 100], **det),
                           stats.summarize([140.0, 141, 140], **det))
    assert varied.mark == "*"


def test_missing_stack_and_n1_get_no_mark():
    s = stats.summarize([1.0, 2.0])
    missing = stats.compare("m", s, None)
    assert missing.mark == "" and missing.note == "no new"
    assert missing.winner(True) is None
    assert stats.compare("m", None, s, ("anon_vma", "anonmm")).note == \
        "no anon_vma"
    n1 = stats.compare("m", stats.summarize([1.0]), stats.summarize([9.0]))
    assert n1.mark == "" and n1.note.startswith("n=1")
    assert n1.ratio.value == 9 and n1.ratio.low is None


def test_group_keeps_failed_apart_and_keys_configurations():
    recs = fabricate.full_run(reps=2)
    grouped = group(recs)
    assert len(grouped.failed) == 1 + 2     # swap-mem once, fork-rate x2
    assert all(r["failed"] for r in grouped.failed)
    for key, stacks in grouped.configs.items():
        for stack, rs in stacks.items():
            assert all(not r["failed"] and r["stack"] == stack for r in rs)
            assert {config_key(r) for r in rs} == {key}
    gens = {k.generation for k in grouped.configs
            if k.experiment == "fork-depth" and k.record == "generation"}
    assert gens == set(range(1, 8))


def test_config_key_ignores_param_order():
    a = fabricate.record("e", "anonmm", "i386", "vma", "count",
                         {"V": 1, "kind": "gap"}, {})
    b = fabricate.record("e", "anon_vma", "i386", "vma", "count",
                         {"kind": "gap", "V": 1}, {}, rep=1)
    assert config_key(a) == config_key(b)
    assert config_key(a).label() == "i386 512MB V=1 kind=gap"


def test_analyse_compares_the_declared_metrics():
    analysis = analyse(fabricate.full_run())
    assert not any(c.key.record == "step" for c in analysis)
    vma = next(c for c in analysis if c.key.experiment == "vma-cost"
               and c.key.arch == "x86_64" and c.key.param("kind") == "split")
    assert list(vma.comparisons) == [m.name for m in
                                     metrics.primary("vma", "count")]
    c = vma.comparisons["slab_vm_area_struct_per_vma_bytes"]
    assert c.base.exact and c.new.exact and c.mark == "exact"
    assert c.ratio.value == approx(160 / 184)
    assert vma.schemes("anonmm") == {"anonmm"}
    rate = next(c for c in analysis if c.key.experiment == "fork-rate"
                and c.key.arch == "x86_64")
    assert rate.summary("anonmm", "forks_per_s") is None   # all failed
    assert rate.comparisons["forks_per_s"].note == "no anonmm"


def test_metric_values_skip_non_numbers_and_failed():
    recs = [{"metrics": {"x": 1}}, {"metrics": {"x": True}},
            {"metrics": {"x": "a"}}, {"metrics": {"x": float("nan")}},
            {"metrics": {}}, {"failed": True, "metrics": {"x": 5}}]
    assert metric_values(recs, "x") == [1.0]


def test_declared_metric_flags():
    names = {m.name: m for m in metrics.primary("vma", "count")}
    assert names["slab_total_per_vma_bytes"].deterministic
    assert not names["create_per_vma_ns"].deterministic
    assert metrics.lookup("forks_per_s").direction == metrics.HIGHER
    assert metrics.lookup("swapout_per_s").direction == metrics.NEUTRAL
    assert metrics.lookup("vmas_count", "vma", "capacity").direction == \
        metrics.HIGHER
    assert metrics.primary_record("fork", "depth") == "generation"
    assert metrics.lookup("unknown_thing_kb").unit == "kB"
