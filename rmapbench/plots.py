"""Figures from records, each saved as PNG and SVG.

One function per figure; each draws only from the records of its
experiments and returns the files it wrote ([] and a log line when
those records are missing).  anon_vma and anonmm have the same colour
in every figure; error bars are the 95% CI of the mean where n > 1.
Failed records are never drawn.
"""

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import iface, registry, stats

log = logging.getLogger(__name__)

LINESTYLES = ("-", "--", ":", "-.")
PAGE_KB = 4          # fio's kB/s -> pages/s
# (field stem, label): the slab structures of a VMA's cost, then the
# page tables
STRUCTURES = tuple((c, c) for c in iface.slabs(iface.COST)) + \
    (("page_tables", "page tables"),)
HATCHES = ("", "//", "..", "xx", "\\\\", "--")
IGNORED_PARAMS = ("seed",)

# figure stem -> the experiments whose records it shows; an experiment
# name also stands for its variants ('mremap' for 'mremap-shared', ...)
FIGURES: dict[str, tuple[str, ...]] = {
    "lowmem": ("lowmem",),
    "vma-size-cost": ("vma-cost", "fork-breadth", "fork-depth"),
    "swap-mem": ("swap-mem", "swap-ceiling"),
    "swap-family": ("swap-family",),
    "mremap": ("mremap", "mremap-unshared", "mremap-shared",
               "mremap-swapped"),
    "fork-breadth": ("fork-breadth",),
    "capacity": ("capacity",),
    "swap-timeline": ("swap-mem",),
}

Value = Callable[[dict], float | None]


def _pyplot() -> Any:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def colour(stack: str) -> str:
    return registry.colour(stack)


def save(fig: Any, out_dir: Path, stem: str) -> list[Path]:
    """Write fig as stem.png and stem.svg into out_dir and close it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files = [out_dir / f"{stem}.png", out_dir / f"{stem}.svg"]
    fig.savefig(files[0], dpi=110, bbox_inches="tight")
    fig.savefig(files[1], bbox_inches="tight", metadata={"Date": None})
    _pyplot().close(fig)
    return files


# --- selecting records and values ---------------------------------------

def of_experiment(rec: dict, experiment: str) -> bool:
    """rec belongs to experiment or one of its variants (experiment-*)."""
    name = str(rec.get("experiment", ""))
    return name == experiment or name.startswith(experiment + "-")


def select(records: list[dict], experiment: str, workload: str | None = None,
           record: str = "summary") -> list[dict]:
    """The measurements (not failed) of experiment, of one record kind."""
    return [r for r in records if not stats.is_failed(r)
            and of_experiment(r, experiment)
            and (workload is None or r.get("workload") == workload)
            and r.get("record", "summary") == record]


def metric(name: str, scale: float = 1.0) -> Value:
    def value(rec: dict) -> float | None:
        v = stats.metric_values([rec], name)
        return v[0] * scale if v else None
    return value


def param(name: str) -> Callable[[dict], Any]:
    """A parameter as given, else as the workload echoed it (a default
    the experiment did not set shows only in the result line)."""
    def value(rec: dict) -> Any:
        given = (rec.get("params") or {}).get(name)
        return given if given is not None else \
            (rec.get("metrics") or {}).get(name)
    return value


def dims(rec: dict) -> dict[str, Any]:
    """What tells configurations apart: arch, memory, parameters."""
    out = {"arch": rec.get("arch"), "mem": f"{rec.get('mem_mb')}MB"}
    out.update({k: v for k, v in sorted((rec.get("params") or {}).items())
                if k not in IGNORED_PARAMS})
    return out


def varying(recs: list[dict], skip: tuple[str, ...]) -> list[str]:
    """The dimensions whose value differs between recs, but skip."""
    seen: dict[str, set] = {}
    for rec in recs:
        for k, v in dims(rec).items():
            seen.setdefault(k, set()).add(str(v))
    return [k for k, vs in seen.items() if len(vs) > 1 and k not in skip]


def dims_label(rec: dict, keys: list[str]) -> str:
    d = dims(rec)
    return " ".join(str(d.get(k)) if k in ("arch", "mem")
                    else f"{k}={d.get(k)}" for k in keys)


def stack_labels(records: list[dict]) -> dict[str, str]:
    """'anonmm', or 'anonmm kernel (scheme anon_vma)' when it says so."""
    schemes: dict[str, set[str]] = {}
    for rec in records:
        if not stats.is_failed(rec):
            schemes.setdefault(rec.get("stack", ""), set()).add(
                str(rec.get("scheme")))
    labels = {}
    for stack, seen in schemes.items():
        other = sorted(seen - {stack})
        labels[stack] = (f"{stack} kernel (scheme {', '.join(other)})"
                         if other else stack)
    return labels


def summary_of(recs: list[dict], value: Value) -> stats.Summary | None:
    vals = [v for v in (value(r) for r in recs) if v is not None]
    return stats.summarize(vals)


def err(s: stats.Summary) -> float:
    return s.ci_half if s.n > 1 and s.ci_half is not None else 0.0


def yerr(summaries: list[stats.Summary]) -> list[float] | None:
    """CI half-widths for error bars; None (no bars) when all are 0."""
    errs = [err(s) for s in summaries]
    return errs if any(errs) else None


Series = dict[tuple[str, str], list[tuple[Any, stats.Summary]]]


def series(recs: list[dict], x: Callable[[dict], Any], value: Value,
           skip: tuple[str, ...]) -> Series:
    """(stack, label of what else varies) -> sorted [(x, Summary)]."""
    keys = varying(recs, skip)
    cells: dict[tuple[str, str], dict[Any, list[dict]]] = {}
    for rec in recs:
        if x(rec) is None:
            continue
        sk = (rec.get("stack", ""), dims_label(rec, keys))
        cells.setdefault(sk, {}).setdefault(x(rec), []).append(rec)
    out: Series = {}
    for sk in sorted(cells, key=_stack_first):
        pts = [(xv, summary_of(rs, value)) for xv, rs in cells[sk].items()]
        out[sk] = sorted([(xv, s) for xv, s in pts if s is not None],
                         key=lambda p: p[0])
    return out


def _stack_first(sk: tuple[str, str]) -> tuple:
    stack, label = sk
    return (registry.stack_order(stack), stack, label)


def draw_series(ax: Any, data: Series, labels: dict[str, str]) -> None:
    styles: dict[str, str] = {}
    for (stack, label), pts in data.items():
        if not pts:
            continue
        style = styles.setdefault(label, LINESTYLES[len(styles) % 4])
        arch = label.split()[0] if label else ""
        ax.errorbar([p[0] for p in pts], [p[1].mean for p in pts],
                    yerr=yerr([p[1] for p in pts]), color=colour(stack),
                    linestyle=style, marker=registry.marker(arch),
                    capsize=3, label=" ".join(
                        t for t in (labels.get(stack, stack), label) if t))


def log_x_if_wide(ax: Any, data: Series) -> None:
    xs = [p[0] for pts in data.values() for p in pts
          if isinstance(p[0], (int, float)) and p[0] > 0]
    if xs and max(xs) / min(xs) >= 100:
        ax.set_xscale("log")


def tick_text(value: float, _pos: Any = None) -> str:
    """1,234,567 rather than 1.2e6 on an axis."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:g}"


def value_text(value: float) -> str:
    """A bar's value printed on it."""
    if abs(value) >= 1e6:
        return f"{value / 1e6:.2f}M"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def finish(ax: Any, title: str, xlabel: str, ylabel: str) -> None:
    from matplotlib.ticker import FuncFormatter
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    if ax.get_yscale() == "linear":
        ax.yaxis.set_major_formatter(FuncFormatter(tick_text))
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")


def skipped(stem: str, why: str) -> list[Path]:
    log.info("plot %s skipped: %s", stem, why)
    return []


def arches(recs: list[dict]) -> list[str]:
    return sorted({str(r.get("arch")) for r in recs})


# --- (a) lowmem used vs VMAs on i386 ------------------------------------

def plot_lowmem(records: list[dict], out_dir: Path) -> list[Path]:
    recs = select(records, "lowmem", "vma")
    others = [r for r in recs if r.get("arch") != "i386"]
    if others:
        log.info("plot lowmem: %d record(s) not on i386 left out", len(others))
    recs = [r for r in recs if r.get("arch") == "i386"]
    if not recs:
        return skipped("lowmem", "no i386 records of experiment lowmem")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 5))
    data = series(recs, param("V"), metric("lowfree_consumed_kb", 1 / 1024),
                  skip=("V", "arch"))
    draw_series(ax, data, stack_labels(records))
    log_x_if_wide(ax, data)
    finish(ax, "Lowmem used by VMAs (i386)", "VMAs created (V)",
           "LowFree consumed (MiB)")
    return save(fig, out_dir, "lowmem")


# --- (b) VMA size cost by structure --------------------------------------

def structure_bytes(rec: dict, per: str, divisor: float) -> list[float]:
    """Bytes by STRUCTURES of one record, per unit `per`, / divisor."""
    m = rec.get("metrics") or {}
    out = [float(m.get(f"slab_{c}_per_{per}_bytes") or 0) / divisor
           for c, _ in STRUCTURES[:-1]]
    out.append(float(m.get(f"page_tables_per_{per}_bytes") or 0) / divisor)
    return out


def largest(recs: list[dict], *names: str) -> list[dict]:
    """The records of the configuration with the largest params names."""
    def size(r: dict) -> tuple:
        p = r.get("params") or {}
        return tuple(p.get(n) or 0 for n in names) + (r.get("mem_mb") or 0,)
    top = max(size(r) for r in recs)
    return [r for r in recs if size(r) == top]


Bars = dict[str, dict[str, list[list[float]]]]   # category -> stack -> reps


def fresh_bars(records: list[dict], arch: str) -> Bars:
    recs = [r for r in select(records, "vma-cost", "vma")
            if r.get("arch") == arch and r.get("mode") == "count"]
    return kind_bars(recs, "fresh", lambda r: structure_bytes(r, "vma", 1.0),
                     ("V",))


def forked_bars(records: list[dict], arch: str) -> Bars:
    recs = [r for r in select(records, "fork-breadth", "fork")
            if r.get("arch") == arch and param("V")(r)]
    return kind_bars(recs, "forked", lambda r: structure_bytes(
        r, "child", float(param("V")(r))), ("V", "N"))


def kind_bars(recs: list[dict], prefix: str,
              values: Callable[[dict], list[float]],
              size: tuple[str, ...]) -> Bars:
    bars: Bars = {}
    for kind in sorted({str(param("kind")(r) or "split") for r in recs}):
        of_kind = [r for r in recs if str(param("kind")(r) or "split") == kind]
        for rec in largest(of_kind, *size):
            bars.setdefault(f"{prefix}\n{kind}", {}).setdefault(
                rec.get("stack", ""), []).append(values(rec))
    return bars


def depth_bars(records: list[dict], arch: str) -> Bars:
    """Bytes added per generation: slope from first to last generation."""
    recs = [r for r in select(records, "fork-depth", "fork", "generation")
            if r.get("arch") == arch]
    if not recs:
        return {}
    recs = largest(recs, "D", "pages")
    boots: dict[tuple, list[dict]] = {}
    for rec in recs:
        boots.setdefault((rec.get("stack"), rec.get("boot"), rec.get("rep")),
                         []).append(rec)
    bars: Bars = {}
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


def shade(hex_colour: str, amount: float) -> tuple[float, float, float]:
    """hex_colour mixed with white: 0 = itself, 1 = white."""
    rgb = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    return tuple(c + (1 - c) * amount for c in rgb)  # type: ignore


def draw_stacked(ax: Any, bars: Bars) -> None:
    cats = list(bars)
    width = 0.38
    for ci, cat in enumerate(cats):
        for si, stack in enumerate(registry.stack_names()):
            reps = bars[cat].get(stack)
            if not reps:
                continue
            x = ci + (si - 0.5) * width
            means = [sum(r[i] for r in reps) / len(reps)
                     for i in range(len(STRUCTURES))]
            bottom = 0.0
            for i, mean in enumerate(means):
                if mean > 0:
                    ax.bar(x, mean, width, bottom=bottom, hatch=HATCHES[i],
                           color=shade(colour(stack), 0.12 * i),
                           edgecolor="black", linewidth=0.5)
                    bottom += mean
            total = stats.summarize([sum(r) for r in reps])
            if total is not None:
                if err(total):
                    ax.errorbar(x, total.mean, yerr=err(total),
                                color="black", capsize=3)
                ax.annotate(value_text(total.mean), (x, total.mean),
                            textcoords="offset points", xytext=(0, 4),
                            ha="center", fontsize="small")
    ax.set_xticks(range(len(cats)), cats)
    ax.margins(y=0.12)


def stacked_legend(fig: Any, labels: dict[str, str]) -> None:
    from matplotlib.patches import Patch
    handles = [Patch(color=colour(s), label=labels.get(s, s))
               for s in registry.stack_names()]
    handles += [Patch(facecolor=shade("#888888", 0.12 * i), hatch=HATCHES[i],
                      edgecolor="black", label=name)
                for i, (_, name) in enumerate(STRUCTURES)]
    fig.legend(handles=handles, loc="lower center", ncol=4,
               fontsize="small", bbox_to_anchor=(0.5, 0.0))


def plot_vma_cost(records: list[dict], out_dir: Path) -> list[Path]:
    recs = [r for e in FIGURES["vma-size-cost"] for r in records
            if of_experiment(r, e) and not stats.is_failed(r)]
    rows = []
    for arch in arches(recs):
        per_vma = {**fresh_bars(records, arch), **forked_bars(records, arch)}
        rows.append((arch, per_vma, depth_bars(records, arch)))
    rows = [row for row in rows if row[1] or row[2]]
    if not rows:
        return skipped("vma-size-cost", "no vma-cost, fork-breadth or "
                       "fork-depth records")
    plt = _pyplot()
    cols = 2 if any(row[2] for row in rows) else 1
    fig, axes = plt.subplots(len(rows), cols, squeeze=False,
                             figsize=(5.5 + 3.5 * cols, 4.2 * len(rows) + 1),
                             gridspec_kw={"width_ratios": [3, 1][:cols]})
    for (arch, per_vma, per_gen), ax_row in zip(rows, axes):
        draw_stacked(ax_row[0], per_vma)
        finish(ax_row[0], f"Kernel memory per VMA by structure ({arch})",
               "VMA kind", "bytes per VMA")
        if cols == 2:
            draw_stacked(ax_row[1], per_gen)
            finish(ax_row[1], f"fork chain ({arch})", "",
                   "bytes per generation")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    stacked_legend(fig, stack_labels(records))
    return save(fig, out_dir, "vma-size-cost")


# --- (c, d) swapout throughput with the fio ceiling ----------------------

def fio_ceiling(records: list[dict]) -> dict[str, float]:
    """arch -> fio's 4k write throughput in pages/s (mean of its runs)."""
    out = {}
    recs = [r for r in records if r.get("workload") == "fio"
            and not stats.is_failed(r)]
    for arch in arches(recs):
        s = summary_of([r for r in recs if r.get("arch") == arch],
                       metric("write_bw_kb_per_s", 1 / PAGE_KB))
        if s is not None:
            out[arch] = s.mean
    return out


def plot_swap(records: list[dict], out_dir: Path, experiment: str,
              x: Callable[[dict], Any], x_skip: str, xlabel: str,
              title: str) -> list[Path]:
    recs = select(records, experiment, "swap")
    if not recs:
        return skipped(experiment, f"no records of experiment {experiment}")
    plt = _pyplot()
    archs = arches(recs)
    fig, axes = plt.subplots(1, len(archs), squeeze=False,
                             figsize=(6.5 * len(archs), 5))
    ceiling = fio_ceiling(records)
    labels = stack_labels(records)
    for arch, ax in zip(archs, axes[0]):
        data = series([r for r in recs if r.get("arch") == arch], x,
                      metric("swapout_per_s"), skip=(x_skip, "arch"))
        draw_series(ax, data, labels)
        if arch in ceiling:
            ax.axhline(ceiling[arch], color="black", linestyle="--",
                       linewidth=1, label=f"fio 4k write ceiling "
                       f"({ceiling[arch]:,.0f} pages/s)")
        log_x_if_wide(ax, data)
        ax.set_ylim(bottom=0)
        finish(ax, f"{title} ({arch})", xlabel,
               "pages swapped out per second")
    fig.tight_layout()
    return save(fig, out_dir, experiment)


def plot_swap_mem(records: list[dict], out_dir: Path) -> list[Path]:
    return plot_swap(records, out_dir, "swap-mem",
                     lambda r: r.get("mem_mb"), "mem", "guest memory (MB)",
                     "Swap-out throughput vs memory size")


def plot_swap_family(records: list[dict], out_dir: Path) -> list[Path]:
    return plot_swap(records, out_dir, "swap-family", param("N"), "N",
                     "processes in the family (N)",
                     "Swap-out throughput vs family size")


# --- (e) mremap cost vs sharing ----------------------------------------

MREMAP_MODES = ("unshared", "shared", "swapped")


def mremap_category(rec: dict, extra: list[str]) -> tuple[tuple, str]:
    """(sort key, label) of a record: its mode and sharing, arch apart."""
    mode = str(rec.get("mode"))
    k, pct = param("K")(rec), param("swap_pct")(rec)
    label = {"shared": f"shared\nK={k}",
             "swapped": f"swapped\n{pct}%"}.get(mode, mode)
    if extra:
        label += "\n" + dims_label(rec, extra)
    order = MREMAP_MODES.index(mode) if mode in MREMAP_MODES else 9
    return (order, k or 0, pct or 0, dims_label(rec, extra)), label


def draw_grouped(ax: Any, cells: dict[tuple, dict[str, list[dict]]],
                 labels: list[str], value: Value) -> None:
    """Side-by-side bars per stack, each labelled with its mean; a log
    scale when the bars span more than two decades."""
    width = 0.38
    means = []
    for ci, key in enumerate(cells):
        for si, stack in enumerate(registry.stack_names()):
            s = summary_of(cells[key].get(stack, []), value)
            if s is None:
                continue
            x = ci + (si - 0.5) * width
            ax.bar(x, s.mean, width, yerr=yerr([s]), capsize=3,
                   color=colour(stack))
            ax.annotate(value_text(s.mean), (x, s.mean + err(s)),
                        textcoords="offset points", xytext=(0, 3),
                        ha="center", fontsize="small")
            means.append(s.mean)
    positive = [m for m in means if m > 0]
    if positive and len(positive) == len(means) and \
            max(positive) / min(positive) > 100:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0, top=max(means + [0]) * 1.15 or 1)
    ax.set_xticks(range(len(labels)), labels)


def plot_mremap(records: list[dict], out_dir: Path) -> list[Path]:
    recs = select(records, "mremap", "mremap")
    if not recs:
        return skipped("mremap", "no records of experiment mremap")
    plt = _pyplot()
    archs = arches(recs)
    extra = varying(recs, skip=("arch", "K", "swap_pct"))
    fig, axes = plt.subplots(len(archs), 2, squeeze=False,
                             figsize=(12, 4.5 * len(archs) + 0.6))
    for arch, (ax1, ax2) in zip(archs, axes):
        cells: dict[tuple, dict[str, list[dict]]] = {}
        names = {}
        for rec in (r for r in recs if r.get("arch") == arch):
            key, label = mremap_category(rec, extra)
            names[key] = label
            cells.setdefault(key, {}).setdefault(rec.get("stack", ""),
                                                 []).append(rec)
        cells = dict(sorted(cells.items()))
        labels = [names[k] for k in cells]
        draw_grouped(ax1, cells, labels, metric("move_median_ns", 1e-3))
        finish(ax1, f"mremap move time, median ({arch})", "sharing",
               "time per move (µs)")
        draw_grouped(ax2, cells, labels, metric("mremap_anon_copy_pages"))
        finish(ax2, f"pages copied by the moves ({arch})", "sharing",
               "anon pages copied (pages)")
    mremap_legend(fig, stack_labels(records))
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return save(fig, out_dir, "mremap")


def mremap_legend(fig: Any, labels: dict[str, str]) -> None:
    from matplotlib.patches import Patch
    fig.legend(handles=[Patch(color=colour(s), label=labels.get(s, s))
                        for s in registry.stack_names()], loc="lower center", ncol=2,
               bbox_to_anchor=(0.5, -0.01))


# --- (f) fork latency and kernel memory vs children ----------------------

def plot_fork_breadth(records: list[dict], out_dir: Path) -> list[Path]:
    recs = select(records, "fork-breadth", "fork")
    if not recs:
        return skipped("fork-breadth", "no records of experiment fork-breadth")
    plt = _pyplot()
    labels = stack_labels(records)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 5))
    data = series(recs, param("N"), metric("fork_median_ns", 1e-3),
                  skip=("N",))
    draw_series(ax1, data, labels)
    log_x_if_wide(ax1, data)
    finish(ax1, "fork() latency vs children", "children (N)",
           "fork() latency, median (µs)")
    data = series(recs, param("N"), metric("slab_total_per_child_bytes",
                                           1 / 1024), skip=("N",))
    draw_series(ax2, data, labels)
    log_x_if_wide(ax2, data)
    ax2.set_ylim(bottom=0)
    finish(ax2, "Kernel memory per child vs children", "children (N)",
           "slab total per child (KiB)")
    fig.tight_layout()
    return save(fig, out_dir, "fork-breadth")


# --- (g) capacity --------------------------------------------------------

def plot_capacity(records: list[dict], out_dir: Path) -> list[Path]:
    recs = select(records, "capacity", "vma")
    if not recs:
        return skipped("capacity", "no summary records of experiment "
                       "capacity")
    plt = _pyplot()
    keys = varying(recs, skip=())
    if "arch" not in keys:
        keys = ["arch"] + keys
    cells: dict[tuple, dict[str, list[dict]]] = {}
    for rec in recs:
        cells.setdefault((dims_label(rec, keys),), {}).setdefault(
            rec.get("stack", ""), []).append(rec)
    cells = dict(sorted(cells.items()))
    fig, ax = plt.subplots(figsize=(max(6, 2.2 * len(cells)), 5))
    draw_grouped(ax, cells, [k[0] for k in cells], metric("vmas_count"))
    finish(ax, "VMAs created before lowmem ran out", "configuration",
           "VMAs (all processes)")
    mremap_legend(fig, stack_labels(records))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return save(fig, out_dir, "capacity")


# --- (h) swapout over time ------------------------------------------------

def timeline(samples: list[dict], name: str) -> tuple[list, list]:
    """Seconds since the first sample, and name's growth since then."""
    rows = [s for s in samples if "t_ms" in s and name in s]
    if len(rows) < 2:
        return [], []
    t0, v0 = rows[0]["t_ms"], rows[0][name]
    return ([(r["t_ms"] - t0) / 1000 for r in rows],
            [r[name] - v0 for r in rows])


def plot_swap_timeline(records: list[dict], out_dir: Path) -> list[Path]:
    recs = [r for r in select(records, "swap-mem", "swap")
            if r.get("rep") == 0 and r.get("samples")]
    if not recs:
        return skipped("swap-timeline", "no sampled swap-mem records")
    plt = _pyplot()
    labels = stack_labels(records)
    sizes = sorted({r["mem_mb"] for r in recs})
    fig, axes = plt.subplots(1, len(sizes), figsize=(5 * len(sizes), 4.5),
                             squeeze=False)
    for ax, mem in zip(axes[0], sizes):
        for rec in (r for r in recs if r["mem_mb"] == mem):
            x, y = timeline(rec["samples"], "pswpout")
            ax.plot(x, y, color=colour(rec["stack"]),
                    label=labels.get(rec["stack"], rec["stack"]))
        finish(ax, f"Pages swapped out over time ({mem} MB guest)",
               "time since the first sample (s)", "pswpout (pages)")
    fig.tight_layout()
    return save(fig, out_dir, "swap-timeline")


PLOTTERS: tuple[Callable[[list[dict], Path], list[Path]], ...] = (
    plot_lowmem, plot_vma_cost, plot_swap_mem, plot_swap_family,
    plot_mremap, plot_fork_breadth, plot_capacity, plot_swap_timeline)


def make_plots(records: list[dict], out_dir: Path) -> list[Path]:
    """Every figure whose records exist; the files written."""
    files: list[Path] = []
    for plotter in PLOTTERS:
        files += plotter(records, out_dir)
    return files


def figure_experiments(path: Path) -> tuple[str, ...]:
    """The experiments a written figure shows (by its file name)."""
    return FIGURES.get(path.stem, ())
