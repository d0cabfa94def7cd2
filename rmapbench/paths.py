"""Where things live: the repository, the cache outside it, the names."""

import os
from pathlib import Path

from .errors import UserError

REPO = Path(__file__).resolve().parent.parent
KERNELS = REPO / "kernels"
BENCH = REPO / "bench"
# RMAPBENCH_RESULTS / RMAPBENCH_PLOTS move them (the tests do).
RESULTS = Path(os.environ.get("RMAPBENCH_RESULTS", REPO / "results"))
PLOTS = Path(os.environ.get("RMAPBENCH_PLOTS", REPO / "plots"))

SOURCE_PACKAGE = "linux-source-6.1"
SOURCE_TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")


def variant() -> str:
    """The debug variant named by RMAPBENCH_VARIANT ("" for none): the
    fragment kernels/debug/<variant>.config goes onto both stacks."""
    name = os.environ.get("RMAPBENCH_VARIANT", "")
    if name and not (KERNELS / "debug" / f"{name}.config").is_file():
        known = sorted(p.stem for p in (KERNELS / "debug").glob("*.config"))
        raise UserError(f"RMAPBENCH_VARIANT={name}: no kernels/debug/"
                        f"{name}.config; known variants: "
                        f"{', '.join(known) or 'none'}")
    return name


def variant_suffix() -> str:
    """"-<variant>" for a debug variant, "" otherwise: names its cache and
    its check results apart from the measured kernels'."""
    name = variant()
    return f"-{name}" if name else ""


def cache_dir() -> Path:
    """The cache for kernel trees, builds and guest images.

    RMAPBENCH_CACHE overrides the default ~/.cache/rmapbench, or
    ~/.cache/rmapbench-<variant> for a debug variant (its kernels must
    never replace the measured ones).
    """
    env = os.environ.get("RMAPBENCH_CACHE")
    base = Path(env) if env else \
        Path.home() / ".cache" / f"rmapbench{variant_suffix()}"
    return base.expanduser().resolve()


def pristine_dir() -> Path:
    return cache_dir() / SOURCE_PACKAGE


def tree_dir(stack: str, suffix: str = "") -> Path:
    """The stack's tree of a build profile whose trees are named with
    suffix (profiles.Profile.suffix: "" for the minimal profile)."""
    return cache_dir() / f"trees{suffix}" / stack


def build_dir(stack: str, arch: str, suffix: str = "") -> Path:
    """The O= directory: a direct child of the tree, so kbuild uses
    srctree=.. and compiler command lines are the same in both trees,
    which lets ccache share objects between the stacks."""
    return tree_dir(stack, suffix) / f"out-{arch}"
