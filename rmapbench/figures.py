"""Drawing helpers every figure shares: selecting records and values,
series with error bars, grouped and stacked bars, labels and saving.

A workload module's figures (its Figure declarations) are drawn with
these; each stack has the same colour in every figure (testbed) and
error bars are the 95% CI of the mean where n > 1.  Failed records are
never drawn.
"""

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import stats, testbed
from .record import Config, is_failed, metric_values

log = logging.getLogger("rmapbench.plots")

LINESTYLES = ("-", "--", ":", "-.")
HATCHES = ("", "//", "..", "xx", "\\\\", "--")

Value = Callable[[dict], float | None]


def _pyplot() -> Any:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def colour(stack: str) -> str:
    return testbed.colour(stack)


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
    return [r for r in records if not is_failed(r)
            and of_experiment(r, experiment)
            and (workload is None or r.get("workload") == workload)
            and r.get("record", "summary") == record]


def of_workload(records: list[dict], workload: str) -> list[dict]:
    """The measurements (not failed) of a workload, of every experiment
    ('harness.py run' sweeps included)."""
    return [r for r in records if r.get("workload") == workload
            and not is_failed(r)]


def metric(name: str, scale: float = 1.0) -> Value:
    def value(rec: dict) -> float | None:
        v = metric_values([rec], name)
        return v[0] * scale if v else None
    return value


def param(name: str) -> Callable[[dict], Any]:
    """A parameter as given, else as the workload ran it (a default the
    experiment did not set shows only in the result line: guest_params)."""
    def value(rec: dict) -> Any:
        for where in ("params", "guest_params"):
            got = (rec.get(where) or {}).get(name)
            if got is not None:
                return got
        return None
    return value


def dims(rec: dict) -> dict[str, Any]:
    """What tells configurations apart: arch, memory, parameters."""
    return Config.of(rec).dims()


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
        if not is_failed(rec):
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
    return (testbed.stack_order(stack), stack, label)


def draw_series(ax: Any, data: Series, labels: dict[str, str]) -> None:
    styles: dict[str, str] = {}
    for (stack, label), pts in data.items():
        if not pts:
            continue
        style = styles.setdefault(label, LINESTYLES[len(styles) % 4])
        arch = label.split()[0] if label else ""
        ax.errorbar([p[0] for p in pts], [p[1].mean for p in pts],
                    yerr=yerr([p[1] for p in pts]), color=colour(stack),
                    linestyle=style, marker=testbed.marker(arch),
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


def largest(recs: list[dict], *names: str) -> list[dict]:
    """The records of the configuration with the largest params names."""
    def size(r: dict) -> tuple:
        p = r.get("params") or {}
        return tuple(p.get(n) or 0 for n in names) + (r.get("mem_mb") or 0,)
    top = max(size(r) for r in recs)
    return [r for r in recs if size(r) == top]


Bars = dict[str, dict[str, list[list[float]]]]   # category -> stack -> reps


def shade(hex_colour: str, amount: float) -> tuple[float, float, float]:
    """hex_colour mixed with white: 0 = itself, 1 = white."""
    rgb = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    return tuple(c + (1 - c) * amount for c in rgb)  # type: ignore


def draw_stacked(ax: Any, bars: Bars, parts: int) -> None:
    """Bars per category and stack, each a stack of parts values."""
    cats = list(bars)
    width = 0.38
    for ci, cat in enumerate(cats):
        for si, stack in enumerate(testbed.stack_names()):
            reps = bars[cat].get(stack)
            if not reps:
                continue
            x = ci + (si - 0.5) * width
            means = [sum(r[i] for r in reps) / len(reps)
                     for i in range(parts)]
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


def stacked_legend(fig: Any, labels: dict[str, str],
                   parts: list[str]) -> None:
    from matplotlib.patches import Patch
    handles = [Patch(color=colour(s), label=labels.get(s, s))
               for s in testbed.stack_names()]
    handles += [Patch(facecolor=shade("#888888", 0.12 * i), hatch=HATCHES[i],
                      edgecolor="black", label=name)
                for i, name in enumerate(parts)]
    fig.legend(handles=handles, loc="lower center", ncol=4,
               fontsize="small", bbox_to_anchor=(0.5, 0.0))


Cells = dict[tuple, dict[str, list[dict]]]


def cells_by(recs: list[dict], key: Callable[[dict], tuple]) -> Cells:
    """key -> stack -> records, keys in order: draw_grouped's groups."""
    cells: Cells = {}
    for rec in recs:
        cells.setdefault(key(rec), {}).setdefault(
            rec.get("stack", ""), []).append(rec)
    return dict(sorted(cells.items()))


def clock_vcpus(rec: dict) -> tuple[str, int]:
    """(clock, vCPUs) of a record, for groups that set them apart."""
    return str(rec.get("clock") or "host"), int(rec.get("vcpus") or 1)


def clock_vcpus_label(key: tuple[str, int]) -> str:
    clock, n = key
    return f"{clock} clock\n{n} vCPU{'s' if n > 1 else ''}"


def draw_grouped(ax: Any, cells: dict[tuple, dict[str, list[dict]]],
                 labels: list[str], value: Value) -> None:
    """Side-by-side bars per stack, each labelled with its mean; a log
    scale when the bars span more than two decades."""
    width = 0.38
    means = []
    for ci, key in enumerate(cells):
        for si, stack in enumerate(testbed.stack_names()):
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


def stack_legend(fig: Any, labels: dict[str, str]) -> None:
    from matplotlib.patches import Patch
    fig.legend(handles=[Patch(color=colour(s), label=labels.get(s, s))
                        for s in testbed.stack_names()],
               loc="lower center", ncol=2,
               bbox_to_anchor=(0.5, -0.01))


# (metric, scale, title, y label) of one panel of grouped bars
Panel = tuple[str, float, str, str]


def grouped_panels(records: list[dict], experiment: str, workload: str,
                   by: tuple[str, ...], panels: tuple[Panel, ...],
                   out_dir: Path, stem: str) -> list[Path]:
    """The figure stem of an experiment whose points differ in the
    parameters by: a panel per metric, a group of bars per point (one bar
    per stack); skipped when the experiment has no records."""
    recs = select(records, experiment, workload)
    if not recs:
        return skipped(stem, f"no records of experiment {experiment}")
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(panels), squeeze=False,
                             figsize=(6 * len(panels), 5))
    cells = cells_by(recs, lambda r: tuple(param(p)(r) for p in by))
    labels = ["\n".join(f"{p}={v}" for p, v in zip(by, key))
              for key in cells]
    for ax, (name, scale, title, ylabel) in zip(axes[0], panels):
        draw_grouped(ax, cells, labels, metric(name, scale))
        finish(ax, title, ", ".join(by), ylabel)
    stack_legend(fig, stack_labels(records))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return save(fig, out_dir, stem)
