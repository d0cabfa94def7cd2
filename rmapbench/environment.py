"""What a run was made with: sources, configs, tools, host."""

import hashlib
import os
import platform
import shlex
import sys
import time

from . import experiments, image, kbuild, paths, qemu, testbed


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


def config_shas() -> dict[str, str | None]:
    return {f"{s}/{a}": file_sha(paths.build_dir(s, a) / ".config")
            for s in testbed.stack_names()
            for a in testbed.arch_names()}


def bench_digest() -> str:
    files = sorted(p for p in paths.BENCH.rglob("*")
                   if p.is_file() and "out" not in p.relative_to(
                       paths.BENCH).parts)
    return kbuild.digest(files)


def inputs_digest() -> str:
    """What the results depend on: kernels' sources and configs, workloads."""
    text = repr((series_digests(), config_shas(), bench_digest(),
                 kbuild.source_version()))
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def config_diffs(arches: list[str]) -> dict[str, list[str]]:
    diffs = {}
    for arch in arches:
        try:
            diffs[arch] = kbuild.config_diff(arch)[0]
        except Exception as err:  # a missing build is reported, not fatal
            diffs[arch] = [f"unavailable: {err}"]
    return diffs


def collect(run_id: str, accel: str, reps: int, arches: list[str],
            described: str) -> dict:
    """metadata.json; described: experiments.describe() of the run."""
    return {
        "run_id": run_id,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": " ".join(shlex.quote(a) for a in sys.argv),
        "linux_source_version": kbuild.source_version(),
        "series_digest": series_digests(),
        "config_sha256": config_shas(),
        "config_diff": config_diffs(arches),
        "bench_digest": bench_digest(),
        "qemu_version": qemu.qemu_version(),
        "accel": accel,
        "host_cpu": host_cpu(),
        "host_kernel": platform.release(),
        "host_cores": os.cpu_count(),
        "reps": reps,
        "swap_mb": experiments.SWAP_MB,
        "images": str(image.images_dir()),
        "experiments": described,
    }
