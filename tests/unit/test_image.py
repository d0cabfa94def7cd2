"""Guest images: the same files pack to the same bytes.

An icount boot repeats only if its input does: the kernel parses every
cpio header of the initrd, and a header's times and inode numbers
change the instructions it executes."""

import os
import shutil
import time
from pathlib import Path

import pytest

from rmapbench import image

needs_cpio = pytest.mark.skipif(shutil.which("cpio") is None,
                                reason="cpio not installed (make setup)")


def tree(root: Path, stamp: float) -> Path:
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "tool").write_bytes(b"\x7fELF tool")
    (root / "bin" / "tool").chmod(0o755)
    os.symlink("tool", root / "bin" / "alias")
    (root / "init").write_text("#!/bin/sh\n")
    for p in (root / "bin" / "tool", root / "init", root / "bin", root):
        os.utime(p, (stamp, stamp))
    return root


NEWC_FIELDS = ("ino", "mode", "uid", "gid", "nlink", "mtime", "filesize",
               "devmajor", "devminor", "rdevmajor", "rdevminor",
               "namesize", "check")


def header_of(archive: bytes, name: bytes) -> dict[str, int]:
    """The newc header fields of the last entry called name."""
    at = archive.rindex(name + b"\0") - 110
    assert archive[at:at + 6] == b"070701"
    return {f: int(archive[at + 6 + 8 * i:at + 14 + 8 * i], 16)
            for i, f in enumerate(NEWC_FIELDS)}


@needs_cpio
def test_the_same_files_pack_to_the_same_bytes_whenever_and_wherever(
        tmp_path):
    """Two copies of a tree made at different times, in different
    directories (other inodes), give byte-identical archives."""
    now = time.time()
    a = tree(tmp_path / "a", now)
    b = tree(tmp_path / "elsewhere" / "b", now - 86400 * 365)
    image.cpio(a, tmp_path / "a.cpio")
    image.cpio(b, tmp_path / "b.cpio")
    assert (tmp_path / "a.cpio").read_bytes() == \
        (tmp_path / "b.cpio").read_bytes()
    assert image.tree_digest(a) == image.tree_digest(b)


@needs_cpio
def test_a_boot_initrd_is_the_same_bytes_for_the_same_plan(tmp_path):
    base = tmp_path / "base.cpio"
    image.cpio(tree(tmp_path / "root", time.time()), base)
    first = image.boot_initrd(base, "fork N=4\n", tmp_path / "1.cpio")
    os.utime(base, None)
    second = image.boot_initrd(base, "fork N=4\n", tmp_path / "2.cpio")
    assert first.read_bytes() == second.read_bytes()
    assert header_of(first.read_bytes(), b"plan")["mtime"] == image.MTIME
    other = image.boot_initrd(base, "fork N=8\n", tmp_path / "3.cpio")
    assert other.read_bytes() != first.read_bytes()


def test_a_mode_changes_the_image_name(tmp_path):
    root = tree(tmp_path / "root", time.time())
    before = image.tree_digest(root)
    (root / "init").chmod(0o755)
    assert image.tree_digest(root) != before
