"""Numbers and tables for Markdown: how a statistic reads in a cell.

A cell shows median / mean ± 95% CI half-width (n); an exact count
repeated shows once with `exact`; a stack whose every boot failed says
"failed", never a number.
"""

from collections.abc import Iterable

from . import stats


def fmt(x: float) -> str:
    """A number for a table: integers as integers, 3-4 figures else."""
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}"
    a = abs(x)
    if a >= 1000:
        return f"{x:,.0f}"
    if a >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}"


def fmt_ratio(x: float) -> str:
    a = abs(x)
    if a >= 100:
        return f"{x:,.0f}"
    return f"{x:.1f}" if a >= 10 else f"{x:.3f}"


def cell(s: stats.Summary | None, failed_n: int = 0) -> str:
    """One stack's value in a table; 'failed' (never a number) when
    every boot of it failed."""
    if s is None:
        return f"failed ({failed_n} boot{'s' * (failed_n != 1)})" \
            if failed_n else "—"
    if s.exact:
        text = f"{fmt(s.mean)} exact (n={s.n})"
    elif s.constant and s.n > 1:
        text = f"{fmt(s.mean)}, all equal (n={s.n})"
    elif s.n == 1:
        text = f"{fmt(s.mean)} (n=1)"
    else:
        text = f"{fmt(s.median)} / {fmt(s.mean)} ± {fmt(s.ci_half or 0)} " \
               f"(n={s.n})"
    return text + (f", {failed_n} failed" if failed_n else "")


def mean_cell(s: stats.Summary | None, failed_n: int = 0) -> str:
    if s is None:
        return cell(None, failed_n)
    return f"{fmt(s.mean)}{' exact' if s.exact else ''} (n={s.n})"


def ratio_cell(r: stats.Ratio) -> str:
    if r.value is None:
        return "—"
    if r.low is None or r.high is None or r.low == r.high:
        return fmt_ratio(r.value)
    return f"{fmt_ratio(r.value)} [{fmt_ratio(r.low)}, {fmt_ratio(r.high)}]"


def mark_cell(c: stats.Comparison) -> str:
    if c.mark:
        return c.mark
    return "" if c.note in ("", "equal") else c.note


def table(header: list[str], rows: Iterable[list[str]]) -> list[str]:
    esc = [[str(v).replace("|", "\\|").replace("\n", " ") for v in row]
           for row in rows]
    return ["| " + " | ".join(header) + " |",
            "|" + "|".join("---" for _ in header) + "|"] + \
           ["| " + " | ".join(row) + " |" for row in esc]


def params_text(params: dict | None) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted((params or {}).items())) \
        or "defaults"
