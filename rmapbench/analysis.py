"""A run's records analysed: per configuration and lane, the statistics
(stats.py) of every metric the workloads declare (metrics.py)
compares.

Records (records.jsonl dicts) are grouped by configuration and lane
(record.group: the stack, or a stack variant); failed records are kept
apart and never become numbers.  Per metric and configuration: each
lane's Summary, and the anonmm/anon_vma Comparison (each variant lane's
against the same anon_vma records).  A deterministic count of a
configuration whose exactness the run checked (repetitions.py: one
boot per point, a second at the check point) is exact with n = 1 too;
so is every metric, timed ones included, of a configuration whose boots
replay exactly and whose check point moved by no more than
SEED_TOLERANCE with another seed (store.REPEATS).
"""

from collections.abc import Mapping
from dataclasses import dataclass, field

from . import metrics
from .store import REPEATS
from .record import Config, ConfigKey, group, is_variant, metric_values
from .testbed import BASE, NEW
from .stats import Comparison, Summary, compare, summarize

# How comparisons name their two sides, a variant lane's included.
SIDES = (BASE, NEW)
# The half-width, as a fraction of the ratio, within which a timed
# ratio's 95% interval is narrow enough: repetitions go on until it is
# (repetitions.py), the report counts the ratios that are.
TARGET = 0.03
# How far a configuration's compared metrics may move with the guest's
# seed for one boot a point to stand for its point (repetitions.REPEATS):
# a tenth of TARGET, so that the single boots' ratios stand within it
SEED_TOLERANCE = 0.003


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
    """The metrics the configuration's workload/mode declares, or every
    numeric metric its records carry when it declares none."""
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
                 checked: str | None = None) -> ConfigStats:
    """checked: the policy (store.EXACT or store.REPEATS) by which the
    run checked that the configuration's exact counts, or all its
    metrics, repeat: its single boots are exact values."""
    cs = ConfigStats(key, stacks)
    for name in names if names is not None else metric_names(key, stacks):
        det = checked == REPEATS or metrics.lookup(
            name, key.workload, key.mode).deterministic
        for stack, recs in stacks.items():
            s = summarize(metric_values(recs, name), det, bool(checked))
            if s is not None:
                cs.summaries.setdefault(stack, {})[name] = s
        cs.comparisons[name] = compare(name, cs.summary(BASE, name),
                                       cs.summary(NEW, name), SIDES)
        for variant in variant_lanes(stacks):
            cs.variants.setdefault(variant, {})[name] = compare(
                name, cs.summary(BASE, name), cs.summary(variant, name),
                SIDES)
    return cs


def variant_lanes(stacks: dict[str, list[dict]]) -> list[str]:
    """The lanes of stack variants among a configuration's."""
    return [k for k, recs in stacks.items()
            if recs and is_variant(recs[0])]


def analyse(records: list[dict], primary_only: bool = True,
            checked: Mapping[Config, str] | None = None
            ) -> list[ConfigStats]:
    """ConfigStats of every configuration, in a stable order.

    primary_only: only the record kind the mode compares for each
    workload/mode (capacity `step` lines and depth `summary` lines are
    left out); unknown workloads keep all their records.  checked: the
    configurations whose repetition the run checked, with the policy
    (store.checked).
    """
    out = []
    for key, stacks in group(records).configs.items():
        if (primary_only and metrics.entry(key.workload, key.mode)
                and key.record != metrics.primary_record(key.workload,
                                                         key.mode)):
            continue
        out.append(config_stats(key, stacks,
                                checked=(checked or {}).get(
                                    key.config())))
    return out
