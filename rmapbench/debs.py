"""A Debian tool of a foreign arch (i386 on an amd64 host) with the
libraries it loads: downloaded and unpacked into the cache, never
installed on the machine.

'apt-get download PKG:ARCH' fetches a package (dpkg knows the arch:
tools/setup-debian.sh adds it) and 'dpkg-deb -x' unpacks it into a
directory of its own under <cache>/debs/<arch>/.  There is no ldd for a
foreign arch: the ELF files' own program interpreter and DT_NEEDED
entries (readelf, from binutils) name what the loader will load, and
each is looked up in the multiarch directories (and the DT_RUNPATH) of
the packages unpacked so far, as the guest's loader will look it up.  A
library found in none of them comes from the Depends of the package
whose file needs it, downloaded then: only what the tool loads is
fetched, not the whole dependency closure (fio's reaches python3).
"""

import functools
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import paths
from .errors import UserError

# (host file, path in the guest), as extras.Files
Packed = tuple[tuple[Path, str], ...]
# package names -> their unpacked directories (downloading them if need be)
Fetch = Callable[[list[str]], dict[str, Path]]
# a package name -> the packages it depends on
DependsOf = Callable[[str], list[str]]


def run(cmd: list[str], cwd: Path | None = None) -> str:
    """stdout of cmd, or a UserError with its stderr."""
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if res.returncode != 0:
        raise UserError(f"'{' '.join(cmd)}' failed: "
                        f"{(res.stderr or res.stdout).strip()[-300:]}")
    return res.stdout


def host_arch() -> str:
    """dpkg's own architecture (amd64 here)."""
    return run(["dpkg", "--print-architecture"]).strip()


def multiarch(deb_arch: str) -> str:
    """The multiarch triplet of deb_arch (i386 -> i386-linux-gnu)."""
    return run(["dpkg-architecture", "-a", deb_arch,
                "-qDEB_HOST_MULTIARCH"]).strip()


# --- ELF: what a file asks the loader for ----------------------------------

NEEDED = re.compile(r"\((NEEDED|RUNPATH|RPATH)\)\s+[^\[]*\[([^\]]*)\]")
INTERP = re.compile(r"Requesting program interpreter: ([^\]]+)\]")


def elf_needs(path: Path) -> tuple[list[str], list[str]]:
    """(DT_NEEDED sonames, DT_RUNPATH/DT_RPATH directories) of path."""
    needed, runpath = [], []
    for kind, value in NEEDED.findall(run(["readelf", "-dW", str(path)])):
        if kind == "NEEDED":
            needed.append(value)
        else:
            runpath += [d for d in value.split(":") if d]
    return needed, runpath


def elf_interp(path: Path) -> str | None:
    """The program interpreter (/lib/ld-linux.so.2), None if static."""
    m = INTERP.search(run(["readelf", "-lW", str(path)]))
    return m.group(1) if m else None


# --- apt: packages and their dependencies -----------------------------------

DEPENDS_LINE = re.compile(r"\s+(\|?)(?:Pre)?Depends: (\S+)")


def depends(pkg: str, deb_arch: str) -> list[str]:
    """The packages pkg:deb_arch depends on, as save_depends kept them
    when it was fetched (asked of apt now if they were not)."""
    saved = store(deb_arch) / "depends" / pkg
    if not saved.is_file():
        save_depends([pkg], deb_arch)
    return saved.read_text().split()


def save_depends(pkgs: list[str], deb_arch: str) -> None:
    """Ask apt once what each of pkgs depends on (the first of
    alternatives; virtual packages, shown <so>, left out) and keep the
    lists in <store>/depends/."""
    out = run(["apt-cache", "depends", "--no-recommends", "--no-suggests",
               "--no-conflicts", "--no-breaks", "--no-replaces",
               "--no-enhances", *(f"{p}:{deb_arch}" for p in pkgs)])
    lists: dict[str, list[str]] = {}
    names: list[str] = []
    alternative = False
    for line in out.splitlines():
        if line and not line[0].isspace():
            names = lists.setdefault(line.split(":")[0], [])
            alternative = False
            continue
        m = DEPENDS_LINE.match(line)
        if not m:
            continue
        take, alternative = not alternative, bool(m.group(1))
        if take and not m.group(2).startswith("<"):
            names.append(m.group(2).split(":")[0])
    folder = store(deb_arch) / "depends"
    folder.mkdir(parents=True, exist_ok=True)
    for pkg in pkgs:
        folder.joinpath(pkg).write_text(
            "".join(n + "\n" for n in lists.get(pkg, [])))


def store(deb_arch: str) -> Path:
    return paths.cache_dir() / "debs" / deb_arch


def fetch(pkgs: list[str], deb_arch: str) -> dict[str, Path]:
    """Each package of pkgs (deb_arch) unpacked in a directory of its
    own: the missing ones downloaded in one apt-get call and unpacked
    once, their .debs kept beside them."""
    base = store(deb_arch)
    roots = {p: base / "pkgs" / p for p in pkgs}
    missing = [p for p, root in roots.items() if not root.is_dir()]
    if not missing:
        return roots
    (base / "pkgs").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rmapbench-debs-",
                                     dir=base) as tmp:
        work = Path(tmp)
        run(["apt-get", "download", *(f"{p}:{deb_arch}" for p in missing)],
            cwd=work)
        for pkg in missing:
            unpack(work, pkg, roots[pkg])
    save_depends(missing, deb_arch)
    return roots


def unpack(work: Path, pkg: str, root: Path) -> None:
    """dpkg-deb -x the downloaded pkg_*.deb of work into root, at once
    (a rename: another harness unpacking it meanwhile is no harm)."""
    debs = sorted(work.glob(f"{pkg}_*.deb"))
    if not debs:
        raise UserError(f"apt-get download {pkg} gave no .deb (run 'make "
                        "setup', which adds the i386 architecture to dpkg)")
    run(["dpkg-deb", "-x", str(debs[0]), str(work / pkg)])
    shutil.move(str(debs[0]), root.parent.parent / debs[0].name)
    place(work / pkg, root)


def place(unpacked: Path, root: Path) -> None:
    """Move an unpacked directory to root at once (a rename: another
    harness that placed it meanwhile is no harm)."""
    try:
        unpacked.rename(root)
    except OSError:
        if not root.is_dir():
            raise


# --- the closure: a binary and every file the loader will open -------------

@dataclass
class Closure:
    """The files of one tool, resolved as the guest's loader will."""
    lib_dirs: tuple[str, ...]        # the loader's default directories
    fetch: Fetch
    depends_of: DependsOf
    roots: dict[str, Path] = field(default_factory=dict)   # pkg -> dir
    files: dict[str, Path] = field(default_factory=dict)   # guest -> host
    owner: dict[str, str] = field(default_factory=dict)    # guest -> pkg

    def add_packages(self, pkgs: list[str]) -> None:
        new = [p for p in pkgs if p not in self.roots]
        if new:
            self.roots.update(self.fetch(new))

    def find(self, guest_path: str) -> tuple[str, Path] | None:
        """(package, host file) of an absolute guest path, if any
        unpacked package has it (a symlink is followed inside it)."""
        for pkg, root in self.roots.items():
            host = resolve_in(root, guest_path)
            if host is not None:
                return pkg, host
        return None

    def locate(self, soname: str, runpath: list[str]
               ) -> tuple[str, str, Path] | None:
        """(guest path, package, host file) of soname in the search
        directories, in the loader's order."""
        for d in [*runpath, *self.lib_dirs]:
            guest = f"{d.rstrip('/')}/{soname}"
            hit = self.find(guest)
            if hit:
                return guest, hit[0], hit[1]
        return None

    def lookup(self, want: "Want") -> str | None:
        """The guest path of a wanted soname (or absolute interpreter
        path) in the packages unpacked so far, recorded; None if absent."""
        if want.name.startswith("/"):
            hit = self.find(want.name)
            found = (want.name, *hit) if hit else None
        else:
            found = self.locate(want.name, want.runpath)
        if not found:
            return None
        guest, pkg, host = found
        self.files.setdefault(guest, host)
        self.owner.setdefault(guest, pkg)
        return guest

    def add_binary(self, pkg: str, guest_path: str) -> None:
        """guest_path of pkg, and everything it loads.  Breadth first:
        each round looks up what the files found in the last one need,
        then fetches, in one go, the Depends of every package whose
        file needs a library not found yet (apt is slow per call)."""
        self.add_packages([pkg])
        host = resolve_in(self.roots[pkg], guest_path)
        if host is None:
            raise UserError(f"package {pkg} has no {guest_path}")
        self.files[guest_path] = host
        self.owner[guest_path] = pkg
        interp = elf_interp(host)
        wants = [Want(interp, [], guest_path)] if interp else []
        wants += wants_of(guest_path, host)
        seen = {guest_path}
        while wants:
            missing = []
            found = []
            for want in wants:
                path = self.lookup(want)
                if path is None:
                    missing.append(want)
                elif path not in seen:
                    seen.add(path)
                    found += wants_of(path, self.files[path])
            if missing and not self.fetch_for(missing):
                w = missing[0]
                raise UserError(
                    f"{w.name}, needed by {w.by} (package "
                    f"{self.owner[w.by]}), is in none of its "
                    f"dependencies: {', '.join(sorted(self.roots))}")
            wants = found + missing

    def fetch_for(self, missing: list["Want"]) -> bool:
        """Fetch the Depends of the packages whose files miss a
        library; False if there was nothing new to fetch."""
        owners = dict.fromkeys(self.owner[w.by] for w in missing)
        new = [d for o in owners for d in self.depends_of(o)
               if d not in self.roots]
        self.add_packages(list(dict.fromkeys(new)))
        return bool(new)

    def packed(self) -> Packed:
        """(host file, guest path without the leading /), sorted."""
        return tuple((self.files[g], g.lstrip("/"))
                     for g in sorted(self.files))


@dataclass(frozen=True)
class Want:
    """A library (or the interpreter) a file asks the loader for."""
    name: str                 # soname, or an absolute path
    runpath: list[str]        # the asking file's DT_RUNPATH
    by: str                   # the asking file's guest path


def wants_of(guest_path: str, host: Path) -> list[Want]:
    needed, runpath = elf_needs(host)
    return [Want(n, runpath, guest_path) for n in needed]


def resolve_in(root: Path, guest_path: str, hops: int = 16) -> Path | None:
    """The regular file guest_path names inside an unpacked package,
    following its symlinks within that package; None if absent."""
    path = guest_path
    for _ in range(hops):
        host = root / path.lstrip("/")
        if host.is_symlink():
            target = str(host.readlink())
            path = target if target.startswith("/") else \
                str(Path(path).parent / target)
            continue
        return host if host.is_file() else None
    return None


@functools.cache
def tool_files(pkg: str, binary: str, deb_arch: str) -> Packed:
    """binary (an absolute path) of package pkg for deb_arch, with its
    interpreter and every library it loads, at their guest paths."""
    triplet = multiarch(deb_arch)
    lib_dirs = (f"/lib/{triplet}", f"/usr/lib/{triplet}", "/lib", "/usr/lib")
    closure = Closure(lib_dirs, lambda ps: fetch(ps, deb_arch),
                      lambda p: depends(p, deb_arch))
    closure.add_binary(pkg, binary)
    return closure.packed()
