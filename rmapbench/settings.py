"""Guest settings: a feature of the kernels switched another way for an
experiment, in the guests of both stacks alike.

A setting is kernel arguments that bench/init.sh (rmb.*) or the kernel
itself reads at boot, the profile feature it needs, and the
RMB-FEATURES pair by which the guest confirms it in force.  An
experiment run with a setting is an experiment of its own (with_setting):
its name says the setting, its boots add the arguments, it runs only on
the kernels of profiles that have the feature, and a boot that does not
confirm the setting counts as failed, never as the headline's numbers
under the setting's name.
"""

from dataclasses import dataclass, replace
from typing import Any, TypeVar

from .errors import UserError
from .testbed import named

# an Experiment (workloads/base.py): the workload modules import this one
Exp = TypeVar("Exp", bound=Any)


@dataclass(frozen=True)
class Setting:
    """name: what experiments add to their names; args: the kernel
    arguments; needs: the profile feature (profiles.FEATURES), None if
    every profile's kernels have it; shows: the RMB-FEATURES key that
    confirms it, and its value ("": any); text: what it does, for the
    report; disk: whether its boots attach the virtio swap disk."""
    name: str
    args: str
    needs: str | None
    shows: tuple[str, str]
    text: str
    disk: bool = True

    def confirmed(self, features: dict[str, str]) -> bool:
        key, value = self.shows
        got = features.get(key)
        return got is not None and (not value or got == value)

    def unconfirmed(self, features: dict[str, str]) -> str:
        key, value = self.shows
        return (f"the guest did not confirm the setting {self.name} "
                f"({self.args}): RMB-FEATURES {key}="
                f"{features.get(key, '(none)')}, not {value or 'set'}")


MEMCG_PCT = 75

SETTINGS: tuple[Setting, ...] = (
    # init.sh makes the cgroup and moves itself into it before the plan
    Setting("memcg", f"rmb.memcg={MEMCG_PCT}", "memcg", ("memcg_max", ""),
            f"inside a memory cgroup whose memory.max is {MEMCG_PCT}% of "
            "the guest's memory (the container case: memcg reclaim)"),
    # the distro guests run MGLRU (init.sh turns it on); this turns it off
    Setting("classic", "rmb.lru_gen=n", "lru_gen", ("lru_gen", "0x0000"),
            "MGLRU off: reclaim ages the active and inactive lists, "
            "finding referenced pages by rmap walks alone"),
    Setting("zswap", "zswap.enabled=1", "zswap", ("zswap", "Y"),
            "zswap on: pages swapped out are compressed into RAM first, "
            "and the disk's cost leaves reclaim"),
    # every kernel has zram (base.config).  No disk either: the kernel
    # reads a disk's partition table at boot, a request whose completion
    # lands at a host-given instruction, after which two icount boots
    # differ.  Without a disk, two icount boots of one plan execute the
    # same instructions (image.cpio packs the same bytes)
    Setting("zram", "rmb.swap=zram", None, ("swap", "zram"),
            "swap on zram: pages swapped out are compressed into the "
            "guest's RAM by the reclaiming CPU, with no disk and no "
            "host I/O in the guest's time", disk=False),
)


def setting(name: str) -> Setting:
    return named("setting", SETTINGS, name)


def setting_names() -> list[str]:
    return [s.name for s in SETTINGS]


def with_setting(exp: Exp, which: str, **changes: object) -> Exp:
    """exp run with the setting called which: its own name
    (<exp>-<setting>), kernel arguments, needs and text; changes: other
    fields it runs with (a narrower sweep, say, or a name of its own).
    Stack variants stay with the headline experiment unless changes name
    them."""
    s = setting(which)
    append = " ".join(a for a in (exp.append, s.args) if a)
    needs = tuple(dict.fromkeys((*exp.needs, *filter(None, (s.needs,)))))
    fields = {"name": f"{exp.name}-{s.name}", "variants": (), **changes}
    return replace(exp, append=append, needs=needs,
                   text=f"{exp.text}; {s.text}", **fields)


def on_zram(exp: Exp) -> Exp:
    """exp under its own name, with its stack variants, swapping to
    zram: its guests attach no disk, so on an instruction-counting clock
    its boots repeat exactly (repetitions.REPEATS).  For experiments
    that swap nothing out, or whose data zram compresses."""
    return with_setting(exp, "zram", name=exp.name, variants=exp.variants)


def in_force(kernel_args: str) -> list[Setting]:
    """The settings whose arguments kernel_args carries."""
    words = set(kernel_args.split())
    return [s for s in SETTINGS if set(s.args.split()) <= words]


def swap_disk_mb(kernel_args: str, mb: int) -> int:
    """The swap disk a boot with kernel_args attaches: mb, or 0 (none)
    when a setting in force swaps elsewhere."""
    return mb if all(s.disk for s in in_force(kernel_args)) else 0


def unconfirmed(kernel_args: str, features: dict[str, str]) -> str | None:
    """Why a boot with kernel_args does not count as its settings' (the
    first the guest did not confirm), or None."""
    for s in in_force(kernel_args):
        if not s.confirmed(features):
            return s.unconfirmed(features)
    return None


def parse(names: str) -> list[Setting]:
    """'memcg,zswap' -> those settings, or a UserError naming the known
    ones before any boot."""
    picked = [n.strip() for n in names.split(",") if n.strip()]
    if not picked:
        raise UserError(f"no setting in '{names}': choose from "
                        f"{', '.join(setting_names())}")
    return [setting(n) for n in picked]
