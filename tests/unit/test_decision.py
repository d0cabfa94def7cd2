"""The report's decision section and the plain-text summary, from
fabricated records: every outcome, crossover and size comes from them."""

import subprocess
import sys
from pathlib import Path

import pytest

import fabricate
from rmapbench import report, stats, workloads
from rmapbench.analysis import analyse
from rmapbench.report import decision

RUN = fabricate.RUN_ID
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def records():
    return fabricate.full_run()


@pytest.fixture(scope="module")
def analysis(records):
    return analyse(records)


def test_every_regime_has_a_mode_or_says_not_measured(records, analysis):
    text = "\n".join(decision.decision(records, analysis))
    for _, title in workloads.REGIMES:
        assert f"### {title}\n" in text
    # fabricate: a headline per fast-path mode and arch (fastpath 3,
    # stressng 2, on 2 arches), and the two fastpath modes that also run
    # on 2 vCPUs on the icount-rr clock, counted
    fast = text.split("### fast path, no memory pressure\n")[1]
    outcome = fast.lstrip().split("\n")[0]
    assert " of 14 headline comparison(s)" in outcome or \
        "in any of 14" in outcome, outcome
    # a run without it says so, and does not drop the regime
    rest = [r for r in records
            if r["workload"] not in ("fastpath", "stressng")]
    text = "\n".join(decision.decision(rest, analyse(rest)))
    fast = text.split("### fast path, no memory pressure\n")[1]
    assert fast.lstrip().startswith("Outcome: not measured in this run")


def test_outcomes_follow_the_data(analysis):
    rows = {(h.what, h.arch): h for h in decision.headlines(analysis)}
    # fabricate: anonmm's pair pages search the whole bundle
    assert rows[("bundle/pair", "x86_64")].outcome == "anon_vma"
    # anonmm's fork-rate boots on x86_64 all failed: no test, not a win
    assert rows[("fork/rate", "x86_64")].outcome == "untested"
    # fabricated fork records count no swap-out: not known, not "none"
    assert rows[("fork/breadth", "x86_64")].pressure is None
    assert rows[("bundle/pair", "x86_64")].pressure is True
    assert rows[("swap/family", "x86_64")].pressure is True


def test_a_mode_s_main_params_hold_its_decision_to_one_setting(analysis):
    """fastpath swept at T=1 and 2 (as 'compare --full' runs it) decides
    at T=1, as the default comparison does: the middle of the sweep
    would have been T=2."""
    fast = [h for h in decision.headlines(analysis)
            if h.what.startswith("fastpath/") and h.vcpus == 1]
    assert len(fast) == 6
    assert all(" T=1" in h.config and "T=2" not in h.config for h in fast)


def test_smp_rows_on_a_repeatable_clock_decide_beside_the_others(analysis):
    """The SMP experiments on icount-rr (fastpath's -smp ones, the
    contended bundle and the family on 2 vCPUs, fabricated; fork-rate-smp
    is not): rows of their own, named with their vCPUs."""
    smp = [h for h in decision.headlines(analysis) if h.vcpus > 1]
    assert {h.what for h in smp} == {"fastpath/fault (2 vCPUs)",
                                     "fastpath/sdet (2 vCPUs)",
                                     "bundle/pair (2 vCPUs)",
                                     "swap/family (2 vCPUs)"}
    assert all(h.clock == "icount-rr" for h in smp)
    assert all(h.clock == "icount-rr" and "T=2" in h.config
               for h in smp if h.what.startswith("fastpath"))


def test_regime_outcome_counts_its_rows():
    def h(outcome):
        return decision.Headline("r", "w/m", "x86_64", "", "", outcome,
                                 "", "", "host", False)
    assert decision.regime_outcome([]).startswith("not measured")
    assert decision.regime_outcome([h("untested")]).startswith("no test")
    assert "mixed" in decision.regime_outcome([h("anonmm"), h("anon_vma")])
    one = decision.regime_outcome([h("anonmm"), h("same")])
    assert one.startswith("**anonmm** wins 1 of 2")
    assert decision.regime_outcome([h("same")]).startswith(
        "no significant difference")
    # a significant difference within ±1% is parity, counted apart
    even = decision.regime_outcome([h("anonmm"), h("anon_vma"),
                                    h("parity"), h("same")])
    assert even.startswith("mixed: anonmm wins 1 of 4")
    assert "; within ±1% in 1 (w/m x86_64), no significant " \
           "difference in 1" in even
    assert decision.regime_outcome([h("parity")]).startswith(
        "no difference beyond ±1%")


@pytest.mark.parametrize("ratio,even", [
    ((1.003, 1.002, 1.004), True),      # icount: significant, 0.3%
    ((1.000, None, None), True),        # exact and equal within 1%
    ((1.009, 1.001, 1.018), False),     # the interval reaches 1.8%
    ((0.97, 0.967, 0.972), False),
    ((None, None, None), False)])
def test_parity_needs_the_whole_interval_within_one_percent(ratio, even):
    assert decision.within_parity(stats.Ratio(*ratio)) is even


def test_a_significant_headline_within_one_percent_is_parity(analysis):
    """The fabricated run's headlines: a winner only where the interval
    leaves ±1%, and the winner cell says so."""
    for h in decision.headlines(analysis):
        if h.outcome == decision.PARITY:
            assert decision.winner_cell(h) == "within ±1%"


def test_crossovers_found_in_the_sweep(analysis):
    points = {(p.what, p.arch): p.text
              for p in decision.crossover_points(analysis)}
    pair = next(t for (w, a), t in points.items() if "pair" in w)
    # fabricate: anonmm 3% behind at W=8, 24% at W=64
    assert pair.startswith("W = 64 ")
    private = next(t for (w, a), t in points.items() if "private" in w)
    assert private.startswith("not within the sweep (W = 8, 64")
    family = points[(next(w for w, _ in points if "family size" in w),
                     "x86_64")]
    assert family.startswith("N = 4 ")


def test_memory_size_advice_per_stack(records, analysis):
    text = "\n".join(decision.decision(records, analysis))
    size = text.split("### Memory size\n")[1]
    for stack in ("anon_vma", "anonmm"):
        assert f"{stack}: swap-out at 256 MB, none at 384 MB (sizes " \
            "tried: 128, 192, 256, 384, 512 MB): a run that must not swap " \
            "needs more than 256 MB, and 384 MB is enough" in size


def test_text_summary_has_no_markdown(tmp_path, records):
    run_dir = tmp_path / RUN
    text = report.write_text(run_dir, records, fabricate.metadata())
    assert (run_dir / "summary.txt").read_text() == text
    assert "|" not in text and "**" not in text and "`" not in text
    lines = text.splitlines()
    assert lines[0] == f"rmapbench: {RUN}"
    assert "big bundles and families under swap: mixed" in text or \
        "big bundles and families under swap: anon_vma wins" in text
    # columns line up: the header's dashes are as wide as each column
    dash = next(i for i, line in enumerate(lines) if line.startswith("---"))
    assert len(lines[dash]) >= len(lines[dash - 1])


def test_report_text_cli(tmp_path, records):
    run_dir = tmp_path / "results" / RUN
    from rmapbench import store
    store.save_boot(run_dir, "all", {"key": "all", "records": records})
    store.write_json(run_dir / "metadata.json", fabricate.metadata())
    res = subprocess.run(
        [sys.executable, str(ROOT / "harness.py"), "report", "--text", RUN],
        capture_output=True, text=True, cwd=tmp_path,
        env={"RMAPBENCH_RESULTS": str(tmp_path / "results"),
             "PATH": "/usr/bin:/bin"})
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"rmapbench: {RUN}\n")
    assert not (run_dir / "report.md").exists()


def test_the_2004_table_stands_beside_this_runs_figures(records):
    from rmapbench.workloads import fastpath
    text = "\n".join(fastpath.paper_table(records))
    assert "| kernbench -j32, system time (s) | 83.85 | 83.69 | 1.002 |" \
        in text
    assert "shell scripts per second (scripts/s, T=2, 1 vCPU)" in text
    none = "\n".join(fastpath.paper_table(
        [r for r in records if r["workload"] != "fastpath"]))
    assert "not measured" in none


def test_guest_settings_are_shown_beside_the_same_point_without(records):
    """A configuration run with a guest setting (settings.py) gets a row
    of its own: its ratio with the setting beside the ratio of the same
    point without, never counted in an outcome."""
    import copy
    pair = [r for r in records if r["experiment"] == "bundle-pair"
            and r["params"].get("W") == 64 and not r["failed"]]
    assert pair
    memcg = []
    for r in copy.deepcopy(pair):
        r["experiment"] = "bundle-pair-memcg"
        r["kernel_args"] = " ".join(
            a for a in (r.get("kernel_args"), "rmb.memcg=75") if a)
        r["boot"] += "-memcg"
        if r["stack"] == "anonmm":
            r["metrics"]["walk_mean_ns"] *= 3
        memcg.append(r)
    both = records + memcg
    analysis = analyse(both)
    text = "\n".join(decision.decision(both, analysis))
    assert "### Guest settings" in text
    section = text.split("### Guest settings")[1]
    row = next(line for line in section.splitlines()
               if line.startswith("| memcg"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    without, with_ = cells[5], cells[6]
    assert without != "not measured" and with_ != without
    assert float(with_.split()[0]) > 2 * float(without.split()[0])
    # the outcomes are the same as without the setting's records; the
    # run's own settings (the swap family's headline swaps to zram) are
    # shown, memcg is not
    plain = "\n".join(decision.decision(records, analyse(records)))
    assert "| zram |" in plain and "| memcg" not in plain
    assert plain.split("### Guest settings")[0] == \
        text.split("### Guest settings")[0]


def test_an_smp_experiment_run_alone_gives_one_row_per_kernel(records):
    """Without fork-rate, fork/rate's headline falls back to the SMP
    configuration: it is not counted twice."""
    smp = [dict(r, experiment="fastpath-sdet-smp", vcpus=2,
                clock="icount-rr", boot=r["boot"] + "-smp2")
           for r in records if r["experiment"] == "fastpath-sdet"]
    assert smp
    analysis = analyse(smp)
    rows = [h for h in decision.headlines(analysis)
            if h.what.startswith("fastpath/sdet")]
    assert len(rows) == len({h.arch for h in rows})
