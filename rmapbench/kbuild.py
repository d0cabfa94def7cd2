"""Kernel trees and builds: pristine source, patch series, config, make.

Data flow: the Debian tarball is extracted once into the cache (pristine),
copied into one tree per stack, the stack's series applied strictly, the
committed config fragments merged onto tinyconfig, and bzImage built in
an O= directory inside the tree.  Nothing here writes into the repository.
"""

import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from . import paths, testbed
from .errors import UserError
from .profiles import MINIMAL, Target, Where, as_targets
from .profiles import profile as profile_of
from .progress import Progress, fmt_seconds

STAMP = ".rmapbench-applied"
# In an O= directory: the build_inputs() its kernel was built from
BUILT = ".rmapbench-built"


def run(cmd: list[str], cwd: Path | None = None, log: Path | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run cmd; its output goes to log (appended) or is captured."""
    if log is None:
        return subprocess.run(cmd, cwd=cwd, env=env, text=True,
                              capture_output=True)
    with open(log, "a") as out:
        return subprocess.run(cmd, cwd=cwd, env=env, text=True,
                              stdout=out, stderr=subprocess.STDOUT)


def source_version() -> str:
    """The installed linux-source-6.1 package version."""
    res = run(["dpkg-query", "-W", "-f=${Version}", paths.SOURCE_PACKAGE])
    if res.returncode != 0 or not paths.SOURCE_TARBALL.exists():
        raise UserError(f"{paths.SOURCE_PACKAGE} is not installed "
                        f"({paths.SOURCE_TARBALL} missing): run 'make setup'")
    return res.stdout.strip()


def ensure_pristine() -> Path:
    """Extract the Debian tarball into the cache unless already there."""
    version = source_version()
    pristine = paths.pristine_dir()
    marker = pristine / ".rmapbench-pristine"
    if marker.exists() and marker.read_text().strip() == version:
        return pristine
    print(f"extracting {paths.SOURCE_TARBALL} ({version}) into "
          f"{pristine.parent}", flush=True)
    if pristine.exists():
        shutil.rmtree(pristine)
    pristine.parent.mkdir(parents=True, exist_ok=True)
    res = run(["tar", "-xf", str(paths.SOURCE_TARBALL),
               "-C", str(pristine.parent)])
    if res.returncode != 0:
        raise UserError(f"extracting {paths.SOURCE_TARBALL} failed: "
                        f"{res.stderr.strip()}")
    marker.write_text(version + "\n")
    return pristine


def series_file(stack: str) -> Path:
    return paths.KERNELS / stack / "series"


def tree_dir(stack: str, profile: str = MINIMAL) -> Path:
    """The stack's tree for a build profile (each profile its own)."""
    return paths.tree_dir(stack, profile_of(profile).suffix)


def build_dir(stack: str, arch: str, profile: str = MINIMAL) -> Path:
    """The O= directory of stack's kernel for arch in a build profile."""
    return paths.build_dir(stack, arch, profile_of(profile).suffix)


def kernel_image(stack: str, arch: str, profile: str = MINIMAL) -> Path:
    """The bzImage the build of stack for arch in profile leaves."""
    return build_dir(stack, arch, profile) / testbed.arch(arch).image


def read_series(series: Path) -> list[Path]:
    """The patches a quilt-style series names, in order.

    Blank lines and '#' comments are skipped; paths are relative to the
    series file's directory; every named patch must exist.
    """
    if not series.exists():
        raise UserError(f"no series file {series}")
    patches = []
    for number, line in enumerate(series.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        patch = (series.parent / line).resolve()
        if not patch.is_file():
            raise UserError(f"{series}:{number}: patch '{line}' not found")
        patches.append(patch)
    return patches


def config_fragments(stack: str, arch: str,
                     profile: str = MINIMAL) -> list[Path]:
    """The committed fragments merged onto tinyconfig, in order: what
    every kernel shares, the arch's, the build profile's, the stack's
    and a debug variant's."""
    common = paths.KERNELS / "common" / "config"
    frags = [common / "base.config", common / f"{arch}.config",
             common / profile_of(profile).fragment]
    own = paths.KERNELS / stack / "config"
    if own.exists():
        frags.append(own)
    variant = paths.variant()
    if variant:
        frags.append(paths.KERNELS / "debug" / f"{variant}.config")
    return frags


def digest(files: list[Path], extra: str = "") -> str:
    """A hash of the files' names and contents, plus extra."""
    h = hashlib.sha256(extra.encode())
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def sync_tree(pristine: Path, tree: Path) -> None:
    """Make tree a copy of pristine, keeping the O= build directories.

    rsync copies only what differs, so files no patch touches keep their
    times and the next make stays incremental.
    """
    tree.mkdir(parents=True, exist_ok=True)
    res = run(["rsync", "-a", "--delete", "--exclude=/out-*",
               f"{pristine}/", f"{tree}/"])
    if res.returncode != 0:
        raise UserError(f"copying {pristine} to {tree} failed: "
                        f"{res.stderr.strip()}")


def apply_patch(tree: Path, patch: Path) -> None:
    """Apply one patch with no fuzz; on failure show the rejected hunks."""
    base = ["patch", "-p1", "-F0", "--forward", "--batch",
            "--no-backup-if-mismatch", "-i", str(patch)]
    trial = run(base + ["--dry-run"], cwd=tree)
    if trial.returncode == 0:
        res = run(base + ["-s"], cwd=tree)
        if res.returncode == 0:
            return
        trial = res
    with tempfile.NamedTemporaryFile("r", suffix=".rej") as rej:
        run(base + ["--reject-file", rej.name], cwd=tree)
        rejected = rej.read()
    raise UserError(f"patch {patch.name} does not apply to {tree}:\n"
                    f"{(trial.stdout + trial.stderr).strip()}\n"
                    f"rejected hunks:\n{rejected}"
                    f"fix the patch (the tree will be re-copied on the next "
                    f"build)")


def prepare(series: Path, tree: Path) -> Path:
    """tree = pristine + every patch of series, or a UserError.

    The stamp naming the applied series is written last and removed
    first, so a tree whose patching failed half-way is never taken for
    a good one: the next call copies it afresh.
    """
    pristine = ensure_pristine()
    patches = read_series(series)
    want = digest(patches, extra=source_version())
    stamp = tree / STAMP
    if stamp.exists() and stamp.read_text().strip() == want:
        return tree
    print(f"preparing {tree}: {len(patches)} patches from {series}",
          flush=True)
    stamp.unlink(missing_ok=True)
    sync_tree(pristine, tree)
    for patch in patches:
        print(f"  applying {patch.name}", flush=True)
        apply_patch(tree, patch)
    stamp.write_text(want + "\n")
    return tree


def prepare_tree(stack: str, profile: str = MINIMAL) -> Path:
    """The stack's tree of a build profile with its whole series
    applied."""
    return prepare(series_file(stack), tree_dir(stack, profile))


def make_env() -> dict[str, str]:
    """Environment for make: ccache in the cache, and a kernel that is
    the same bytes whichever cache builds it and however often it is
    relinked: the banner's user, host, date and build number, and the
    mtimes in the built-in initramfs (gen_initramfs.sh takes them from
    KBUILD_BUILD_TIMESTAMP if date(1) reads it).  On an
    instruction-counting clock a kernel a byte apart is another run."""
    env = dict(os.environ)
    env.setdefault("CCACHE_DIR", str(paths.cache_dir() / "ccache"))
    env.setdefault("CCACHE_MAXSIZE", "8G")
    env["KBUILD_BUILD_USER"] = "rmapbench"
    env["KBUILD_BUILD_HOST"] = "rmapbench"
    env["KBUILD_BUILD_TIMESTAMP"] = "2026-01-01 00:00:00 UTC"
    env["KBUILD_BUILD_VERSION"] = "1"
    return env


def run_with_heartbeat(cmd: list[str], log: Path, what: str,
                       every_s: float = 30.0) -> int:
    """Run cmd with output to log, saying every every_s that it still runs."""
    start = time.monotonic()
    with open(log, "a") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                env=make_env(), text=True)
        while True:
            try:
                return proc.wait(timeout=every_s)
            except subprocess.TimeoutExpired:
                lines = sum(1 for _ in open(log, errors="replace"))
                print(f"  ... {what}: {fmt_seconds(time.monotonic() - start)}"
                      f" elapsed, {lines} log lines", flush=True)


def make(tree: Path, out: Path, arch: str, targets: list[str],
         log: Path, jobs: int | None = None) -> None:
    """make in tree with O=out (a child of tree); raise with the log tail."""
    out.mkdir(parents=True, exist_ok=True)
    cmd = ["make", "-C", str(tree), f"O={out.name}", f"ARCH={arch}",
           "CC=ccache gcc", f"-j{jobs or os.cpu_count() or 1}"] + targets
    returncode = run_with_heartbeat(cmd, log, f"make {' '.join(targets)} "
                                    f"({tree.name} {arch})")
    if returncode != 0:
        tail = "\n".join(log.read_text().splitlines()[-30:])
        raise UserError(f"'make {' '.join(targets)}' failed for {tree.name} "
                        f"{arch} (full log {log}):\n{tail}")


def parse_config(text: str) -> dict[str, str]:
    """CONFIG_X -> value ('n' for '# CONFIG_X is not set')."""
    values = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("CONFIG_") and "=" in line:
            key, value = line.split("=", 1)
            values[key] = value
        elif line.startswith("# CONFIG_") and line.endswith(" is not set"):
            values[line[2:-len(" is not set")]] = "n"
    return values


def check_fragments(config: Path, frags: list[Path]) -> None:
    """Every line of every fragment must hold in the final config."""
    final = parse_config(config.read_text())
    wrong = []
    for frag in frags:
        for key, want in parse_config(frag.read_text()).items():
            got = final.get(key, "n")
            if got != want:
                wrong.append(f"{key}={want} ({frag.name}) but .config has "
                             f"{key}={got}")
    if wrong:
        raise UserError(f"config {config} does not honour its fragments "
                        "(a dependency is missing or an option is "
                        "impossible):\n  " + "\n  ".join(wrong))


# What a debug fragment switches on that is not a debug option: a
# measured kernel may have it.  DEBUG_KERNEL only opens the menus of the
# debug options and adds no code; DEBUG_FS is a filesystem (fault
# injection's controls live there) that Debian's own kernel has, and
# the distro profile builds in: it changes no path a workload times.
SUPPORT = frozenset({"CONFIG_DEBUG_KERNEL", "CONFIG_DEBUG_FS"})


def debug_symbols() -> set[str]:
    """What the debug variants switch on (every kernels/debug/*.config):
    the measured kernels must have none of it."""
    on = set()
    for frag in sorted((paths.KERNELS / "debug").glob("*.config")):
        on |= {k for k, v in parse_config(frag.read_text()).items()
               if v != "n" and k not in SUPPORT}
    return on


def check_measured(config: Path) -> None:
    """A measured kernel carries no debug option (they belong to the
    variants): refuse one that does, naming them."""
    final = parse_config(config.read_text())
    found = sorted(k for k in debug_symbols() if final.get(k, "n") != "n")
    if found:
        raise UserError(f"{config} is a measured kernel's config but has "
                        f"debug options on: {', '.join(found)}; they belong "
                        "in a debug variant (kernels/debug/), not in "
                        "kernels/common or kernels/<stack>")


def configure(stack: str, arch: str, profile: str = MINIMAL) -> Path:
    """tinyconfig + fragments + olddefconfig, in a scratch O= directory.

    The result replaces the build's .config only if it differs, so an
    unchanged config costs no rebuild.
    """
    tree = prepare_tree(stack, profile)
    frags = config_fragments(stack, arch, profile)
    scratch = tree / f"out-{arch}-config"
    log = scratch / "config.log"
    scratch.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    make(tree, scratch, arch, ["tinyconfig"], log)
    merge = [str(tree / "scripts/kconfig/merge_config.sh"), "-m",
             "-O", str(scratch), str(scratch / ".config")]
    res = run(merge + [str(f) for f in frags], cwd=tree, log=log)
    if res.returncode != 0:
        raise UserError(f"merge_config.sh failed for {stack} {arch}: "
                        f"see {log}")
    make(tree, scratch, arch, ["olddefconfig"], log)
    check_fragments(scratch / ".config", frags)
    if not paths.variant():
        check_measured(scratch / ".config")
    final = build_dir(stack, arch, profile) / ".config"
    final.parent.mkdir(parents=True, exist_ok=True)
    new = (scratch / ".config").read_text()
    if not final.exists() or final.read_text() != new:
        final.write_text(new)
    return final


def compiler() -> str:
    res = run(["gcc", "--version"])
    return res.stdout.splitlines()[0] if res.stdout else "unknown"


def build_inputs(stack: str, arch: str, profile: str = MINIMAL) -> str:
    """What a built kernel is made of beyond its tree's sources: the
    applied series (the tree's stamp), the config fragments, the debug
    options a measured kernel may not have, the target and compiler."""
    applied = tree_dir(stack, profile) / STAMP
    debug = sorted((paths.KERNELS / "debug").glob("*.config"))
    return digest(config_fragments(stack, arch, profile) + debug,
                  extra=repr((applied.read_text() if applied.exists()
                              else "", arch, testbed.arch(arch).target,
                              paths.variant(), compiler())))


def up_to_date(stack: str, target: Target, inputs: str) -> bool:
    """The kernel was built from these inputs and is still there: no
    configure and no make (both take about a minute even when nothing
    changed)."""
    stamp = build_dir(stack, target.arch, target.profile) / BUILT
    return kernel_image(stack, target.arch, target.profile).exists() \
        and stamp.exists() and stamp.read_text().strip() == inputs


def build(stack: str, target: Target, progress: Progress) -> Path:
    """Configure and build one kernel, unless it is up to date; return
    its bzImage."""
    profile, arch = target
    out = build_dir(stack, arch, profile)
    name = f"{stack} {target.label()}"
    prepare_tree(stack, profile)
    inputs = build_inputs(stack, arch, profile)
    image = kernel_image(stack, arch, profile)
    if up_to_date(stack, target, inputs):
        progress.step_done()
        print(f"  {name}: up to date", flush=True)
        return image
    timing = out / ".rmapbench-build-seconds"
    last = float(timing.read_text()) if timing.exists() else None
    progress.note(f"building {name} kernel", eta=last)
    (out / BUILT).unlink(missing_ok=True)
    configure(stack, arch, profile)
    log = out / "build.log"
    log.write_text("")
    start = time.monotonic()
    make(tree_dir(stack, profile), out, arch, [testbed.arch(arch).target],
         log)
    took = time.monotonic() - start
    timing.write_text(f"{took:.1f}\n")
    (out / BUILT).write_text(inputs + "\n")
    progress.step_done()
    print(f"  built {image} in {fmt_seconds(took)}", flush=True)
    return image


def build_all(stacks: list[str], where: Where) -> list[Path]:
    """Build every stack's kernel of every target (a bare arch: its
    minimal kernels), with progress."""
    targets = as_targets(where)
    progress = Progress(len(stacks) * len(targets), "build")
    return [build(stack, target, progress)
            for target in targets for stack in stacks]


def built_scheme(stack: str, arch: str, profile: str = MINIMAL) -> str:
    """The scheme the stack's built .config selects."""
    config = build_dir(stack, arch, profile) / ".config"
    values = parse_config(config.read_text()) if config.exists() else {}
    chosen = [s.scheme for s in testbed.STACKS[1:]
              if values.get(s.scheme_symbol) == "y"]
    return chosen[0] if chosen else testbed.STACKS[0].scheme


def config_diff(arch: str, profile: str = MINIMAL
                ) -> tuple[list[str], list[str]]:
    """The symbols whose values differ between the stacks on arch in a
    build profile.

    Returns (lines 'CONFIG_X: anon_vma=.. anonmm=..', symbols outside
    the stacks' scheme symbols): a fair comparison needs the second list
    empty.
    """
    configs, names = [], testbed.stack_names()
    for stack in names:
        config = build_dir(stack, arch, profile) / ".config"
        if not config.exists():
            raise UserError(f"no .config for {stack} {arch} ({profile}): "
                            f"run 'harness.py build --stack {stack} "
                            f"--arch {arch} --profile {profile}' first")
        configs.append(parse_config(config.read_text()))
    old, new = configs
    lines, unfair = [], []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key, "n"), new.get(key, "n")
        if a != b:
            lines.append(f"{key}: {names[0]}={a} {names[1]}={b}")
            if key not in testbed.scheme_symbols():
                unfair.append(key)
    return lines, unfair
