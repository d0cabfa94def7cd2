"""A workload is its module: a toy one, registered and nothing else,
runs through expansion, plan, records, statistics, report and plots."""

from pathlib import Path

import pytest

import fabricate
import fakeguest
from rmapbench import experiments, plots, report
from rmapbench import runner, workloads
from rmapbench.workloads.base import HIGHER, Experiment, Figure, Mode, \
    Workload, metric


def draw(records: list[dict], out_dir: Path) -> list[Path]:
    mine = [r for r in records if r.get("workload") == "toy"]
    if not mine:
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "toy.png"
    path.write_bytes(b"\x89PNG toy")
    return [path]


TOY = Workload(
    "toy", None,
    modes=(Mode("spin", (metric("spins_per_s", "spin rate", "spins/s",
                                HIGHER),
                         metric("spin_pages", "pages spun", "pages",
                                exact=True)), main=("toy-spin",)),),
    experiments=(Experiment("toy-spin", "toy", "spin", ("x86_64",),
                            sweep={"n": [1, 2]}, text="spinning pages"),),
    figures=(Figure("toy", ("toy-spin",), draw),),
    steps=lambda case: ["info", f"run rmb-toy n={dict(case.params)['n']}"])


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(workloads.WORKLOADS, "toy", TOY)


def toy_records(stack: str, rate: float) -> list[dict]:
    return [fabricate.record("toy-spin", stack, "x86_64", "toy", "spin",
                             {"n": n}, {"spins_per_s": rate + rep,
                                        "spin_pages": 8}, rep=rep)
            for n in (1, 2) for rep in range(3)]


def test_it_expands_and_plans(toy):
    (exp,) = experiments.by_name(["toy-spin"])
    cases = experiments.expand([exp], ["anon_vma", "anonmm"], ["x86_64"], 1)
    assert len(cases) == 4 and cases[0].plan() == "info\nrun rmb-toy n=1\n"
    assert cases[0].extras() == ()


def test_its_result_lines_become_records(toy, tmp_path):
    (case,) = experiments.expand(experiments.by_name(["toy-spin"]),
                                 ["anonmm"], ["x86_64"], 1)[:1]
    text = ("RMB-STEP 1/1 run rmb-toy n=1\nRMB-RESULT {\"workload\":\"toy\","
            "\"mode\":\"spin\",\"record\":\"summary\",\"scheme\":\"anonmm\","
            "\"params\":{\"n\":1},\"metrics\":{\"spins_per_s\":9.5}}\n"
            "RMB-STEP-END 1 rc=0 ms=1\nRMB-DONE rc=0\n")
    run = fakeguest.run_of(text, tmp_path / "c.log")
    (rec,) = runner.records_of(case, run, "r", "tcg")
    assert rec["metrics"] == {"spins_per_s": 9.5} and not rec["failed"]


def test_report_and_plots_know_it_from_its_module(toy, tmp_path):
    recs = toy_records("anon_vma", 10.0) + toy_records("anonmm", 20.0)
    files = plots.make_plots(recs, tmp_path / "plots")
    assert [f.name for f in files] == ["toy.png"]
    path = report.write_report(tmp_path / "run", recs, {}, files)
    text = path.read_text()
    assert "### toy\n" in text and "**anonmm wins** 1 of 1" in text
    assert "| toy/spin | x86_64 | spin rate (spins/s) |" in text
    assert "### toy-spin\n\nspinning pages." in text
    assert "![toy](../plots/toy.png)" in text
    assert "pages spun (pages) | 8 exact (n=3) | 8 exact (n=3)" in text
