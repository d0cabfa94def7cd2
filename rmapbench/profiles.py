"""Build profiles: the feature set both stacks are built with, the same
in both, and the kernels (profile and arch) a command works on.

'minimal' is the 2004 feature set anonmm was written for, on both
arches; 'distro' is the memory management of Debian's own 6.1 amd64
kernel (kernels/common/config/distro.config), x86_64 only.  A profile
says everything about itself here: its config fragment, its arches, the
cache directory of its kernel trees, the NUMA nodes QEMU gives its
guests, the kernel arguments its boots add, what the report says it
leaves off.  COMPARE chooses the kernels 'compare' measures.
"""

from dataclasses import dataclass
from typing import NamedTuple

from .errors import UserError
from .testbed import arch, arch_names, named


@dataclass(frozen=True)
class Profile:
    """A build profile: the feature set both stacks are built with, the
    same in both.  fragment: kernels/common/config/<fragment>, merged
    after base.config and the arch's; arches: those it builds for;
    suffix: names its kernel trees apart in the cache (trees<suffix>/,
    so building one profile never touches another's kernels);
    numa_nodes: the NUMA nodes QEMU gives its guests (0: none);
    append: kernel arguments its boots add; off: what it leaves off in
    both stacks that the kernel it stands for has, as the report says
    it; features: what its kernels and guests have that an experiment
    may need (FEATURES); debian: its mm symbols are Debian's amd64
    config's but where debconfig.REASONS says why not ('harness.py
    config-diff' checks)."""
    name: str
    text: str
    fragment: str
    arches: tuple[str, ...]
    suffix: str = ""
    numa_nodes: int = 0
    append: str = ""
    off: str = ""
    features: tuple[str, ...] = ()
    debian: bool = False

    def has(self, needs: tuple[str, ...]) -> bool:
        """Whether its kernels have every feature of needs."""
        return set(needs) <= set(self.features)

    def clock_args(self, clock_append: str) -> str:
        """A clock's kernel arguments as this profile's boots take them.
        QEMU describes the NUMA nodes in ACPI's SRAT, so the boots of a
        profile with nodes keep ACPI on, on the clock that turns it off
        for speed (icount's acpi=off): a slower boot, and the same nodes
        as on the host clock."""
        if self.numa_nodes < 2:
            return clock_append
        return " ".join(a for a in clock_append.split() if a != "acpi=off")

    def machine(self, mem_mb: int, vcpus: int, possible: int
                ) -> tuple[str, list[str]]:
        """QEMU's -smp value for a guest of vcpus (of possible ones) and
        the arguments of its NUMA nodes: mem_mb split between them (the
        last takes the odd MB), each node a socket of its own with its
        share of the possible vCPUs (a node beyond the vCPUs holds
        memory only).  A socket per node: vCPUs of one socket share a
        last-level cache, and the kernel warns at boot when such
        siblings sit on different nodes."""
        if self.numa_nodes < 2:
            return (f"{vcpus},maxcpus={possible}" if possible != vcpus
                    else str(vcpus)), []
        nodes = self.numa_nodes
        sockets = min(nodes, possible)
        cores = -(-possible // sockets)
        smp = f"{vcpus},maxcpus={cores * sockets},sockets={sockets}"
        share, out = mem_mb // nodes, []
        for node in range(nodes):
            size = share if node < nodes - 1 else mem_mb - share * node
            cpus = f",cpus={node * cores}-{node * cores + cores - 1}" \
                if node < sockets else ""
            out += ["-object", f"memory-backend-ram,id=ram{node},"
                    f"size={size}M",
                    "-numa", f"node,nodeid={node},memdev=ram{node}{cpus}"]
        return smp, out


# What a profile's kernels and guests may have that an experiment or a
# suite test can need (Experiment.needs, check Test.needs): page
# migration, two NUMA nodes, memory cgroups (v2, mounted), MGLRU, zswap,
# userfaultfd, memory hot-remove, memory failure (hwpoison), transparent
# huge pages (always, with THP swap), KSM (ksmd stopped unless asked).
FEATURES = ("migration", "numa", "memcg", "lru_gen", "zswap", "userfaultfd",
            "hotremove", "memory_failure", "thp", "ksm")

MINIMAL, DISTRO = "minimal", "distro"
PROFILES: tuple[Profile, ...] = (
    Profile(MINIMAL, "the 2004 feature set: no migration, compaction, "
            "NUMA, memcg, MGLRU, zswap, userfaultfd, memory failure, THP, "
            "KSM or hugetlbfs, in either stack", "minimal.config",
            ("i386", "x86_64")),
    Profile(DISTRO, "the memory management of Debian's 6.1 amd64 kernel: "
            "NUMA (two nodes, balancing on), migration, compaction, memory "
            "hotplug and hot-remove, memcg (cgroup v2), "
            "MGLRU (on), zswap (available), userfaultfd, memory failure, "
            "transparent huge pages (always; swapped out whole on zram, "
            "split first on the rotational virtio disk), "
            "KSM (ksmd stopped until a test or experiment runs it), "
            "protection keys, soft-dirty",
            "distro.config", ("x86_64",), suffix="-distro", numa_nodes=2,
            off="ZONE_DEVICE, hugetlbfs, DAMON, idle page tracking, CMA "
            "and device-private memory are off in both stacks",
            features=FEATURES, debian=True),
)


class Target(NamedTuple):
    """A kernel of each stack to measure: a profile built for an arch."""
    profile: str
    arch: str

    def label(self) -> str:
        """'i386' for the minimal profile (what every run before
        profiles said), 'x86_64 distro' for another."""
        return self.arch if self.profile == MINIMAL else \
            f"{self.arch} {self.profile}"


# What 'compare' measures unless told otherwise, and what '--full' adds:
# the one place that chooses the comparison's kernels.
COMPARE: tuple[Target, ...] = (Target(MINIMAL, "i386"),
                               Target(DISTRO, "x86_64"))
FULL_ADDS: tuple[Target, ...] = (Target(MINIMAL, "x86_64"),)


def profile(name: str) -> Profile:
    return named("profile", PROFILES, name)


def profile_names() -> tuple[str, ...]:
    return tuple(p.name for p in PROFILES)


def targets(profiles: list[str] | None, arches: list[str] | None,
            full: bool = False) -> list[Target]:
    """The kernels a command works on: each profile named (None: the
    comparison's, COMPARE, and FULL_ADDS if full) on each arch named
    (None: every arch it builds for), in PROFILES' then ARCHES' order.
    An unknown name, or a profile named with an arch it does not build
    for, is a UserError before any build or boot."""
    chosen = [profile(p) for p in profiles] if profiles else None
    for a in arches or ():
        arch(a)
    if chosen is None:
        picked = [*COMPARE, *(FULL_ADDS if full else ())]
        if arches:
            picked = [t for t in picked if t.arch in arches] or \
                [Target(MINIMAL, a) for a in arches]
        return sort_targets(picked)
    for p in chosen:
        refused = [a for a in arches or () if a not in p.arches]
        if refused:
            raise UserError(f"profile {p.name} builds for "
                            f"{', '.join(p.arches)} only, not "
                            f"{', '.join(refused)}: drop --arch "
                            f"{','.join(refused)} or choose another profile")
    return sort_targets([Target(p.name, a) for p in chosen
                         for a in p.arches if not arches or a in arches])


def sort_targets(picked: "list[Target] | set[Target]") -> list[Target]:
    """Without repeats, in PROFILES' then ARCHES' order (names neither
    knows last)."""
    profiles, arches = profile_names(), arch_names()

    def rank(names: tuple[str, ...], name: str) -> tuple[int, str]:
        return (names.index(name) if name in names else len(names), name)
    return sorted(set(picked), key=lambda t: (rank(profiles, t.profile),
                                              rank(arches, t.arch)))


# Where a run goes: arches (the minimal profile's kernels, as every
# command before profiles named them) or targets.
Where = list[str] | list[Target]


def as_targets(where: "Where | list[str | Target]") -> list[Target]:
    """Targets of where, a bare arch standing for its minimal kernels."""
    return [w if isinstance(w, Target) else Target(MINIMAL, w)
            for w in where]


def names(where: "Where | list[str | Target]") -> list[str]:
    """What a run's id hashes of where: a minimal target by its arch
    alone (so a run's id is what it was before profiles), another as
    'arch/profile'."""
    return [t.arch if t.profile == MINIMAL else f"{t.arch}/{t.profile}"
            for t in as_targets(where)]
