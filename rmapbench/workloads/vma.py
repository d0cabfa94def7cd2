"""vma: V VMAs in one process, one touched anon page each (bench/rmb-vma.c).

count: kernel memory per VMA from slab deltas by structure, lowmem
consumed on i386, page tables apart; capacity: VMAs created until lowmem
runs out on i386 while highmem is still free.
"""

from collections.abc import Callable
from pathlib import Path

from .. import figures as fg
from .. import iface, testbed
from ..record import is_failed
from ..settings import on_zram
from ..testbed import ICOUNT
from .base import HIGHER, NEUTRAL, Experiment, Figure, Mode, Workload, metric

ALL = testbed.arch_names()
# (field stem, label): the slab structures of a VMA's cost, then the
# page tables
STRUCTURES = tuple((c, c) for c in iface.slabs(iface.COST)) + \
    (("page_tables", "page tables"),)
# the experiments the VMA size cost figure draws from
COST_EXPERIMENTS = ("vma-cost", "fork-breadth", "fork-depth")


def count_metrics() -> tuple:
    per = [metric("slab_total_per_vma_bytes", "slab total per VMA", "B/VMA",
                  exact=True)]
    per += [metric(f"slab_{c}_per_vma_bytes", f"{c} per VMA", "B/VMA",
                   exact=True) for c in iface.slabs(iface.COST)]
    per += [metric("page_tables_per_vma_bytes", "page tables per VMA",
                   "B/VMA", exact=True),
            metric("lowfree_consumed_per_vma_bytes", "lowmem consumed per VMA",
                   "B/VMA", exact=True),
            metric("create_per_vma_ns", "time to create a VMA", "ns")]
    return tuple(per)


def plot_lowmem(records: list[dict], out_dir: Path) -> list[Path]:
    recs = fg.select(records, "lowmem", "vma")
    others = [r for r in recs if r.get("arch") != "i386"]
    if others:
        fg.log.info("plot lowmem: %d record(s) not on i386 left out",
                    len(others))
    recs = [r for r in recs if r.get("arch") == "i386"]
    if not recs:
        return fg.skipped("lowmem", "no i386 records of experiment lowmem")
    plt = fg._pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 5))
    data = fg.series(recs, fg.param("V"),
                     fg.metric("lowfree_consumed_kb", 1 / 1024),
                     skip=("V", "arch"))
    fg.draw_series(ax, data, fg.stack_labels(records))
    fg.log_x_if_wide(ax, data)
    fg.finish(ax, "Lowmem used by VMAs (i386)", "VMAs created (V)",
              "LowFree consumed (MiB)")
    return fg.save(fig, out_dir, "lowmem")


def structure_bytes(rec: dict, per: str, divisor: float) -> list[float]:
    """Bytes by STRUCTURES of one record, per unit `per`, / divisor."""
    m = rec.get("metrics") or {}
    out = [float(m.get(f"slab_{c}_per_{per}_bytes") or 0) / divisor
           for c, _ in STRUCTURES[:-1]]
    out.append(float(m.get(f"page_tables_per_{per}_bytes") or 0) / divisor)
    return out


def fresh_bars(records: list[dict], arch: str) -> fg.Bars:
    recs = [r for r in fg.select(records, "vma-cost", "vma")
            if r.get("arch") == arch and r.get("mode") == "count"]
    return kind_bars(recs, "fresh", lambda r: structure_bytes(r, "vma", 1.0),
                     ("V",))


def forked_bars(records: list[dict], arch: str) -> fg.Bars:
    recs = [r for r in fg.select(records, "fork-breadth", "fork")
            if r.get("arch") == arch and fg.param("V")(r)]
    return kind_bars(recs, "forked", lambda r: structure_bytes(
        r, "child", float(fg.param("V")(r))), ("V", "N"))


def kind_bars(recs: list[dict], prefix: str,
              values: Callable[[dict], list[float]],
              size: tuple[str, ...]) -> fg.Bars:
    bars: fg.Bars = {}
    for kind in sorted({str(fg.param("kind")(r) or "split") for r in recs}):
        of_kind = [r for r in recs
                   if str(fg.param("kind")(r) or "split") == kind]
        for rec in fg.largest(of_kind, *size):
            bars.setdefault(f"{prefix}\n{kind}", {}).setdefault(
                rec.get("stack", ""), []).append(values(rec))
    return bars


def depth_bars(records: list[dict], arch: str) -> fg.Bars:
    """Bytes added per generation: slope from first to last generation."""
    recs = [r for r in fg.select(records, "fork-depth", "fork", "generation")
            if r.get("arch") == arch]
    if not recs:
        return {}
    recs = fg.largest(recs, "D", "pages")
    boots: dict[tuple, list[dict]] = {}
    for rec in recs:
        boots.setdefault((rec.get("stack"), rec.get("boot"), rec.get("rep")),
                         []).append(rec)
    bars: fg.Bars = {}
    for (stack, _, _), gens in sorted(boots.items(), key=str):
        gens.sort(key=lambda r: r["metrics"].get("generation", 0))
        bars.setdefault("chain\n(per generation)", {}).setdefault(
            str(stack), []).append(generation_slope(gens[0], gens[-1]))
    return bars


def generation_delta(rec: dict) -> list[float]:
    m = rec.get("metrics") or {}
    out = [float(m.get(f"slab_{c}_delta_bytes") or 0) for c, _ in
           STRUCTURES[:-1]]
    return out + [float(m.get("page_tables_delta_kb") or 0) * 1024]


def generation_slope(first: dict, last: dict) -> list[float]:
    g0 = first["metrics"].get("generation", 0)
    g1 = last["metrics"].get("generation", 0)
    d1 = generation_delta(last)
    if g1 > g0:
        return [(b - a) / (g1 - g0) for a, b in
                zip(generation_delta(first), d1)]
    procs = last["metrics"].get("processes_count") or (g1 + 1)
    return [b / procs for b in d1]


def plot_vma_cost(records: list[dict], out_dir: Path) -> list[Path]:
    recs = [r for e in COST_EXPERIMENTS for r in records
            if fg.of_experiment(r, e) and not is_failed(r)]
    rows = []
    for arch in fg.arches(recs):
        per_vma = {**fresh_bars(records, arch), **forked_bars(records, arch)}
        rows.append((arch, per_vma, depth_bars(records, arch)))
    rows = [row for row in rows if row[1] or row[2]]
    if not rows:
        return fg.skipped("vma-size-cost", "no vma-cost, fork-breadth or "
                          "fork-depth records")
    plt = fg._pyplot()
    cols = 2 if any(row[2] for row in rows) else 1
    fig, axes = plt.subplots(len(rows), cols, squeeze=False,
                             figsize=(5.5 + 3.5 * cols, 4.2 * len(rows) + 1),
                             gridspec_kw={"width_ratios": [3, 1][:cols]})
    for (arch, per_vma, per_gen), ax_row in zip(rows, axes):
        fg.draw_stacked(ax_row[0], per_vma, len(STRUCTURES))
        fg.finish(ax_row[0], f"Kernel memory per VMA by structure ({arch})",
                  "VMA kind", "bytes per VMA")
        if cols == 2:
            fg.draw_stacked(ax_row[1], per_gen, len(STRUCTURES))
            fg.finish(ax_row[1], f"fork chain ({arch})", "",
                      "bytes per generation")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fg.stacked_legend(fig, fg.stack_labels(records),
                      [label for _, label in STRUCTURES])
    return fg.save(fig, out_dir, "vma-size-cost")


def plot_capacity(records: list[dict], out_dir: Path) -> list[Path]:
    recs = fg.select(records, "capacity", "vma")
    if not recs:
        return fg.skipped("capacity", "no summary records of experiment "
                          "capacity")
    plt = fg._pyplot()
    keys = fg.varying(recs, skip=())
    if "arch" not in keys:
        keys = ["arch"] + keys
    cells: dict[tuple, dict[str, list[dict]]] = {}
    for rec in recs:
        cells.setdefault((fg.dims_label(rec, keys),), {}).setdefault(
            rec.get("stack", ""), []).append(rec)
    cells = dict(sorted(cells.items()))
    fig, ax = plt.subplots(figsize=(max(6, 2.2 * len(cells)), 5))
    fg.draw_grouped(ax, cells, [k[0] for k in cells], fg.metric("vmas_count"))
    fg.finish(ax, "VMAs created before lowmem ran out", "configuration",
              "VMAs (all processes)")
    fg.stack_legend(fig, fg.stack_labels(records))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fg.save(fig, out_dir, "capacity")


WORKLOAD = Workload(
    "vma", "rmb-vma",
    modes=(
        Mode("count", count_metrics(), main=("vma-cost",), regime="vma"),
        Mode("capacity", (
            metric("vmas_count", "VMAs created before lowmem ran out", "VMAs",
                   HIGHER, exact=True),
            metric("high_free_kb", "HighFree left at the end", "kB",
                   NEUTRAL, exact=True)), main=("capacity",),
             regime="vma")),
    # on zram: none swaps out, and with no disk their icount boots
    # repeat exactly (repetitions.REPEATS)
    experiments=tuple(map(on_zram, (
        Experiment("vma-cost", "vma", "count", ALL,
                   sweep={"kind": ["split", "gap"]}, fixed={"V": 20000},
                   clocks=(ICOUNT,),
                   text="kernel memory per VMA, fresh VMAs of each kind"),
        Experiment("lowmem", "vma", "count", ("i386",),
                   sweep={"V": [5000, 20000, 80000]}, clocks=(ICOUNT,),
                   text="lowmem consumed as the VMA count grows (i386)"),
        Experiment("capacity", "vma", "capacity", ("i386",),
                   fixed={"low_floor_kb": 16384, "max_vmas": 50000},
                   mem_mb={"i386": [1024]}, append="vmalloc=768M",
                   timeout_s=900.0, clocks=(ICOUNT,),
                   text="VMAs created until lowmem runs out (i386)")))),
    figures=(
        Figure("lowmem", ("lowmem",), plot_lowmem),
        Figure("vma-size-cost", COST_EXPERIMENTS, plot_vma_cost),
        Figure("capacity", ("capacity",), plot_capacity)),
    order=10)
