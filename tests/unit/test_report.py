"""The Markdown report from fabricated records and metadata."""

import re
from pathlib import Path

import pytest

import fabricate
from rmapbench import report, workloads

RUN = fabricate.RUN_ID


def section(text: str, title: str) -> str:
    """The text of '## title' up to the next '## ' heading."""
    start = text.index(f"## {title}")
    rest = text[start + 3:]
    end = re.search(r"^## ", rest, re.M)
    return text[start:start + 3 + end.start()] if end else text[start:]


def subsection(text: str, title: str) -> str:
    start = text.index(f"### {title}\n")
    rest = text[start + 4:]
    end = re.search(r"^##", rest, re.M)
    return text[start:start + 4 + end.start()] if end else text[start:]


def write(tmp_path: Path, records, metadata=None, plot_files=()):
    run_dir = tmp_path / "results" / RUN
    path = report.write_report(run_dir, records,
                               metadata or fabricate.metadata(),
                               list(plot_files))
    assert path == run_dir / "report.md"
    return path.read_text()


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    plots = [tmp / "plots" / RUN / f"{stem}{ext}" for stem in
             ("mremap", "vma-size-cost", "swap-mem") for ext in (".png",
                                                                 ".svg")]
    return write(tmp, fabricate.full_run(), plot_files=plots)


def test_title_environment_and_config_diff(text):
    assert text.startswith(f"# rmapbench report: {RUN}\n")
    env = section(text, "Environment")
    for fact in ("6.1.123-1", "QEMU emulator 7.2.15", "Fabricated CPU",
                 "2025-01-01T00:00:00Z", "`aaaa1111`", "`c0ffee04`",
                 "| repetitions | 3 |", "mremap-shared, mremap-swapped"):
        assert fact in env
    assert "**WARNING: TCG.**" in text.split("## Environment")[0]
    diff = section(text, "Config diff between the stacks")
    assert "**i386**: 1 symbol(s) differ" in diff
    assert "CONFIG_RMAP_ANONMM: anon_vma=n anonmm=y" in diff


def test_summary_table_rows(text):
    summary = section(text, "Summary")
    assert "| workload/mode | arch | metric | configuration | anon_vma mean " \
           "| anonmm mean | anonmm/anon_vma [95% CI] | mark | winner |" \
           in summary
    row = next(line for line in summary.splitlines() if line.startswith(
        "| vma/count | x86_64 | vm_area_struct per VMA"))
    assert "| 184 exact (n=3) | 160 exact (n=3) | 0.870 | exact | anonmm |" \
        in row
    row = next(line for line in summary.splitlines() if line.startswith(
        "| swap/family | x86_64 | mean time of one rmap walk"))
    assert row.endswith("| * | anon_vma |")
    row = next(line for line in summary.splitlines() if line.startswith(
        "| swap/family | x86_64 | swap-out throughput"))
    assert row.endswith("| (informational) |")
    for mode in ("vma/capacity", "fork/breadth", "fork/depth", "fork/rate",
                 "mremap/unshared", "mremap/shared", "mremap/swapped",
                 "swap/family", "fio/write4k"):
        assert f"| {mode} |" in summary


def test_a_verdict_per_workload(text):
    verdicts = section(text, "Verdicts")
    for workload in ("vma", "fork", "mremap", "swap", "fio"):
        assert f"### {workload}\n" in verdicts
    assert "**anonmm wins** 3 of 3 headline" in subsection(verdicts, "vma")
    swap = subsection(verdicts, "swap")
    assert "**anon_vma wins**" in swap and "Welch p=" in swap
    assert "icount clock" in swap
    assert "**No significant difference**" in subsection(verdicts, "fio")
    assert "every boot of anonmm failed (3)" in subsection(verdicts, "fork")


def test_not_measured_workload(tmp_path):
    recs = [r for r in fabricate.full_run(reps=2) if r["workload"] != "fio"]
    recs += [fabricate.failed("custom", "anonmm", "x86_64", "fio", "write4k",
                              {}, failure="timed out after 60s")]
    text = write(tmp_path, recs)
    assert "Not measured: all 1 boot(s) failed" in subsection(text, "fio")
    recs = [r for r in recs if r["workload"] not in ("fio", "mremap")]
    text = write(tmp_path, recs)
    assert "### mremap\n\nNot measured.\n" in text


def test_failure_listed_with_excerpt_and_no_number(text):
    failures = section(text, "Failures")
    assert "4 failed boot(s)" in failures
    assert "### Failure 1: anonmm i386 128 MB swap/family rep 2" in failures
    assert fabricate.FAILURE in failures
    assert f"```\n{fabricate.FAILURE_EXCERPT}\n```" in failures
    assert "params: N=4 mb=256" in failures
    assert "timed out after 600s" in failures
    # every rep of fork-rate x86_64 anonmm failed: named, never a number
    rate = subsection(text, "fork-rate")
    row = next(line for line in rate.splitlines() if "x86_64" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[4] == "failed (3 boots)"
    assert cells[5] == "—" and cells[6] == "no anonmm"
    summary = section(text, "Summary")
    row = next(line for line in summary.splitlines()
               if line.startswith("| fork/rate | x86_64"))
    assert "| failed (3 boots) |" in row
    # one of three swap-mem reps failed: two measured, one noted
    assert "(n=2), 1 failed" in section(text, "Memory-size recommendation")


def test_configuration_where_everything_failed(tmp_path):
    recs = fabricate.full_run(reps=1)
    recs += [fabricate.failed("custom", s, "x86_64", "swap", "family",
                              {"N": 2}, rep=0) for s in fabricate.STACKS]
    custom = subsection(write(tmp_path, recs), "custom")
    row = next(line for line in custom.splitlines() if "N=2" in line)
    assert row.count("failed (1 boot)") == 2
    assert not re.search(r"\d+\.\d", row)


def test_empty_run(tmp_path):
    text = write(tmp_path, [], {"config_diff": {"i386": []}})
    assert f"# rmapbench report: {RUN}" in text      # the run directory
    assert "No measurements." in section(text, "Summary")
    assert section(text, "Verdicts").count("Not measured.") == \
        len(workloads.WORKLOADS)
    assert "configurations are identical" in text
    assert "None: every boot finished." in text


def test_excerpt_with_backticks_gets_a_longer_fence(tmp_path):
    recs = [fabricate.failed("vma-cost", "anonmm", "i386", "vma", "count",
                             {"V": 1}, excerpt="a ``` b")]
    assert "````\na ``` b\n````" in write(tmp_path, recs)


def test_loud_warning_when_anonmm_stack_runs_anon_vma(tmp_path):
    recs = fabricate.full_run(reps=2, anonmm_scheme="anon_vma")
    text = write(tmp_path, recs)
    top = text.split("## Environment")[0]
    assert "**The anonmm stack does not yet run anonmm**" in top
    assert "no verdict about anonmm is possible" in top
    verdicts = section(text, "Verdicts")
    for workload in ("vma", "fork", "mremap", "swap", "fio"):
        assert "does not yet run anonmm" in subsection(verdicts, workload)
    assert "wins" not in verdicts.replace("wins** on", "")


def test_no_warning_when_anonmm_runs_anonmm_under_kvm(tmp_path):
    recs = fabricate.full_run(reps=2)
    for rec in recs:
        rec["accel"] = "kvm"
    text = write(tmp_path, recs, fabricate.metadata(accel="kvm"))
    assert "does not yet run anonmm" not in text
    assert "TCG" not in text and "one repetition" not in text


def test_one_repetition_is_said_and_nothing_wins(tmp_path):
    text = write(tmp_path, fabricate.full_run(reps=1))
    assert "**WARNING: one repetition.**" in text.split("## Environment")[0]
    verdicts = section(text, "Verdicts")
    assert "wins" not in verdicts
    assert "no test (one repetition only)" in verdicts
    assert "exact (n=1)" not in text and "| 184 (n=1) |" in text


def test_memory_recommendation(text):
    rec = section(text, "Memory-size recommendation")
    for arch in ("i386", "x86_64"):
        assert f"**{arch}**, swap N=4 mb=256:" in rec
    assert rec.count("none at 384 MB") == 4
    assert "fastest swap-out at 256 MB" in rec
    assert "| 384 MB | 0, all equal (n=3) | no swap |" in rec
    assert "| 128 MB |" in rec and "swaps" in rec


def test_memory_recommendation_when_every_size_swaps(tmp_path):
    recs = [r for r in fabricate.full_run(reps=2)
            if r["experiment"] != "swap-mem" or r["mem_mb"] < 384]
    rec = section(write(tmp_path, recs), "Memory-size recommendation")
    assert "swaps at every size tried (up to 256 MB)" in rec


def test_plots_linked_once_relative_to_the_report(text):
    link = f"![mremap](../../plots/{RUN}/mremap.png)"
    assert text.count(link) == 1
    assert link in subsection(text, "mremap-unshared")
    assert f"(../../plots/{RUN}/mremap.svg)" in text
    assert f"![vma-size-cost](../../plots/{RUN}/vma-size-cost.png)" in \
        subsection(text, "vma-cost")
    assert f"![swap-mem](../../plots/{RUN}/swap-mem.png)" in \
        subsection(text, "swap-mem")


def test_experiment_tables_cover_every_configuration(text):
    depth = subsection(text, "fork-depth")
    assert all(f"gen={g}" in depth for g in range(1, 8))
    vma = subsection(text, "vma-cost")
    assert "kind=gap" in vma and "kind=split" in vma
    assert "exact" in vma and "±" in vma


def test_each_figure_says_how_its_boots_ran(text):
    swap = text.split("![swap-mem]")[1].split("([SVG]")[0]
    # swap-mem on the icount clock, fio's ceiling on the host's
    assert "Measured under tcg, host clock; tcg, icount clock, on 1 vCPU, " \
        "under memory pressure (pages swapped out)." in swap
    vma = text.split("![mremap]")[1].split("([SVG]")[0]
    assert "swap-out not counted" in vma or "no swap-out" in vma


def test_a_figures_setting_counts_its_experiments_variants():
    """The fork-rate figure draws fork-rate-smp too: its caption says
    both vCPU counts."""
    from rmapbench.report import experiment_sections as rexp
    recs = [{"experiment": "fork-rate", "accel": "tcg", "clock": "icount",
             "vcpus": 1, "failed": False, "metrics": {}},
            {"experiment": "fork-rate-smp", "accel": "tcg", "clock": "host",
             "vcpus": 2, "failed": False, "metrics": {}},
            {"experiment": "fork-ratex", "accel": "tcg", "vcpus": 4,
             "failed": False, "metrics": {}}]
    said = rexp.figure_setting(recs, ("fork-rate",))
    assert "icount clock" in said and "host clock" in said
    assert "on 1/2 vCPU" in said


def test_interval_widths_count_the_timed_ratios_within_target(text):
    """Issue 14's CPU-bound goal read off the report: per clock and
    memory pressure, the timed ratios, how many are within ±3%, and the
    widest; the rows of a clock add up to all its timed ratios."""
    from rmapbench.analysis import analyse
    from rmapbench.report import decision, measured
    widths = measured.timed_ratios(analyse(fabricate.full_run()))
    assert widths
    rows = section(text, "Interval widths")
    seen_pressures = set()
    for clock, items in widths.items():
        groups: dict = {}
        for item in items:
            p = measured.pressure_of(item[1])
            assert p.startswith(decision.PRESSURE[decision.swapped(item[1])])
            groups.setdefault(p, []).append(item)
        seen_pressures |= set(groups)
        assert sum(len(g) for g in groups.values()) == len(items)
        for pressure, group in groups.items():
            inside = sum(1 for w, _, _ in group if w <= 0.03)
            assert f"| {clock} | {pressure} | {len(group)} | {inside} |" \
                in rows
            widest = max(w for w, _, _ in group)
            assert f"±{widest:.1%}" in rows or "no interval" in rows
    # the fabricated run's swap timings stand apart from the others
    assert "under swap" in seen_pressures and len(seen_pressures) >= 2


def test_reach_reads_the_farther_end():
    from rmapbench import stats
    assert abs(stats.Ratio(1.0, 0.98, 1.05).reach - 0.05) < 1e-9
    assert stats.Ratio(1.0, None, None).reach == float("inf")


def test_how_sure_names_the_clock_of_a_timing():
    from rmapbench import metrics, stats
    from rmapbench.report import compare
    c = stats.Comparison("forks_per_s", None, None, None, "*", p_value=0.01)
    timed = metrics.lookup("forks_per_s")
    assert compare.how_sure(c, timed, True).endswith(
        "emulated timing (TCG)")
    assert compare.how_sure(c, timed, True, "icount").endswith(
        "icount clock")


def test_interval_widths_keep_each_set_of_guest_settings_apart():
    """Swap to zram is a pressure of its own in the interval table (its
    point: an icount boot that swaps without host I/O repeats)."""
    from rmapbench.analysis import analyse
    from rmapbench.report import measured
    recs = fabricate.full_run()
    zram = [dict(r, experiment="swap-family-zram",
                 kernel_args="rmb.swap=zram")
            for r in recs if r.get("experiment") == "swap-family"]
    assert zram
    rows = "\n".join(measured.interval_widths(analyse(recs + zram)))
    assert "| icount | under swap (zram) |" in rows
    assert "| icount | under swap |" in rows
