"""The report's facts about a run: its id, warnings, environment (the
build profiles and what their guests had on), config diff per kernel,
and the experiments it ran."""

import json
from pathlib import Path
from typing import Any

from .. import profiles, store
from ..record import config_key, is_failed
from ..testbed import BASE, NEW
from ..tables import table


def run_id(run_dir: Path, records: list[dict], metadata: dict) -> str:
    if metadata.get("run_id"):
        return str(metadata["run_id"])
    for rec in records:
        if rec.get("run_id"):
            return str(rec["run_id"])
    return run_dir.name


def tcg(metadata: dict, records: list[dict]) -> bool:
    """Whether any boot ran under TCG (emulated timings)."""
    seen = {str(metadata.get("accel", ""))}
    seen |= {str(r.get("accel", "")) for r in records}
    return "tcg" in seen


def stack_schemes(records: list[dict]) -> dict[str, set[str]]:
    """stack -> schemes its measured (not failed) records report."""
    out: dict[str, set[str]] = {}
    for rec in records:
        if not is_failed(rec):
            out.setdefault(str(rec.get("stack")), set()).add(
                str(rec.get("scheme")))
    return out


def anonmm_not_running(records: list[dict]) -> bool:
    """Every measured record of the new stack says the base's scheme."""
    return stack_schemes(records).get(NEW) == {BASE}


NOT_PORTED = (f"**The {NEW} stack does not yet run {NEW}**: every record "
              f"of stack {NEW} says scheme {BASE}, so both kernels run "
              f"{BASE} and **no verdict about {NEW} is possible**.")


def single_repetition(records: list[dict]) -> bool:
    """No configuration of any stack has two measured repetitions."""
    seen: dict[tuple, set] = {}
    for rec in records:
        if not is_failed(rec):
            key = (config_key(rec), rec.get("stack"))
            seen.setdefault(key, set()).add(rec.get("rep"))
    return bool(seen) and all(len(reps) < 2 for reps in seen.values())


ICOUNT_NOTE = (" Timings on the icount clock count the instructions the "
               "guest executed (1 ns each): a measure of code path length, "
               "repeatable, not of real time.")


def uses_icount(records: list[dict]) -> bool:
    return any(r.get("clock") == "icount" for r in records)


def fixed_elsewhere(metadata: dict) -> bool:
    """The run decided its repetitions per point (one boot is then a
    rule the report states, not an oversight)."""
    return any(p.get("policy") in (store.EXACT, store.REPEATS, "timed")
               for p in metadata.get("repetitions") or [])


def warnings(records: list[dict], accel_tcg: bool,
             metadata: dict | None = None) -> list[str]:
    out = []
    if single_repetition(records) and not fixed_elsewhere(metadata or {}):
        out += ["> **WARNING: one repetition.** No configuration was "
                "measured twice: there are no confidence intervals and no "
                "significance tests, so no scheme can be said to win. Run "
                "with --reps 3 or more.", ""]
    if accel_tcg:
        out += ["> **WARNING: TCG.** These guests ran under QEMU's TCG "
                "emulation, not KVM: every timing (ns, per-second rates) is "
                "emulated and says little about real hardware. Byte, object "
                "and page counts are unaffected."
                + ICOUNT_NOTE * uses_icount(records), ""]
    if anonmm_not_running(records):
        out += [f"> **WARNING:** {NOT_PORTED}", ""]
    out += node_warnings(records)
    for stack, schemes in sorted(stack_schemes(records).items()):
        odd = sorted(schemes - {stack})
        if odd and not (stack == NEW and schemes == {BASE}):
            out += [f"> **WARNING:** records of stack {stack} report "
                    f"scheme {', '.join(odd)}.", ""]
    return out


def node_warnings(records: list[dict]) -> list[str]:
    """Boots of a NUMA profile whose guests saw another number of nodes
    than QEMU gave them (the icount clock's acpi=off hides the SRAT
    that describes them), per kernel and clock."""
    seen: dict[tuple[str, str, int, str], int] = {}
    for rec in records:
        name = str(rec.get("profile") or profiles.MINIMAL)
        want = profiles.profile(name).numa_nodes \
            if name in profiles.profile_names() else 0
        got = (rec.get("features") or {}).get("numa_nodes")
        if want and got is not None and got != str(want):
            kernel = profiles.Target(name, str(rec.get("arch"))).label()
            key = (kernel, str(rec.get("clock") or "host"), want, str(got))
            seen[key] = seen.get(key, 0) + 1
    out = []
    for (kernel, clock, want, got), n in sorted(seen.items()):
        out += [f"> **WARNING:** {n} record(s) of the {kernel} kernels on "
                f"the {clock} clock come from guests that saw {got} NUMA "
                f"node(s), not the {want} QEMU gave them.", ""]
    return out


def flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """Nested dicts as ('a / b', value) pairs."""
    if isinstance(value, dict):
        out = []
        for k, v in sorted(value.items()):
            out += flatten(v, f"{prefix} / {k}" if prefix else str(k))
        return out
    if isinstance(value, (list, tuple)):
        return [(prefix, ", ".join(str(v) for v in value))]
    return [(prefix, str(value))]


ENVIRONMENT = (("linux-source version", "linux_source_version"),
               ("series digest", "series_digest"),
               ("config sha256", "config_sha256"),
               ("bench digest", "bench_digest"),
               ("QEMU version", "qemu_version"),
               ("QEMU of the clock", "clock_qemu"), ("accel", "accel"),
               ("host CPU", "host_cpu"), ("host kernel", "host_kernel"),
               ("host cores", "host_cores"), ("date", "created"),
               ("repetitions", "reps"), ("swap disk (MB)", "swap_mb"),
               ("command", "command"))


def environment(metadata: dict, records: list[dict]) -> list[str]:
    rows = []
    for label, key in ENVIRONMENT:
        if key not in metadata:
            rows.append([label, "unknown"])
            continue
        for sub, value in flatten(metadata[key]):
            text = f"`{value}`" if key in ("series_digest", "config_sha256",
                                           "bench_digest", "command") \
                else value
            if key == "accel" and value == "tcg":
                text = "**tcg (emulated: timings are not real)**"
            rows.append([f"{label} {sub}".strip(), text])
    rows.append(["experiments",
                 ", ".join(metadata_experiments(metadata)) or "unknown"])
    accels = sorted({str(r.get("accel")) for r in records if r.get("accel")})
    if accels:
        rows.append(["accel of the boots", ", ".join(accels)])
    rows.append(["records", f"{len(records)} "
                 f"({sum(is_failed(r) for r in records)} failed)"])
    rows += profile_rows(metadata, records) + feature_rows(records)
    return ["## Environment", ""] + table(["what", "value"], rows) + [""]


def run_profiles(metadata: dict, records: list[dict]) -> list[str]:
    """The build profiles of the run: as its metadata names them, else
    its records' (a record without one is of the minimal profile)."""
    named = list(metadata.get("profiles") or {})
    seen = [str(r.get("profile") or profiles.MINIMAL) for r in records]
    return list(dict.fromkeys(named + seen))


def profile_rows(metadata: dict, records: list[dict]) -> list[list[str]]:
    """What each build profile is, and what it leaves off in both
    stacks."""
    rows = []
    for name in run_profiles(metadata, records):
        known = (metadata.get("profiles") or {}).get(name)
        if known is None and name in profiles.profile_names():
            p = profiles.profile(name)
            known = {"text": p.text, "off": p.off}
        known = known or {"text": "unknown profile", "off": ""}
        off = f" {known['off']}." if known.get("off") else ""
        rows.append([f"profile {name}", f"{known['text']}.{off}"])
    return rows


def feature_rows(records: list[dict]) -> list[list[str]]:
    """Per kernel, what its guests' init found on (NUMA nodes, cgroup2,
    memcg, MGLRU, zswap): none for a minimal kernel."""
    seen: dict[str, dict[str, None]] = {}
    for rec in records:
        if rec.get("features"):
            kernel = profiles.Target(str(rec.get("profile") or
                                         profiles.MINIMAL),
                                     str(rec.get("arch"))).label()
            text = " ".join(f"{k}={v}" for k, v in rec["features"].items())
            seen.setdefault(kernel, {})[text] = None
    return [[f"guest features, {k}", " | ".join(v)]
            for k, v in sorted(seen.items())]


def config_diff(metadata: dict) -> list[str]:
    out = ["## Config diff between the stacks", "",
           "Per kernel (its arch, and its build profile when not "
           "minimal): only the scheme option may differ.", ""]
    diff = metadata.get("config_diff")
    if not isinstance(diff, dict) or not diff:
        return out + ["Not recorded.", ""]
    for arch, value in sorted(diff.items()):
        lines, unfair = diff_lines(value)
        if not lines:
            out += [f"**{arch}**: the configurations are identical (not "
                    f"even a scheme option differs).", ""]
            continue
        out.append(f"**{arch}**: {len(lines)} symbol(s) differ")
        out += ["", "```"] + lines + ["```", ""]
        if unfair:
            out += [f"Beyond the scheme option: {', '.join(unfair)}: the "
                    f"comparison is not fair on {arch}.", ""]
    return out


def debian_diff(metadata: dict) -> list[str]:
    """Each kernel standing for Debian's against Debian's own config."""
    diff = metadata.get("debian_diff")
    if not isinstance(diff, dict) or not diff:
        return []
    out = ["## The distro kernels against Debian's config", "",
           "The mm symbols (those mm/Kconfig declares) in which the "
           "anonmm kernel's .config differs from Debian's 6.1 amd64 "
           "config (package linux-config-6.1), each with its reason "
           "(rmapbench/debconfig.py); the anon_vma kernel's differ in "
           "the scheme symbol alone (above).", ""]
    for label, lines in sorted(diff.items()):
        unexplained = [str(x).split(":")[0] for x in lines
                       if str(x).endswith("UNEXPLAINED")]
        out += [f"**{label}**: {len(lines)} symbol(s) differ", "", "```"] \
            + [str(x) for x in lines] + ["```", ""]
        if unexplained:
            out += [f"Without a reason: {', '.join(unexplained)}.", ""]
    return out


def diff_lines(value: Any) -> tuple[list[str], list[str]]:
    """(lines, unfair symbols) of one arch's config_diff entry."""
    if isinstance(value, dict):
        return ([str(v) for v in value.get("lines", [])],
                [str(v) for v in value.get("unfair", [])])
    if isinstance(value, str):
        return value.splitlines(), []
    return [str(v) for v in value or []], []


def metadata_experiments(metadata: dict) -> list[str]:
    """The experiment names in metadata: a list of names, or the
    experiments' JSON description (a list of objects with a name)."""
    value = metadata.get("experiments") or []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            value = [v.strip() for v in value.split(",") if v.strip()]
    names = []
    for item in value if isinstance(value, list) else []:
        name = item.get("name") if isinstance(item, dict) else item
        if name and str(name) not in names:
            names.append(str(name))
    return names


def experiment_names(records: list[dict], metadata: dict) -> list[str]:
    names = metadata_experiments(metadata)
    extra = sorted({str(r.get("experiment")) for r in records} - set(names))
    return names + extra
