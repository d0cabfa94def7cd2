"""Records: one measurement (or one failed boot) of a run, and the
identity of the configuration it measures, written once.

A record is a JSON object (records.jsonl, docs/results-format.md); the
Record type names its fields.  Config is what a record measures apart
from the stack and the repetition (experiment, arch, memory, workload,
mode, parameters, guest clock, vCPUs, the experiment's kernel
arguments, the build profile of both stacks' kernels): the runner's
Case, the statistics' grouping, the report's failure counts and the
plots' dimensions all use it; ConfigKey adds the kind of result line,
and group() sorts records by it.  A record's lane is its stack, and
the stack variant it booted if any: the statistics compare lanes of
one Config, a variant's against the same base boots.
"""

import math
from dataclasses import asdict, dataclass, fields
from typing import Any, TypedDict

from .profiles import MINIMAL
from .testbed import HOST, lane as lane_name

Params = tuple[tuple[str, Any], ...]
# What a result line says of itself besides params and metrics
LINE_IDENTITY = ("workload", "mode", "record", "scheme", "arch")
# Parameters that tell repetitions apart, not configurations, in labels
IGNORED_PARAMS = ("seed",)


class Record(TypedDict, total=False):
    run_id: str
    experiment: str
    stack: str              # the kernel booted
    scheme: str             # what it said it runs ("unknown" if it died)
    arch: str
    mem_mb: int
    workload: str
    mode: str
    record: str             # the kind of result line: summary, step, ...
    params: dict            # as the experiment gave them: the identity
    guest_params: dict      # every parameter as the workload ran it
    rep: int
    boot: str               # the boot key (boots/<key>.json, logs/<key>.log)
    accel: str
    clock: str              # testbed.CLOCKS: what guest time meant
    vcpus: int              # the guest's CPUs (absent: 1)
    kernel_args: str        # the experiment's kernel arguments (absent: "")
    profile: str            # the build profile of the kernel booted
    #                         (profiles.PROFILES; absent: "minimal")
    variant: str            # a stack variant's kernel arguments (absent:
    #                         the stack's headline boot)
    failed: bool
    failure: str            # failed records: why, one line
    excerpt: str            # failed records: the console around it
    metrics: dict           # name (unit in the name) -> number
    samples: list           # sampled boots: RMB-SAMPLE lines, on the last
    features: dict          # what the guest's init found on (RMB-FEATURES:
    #                         NUMA nodes, cgroup2, memcg, MGLRU, zswap;
    #                         absent: none of them, a minimal kernel)


@dataclass(frozen=True)
class Config:
    """One configuration: everything but the stack (and its variant)
    and the repetition.  kernel_args: what every stack's boots added to
    the harness's kernel arguments (Experiment.append); profile: the
    build profile both stacks' kernels were built in."""
    experiment: str
    arch: str
    mem_mb: int
    workload: str
    mode: str
    params: Params
    clock: str = HOST
    vcpus: int = 1
    kernel_args: str = ""
    profile: str = MINIMAL

    @classmethod
    def of(cls, rec: dict) -> "Config":
        return cls(**config_fields(rec))

    def fields(self) -> dict:
        """The record fields of the identity (params as a dict;
        kernel_args only when there are some: absent means none)."""
        out = {**asdict(self), "params": dict(self.params)}
        if not self.kernel_args:
            del out["kernel_args"]
        return out

    def dims(self) -> dict[str, Any]:
        """What tells configurations apart in a figure: arch (and a
        profile other than minimal), memory, parameters, the kernel
        arguments its boots added (a guest setting's, say)."""
        out: dict[str, Any] = {"arch": self.arch, "mem": f"{self.mem_mb}MB"}
        if self.profile != MINIMAL:
            out["profile"] = self.profile
        if self.kernel_args:
            out["args"] = self.kernel_args
        out.update({k: v for k, v in self.params
                    if k not in IGNORED_PARAMS})
        out["clock"] = self.clock
        out["vcpus"] = self.vcpus
        return out


def config_fields(rec: dict) -> dict:
    """The identity of rec, normalised (params sorted, mem_mb an int)."""
    return {"experiment": str(rec.get("experiment", "")),
            "arch": str(rec.get("arch", "")),
            "mem_mb": int(rec.get("mem_mb") or 0),
            "workload": str(rec.get("workload", "")),
            "mode": str(rec.get("mode", "")),
            "params": tuple(sorted((rec.get("params") or {}).items())),
            "clock": str(rec.get("clock") or HOST),
            "vcpus": int(rec.get("vcpus") or 1),
            "kernel_args": str(rec.get("kernel_args") or ""),
            "profile": str(rec.get("profile") or MINIMAL)}


def lane(rec: dict) -> str:
    """The stack whose boot rec measures, with its variant's arguments
    if it booted one: what the statistics compare within a Config."""
    return lane_name(str(rec.get("stack", "")), str(rec.get("variant") or ""))


def is_variant(rec: dict) -> bool:
    return bool(rec.get("variant"))


def variant_lanes(records: list[dict]) -> dict[Config, set[str]]:
    """Config -> the lanes of stack variants its records (failed ones
    too) were booted in."""
    out: dict[Config, set[str]] = {}
    for rec in records:
        if is_variant(rec):
            out.setdefault(Config.of(rec), set()).add(lane(rec))
    return out


def headline(records: list[dict]) -> list[dict]:
    """The records of the stacks' headline boots (no variant): what
    figures, verdicts and the workloads' own sections read."""
    return [r for r in records if not is_variant(r)]


def swapped_out(rec: dict) -> float | None:
    """The pages a record says were swapped out while it measured:
    pswpout_pages, else the sum of its phases' ..._pswpout_pages; None
    when it counts none (nothing is known then, not "no swap")."""
    m = rec.get("metrics") or {}
    if isinstance(m.get("pswpout_pages"), (int, float)):
        return float(m["pswpout_pages"])
    parts = [v for k, v in m.items() if k.endswith("_pswpout_pages")
             and isinstance(v, (int, float))]
    return float(sum(parts)) if parts else None


def is_failed(rec: dict) -> bool:
    return bool(rec.get("failed"))


@dataclass(frozen=True)
class ConfigKey(Config):
    """One configuration (Config) and the kind of result line,
    the generation for per-generation lines: what repetitions of both
    stacks are compared over."""
    record: str = "summary"
    generation: int | None = None

    def param(self, name: str, default: Any = None) -> Any:
        return dict(self.params).get(name, default)

    def config(self) -> Config:
        """The configuration alone (failed boots have no record kind)."""
        return Config(**{f.name: getattr(self, f.name)
                         for f in fields(Config)})

    def label(self, with_arch: bool = True, skip: tuple[str, ...] = ()) -> str:
        """e.g. 'i386 1024MB V=10000 kind=split gen=3', the clock
        when it is not the host's: '... (icount)', and the kernel
        arguments every stack's boots added: '... [vmalloc=768M]'; a
        profile other than minimal after the arch: 'x86_64 distro
        512MB ...'."""
        parts = [self.arch] if with_arch else []
        if self.profile != MINIMAL:
            parts.append(self.profile)
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
        return (self.experiment, self.profile, self.arch, self.workload,
                self.mode,
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


def numeric(fields: dict) -> dict:
    return {k: v for k, v in fields.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}


def split(result: dict) -> tuple[dict, dict]:
    """(parameters, numeric metrics) of a result line, which the library
    writes apart ("params", "metrics"); a KeyError without metrics."""
    return dict(result.get("params") or {}), numeric(result["metrics"])


def flat(result: dict) -> dict:
    """A result line's identity, parameters and metrics in one dict (for
    judges that look fields up by name)."""
    return {**{k: result[k] for k in LINE_IDENTITY if k in result},
            **(result.get("params") or {}), **(result.get("metrics") or {})}


def measured(base: dict, result: dict, guest_params: dict,
             metrics: dict) -> dict:
    """The record of one result line of a boot (base: the boot's
    identity, see runner.base_record)."""
    rec = {**base, "scheme": result.get("scheme", "unknown"),
           "record": result.get("record", "summary"), "failed": False,
           "metrics": metrics}
    if guest_params:
        rec["guest_params"] = guest_params
    return rec


def failed(base: dict, scheme: str, failure: str, excerpt: str) -> dict:
    return {**base, "scheme": scheme, "record": "summary", "failed": True,
            "failure": failure, "excerpt": excerpt, "metrics": {}}
