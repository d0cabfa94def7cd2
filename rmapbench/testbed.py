"""The testbed: what the comparison runs on.  Stacks, arches, guest
clocks, the stacks' boot options (whose other values
are stack variants) and debug variants: all the harness knows of each.

One table in the manner of virtme-ng's architectures.py: a Stack or
an Arch says everything about itself, and every module looks it up here
instead of keeping its own table.  Adding a stack (a kernels/<name>/
series) or an arch is one entry below, plus its kernel config; a boot
option a stack's kernel takes is a BootOption entry, and experiments
name the variants they also run (Experiment.variants).
"""

from dataclasses import dataclass
from typing import Any

from . import paths
from .errors import UserError

# An expectation of the correctness suite on a torture summary line:
# (metric, operator, value), e.g. ("mremap_anon_copy_pages", "==", 0).
Expect = tuple[str, str, int]


@dataclass(frozen=True)
class SchemeRule:
    """What the suite expects of a scheme in the summaries of one
    workload and mode ("*": every one) at one pressure setting (None:
    either), but those of the (workload, mode) pairs of but.  The mode
    alone names nothing: two programs may both call their mode "all"."""
    workload: str
    mode: str
    pressure: int | None
    expect: tuple[Expect, ...]
    but: tuple[tuple[str, str], ...] = ()

    def applies(self, workload: str, mode: str,
                pressure: int | None) -> bool:
        return (self.workload in ("*", workload) and
                self.mode in ("*", mode) and
                self.pressure in (None, pressure) and
                (workload, mode) not in self.but)


@dataclass(frozen=True)
class Stack:
    name: str                 # kernels/<name>/series, trees/<name>
    scheme: str               # what /proc/rmapbench says when it runs
    scheme_symbol: str        # the Kconfig symbol that selects the scheme
    cache: str                # the slab cache only this scheme has
    colour: str               # its colour in every figure
    rules: tuple[SchemeRule, ...] = ()   # the suite's expectations


@dataclass(frozen=True)
class Arch:
    name: str                 # ARCH= of the kernel and of bench/
    qemu: str                 # the QEMU binary
    deb_arch: str             # Debian's name (busybox-static:<deb_arch>)
    mem_mb: int               # a measured guest's memory by default
    smoke_mem_mb: int         # the smoke boot's memory
    mflag: str                # gcc's flag for its user space
    marker: str               # its marker in figures
    highmem: bool = False     # LowTotal/LowFree exist in /proc/meminfo
    image: str = "arch/x86/boot/bzImage"   # the kernel, in the O= dir
    target: str = "bzImage"  # its make target
    # Debian's dynamic tools packed with their libraries into its images
    # (an arch other than the host's gets them downloaded: extras.py)
    tools: tuple[str, ...] = ()
    cpu: str = "max"          # QEMU's -cpu


@dataclass(frozen=True)
class Clock:
    """What guest time means in a boot, and how QEMU makes it so.
    repeatable: its timings do not depend on the host's load, so its
    boots may share the host with another boot."""
    name: str
    text: str                        # for the report: what it measures
    accel: str | None = None         # forced accel (None: the run's)
    qemu_args: tuple[str, ...] = ()
    append: str = ""                 # kernel arguments it needs
    repeatable: bool = False
    max_vcpus: int = 64              # guests it can boot
    # Multi-threaded TCG (one host thread per vCPU); icount runs all
    # vCPUs round-robin in one thread.
    mttcg: bool = True
    # the Debian suite whose QEMU its boots run (qemusuite.py; "": the
    # installed QEMU)
    qemu_suite: str = ""


@dataclass(frozen=True)
class Variant:
    """A debug build of both stacks: kernels/debug/<name>.config merged
    last, its own cache; for the correctness suite only (timings of a
    debug kernel mean nothing).  skip_rows: suite rows the variant
    voids (a boot check whose premise its instrumentation breaks);
    void_metrics: result metrics a test's expectations may not be
    judged on (for the same reason; the rest of the test is judged);
    append: kernel arguments its boots add."""
    name: str
    skip_rows: tuple[str, ...] = ()
    void_metrics: tuple[str, ...] = ()
    append: str = ""


# anonmm copies shared pages it moves and re-points pages of exited mms
# (orphans, made only under reclaim pressure); anon_vma never does either
# (docs/interface.md), and copies at swap-in only a page of a swap entry
# KSM left shared by unrelated processes (rmb-race's ksm mode, the
# torture's ksm mode: its exec'd members are unrelated), or a tail
# page of a THP swapped out whole (rmb-race's thp-swap on zram): 6.1's
# ksm_might_need_to_copy() compares the page's ->index with the address,
# and 6.1 keeps no ->index in a large folio's tail pages.
_COPIES = ("mremap_anon_copy_pages", ">", 0)
_ORPHANS = ("anon_rmap_orphan_pages", ">", 0)

STACKS: tuple[Stack, ...] = (
    Stack("anon_vma", "anon_vma", "CONFIG_ANON_VMA", "anon_vma", "#0072B2",
          rules=(SchemeRule("*", "*", None, (
              ("mremap_anon_copy_pages", "==", 0),
              ("anon_rmap_orphan_pages", "==", 0),
              ("anon_pages_test_pte_count", "==", 0))),
                 SchemeRule("*", "*", None, (
                     ("anon_swapin_copy_pages", "==", 0),),
                     but=(("race", "ksm"), ("race", "thp-swap"),
                          ("torture", "ksm"))),
                 # rmb-orphan: an exited child pins nothing
                 SchemeRule("orphan", "child", None, (
                     ("pinned_objs_count", "==", 0),)))),
    Stack("anonmm", "anonmm", "CONFIG_ANONMM", "anonmm", "#D55E00",
          rules=(SchemeRule("torture", "mremap", None, (_COPIES,)),
                 SchemeRule("torture", "all", None, (_COPIES,)),
                 SchemeRule("torture", "exit", 1, (_ORPHANS,)),
                 SchemeRule("torture", "all", 1, (_ORPHANS,)),
                 # rmb-race: its move copies page by page, so kills land
                 # inside it (anon_vma's moves whole tables: too fast)
                 SchemeRule("race", "mremap-kill", None, (
                     ("killed_inside_count", ">", 0), _COPIES)),
                 # rmb-orphan: the exited child's anonmm, pinned by the
                 # pages it mapped first, until the walk re-points them
                 SchemeRule("orphan", "child", None, (
                     ("pinned_objs_count", "==", 1), _ORPHANS)))),
)
# The ratio of every comparison is NEW / BASE.
BASE, NEW = STACKS[0].name, STACKS[1].name
OTHER_COLOUR = "#777777"

ARCHES: tuple[Arch, ...] = (
    # i386 gets highmem so that LowTotal/LowFree mean something
    # QEMU's max CPU on i386 calls itself an AMD K7 (family 6) without
    # the MP bit, and 6.1's init_amd() then prints "WARNING: This
    # combination of AMD processors is not suitable for SMP" on every SMP
    # boot: the same CPU, naming Intel as its vendor, boots clean
    Arch("i386", "qemu-system-i386", "i386", mem_mb=1024, smoke_mem_mb=1024,
         mflag="-m32", marker="o", highmem=True,
         tools=("fio", "stress-ng"), cpu="max,vendor=GenuineIntel"),
    Arch("x86_64", "qemu-system-x86_64", "amd64", mem_mb=512,
         smoke_mem_mb=256, mflag="-m64", marker="s",
         tools=("fio", "stress-ng")),
)

HOST, ICOUNT, ICOUNT_RR = "host", "icount", "icount-rr"
CLOCKS: tuple[Clock, ...] = (
    Clock(HOST, "guest time follows host time (real time under KVM, the "
          "emulator's speed under emulation): timings move with the "
          "host's load"),
    # Instruction counting: 1 ns of guest time per instruction executed,
    # and an idle guest jumps to its next timer (sleep=off).  TCG only.
    # Every boot starts from the same RDRAND seed (-seed) and the same
    # wall-clock time, following guest time (-rtc): both feed the
    # kernel's random pool, and with it the distro kernels' shuffled
    # page allocator and slab freelists.
    # noapictimer: the kernel's local APIC timer calibration spins for
    # 100 ms of guest time, which under icount costs seconds of host
    # time per boot; the PIT/HPET tick serves one vCPU as well.
    # Every port read and rdtsc ends a translation block under icount,
    # so boot code that polls a timer is slow in host time beyond its
    # instructions.  no_timer_check (every boot's, qemu.BASE_APPEND)
    # skips the IO-APIC timer test (a delay loop of rdtsc), acpi=off the
    # AML interpreter, the PCI interrupt links and the PM timer's 50 ms
    # verification against the PIT (the MP table and the PIR route the
    # same IRQs; the TSC is calibrated against the PIT): a boot takes
    # little more than half the host time (docs/measurements.md).
    # Host-clock boots keep ACPI: there the HPET and PM timer keep a
    # loaded host's guest off the jiffies clock, and acpi=off saves them
    # little.
    Clock(ICOUNT, "QEMU instruction counting (-icount shift=0,sleep=off): "
          "guest time counts the instructions executed, 1 ns each, so a "
          "timing measures code path length; repeatable and independent "
          "of the host's load, but caches and memory latency are not "
          "modelled and device time is hidden", accel="tcg",
          qemu_args=("-icount", "shift=0,sleep=off",
                     "-rtc", "base=2026-01-01T00:00:00,clock=vm"),
          append="noapictimer acpi=off",
          # one vCPU: several need ACPI on and another QEMU (icount-rr)
          repeatable=True, max_vcpus=1, mttcg=False),
    # icount on several vCPUs.  Bookworm's QEMU 7.2 hands the whole
    # budget to the first vCPU, and the boot hangs where the kernel
    # waits for the second (do_boot_cpu()); QEMU 8.1 onwards share it
    # (qemusuite.py).  ACPI stays on: with acpi=off the kernel reads
    # SeaBIOS's MP table, which lists the boot CPU alone.
    Clock(ICOUNT_RR, "QEMU 10's instruction counting on several vCPUs "
          "(-icount shift=0,sleep=off, from bookworm-backports): the vCPUs "
          "run in turn in one host thread, each given a share of the "
          "instructions up to the next timer, and guest time counts the "
          "instructions of all of them together, 1 ns each.  So a timing "
          "measures the work of every CPU summed, not the wall time of "
          "parallel CPUs; threads interleave at the boundaries of those "
          "shares, never at once, so a lock is contended only when its "
          "holder's share ends inside it.  Repeatable, like icount",
          accel="tcg",
          qemu_args=("-icount", "shift=0,sleep=off",
                     "-rtc", "base=2026-01-01T00:00:00,clock=vm"),
          append="noapictimer", repeatable=True, max_vcpus=8, mttcg=False,
          qemu_suite="bookworm-backports"),
)


@dataclass(frozen=True)
class BootOption:
    """A kernel argument NAME=VALUE one stack's kernel takes, its values
    with the default first: that stack's headline boots pass nothing
    (the default), and each other value is a stack variant experiments
    may also run (StackVariant).  text: what it does, after its name
    ("chooses ...").  shows: the line the kernel logs at boot with the
    value in force ({value}), which a variant's boots must show."""
    name: str
    stack: str
    values: tuple[str, ...]
    text: str
    shows: str = ""

    @property
    def default(self) -> str:
        return self.values[0]


@dataclass(frozen=True)
class StackVariant:
    """A built stack booted with a boot option's other value: a lane of
    its own beside the stack's headline boots, compared against the
    same base boots (the base is not booted again for it)."""
    option: BootOption
    value: str

    @property
    def stack(self) -> str:
        return self.option.stack

    @property
    def args(self) -> str:
        """Its kernel arguments, which also name it in records."""
        return f"{self.option.name}={self.value}"

    def confirmed(self, console_lines: list[str]) -> bool:
        """Whether the kernel logged the value in force (an option
        without a log line is taken on trust)."""
        want = self.option.shows.format(value=self.value)
        return not want or any(want in line for line in console_lines)


FORK_ORDER = "anonmm_fork_order"
# patch 0015 of kernels/anonmm/series: where dup_rmap puts a forked mm
BOOT_OPTIONS: tuple[BootOption, ...] = (
    BootOption(FORK_ORDER, "anonmm", ("tail", "after_parent"),
               "chooses where a forked mm joins its bundle's list: at "
               "its tail, as in 2004, or right after its parent",
               shows="anonmm: fork order {value}"),
)


def lane(stack: str, variant: str = "") -> str:
    """What tables and records' statistics call the boots of a stack
    (booted with a variant's arguments): 'anonmm', or 'anonmm,
    anonmm_fork_order=after_parent'."""
    return f"{stack}, {variant}" if variant else stack


def boot_option(name: str) -> BootOption:
    return named("boot option", BOOT_OPTIONS, name)


def _option(name: str) -> BootOption | None:
    return next((o for o in BOOT_OPTIONS if o.name == name), None)


def option_value(option: BootOption, value: str) -> str:
    """value, or a UserError naming the option's values."""
    if value not in option.values:
        raise UserError(f"unknown {option.name} '{value}': choose one of "
                        f"{', '.join(option.values)}")
    return value


def stack_variant(args: str) -> StackVariant:
    """The variant booted with args ('anonmm_fork_order=after_parent'),
    or a UserError naming the known ones."""
    name, _, value = args.partition("=")
    known = variant_names()
    option = _option(name)
    if option is None or not value:
        raise UserError(f"unknown stack variant '{args}': choose one of "
                        f"{', '.join(known)}")
    if option_value(option, value) == option.default:
        raise UserError(f"{args} is {option.stack}'s default: its headline "
                        f"boots run it; choose one of {', '.join(known)}")
    return StackVariant(option, value)


def variant_names() -> list[str]:
    """Every stack variant, by its kernel arguments."""
    return [f"{o.name}={v}" for o in BOOT_OPTIONS for v in o.values[1:]]


def variants_of(name: str) -> tuple[str, ...]:
    """The variants of every other value of boot option name, by their
    kernel arguments (what an Experiment's variants list)."""
    option = boot_option(name)
    return tuple(f"{option.name}={v}" for v in option.values[1:])


def check_append(append: str) -> None:
    """Refuse, before any boot, a kernel argument naming a boot option
    with a value its kernel does not take (the kernel would keep its
    default and say so only in its log)."""
    for word in append.split():
        name, sep, value = word.partition("=")
        option = _option(name)
        if option is not None and sep:
            option_value(option, value)


# Variants with rules beyond "merge the fragment"; any other
# kernels/debug/<name>.config is a plain Variant(name).
VARIANTS: tuple[Variant, ...] = (
    # KASAN's quarantine keeps freed objects counted for a while: the
    # slab counts say nothing about leaks there, nor rmb-orphan's
    # objects pinned and left (objects freed before the test leave the
    # quarantine during it; its data and orphan checks still hold).
    # pci=noacpi: under TCG a KASAN kernel's ACPI interpreter evaluates
    # the PCI interrupt routing (_PRT) so slowly that it hits its loop
    # timeout and leaves virtio-blk without an IRQ; the BIOS's PIR table
    # routes the same IRQ at once.
    # no5lvl: 6.1's identify_cpu() clears the boot CPU's feature bits and
    # sets them again, with interrupts on; an interrupt in between finds
    # LA57 clear, KASAN takes the 4-level shadow bounds, and a load from
    # an irq_desc in the 5-level direct map is reported as a
    # wild-memory-access (docs/correctness.md, "Debug variants").  On
    # 4-level paging the bounds do not change under it.
    Variant("kasan", skip_rows=("slabs back to idle",),
            void_metrics=("pinned_objs_count", "left_objs_count"),
            append="pci=noacpi no5lvl"),
)


def stack_names() -> tuple[str, ...]:
    return tuple(s.name for s in STACKS)


def arch_names() -> tuple[str, ...]:
    return tuple(a.name for a in ARCHES)


def named(kind: str, entries: tuple, name: str) -> Any:
    """The entry called name, or a UserError naming the known ones."""
    for entry in entries:
        if entry.name == name:
            return entry
    raise UserError(f"unknown {kind} '{name}': choose one of "
                    f"{', '.join(e.name for e in entries)}")


def stack(name: str) -> Stack:
    return named("stack", STACKS, name)


def arch(name: str) -> Arch:
    return named("arch", ARCHES, name)


def clock(name: str) -> Clock:
    return named("clock", CLOCKS, name)


def clock_names() -> tuple[str, ...]:
    return tuple(c.name for c in CLOCKS)


def by_scheme(scheme: str) -> Stack | None:
    """The stack whose scheme a kernel reported, if any."""
    return next((s for s in STACKS if s.scheme == scheme), None)


def scheme_symbols() -> tuple[str, ...]:
    """The Kconfig symbols allowed to differ between the stacks."""
    return tuple(s.scheme_symbol for s in STACKS)


def colour(stack_name: str) -> str:
    s = next((s for s in STACKS if s.name == stack_name), None)
    return s.colour if s else OTHER_COLOUR


def stack_order(stack_name: str) -> int:
    """Position of a stack in tables and legends (unknown ones last)."""
    names = stack_names()
    return names.index(stack_name) if stack_name in names else 99


def marker(arch_name: str) -> str:
    a = next((a for a in ARCHES if a.name == arch_name), None)
    return a.marker if a else "o"


def arches_with(tool: str) -> tuple[str, ...]:
    """The arches whose images can pack tool (fio, stress-ng)."""
    return tuple(a.name for a in ARCHES if tool in a.tools)


def variant_named(name: str) -> Variant:
    return next((v for v in VARIANTS if v.name == name), Variant(name))


def current_variant() -> Variant:
    """The debug variant RMAPBENCH_VARIANT names; Variant("") for the
    measured kernels (nothing voided, nothing added)."""
    return variant_named(paths.variant())


def expectations(scheme: str, workload: str, mode: str,
                 pressure: int | None) -> list[Expect]:
    """What the suite expects of scheme's summary of workload's mode."""
    s = by_scheme(scheme)
    out: list[Expect] = []
    for rule in s.rules if s else ():
        if rule.applies(workload, mode, pressure):
            out += rule.expect
    return out
