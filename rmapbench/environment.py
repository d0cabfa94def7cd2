"""What a run was made with: sources, configs, tools, host."""

import hashlib
import json
import os
import platform
import shlex
import sys
import time

from . import debconfig, experiments, image, kbuild, paths, qemu, testbed
from .profiles import MINIMAL, Target, Where, as_targets, profile


def file_sha(path) -> str | None:
    if not path.exists():
        return None
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def host_cpu() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def series_digests() -> dict[str, str]:
    return {s: kbuild.digest(kbuild.read_series(kbuild.series_file(s)))
            for s in testbed.stack_names()}


def config_shas(targets: list[Target] = ()) -> dict[str, str | None]:
    """The minimal kernels' configs as 'stack/arch', and those of the
    other profiles' targets as 'stack/arch profile'."""
    others = [t for t in targets if t.profile != MINIMAL]
    every = [Target(MINIMAL, a) for a in testbed.arch_names()] + others
    return {f"{s}/{t.label()}": file_sha(
                kbuild.build_dir(s, t.arch, t.profile) / ".config")
            for s in testbed.stack_names() for t in every}


def bench_digest() -> str:
    files = sorted(p for p in paths.BENCH.rglob("*")
                   if p.is_file() and "out" not in p.relative_to(
                       paths.BENCH).parts)
    return kbuild.digest(files)


def inputs_digest(where: Where = ()) -> str:
    """What the results depend on: kernels' sources and configs,
    workloads.  where: the run's kernels (the minimal ones' configs
    always count, as before profiles)."""
    text = repr((series_digests(), config_shas(as_targets(where)),
                 bench_digest(), kbuild.source_version()))
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def config_diffs(targets: list[Target]) -> dict[str, list[str]]:
    """Per target (by its label: 'i386', 'x86_64 distro'), the symbols
    whose values differ between the stacks."""
    diffs = {}
    for t in targets:
        try:
            diffs[t.label()] = kbuild.config_diff(t.arch, t.profile)[0]
        except Exception as err:  # a missing build is reported, not fatal
            diffs[t.label()] = [f"unavailable: {err}"]
    return diffs


def debian_diffs(targets: list[Target]) -> dict[str, list[str]]:
    """Per target of a profile that stands for Debian's kernel, its
    anonmm kernel's mm symbols that differ from Debian's config, each
    with its reason (anon_vma's differ in the scheme symbol alone, as
    config_diffs shows)."""
    diffs = {}
    for t in targets:
        if not profile(t.profile).debian:
            continue
        try:
            diffs[t.label()] = debconfig.compare(testbed.NEW, t.arch,
                                                 t.profile)[0]
        except Exception as err:  # a missing build is reported, not fatal
            diffs[t.label()] = [f"unavailable: {err}"]
    return diffs


def profiles_of(targets: list[Target]) -> dict[str, dict[str, str]]:
    """What each profile of the run is, and what it leaves off."""
    return {p.name: {"text": p.text, "off": p.off}
            for p in (profile(n) for n in
                      dict.fromkeys(t.profile for t in targets))}


def clock_qemus(described: str) -> dict[str, str]:
    """The version of the QEMU each clock of the run's experiments runs
    when it is not the installed one (testbed.Clock.qemu_suite): fetched
    now, so a run that cannot get it stops before its first boot."""
    names = {c for e in json.loads(described or "[]")
             for c in e.get("clocks") or ()}
    return {c.name: qemu.qemu_version(c.qemu_suite)
            for c in testbed.CLOCKS if c.name in names and c.qemu_suite}


def collect(run_id: str, accel: str, reps: int,
            where: "Where | list[Target]", described: str) -> dict:
    """metadata.json; where: the run's kernels (bare arches: the minimal
    ones); described: experiments.describe() of the run."""
    targets = as_targets(where)
    return {
        "run_id": run_id,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": " ".join(shlex.quote(a) for a in sys.argv),
        "linux_source_version": kbuild.source_version(),
        "series_digest": series_digests(),
        "config_sha256": config_shas(targets),
        "config_diff": config_diffs(targets),
        "debian_diff": debian_diffs(targets),
        "profiles": profiles_of(targets),
        "bench_digest": bench_digest(),
        "qemu_version": qemu.qemu_version(),
        # the QEMU of each clock that runs another (testbed.Clock)
        "clock_qemu": clock_qemus(described),
        "accel": accel,
        "host_cpu": host_cpu(),
        "host_kernel": platform.release(),
        "host_cores": os.cpu_count(),
        "reps": reps,
        "swap_mb": experiments.SWAP_MB,
        "images": str(image.images_dir()),
        "experiments": described,
    }
