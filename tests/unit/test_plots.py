"""Figures from fabricated records: written when their records exist."""

import logging

import pytest

import fabricate
from rmapbench import figures, plots
from rmapbench.workloads import swap, vma, mremap


@pytest.fixture(scope="module")
def everything(tmp_path_factory):
    out = tmp_path_factory.mktemp("plots")
    return out, plots.make_plots(
        fabricate.full_run() + fabricate.thp_ksm_run(), out)


def test_every_figure_is_written_as_png_and_svg(everything):
    out, files = everything
    assert {f.stem for f in files} == set(plots.figures())
    for stem in plots.figures():
        for suffix in (".png", ".svg"):
            path = out / f"{stem}{suffix}"
            assert path in files and path.stat().st_size > 1000
    assert (out / "lowmem.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (out / "lowmem.svg").read_bytes()[:500]


def test_missing_experiments_are_skipped_and_logged(tmp_path, caplog):
    recs = fabricate.only(fabricate.full_run(reps=2), experiment="vma-cost")
    with caplog.at_level(logging.INFO, logger="rmapbench.plots"):
        files = plots.make_plots(recs, tmp_path)
    assert sorted(f.name for f in files) == ["vma-size-cost.png",
                                             "vma-size-cost.svg"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f.name for f in files)
    assert "plot lowmem skipped" in caplog.text
    assert "plot swap-mem skipped" in caplog.text


def test_no_records_and_failed_records_draw_nothing(tmp_path):
    assert plots.make_plots([], tmp_path / "a") == []
    failed = [r for r in fabricate.full_run(reps=1) if r["failed"]]
    assert failed and plots.make_plots(failed, tmp_path / "b") == []
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_plain_mremap_experiment_name_is_plotted(tmp_path):
    recs = fabricate.only(fabricate.full_run(reps=2), workload="mremap")
    for rec in recs:
        rec["experiment"] = "mremap"
    assert [f.name for f in mremap.plot_mremap(recs, tmp_path)] == [
        "mremap.png", "mremap.svg"]


def test_lowmem_needs_i386(tmp_path):
    recs = fabricate.only(fabricate.full_run(reps=1), experiment="lowmem")
    for rec in recs:
        rec["arch"] = "x86_64"
    assert vma.plot_lowmem(recs, tmp_path) == []


def test_fio_ceiling_is_pages_per_second():
    recs = [fabricate.record("swap-ceiling", s, "x86_64", "fio", "write4k",
                             {}, {"write_bw_kb_per_s": bw})
            for s, bw in (("anon_vma", 400000), ("anonmm", 400008))]
    assert swap.fio_ceiling(recs) == {"x86_64": 100001.0}


def test_bytes_per_generation_is_the_slope():
    def gen(g, chain):
        return {"metrics": {"generation": g, "slab_anon_vma_chain_delta_bytes":
                            chain, "page_tables_delta_kb": 4 * g}}
    slope = vma.generation_slope(gen(1, 100), gen(5, 900))
    names = [name for name, _ in vma.STRUCTURES]
    assert slope[names.index("anon_vma_chain")] == 200
    assert slope[names.index("page_tables")] == 4096
    assert slope[names.index("anonmm")] == 0


def test_both_schemes_keep_their_colours():
    assert figures.colour("anon_vma") != figures.colour("anonmm")
    labels = figures.stack_labels(fabricate.full_run(reps=1,
                                                     anonmm_scheme="anon_vma"))
    assert labels == {"anon_vma": "anon_vma",
                      "anonmm": "anonmm kernel (scheme anon_vma)"}


def test_fio_ceiling_only_beside_host_clock_rates(tmp_path, monkeypatch):
    labels = []
    finish = figures.finish

    def keep(ax, title, xlabel, ylabel):
        labels.extend(ax.get_legend_handles_labels()[1])
        finish(ax, title, xlabel, ylabel)

    monkeypatch.setattr(figures, "finish", keep)
    recs = fabricate.only(fabricate.full_run(reps=2), workload="swap") + \
        fabricate.only(fabricate.full_run(reps=2), workload="fio")
    swap.plot_swap_mem(recs, tmp_path)          # swap-mem: icount
    assert labels and not any("ceiling" in t for t in labels)
    for rec in recs:
        rec["clock"] = "host"
    swap.plot_swap_mem(recs, tmp_path)
    assert sum("fio 4k write ceiling" in t for t in labels) == 1
