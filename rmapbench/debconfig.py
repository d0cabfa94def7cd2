"""The distro profile against Debian's own kernel config.

The distro kernels stand for Debian's 6.1 amd64 kernel (package
linux-config-6.1, config.amd64_none_amd64.xz).  This compares each
built distro .config with it, symbol by symbol, over the memory
management's own symbols (those mm/Kconfig declares), and says why each
difference is there: REASONS holds every difference there may be, each
with its reason; one it does not hold is reported as unexplained, and
the check fails ('harness.py config-diff').  A symbol Debian's config
does not name counts as off, as kbuild.config_diff counts it.
"""

import lzma
import re
from pathlib import Path

from .errors import UserError
from .kbuild import build_dir, parse_config, tree_dir

DEBIAN_CONFIG = Path("/usr/src/linux-config-6.1/config.amd64_none_amd64.xz")
DEBIAN_PACKAGE = "linux-config-6.1"

BALLOON = ("selected by the virtio (and Hyper-V) balloon drivers: the "
           "guests have no balloon device, and the kernels no driver "
           "for one")
ZONE_DEVICE = ("off in both stacks (distro.config): ZONE_DEVICE's "
               "migration, migrate_vma, restores ptes through a walk "
               "anonmm does not make complete")
MODULE = ("a module in Debian; modules are off here (base.config)")

# Every mm symbol the distro kernels may set otherwise than Debian, and
# why: a scheme's own symbol, a feature anonmm does not serve yet (off in
# both stacks), or a symbol only a driver the guests have no device for
# selects.
REASONS = {
    "CONFIG_ANONMM": "the scheme: anonmm's stack sets it",
    "CONFIG_ANON_VMA": "the scheme: rmapbench's choice between the two "
                       "(kernels/anonmm 0003); Debian's tree has no such "
                       "choice, and is anon_vma",
    "CONFIG_ZONE_DEVICE": ZONE_DEVICE,
    "CONFIG_DEVICE_MIGRATION": "depends on ZONE_DEVICE: " + ZONE_DEVICE,
    "CONFIG_ARCH_ENABLE_HUGEPAGE_MIGRATION": "follows HUGETLB_PAGE, off in "
                                             "both stacks: anonmm does not "
                                             "serve hugetlbfs yet",
    "CONFIG_MEMORY_BALLOON": BALLOON,
    "CONFIG_BALLOON_COMPACTION": BALLOON,
    "CONFIG_PAGE_REPORTING": BALLOON,
    "CONFIG_MMU_NOTIFIER": "selected by KVM and by GPU and RDMA drivers: "
                           "none is built, the guests have no such device",
    "CONFIG_HMM_MIRROR": "selected by GPU (amdkfd, nouveau) and RDMA "
                         "drivers: none is built",
    "CONFIG_MAPPING_DIRTY_HELPERS": "selected by the vmwgfx GPU driver: "
                                    "not built",
    "CONFIG_VMAP_PFN": "selected by the i915 and Hyper-V drivers: not "
                       "built",
    "CONFIG_GET_FREE_REGION": "selected by CXL region support (and "
                              "DEVICE_PRIVATE, off in both): the guests "
                              "have no CXL memory",
    "CONFIG_HWPOISON_INJECT": MODULE + ", and a debugfs page injector: "
                              "MADV_HWPOISON needs none (distro.config)",
    "CONFIG_Z3FOLD": MODULE + "; zswap's pool is zbud, Debian's default",
    "CONFIG_Z3FOLD_DEPRECATED": MODULE + "; zswap's pool is zbud, "
                                         "Debian's default",
    "CONFIG_ZSMALLOC": MODULE + ", so built in: zram needs it",
    "CONFIG_SECRETMEM": "memfd_secret(): its default is off under "
                        "EMBEDDED, which the tiny configuration the build "
                        "starts from sets; its pages are not anonymous "
                        "memory, neither scheme maps them",
}


def mm_symbols(kconfig: str) -> set[str]:
    """The symbols a Kconfig file declares (config and menuconfig)."""
    return {f"CONFIG_{m}" for m in re.findall(
        r"^(?:menu)?config\s+(\w+)", kconfig, re.M)}


def debian_config(path: Path = DEBIAN_CONFIG) -> dict[str, str]:
    if not path.exists():
        raise UserError(f"no {path}: install Debian's {DEBIAN_PACKAGE} "
                        f"(make setup), whose config the distro profile "
                        f"is compared with")
    return parse_config(lzma.decompress(path.read_bytes()).decode())


def differences(ours: dict[str, str], debian: dict[str, str],
                symbols: set[str]) -> list[tuple[str, str, str]]:
    """(symbol, Debian's value, ours) of each symbol that differs."""
    return [(s, debian.get(s, "n"), ours.get(s, "n"))
            for s in sorted(symbols)
            if debian.get(s, "n") != ours.get(s, "n")]


def explain(diffs: list[tuple[str, str, str]]
            ) -> tuple[list[str], list[str]]:
    """(a line per difference, with its reason; the symbols REASONS does
    not explain)."""
    lines = [f"{s}: debian={d} ours={o}: "
             f"{REASONS.get(s, 'UNEXPLAINED')}" for s, d, o in diffs]
    return lines, [s for s, _, _ in diffs if s not in REASONS]


def compare(stack: str, arch: str, profile: str
            ) -> tuple[list[str], list[str]]:
    """explain() of a built kernel's .config against Debian's."""
    config = build_dir(stack, arch, profile) / ".config"
    if not config.exists():
        raise UserError(f"no .config for {stack} {arch} ({profile}): run "
                        f"'harness.py build --stack {stack} --arch {arch} "
                        f"--profile {profile}' first")
    symbols = mm_symbols((tree_dir(stack, profile) / "mm" / "Kconfig")
                         .read_text())
    return explain(differences(parse_config(config.read_text()),
                               debian_config(), symbols))
