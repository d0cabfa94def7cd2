"""Statistics over repetitions, in the style of mmtests' compare-kernels.

Records (records.jsonl dicts) are grouped by configuration and lane
(the stack, or a stack variant: record.lane); failed records are kept
apart and never become numbers.  Per metric: n, median, mean, sample
standard deviation, the 95% confidence interval of the mean (Student
t), min and max; per metric and configuration the anonmm/anon_vma
ratio of means (and each variant lane's over anon_vma's) with its 95%
interval and a significance mark ('*': Welch's t-test at 0.05;
'exact': both stacks repeated one exact value each, and the values
differ).  A deterministic count of a configuration whose exactness the
run checked (repetitions.py: one boot per point, a second at the middle
point) is exact with n = 1 too.
"""

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from . import metrics
from .record import Config, config_fields, is_failed, is_variant, lane
from .registry import BASE, HOST, NEW

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
class ConfigKey(Config):
    """One configuration (record.Config) and the kind of result line,
    the generation for per-generation lines: what repetitions of both
    stacks are compared over."""
    record: str = "summary"
    generation: int | None = None

    def param(self, name: str, default: Any = None) -> Any:
        return dict(self.params).get(name, default)

    def config(self) -> Config:
        """The configuration alone (failed boots have no record kind)."""
        return Config(self.experiment, self.arch, self.mem_mb,
                      self.workload, self.mode, self.params, self.clock,
                      self.vcpus, self.kernel_args)

    def label(self, with_arch: bool = True, skip: tuple[str, ...] = ()) -> str:
        """e.g. 'i386 1024MB V=10000 kind=split gen=3', the clock
        when it is not the host's: '... (icount)', and the kernel
        arguments every stack's boots added: '... [vmalloc=768M]'."""
        parts = [self.arch] if with_arch else []
        parts.append(f"{self.mem_mb}MB")
        parts += [f"{k}={v}" for k, v in self.params if k not in skip]
        if self.generation is not None:
            parts.append(f"gen={self.generation}")
        if self.vcpus != 1:
            parts.append(f"{self.vcpus}vCPU")
        if self.clock != HOST:
            parts.append(f"({self.clock})")
        if self.kernel_args:
            parts.append(f"[{self.kernel_args}]")
        return " ".join(parts)

    def sort_key(self) -> tuple:
        return (self.experiment, self.arch, self.workload, self.mode,
                self.clock, self.vcpus, self.kernel_args, self.record,
                self.mem_mb,
                tuple((k, _sortable(v)) for k, v in self.params),
                -1 if self.generation is None else self.generation)


def _sortable(value: Any) -> tuple:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, value, "")
    return (1, 0, str(value))


def config_key(record: dict) -> ConfigKey:
    generation = (record.get("metrics") or {}).get("generation")
    return ConfigKey(**config_fields(record),
                     record=str(record.get("record", "summary")),
                     generation=None if generation is None
                     else int(generation))


@dataclass
class Grouped:
    """Records by configuration, then by lane (the stack, or a stack
    variant); failed ones apart."""
    configs: dict[ConfigKey, dict[str, list[dict]]]
    failed: list[dict]


def group(records: list[dict]) -> Grouped:
    configs: dict[ConfigKey, dict[str, list[dict]]] = {}
    failed = []
    for rec in records:
        if is_failed(rec):
            failed.append(rec)
            continue
        stacks = configs.setdefault(config_key(rec), {})
        stacks.setdefault(lane(rec), []).append(rec)
    ordered = dict(sorted(configs.items(), key=lambda kv: kv[0].sort_key()))
    return Grouped(ordered, failed)


def metric_values(records: list[dict], name: str) -> list[float]:
    """The finite numbers records carry for metric name (others skipped)."""
    out = []
    for rec in records:
        if is_failed(rec):
            continue
        value = (rec.get("metrics") or {}).get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if math.isfinite(value):
            out.append(float(value))
    return out


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
    """anonmm mean / anon_vma mean with its 95% interval.

    value None: a stack is missing or the anon_vma mean is 0.  low/high
    None: no interval (a stack has n = 1, or the interval is unbounded
    because the anon_vma mean is not clearly away from 0).
    """
    value: float | None
    low: float | None = None
    high: float | None = None


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

    The two samples are independent (separate boots), so the covariance
    term vanishes: with a, b the means of base and new, va, vb the
    squared standard errors and t the critical value, the interval holds
    every r with (b - r a)^2 <= t^2 (vb + r^2 va), i.e.

        (r +- (t/a) sqrt(vb + r^2 va - g vb)) / (1 - g),  g = t^2 va / a^2

    with r = b/a.  If g >= 1 the anon_vma mean is not significantly
    away from 0 and the interval is unbounded (reported as none).  The
    degrees of freedom are Welch-Satterthwaite's for vb + r^2 va.
    Unlike a log-ratio interval this one also holds when b is 0 (e.g.
    the anonmm kernel has no anon_vma objects at all).
    """
    if base is None or new is None or base.mean == 0:
        return Ratio(None)
    a, b = base.mean, new.mean
    r = b / a
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


@dataclass(frozen=True)
class Comparison:
    """anonmm against anon_vma on one metric of one configuration."""
    metric: str
    base: Summary | None          # anon_vma
    new: Summary | None           # anonmm
    ratio: Ratio
    mark: str                     # '*', 'exact' or ''
    t_stat: float | None = None
    df: float | None = None
    p_value: float | None = None  # None without scipy or without a test
    note: str = ""                # why there is no test, if there is none

    @property
    def differs(self) -> bool:
        """The difference is significant or exact."""
        return self.mark in (MARK_SIGNIFICANT, MARK_EXACT)

    def winner(self, direction: str) -> str | None:
        """The better stack if the difference is real, else None."""
        if not self.differs or direction not in (metrics.LOWER,
                                                 metrics.HIGHER):
            return None
        assert self.base is not None and self.new is not None
        new_lower = self.new.mean < self.base.mean
        return NEW if new_lower == (direction == metrics.LOWER) else BASE


def welch(base: Summary, new: Summary) -> tuple[float, float]:
    """Welch's t statistic (new - base) and its degrees of freedom."""
    assert base.sem is not None and new.sem is not None
    va, vb = base.sem ** 2, new.sem ** 2
    t = (new.mean - base.mean) / math.sqrt(va + vb)
    return t, _ws_df([(va, base.n), (vb, new.n)])


def compare(name: str, base: Summary | None, new: Summary | None
            ) -> Comparison:
    """Ratio, test and mark of new (anonmm) against base (anon_vma).

    Both stacks constant over n >= 2 repetitions (a deterministic count,
    or identical samples): equal values get no mark, different ones
    'exact'.  Otherwise Welch's t-test at 0.05 gives '*'.  A missing
    stack or n = 1 on either side gives no mark and a note.
    """
    ratio = ratio_of_means(base, new)
    if base is None or new is None:
        missing = BASE if base is None else NEW
        return Comparison(name, base, new, ratio, "", note=f"no {missing}")
    if base.exact and new.exact:
        same = base.mean == new.mean
        return Comparison(name, base, new, ratio, "" if same else MARK_EXACT,
                          note="equal" if same else "")
    if base.n < 2 or new.n < 2:
        return Comparison(name, base, new, ratio, "", note="n=1: no test")
    if base.constant and new.constant:
        same = base.mean == new.mean
        return Comparison(name, base, new, ratio, "" if same else MARK_EXACT,
                          note="equal" if same else "")
    t, df = welch(base, new)
    mark = MARK_SIGNIFICANT if abs(t) > t_quantile(df) else ""
    return Comparison(name, base, new, ratio, mark, t, df, t_pvalue(t, df))


@dataclass
class ConfigStats:
    """Every compared metric of one configuration.  comparisons: the
    headline (NEW against BASE); variants: each stack variant's lane
    against the same BASE records, lane -> metric -> Comparison."""
    key: ConfigKey
    records: dict[str, list[dict]]                 # lane -> records
    summaries: dict[str, dict[str, Summary]] = field(default_factory=dict)
    comparisons: dict[str, Comparison] = field(default_factory=dict)
    variants: dict[str, dict[str, Comparison]] = field(default_factory=dict)

    def schemes(self, stack: str) -> set[str]:
        return {str(r.get("scheme")) for r in self.records.get(stack, [])}

    def summary(self, stack: str, name: str) -> Summary | None:
        return self.summaries.get(stack, {}).get(name)

    def versus(self, lane: str) -> dict[str, Comparison]:
        """The comparisons of lane (NEW: the headline's) against BASE."""
        return self.comparisons if lane == NEW else \
            self.variants.get(lane, {})


def metric_names(key: ConfigKey, stacks: dict[str, list[dict]]) -> list[str]:
    """The catalogue's metrics for the configuration's workload/mode, or
    every numeric metric its records carry when the catalogue has none."""
    names = [m.name for m in metrics.primary(key.workload, key.mode)]
    if names:
        return names
    seen: dict[str, None] = {}
    for recs in stacks.values():
        for rec in recs:
            for name in rec.get("metrics") or {}:
                if name != "generation" and metric_values([rec], name):
                    seen[name] = None
    return list(seen)


def config_stats(key: ConfigKey, stacks: dict[str, list[dict]],
                 names: list[str] | None = None,
                 checked: bool = False) -> ConfigStats:
    """checked: the run checked that the configuration's exact counts
    repeat (its single boots are exact values)."""
    cs = ConfigStats(key, stacks)
    for name in names if names is not None else metric_names(key, stacks):
        det = metrics.lookup(name, key.workload, key.mode).deterministic
        for stack, recs in stacks.items():
            s = summarize(metric_values(recs, name), det, checked)
            if s is not None:
                cs.summaries.setdefault(stack, {})[name] = s
        cs.comparisons[name] = compare(name, cs.summary(BASE, name),
                                       cs.summary(NEW, name))
        for variant in variant_lanes(stacks):
            cs.variants.setdefault(variant, {})[name] = compare(
                name, cs.summary(BASE, name), cs.summary(variant, name))
    return cs


def variant_lanes(stacks: dict[str, list[dict]]) -> list[str]:
    """The lanes of stack variants among a configuration's."""
    return [k for k, recs in stacks.items()
            if recs and is_variant(recs[0])]


def analyse(records: list[dict], primary_only: bool = True,
            checked: frozenset[Config] = frozenset()
            ) -> list[ConfigStats]:
    """ConfigStats of every configuration, in a stable order.

    primary_only: only the record kind the catalogue compares for each
    workload/mode (capacity `step` lines and depth `summary` lines are
    left out); unknown workloads keep all their records.  checked: the
    configurations whose exact counts the run checked.
    """
    out = []
    for key, stacks in group(records).configs.items():
        if (primary_only and metrics.entry(key.workload, key.mode)
                and key.record != metrics.primary_record(key.workload,
                                                         key.mode)):
            continue
        out.append(config_stats(key, stacks,
                                checked=key.config() in checked))
    return out
