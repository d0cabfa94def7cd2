"""A foreign-arch tool's files, resolved as the guest's loader will:
checked on fake unpacked packages holding real ELF files of the host (no
download), and apt-cache's dependency lists parsed."""

import shutil
from pathlib import Path

import pytest

from rmapbench import debs
from rmapbench.errors import UserError

TRUE = Path("/bin/true")


def host_elf():
    interp = debs.elf_interp(TRUE)
    needed, _ = debs.elf_needs(TRUE)
    if not interp or needed != ["libc.so.6"]:
        pytest.skip("/bin/true is not a dynamic binary needing only libc")
    libc = next(Path(d) / "libc.so.6" for d in
                ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu")
                if (Path(d) / "libc.so.6").exists())
    return interp, libc


def package(root: Path, files: dict[str, Path], links=None) -> Path:
    for guest, host in files.items():
        dest = root / guest.lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(host, dest)
    for guest, target in (links or {}).items():
        dest = root / guest.lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.symlink_to(target)
    return root


def test_a_binary_brings_its_interpreter_and_libraries(tmp_path):
    interp, libc = host_elf()
    roots = {
        "tool": package(tmp_path / "tool", {"/usr/bin/tool": TRUE}),
        # libc through a relative symlink, as Debian ships it
        "libc6": package(tmp_path / "libc6", {
            "/lib/x86_64-linux-gnu/libc.so.6": libc,
            "/lib/x86_64-linux-gnu/ld.so": Path(interp).resolve()},
            {interp: "/lib/x86_64-linux-gnu/ld.so",
             "/lib/x86_64-linux-gnu/" + Path(interp).name: "ld.so"}),
    }
    fetched = []

    def fetch(pkgs):
        fetched.append(list(pkgs))
        return {p: roots[p] for p in pkgs}

    closure = debs.Closure(("/lib/x86_64-linux-gnu", "/usr/lib"), fetch,
                           lambda p: {"tool": ["libc6"]}.get(p, []))
    closure.add_binary("tool", "/usr/bin/tool")
    guests = [g for _, g in closure.packed()]
    # the interpreter at the path the binary names, and again under the
    # name libc asks the loader for
    assert guests == sorted(["usr/bin/tool", interp.lstrip("/"),
                             "lib/x86_64-linux-gnu/libc.so.6",
                             "lib/x86_64-linux-gnu/" + Path(interp).name])
    # libc's package is fetched once, and only because the tool needs it
    assert fetched == [["tool"], ["libc6"]]


def test_a_library_no_dependency_has_is_named(tmp_path):
    host_elf()
    roots = {"tool": package(tmp_path / "tool", {"/usr/bin/tool": TRUE})}
    closure = debs.Closure(("/lib",), lambda ps: {p: roots[p] for p in ps},
                           lambda p: [])
    with pytest.raises(UserError, match="needed by /usr/bin/tool"):
        closure.add_binary("tool", "/usr/bin/tool")


def test_symlinks_resolve_inside_the_package(tmp_path):
    root = package(tmp_path / "p", {"/usr/lib/x/libz.so.1.2": TRUE},
                   {"/usr/lib/x/libz.so.1": "libz.so.1.2",
                    "/lib/x/libz.so.1": "/usr/lib/x/libz.so.1"})
    assert debs.resolve_in(root, "/lib/x/libz.so.1") == \
        root / "usr/lib/x/libz.so.1.2"
    assert debs.resolve_in(root, "/lib/x/absent.so") is None


def test_apt_depends_first_alternative_no_virtual(tmp_path, monkeypatch):
    out = ("fio:i386\n  Depends: libaio1:i386\n |Depends: libc6:i386\n"
           "  Depends: libc6-alt:i386\n  Depends: <libfoo.so>\n"
           "  PreDepends: libz1:i386\n"
           "stress-ng:i386\n  Depends: libjudy:i386\n")
    monkeypatch.setattr(debs, "run", lambda cmd, cwd=None: out)
    monkeypatch.setattr(debs, "store", lambda arch: tmp_path)
    debs.save_depends(["fio", "stress-ng"], "i386")
    assert debs.depends("fio", "i386") == ["libaio1", "libc6", "libz1"]
    assert debs.depends("stress-ng", "i386") == ["libjudy"]
