"""Statistics over repetitions, in the style of mmtests' compare-kernels:
mathematics on samples of numbers, knowing nothing of records, stacks
or workloads (analysis.py applies it to a run's records).

Per sample: n, median, mean, sample standard deviation, the 95%
confidence interval of the mean (Student t), min and max.  Per pair of
samples (a base and a new one): the ratio of means new/base with its 95%
interval (Fieller) and a significance mark ('*': Welch's t-test at
0.05; 'exact': both sides repeated one exact value each, and the values
differ).  A deterministic count whose exactness was checked by other
means is exact with n = 1 too.
"""

import math
import statistics
from dataclasses import dataclass
from typing import Any

CONFIDENCE = 0.95
MARK_SIGNIFICANT = "*"
MARK_EXACT = "exact"

# Two-sided 95% quantiles of Student's t (the 0.975 point), for when
# scipy is missing.  Welch's degrees of freedom are fractional, hence the
# extra points below 6; in between, log t is interpolated linearly in
# 1/df (within 0.4% of the exact value for every df >= 1).
T_TABLE_975 = {
    1: 12.706, 1.25: 8.028, 1.5: 6.017, 1.75: 4.949, 2: 4.303, 2.5: 3.575,
    3: 3.182, 3.5: 2.940, 4: 2.776, 4.5: 2.659, 5: 2.571, 5.5: 2.502,
    6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228, 11: 2.201,
    12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
    18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069,
    24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045,
    30: 2.042, 40: 2.021, 50: 2.009, 60: 2.000, 80: 1.990, 120: 1.980,
    200: 1.972, 500: 1.965, math.inf: 1.960}

_scipy_t: Any = None


def _scipy() -> Any:
    """scipy.stats.t, or False when scipy cannot be imported."""
    global _scipy_t
    if _scipy_t is None:
        try:
            from scipy.stats import t as dist
            _scipy_t = dist
        except ImportError:
            _scipy_t = False
    return _scipy_t


def table_t975(df: float) -> float:
    """The 0.975 quantile of t with df degrees of freedom, from the table."""
    df = max(df, 1.0)
    points = sorted(T_TABLE_975)
    if df in T_TABLE_975:
        return T_TABLE_975[df]
    for lo, hi in zip(points, points[1:]):
        if lo < df < hi:
            x, x0, x1 = 1 / df, 1 / lo, (0.0 if hi == math.inf else 1 / hi)
            y0, y1 = math.log(T_TABLE_975[lo]), math.log(T_TABLE_975[hi])
            return math.exp(y0 + (y1 - y0) * (x - x0) / (x1 - x0))
    return T_TABLE_975[math.inf]


def t_quantile(df: float, confidence: float = CONFIDENCE) -> float:
    """The two-sided critical value of Student's t for confidence."""
    dist = _scipy()
    if dist:
        return float(dist.ppf(0.5 + confidence / 2, max(df, 1e-9)))
    if confidence != 0.95:
        raise ValueError("without scipy only 95% intervals are available")
    return table_t975(df)


def t_pvalue(t: float, df: float) -> float | None:
    """Two-sided p of a t statistic; None without scipy."""
    dist = _scipy()
    return float(2 * dist.sf(abs(t), df)) if dist else None


@dataclass(frozen=True)
class Summary:
    """One metric over the repetitions of one configuration and stack."""
    n: int
    median: float
    mean: float
    stddev: float | None        # None: n = 1
    ci_low: float | None        # 95% CI of the mean; None: n = 1
    ci_high: float | None
    min: float
    max: float
    deterministic: bool = False
    checked: bool = False       # the run checked that it repeats exactly

    @property
    def constant(self) -> bool:
        """All repetitions gave the same value."""
        return self.min == self.max

    @property
    def exact(self) -> bool:
        """A deterministic count two or more repetitions agree on, or
        one whose configuration the run checked: shown without a spread.
        Otherwise one repetition proves nothing either way."""
        return self.deterministic and self.constant and (
            self.n > 1 or self.checked)

    @property
    def ci_half(self) -> float | None:
        if self.ci_low is None or self.ci_high is None:
            return None
        return (self.ci_high - self.ci_low) / 2

    @property
    def sem(self) -> float | None:
        """Standard error of the mean."""
        return None if self.stddev is None else self.stddev / math.sqrt(self.n)


def summarize(values: list[float], deterministic: bool = False,
              checked: bool = False) -> Summary | None:
    """n, median, mean, stddev, CI and range of values; None if empty."""
    if not values:
        return None
    n = len(values)
    mean = statistics.fmean(values)
    stddev = ci_low = ci_high = None
    if n > 1:
        constant = min(values) == max(values)
        stddev = 0.0 if constant else statistics.stdev(values)
        half = t_quantile(n - 1) * stddev / math.sqrt(n)
        ci_low, ci_high = mean - half, mean + half
    return Summary(n, statistics.median(values), mean, stddev, ci_low,
                   ci_high, min(values), max(values), deterministic,
                   checked)


@dataclass(frozen=True)
class Ratio:
    """The new sample's mean over the base's, with its 95% interval.

    value None: a sample is missing or the base mean is 0.  low/high
    None: no interval (a sample has n = 1, or the interval is unbounded
    because the base mean is not clearly away from 0).
    """
    value: float | None
    low: float | None = None
    high: float | None = None

    @property
    def reach(self) -> float:
        """How far the interval reaches from the ratio, as a fraction of
        it (infinite when there is no ratio or no interval)."""
        if not self.value or self.low is None or self.high is None:
            return float("inf")
        return max(self.high / self.value - 1, 1 - self.low / self.value)


def _ws_df(parts: list[tuple[float, int]]) -> float:
    """Welch-Satterthwaite degrees of freedom of a sum of variances.

    parts: (variance term, n) pairs; terms with n < 2 carry no df.
    """
    total = sum(v for v, _ in parts)
    denom = sum(v * v / (n - 1) for v, n in parts if n > 1 and v > 0)
    if total == 0 or denom == 0:
        return max(sum(n for _, n in parts) - len(parts), 1)
    return total * total / denom


def ratio_of_means(base: Summary | None, new: Summary | None) -> Ratio:
    """new.mean / base.mean with a 95% interval by Fieller's theorem.

    The two samples are independent, so the covariance
    term vanishes: with a, b the means of base and new, va, vb the
    squared standard errors and t the critical value, the interval holds
    every r with (b - r a)^2 <= t^2 (vb + r^2 va), i.e.

        (r +- (t/a) sqrt(vb + r^2 va - g vb)) / (1 - g),  g = t^2 va / a^2

    with r = b/a.  If g >= 1 the base mean is not significantly
    away from 0 and the interval is unbounded (reported as none).  The
    degrees of freedom are Welch-Satterthwaite's for vb + r^2 va.
    Unlike a log-ratio interval this one also holds when b is 0 (a
    count the new side does not have at all).
    """
    if base is None or new is None or base.mean == 0:
        return Ratio(None)
    a, b = base.mean, new.mean
    r = b / a
    if base.exact and new.exact:
        return Ratio(r, r, r)   # checked to repeat: no spread, n = 1 too
    if base.sem is None or new.sem is None:
        return Ratio(r)
    va, vb = base.sem ** 2, new.sem ** 2
    if va == 0 and vb == 0:
        return Ratio(r, r, r)
    t = t_quantile(_ws_df([(vb, new.n), (r * r * va, base.n)]))
    g = t * t * va / (a * a)
    if g >= 1:
        return Ratio(r)
    root = (t / abs(a)) * math.sqrt(max(vb + r * r * va - g * vb, 0.0))
    return Ratio(r, (r - root) / (1 - g), (r + root) / (1 - g))


# What the two samples of a comparison are called when the caller does
# not say: in notes ("no base") and as the winner.
SIDES = ("base", "new")


@dataclass(frozen=True)
class Comparison:
    """A new sample against a base sample on one metric."""
    metric: str
    base: Summary | None
    new: Summary | None
    ratio: Ratio
    mark: str                     # '*', 'exact' or ''
    t_stat: float | None = None
    df: float | None = None
    p_value: float | None = None  # None without scipy or without a test
    note: str = ""                # why there is no test, if there is none
    sides: tuple[str, str] = SIDES  # the names of base and new

    @property
    def differs(self) -> bool:
        """The difference is significant or exact."""
        return self.mark in (MARK_SIGNIFICANT, MARK_EXACT)

    def winner(self, lower_better: bool | None) -> str | None:
        """The name of the better side if the difference is real, else
        None; lower_better None: neither side can win."""
        if not self.differs or lower_better is None:
            return None
        assert self.base is not None and self.new is not None
        new_lower = self.new.mean < self.base.mean
        return self.sides[1] if new_lower == lower_better else self.sides[0]


def welch(base: Summary, new: Summary) -> tuple[float, float]:
    """Welch's t statistic (new - base) and its degrees of freedom."""
    assert base.sem is not None and new.sem is not None
    va, vb = base.sem ** 2, new.sem ** 2
    t = (new.mean - base.mean) / math.sqrt(va + vb)
    return t, _ws_df([(va, base.n), (vb, new.n)])


def compare(name: str, base: Summary | None, new: Summary | None,
            sides: tuple[str, str] = SIDES) -> Comparison:
    """Ratio, test and mark of new against base; sides: their names.

    Both sides constant over n >= 2 repetitions (a deterministic count,
    or identical samples): equal values get no mark, different ones
    'exact'.  Otherwise Welch's t-test at 0.05 gives '*'.  A missing
    side or n = 1 on either side gives no mark and a note.
    """
    ratio = ratio_of_means(base, new)
    if base is None or new is None:
        missing = sides[0] if base is None else sides[1]
        return Comparison(name, base, new, ratio, "", note=f"no {missing}",
                          sides=sides)
    if (base.exact and new.exact) or (base.n > 1 and new.n > 1
                                      and base.constant and new.constant):
        same = base.mean == new.mean
        return Comparison(name, base, new, ratio, "" if same else MARK_EXACT,
                          note="equal" if same else "", sides=sides)
    if base.n < 2 or new.n < 2:
        return Comparison(name, base, new, ratio, "", note="n=1: no test",
                          sides=sides)
    t, df = welch(base, new)
    mark = MARK_SIGNIFICANT if abs(t) > t_quantile(df) else ""
    return Comparison(name, base, new, ratio, mark, t, df, t_pvalue(t, df),
                      sides=sides)
