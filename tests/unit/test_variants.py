"""Stack variants: anonmm booted with anonmm_fork_order=after_parent
beside its headline (the 2004 tail), in the plan, the records and the
report, with fake boots and fabricated records."""

import dataclasses
import itertools
import re
from pathlib import Path

import pytest

import fabricate
import fakeguest
from rmapbench import experiments, qemu, report, testbed
from rmapbench import reparse, repetitions, runner, store
from rmapbench.analysis import analyse
from rmapbench.errors import UserError
from rmapbench.testbed import ICOUNT
from rmapbench.report import decision

AFTER = "anonmm_fork_order=after_parent"
LANE = f"anonmm, {AFTER}"
STACKS = ["anon_vma", "anonmm"]
# the experiments the comparison runs under both fork orders: those of
# pair data, where the order changes anonmm's walk
BOTH_ORDERS = {"bundle-pair", "bundle-contend"}
# and 'compare --full', where the order changes nothing but is shown
FULL_ORDERS = BOTH_ORDERS | {
    "bundle-private", "bundle-shared", "fork-breadth", "fork-depth",
    "fork-chain", "fork-rate", "fork-rate-smp", "swap-mem", "swap-family",
    "swap-family-zram", "swap-smp"}


def compare_plan(full: bool = False) -> list[experiments.Case]:
    """The first repetition of every boot 'harness.py compare' plans."""
    exps, _ = experiments.chosen(None, full)
    return experiments.expand(exps, STACKS, list(testbed.arch_names()), 1)


@pytest.mark.parametrize("full, expected", [(False, BOTH_ORDERS),
                                            (True, FULL_ORDERS)])
def test_compare_boots_anonmm_under_both_orders_where_declared(
        full, expected):
    cases = compare_plan(full)
    variant = [c for c in cases if c.variant]
    assert {c.config.experiment for c in variant} == expected
    assert {(c.stack, c.variant) for c in variant} == {("anonmm", AFTER)}
    # each variant boot is a headline anonmm boot with the option added
    headline = {dataclasses.replace(c, variant=""): c for c in variant}
    assert set(headline) <= set(cases)
    for case in variant:
        boot = runner.job_of(case).boot
        assert boot.stack == "anonmm" and AFTER in boot.append.split()
        assert case.config == dataclasses.replace(case, variant="").config


def test_anon_vma_boots_once_per_point_whatever_anonmm_runs():
    cases = compare_plan()
    assert len({c.key() for c in cases}) == len(cases)
    base = [c for c in cases if c.stack == "anon_vma"]
    assert not any(c.variant for c in base)
    assert len(base) == len([c for c in cases
                             if c.stack == "anonmm" and not c.variant])
    # the headline boots pass nothing: the kernel's default, tail
    for case in base + [c for c in cases if c.stack == "anonmm"
                        and not c.variant and c.config.workload == "bundle"]:
        assert "anonmm_fork_order" not in runner.job_of(case).boot.append


def test_the_variants_are_part_of_the_run_id():
    exps, _ = experiments.chosen(None)
    plain = [dataclasses.replace(e, variants=()) for e in exps]
    assert experiments.digest(exps) != experiments.digest(plain)


@pytest.mark.parametrize("call,says", [
    (lambda: testbed.stack_variant("anonmm_fork_order=sideways"),
     "unknown anonmm_fork_order 'sideways': choose one of tail, "
     "after_parent"),
    (lambda: testbed.stack_variant("anonmm_fork_order=tail"),
     "anonmm_fork_order=tail is anonmm's default"),
    (lambda: testbed.stack_variant("fork_order=after_parent"),
     "unknown stack variant 'fork_order=after_parent': choose one of "
     f"{AFTER}"),
    (lambda: experiments.custom("bundle", "pair", [], None, ["x86_64"], 60,
                                append="anonmm_fork_order=sideways"),
     "unknown anonmm_fork_order 'sideways'"),
    (lambda: experiments.custom("bundle", "pair", [], None, ["x86_64"], 60,
                                variants=("anonmm_fork_order=head",)),
     "unknown anonmm_fork_order 'head'")])
def test_an_unknown_order_is_refused_in_one_line(call, says):
    with pytest.raises(UserError, match=re.escape(says)) as err:
        call()
    assert "\n" not in str(err.value)


def kernel_console(confirms: bool = True):
    """The console of a kernel that logs the fork order its anonmm
    kernel was given (unless confirms is False: a kernel without the
    option) and prints a fork+exit rate for every run line, a new one
    each boot."""
    boots = itertools.count(1)

    def text(boot: qemu.Boot) -> str:
        n = next(boots)
        order = "after_parent" if AFTER in boot.append else "tail"
        lines = [f"[    0.500000] anonmm: fork order {order}"] \
            if boot.stack == "anonmm" and (confirms or order == "tail") \
            else []
        steps = boot.plan.splitlines()
        for n, step in enumerate(steps, 1):
            lines.append(f"RMB-STEP {n}/{len(steps)} {step}")
            if step.startswith("run "):
                rate = 1000 + 10 * n
                lines.append('RMB-RESULT {"workload":"fork","mode":"rate",'
                             f'"scheme":"{boot.stack}","params":{{}},'
                             f'"metrics":{{"forks_per_s":{rate}}}}}')
            lines.append(f"RMB-STEP-END {n} rc=0 ms=5")
        return "\n".join(lines + ["RMB-DONE rc=0"]) + "\n"
    return text


RATE = experiments.Experiment("t-order", "fork", "rate", ("x86_64",),
                              fixed={"V": 10, "N": 5}, clocks=(ICOUNT,),
                              variants=(AFTER,))


def run_rate(tmp_path, monkeypatch, confirms: bool = True):
    monkeypatch.setattr(store.paths, "RESULTS", tmp_path)
    monkeypatch.setattr(runner, "require_kernels", lambda cases: None)
    monkeypatch.setattr(runner.environment, "collect",
                        lambda *args: {"run_id": "t"})
    booted = fakeguest.install(monkeypatch, kernel_console(confirms))
    rdir = runner.run_experiments([RATE], STACKS, ["x86_64"], 2, "t",
                                  "t", "tcg")
    return [(b.stack, b.append) for b, _ in booted], rdir


def test_a_run_boots_the_variant_beside_one_set_of_base_boots(
        tmp_path, monkeypatch):
    booted, rdir = run_rate(tmp_path, monkeypatch)
    # two repetitions: anon_vma twice, anonmm twice under each order
    assert sorted(booted) == sorted([("anon_vma", ""), ("anonmm", ""),
                                     ("anonmm", AFTER)] * 2)
    recs = store.load_records(rdir)
    assert not any(r["failed"] for r in recs)
    mine = [r for r in recs if r.get("variant")]
    assert len(mine) == 2 and all(r["variant"] == AFTER
                                  and r["stack"] == "anonmm"
                                  and AFTER in r["boot"] for r in mine)
    (cs,) = analyse(recs)
    assert set(cs.records) == {"anon_vma", "anonmm", LANE}
    assert set(cs.variants) == {LANE}
    assert cs.variants[LANE]["forks_per_s"].base == \
        cs.comparisons["forks_per_s"].base
    # the records rebuild from the consoles with their lane
    assert reparse.reparse(rdir) == (6, 6)
    assert sorted(r.get("variant", "") for r in
                  store.load_records(rdir)) == ["", "", "", "", AFTER, AFTER]


def test_a_kernel_that_does_not_confirm_the_order_fails_the_boot(
        tmp_path, monkeypatch):
    _, rdir = run_rate(tmp_path, monkeypatch, confirms=False)
    failed = [r for r in store.load_records(rdir) if r["failed"]]
    assert {r.get("variant") for r in failed} == {AFTER} and \
        len(failed) == 2
    assert "did not confirm anonmm_fork_order=after_parent" in \
        failed[0]["failure"]


def test_the_headline_decides_the_repetitions():
    """A variant lane gets the boots its point's headline decides: it is
    waited for, but its spread adds no round."""
    def rec(lane: str, rep: int, value: float) -> dict:
        stack, _, variant = lane.partition(", ")
        r = fabricate.record("t-order", stack, "x86_64", "fork", "rate",
                             RATE.fixed, {"forks_per_s": value}, rep=rep)
        r["clock"] = ICOUNT
        return {**r, **({"variant": variant} if variant else {})}
    points = experiments.sweep_points(RATE, ["x86_64"])
    tight = [rec(s, r, v + r * 0.1) for r in range(2)
             for s, v in (("anon_vma", 200.0), ("anonmm", 280.0))]
    (d,) = repetitions.decisions(points, tight, STACKS, None).values()
    assert d.why == "running"           # the variant's boots are missing
    wide = tight + [rec(LANE, 0, 100.0), rec(LANE, 1, 400.0)]
    (d,) = repetitions.decisions(points, wide, STACKS, None).values()
    assert d.boots == 2 and "within ±3%" in d.why


@pytest.fixture(scope="module")
def with_orders():
    return fabricate.full_run(orders=True)


def test_the_decision_rests_on_the_headline_only(with_orders):
    plain = fabricate.full_run()
    assert decision.headlines(analyse(with_orders)) == \
        decision.headlines(analyse(plain))
    rows = decision.variant_headlines(analyse(with_orders),
                                      with_orders)
    assert rows and all(h.lane == LANE for h in rows)
    pair = next(h for h in rows if h.what == "bundle/pair")
    # fabricate: after_parent finds a pair page next to its worker
    assert pair.outcome in ("same", decision.PARITY)
    assert pair.beside.startswith("1.29")


def test_the_report_labels_the_variant_beside_the_headline(tmp_path,
                                                           with_orders):
    text = report.write_report(tmp_path / "run", with_orders,
                               fabricate.metadata(), []).read_text()
    plain = report.write_report(tmp_path / "plain", fabricate.full_run(),
                                fabricate.metadata(), []).read_text()
    dec = text[text.index("## Decision"):text.index("## Environment")]
    assert "anonmm with `anonmm_fork_order=tail`" in dec
    reclaim = dec[dec.index("### big bundles"):dec.index("### fast path")]
    assert "Variants (context, not counted):" in reclaim
    assert re.search(rf"\| bundle/pair \| x86_64 \| .* \| {LANE} \| "
                     r"1\.29\d \[", reclaim)
    outcome = "Outcome: **anon_vma** wins 5 of 7 headline comparison(s)"
    assert outcome in reclaim and outcome in plain
    # the headline rows, the summary and the verdicts are today's
    for part in ("Summary", "Verdicts"):
        assert section(text, part) == section(plain, part)
    pair = section(text, "Experiments").split("### bundle-pair\n")[1]
    pair = pair.split("\n### ")[0]
    assert f"Variant **{LANE}** (context" in pair
    assert f"| anon_vma | {LANE} | variant/anon_vma [95% CI] |" in pair
    summary = (tmp_path / "run" / "summary.txt").read_text()
    assert "Variants (context, not counted in the outcomes above)" in summary
    assert LANE in summary


def section(text: str, title: str) -> str:
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 3)
    return text[start:end if end > 0 else None]


def test_figures_draw_the_headline_boots_only(tmp_path, monkeypatch,
                                              with_orders):
    from rmapbench import plots
    seen: list[list[dict]] = []

    def draw(records: list[dict], out_dir: Path) -> list[Path]:
        seen.append(records)
        return []
    probe = plots.workloads.Figure("probe", ("bundle-pair",), draw)
    monkeypatch.setattr(plots.workloads, "figures", lambda: (probe,))
    plots.make_plots(with_orders, tmp_path)
    assert seen[0] and not any(r.get("variant") for r in seen[0])


def test_run_append_is_every_stack_s_and_labels_the_configuration():
    """harness.py run --append anonmm_fork_order=after_parent: every
    stack's boots take it (anon_vma's ignores it), the records say so
    in their identity, and the report's configurations name it."""
    from rmapbench.report import measured
    exp = experiments.custom("fork", "rate", [], None, ["x86_64"], 60,
                             append=AFTER)
    (point,) = experiments.sweep_points(exp, ["x86_64"])
    recs = []
    for case in point.cases(STACKS, 0):
        assert not case.variant and runner.job_of(case).boot.append == AFTER
        recs.append({**runner.base_record(case, "r", "tcg"), "failed": False,
                     "record": "summary", "metrics": {"forks_per_s": 1.0}})
    assert {r["kernel_args"] for r in recs} == {AFTER}
    (cs,) = analyse(recs)
    assert set(cs.records) == set(STACKS)
    assert cs.key.label().endswith(f"[{AFTER}]")
    assert f"Kernel arguments on every stack's boots: `{AFTER}`" in \
        measured.how_measured("custom", {}, recs)[0]


def test_a_failed_variant_is_its_own_row_not_the_stack_s(tmp_path):
    """Every after_parent boot of bundle-shared W=64 failed: its rows
    say so, and anonmm's headline cells there count no failure."""
    def failed_variant(rec: dict) -> bool:
        return bool(rec.get("variant")) and \
            rec["experiment"] == "bundle-shared" and rec["params"]["W"] == 64
    recs = [r for r in fabricate.full_run(orders=True)
            if not failed_variant(r)]
    for rep in range(3):
        rec = fabricate.failed("bundle-shared", "anonmm", "x86_64", "bundle",
                               "shared", {"W": 64, "mb": 16}, rep=rep,
                               mem_mb=128)
        recs.append({**rec, "variant": AFTER, "boot": rec["boot"] + AFTER})
    rows = decision.variant_headlines(analyse(recs), recs)
    shared = next(h for h in rows if h.what == "bundle/shared")
    assert shared.outcome == "untested" and shared.lane == LANE
    text = report.write_report(tmp_path / "run", recs, fabricate.metadata(),
                               []).read_text()
    part = text.split("### bundle-shared\n")[-1].split("\n### ")[0]
    main, variant = part.split(f"Variant **{LANE}**")
    assert not any("failed" in line for line in main.splitlines()
                   if line.startswith("|"))
    assert "| bundle/shared | x86_64 128MB W=64 mb=16 (icount) " \
           "[rmb.swap=zram] | all |  | failed (3 boots) |" in variant
    assert re.search(rf"### Failure \d+: {LANE} x86_64 128 MB "
                     "bundle/shared", text)
