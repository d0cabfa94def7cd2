"""Guest images: one initramfs per arch, the same for both stacks.

The base image holds a static busybox of the arch, the guest init and the
workloads built from bench/; a boot that needs more (extras.py) gets an
image of its own with those files added.  Each boot appends a tiny second cpio
holding /plan (the kernel unpacks concatenated archives in order), so one
base image serves every run.
"""

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from . import benchbuild, iface, paths, testbed
from .extras import Files
from .errors import UserError


def images_dir() -> Path:
    return paths.cache_dir() / "images"


def busybox(arch: str) -> Path:
    """A static busybox for arch: Debian's busybox-static of that arch."""
    if arch == "x86_64":
        host = Path("/bin/busybox")
        if host.exists():
            return host
    target = images_dir() / f"busybox-{arch}"
    if target.exists():
        return target
    return fetch_busybox(arch, target)


def fetch_busybox(arch: str, target: Path) -> Path:
    """apt-get download busybox-static:ARCH and unpack only its binary."""
    work = Path(tempfile.mkdtemp(prefix="rmapbench-busybox-"))
    try:
        pkg = f"busybox-static:{testbed.arch(arch).deb_arch}"
        res = subprocess.run(["apt-get", "download", pkg], cwd=work,
                             capture_output=True, text=True)
        debs = list(work.glob("busybox-static_*.deb"))
        if res.returncode != 0 or not debs:
            raise UserError(f"cannot download {pkg}: {res.stderr.strip()} "
                            "(run 'make setup', which adds the i386 "
                            "architecture to dpkg)")
        subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(work / "x")],
                       check=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(work / "x" / "bin" / "busybox", target)
        return target
    finally:
        shutil.rmtree(work, ignore_errors=True)


def bench_binaries(arch: str) -> list[Path]:
    """Build bench/ for arch and list its programs (none yet is fine)."""
    if not (paths.BENCH / "Makefile").exists():
        return []
    res = benchbuild.make(arch)
    if res.returncode != 0:
        raise UserError(f"building bench/ for {arch} failed:\n"
                        f"{res.stdout}{res.stderr}")
    out = paths.BENCH / "out" / arch
    return sorted(p for p in out.iterdir()
                  if p.is_file() and os.access(p, os.X_OK))


def stage(arch: str, root: Path, files: Files = ()) -> None:
    """Lay out the guest's root file system in root: the base, then
    the extra files at their guest paths."""
    for d in ("bin", "bench", "dev", "etc", "proc", "sys", "tmp"):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "etc" / "rmb-iface.sh").write_text(iface.sampler_config())
    shutil.copy2(busybox(arch), root / "bin" / "busybox")
    shutil.copy2(paths.BENCH / "init.sh", root / "init")
    (root / "init").chmod(0o755)
    for prog in bench_binaries(arch):   # links stay links (bench/Makefile)
        shutil.copy2(prog, root / "bench" / prog.name, follow_symlinks=False)
    for src, dst in files:
        target = root / dst
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)


# Every file of an image has this modification time (1 January 2026).
# The kernel's early microcode loader and its initramfs unpacker parse
# each cpio header's hex fields digit by digit, 0-9 and a-f along
# different branches, so a header's times and inode numbers change the
# instructions a boot executes: an icount boot of an archive packed a
# second later follows another path from early in boot on
# (docs/measurements.md, "Where icount boots part").
MTIME = 1767225600


def cpio(root: Path, out: Path) -> None:
    """Pack root as a newc cpio archive, owned by root, sorted names,
    the same bytes whenever the files are the same: one modification
    time (MTIME), inodes numbered in order, no device numbers."""
    paths_in = sorted(root.rglob("*"))
    for p in [*paths_in, root]:
        os.utime(p, (MTIME, MTIME), follow_symlinks=False)
    names = [str(p.relative_to(root)) for p in paths_in]
    res = subprocess.run(["cpio", "-o", "-H", "newc", "-R", "0:0",
                          "--reproducible", "--quiet", "-O", str(out)],
                         cwd=root,
                         input="\n".join(names) + "\n", text=True,
                         capture_output=True)
    if res.returncode != 0:
        raise UserError(f"cpio of {root} failed: {res.stderr.strip()}")


def tree_digest(root: Path) -> str:
    """What names an image: its files' names, modes and contents, and
    the packing (cpio's), so an image packed otherwise is packed anew."""
    h = hashlib.sha256(f"newc reproducible mtime={MTIME}\0".encode())
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode() + b"\0")
        h.update(f"{p.lstat().st_mode:o}\0".encode())
        if p.is_symlink():
            h.update(b"-> " + os.readlink(p).encode())
        elif p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


# Boots started together (the executor's threads) build bench/ and the
# image one at a time: two makes in one tree would race.
BUILD_LOCK = threading.Lock()


@contextmanager
def tree_lock() -> Iterator[None]:
    """bench/'s build, one process at a time: the tasks of a Slurm run
    (jobarray.py) boot at once from one repository, on one node or on
    several over a shared filesystem (flock works over NFSv4)."""
    out = paths.BENCH / "out"
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def build_image(arch: str, files: Files = ()) -> Path:
    """The initramfs for arch with files (extras.resolve), rebuilt only
    when its content changed.  Written under a name of its own and
    renamed, so another process building the same image does no harm."""
    with BUILD_LOCK, tree_lock(), tempfile.TemporaryDirectory(
            prefix="rmapbench-root-") as tmp:
        root = Path(tmp)
        stage(arch, root, files)
        kind = "extra-" if files else ""
        image = images_dir() / \
            f"initramfs-{arch}-{kind}{tree_digest(root)}.cpio"
        if not image.exists():
            image.parent.mkdir(parents=True, exist_ok=True)
            fd, partial = tempfile.mkstemp(dir=image.parent,
                                           prefix=f".{image.name}.")
            os.close(fd)
            cpio(root, Path(partial))
            os.replace(partial, image)
    return image


def boot_initrd(base: Path, plan: str, out: Path) -> Path:
    """base followed by a cpio holding /plan: the initrd of one boot."""
    with tempfile.TemporaryDirectory(prefix="rmapbench-plan-") as tmp:
        root = Path(tmp)
        (root / "plan").write_text(plan)
        (root / "plan").chmod(0o644)
        cpio(root, Path(tmp + ".cpio"))
        with open(out, "wb") as dst:
            for part in (base, Path(tmp + ".cpio")):
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, dst)
        os.unlink(tmp + ".cpio")
    return out
