"""Guest settings (settings.py) and the features experiments need: an
experiment with a setting is its own, runs only where a profile has the
feature, and a boot whose guest does not confirm it is failed."""

import pytest

from rmapbench import experiments, profiles, runner, settings, workloads
from rmapbench.errors import UserError
from rmapbench.profiles import DISTRO, MINIMAL, Target
from rmapbench.workloads import Experiment

BASE = Experiment("swap-x", "swap", "family", ("x86_64",),
                  sweep={"N": [1, 4]}, text="a family",
                  variants=("anonmm_fork_order=after_parent",))


def test_with_setting_names_args_needs_and_drops_variants():
    exp = settings.with_setting(BASE, "memcg", sweep={"N": [4]})
    assert exp.name == "swap-x-memcg"
    assert exp.append == settings.setting("memcg").args
    assert exp.needs == ("memcg",)
    assert exp.sweep == {"N": [4]} and exp.variants == ()
    assert exp.text.startswith("a family; ")
    both = settings.with_setting(exp, "zswap")
    assert both.append.split() == ["rmb.memcg=75", "zswap.enabled=1"]
    assert both.needs == ("memcg", "zswap")


def test_an_unknown_setting_names_the_known_ones():
    with pytest.raises(UserError, match="memcg, classic, zswap"):
        settings.with_setting(BASE, "hugepages")
    with pytest.raises(UserError, match="choose from"):
        settings.parse(" , ")


def test_experiments_run_only_where_the_profile_has_their_needs():
    exp = settings.with_setting(BASE, "classic")
    where = [Target(MINIMAL, "x86_64"), Target(DISTRO, "x86_64")]
    points = experiments.sweep_points(exp, where)
    assert {p.config.profile for p in points} == {DISTRO}
    assert all(p.config.kernel_args == "rmb.lru_gen=n" for p in points)
    assert experiments.sweep_points(BASE, where) and \
        {p.config.profile for p in experiments.sweep_points(BASE, where)} \
        == {MINIMAL, DISTRO}
    assert experiments.sweep_points(exp, [Target(MINIMAL, "x86_64")]) == []


def test_every_feature_needed_is_one_a_profile_can_have():
    needed = {n for e in workloads.experiments()
              for n in experiments.needs_of(e)}
    needed |= {n for w in workloads.WORKLOADS.values() for m in w.modes
               for n in m.needs}
    assert needed <= set(profiles.FEATURES)
    assert {s.needs for s in settings.SETTINGS} - {None} <= \
        set(profiles.FEATURES)


def test_a_setting_every_kernel_has_runs_on_every_profile():
    exp = settings.with_setting(BASE, "zram")
    assert exp.needs == () and exp.append == "rmb.swap=zram"
    where = [Target(MINIMAL, "x86_64"), Target(DISTRO, "x86_64")]
    assert {p.config.profile for p in experiments.sweep_points(exp, where)} \
        == {MINIMAL, DISTRO}
    assert settings.with_setting(exp, "zswap").needs == ("zswap",)


def test_the_comparison_runs_each_setting():
    targets = profiles.targets(None, None)
    names = {p.exp.name for e in workloads.experiments()
             for p in experiments.sweep_points(e, targets)
             if settings.in_force(p.config.kernel_args)}
    for s in settings.SETTINGS:
        assert any(n.endswith(f"-{s.name}") for n in names), s.name


@pytest.mark.parametrize("setting,features,ok", [
    ("memcg", {"memcg": "1", "memcg_max": "100663296"}, True),
    ("memcg", {"memcg": "1"}, False),
    ("classic", {"lru_gen": "0x0000"}, True),
    ("classic", {"lru_gen": "0x0007"}, False),
    ("zswap", {"zswap": "Y"}, True),
    ("zswap", {"zswap": "N"}, False),
    ("zram", {"swap": "zram"}, True),
    ("zram", {}, False),
])
def test_a_setting_is_confirmed_by_the_guest_features(setting, features, ok):
    args = settings.setting(setting).args
    why = settings.unconfirmed(f"console=ttyS0 {args}", features)
    assert (why is None) == ok
    if not ok:
        assert setting in why and "RMB-FEATURES" in why


def test_a_boot_that_does_not_confirm_its_setting_is_failed():
    exp = settings.with_setting(BASE, "zswap")
    (point, *_) = experiments.sweep_points(exp, [Target(DISTRO, "x86_64")])
    case = point.case("anonmm", 0)

    class Run:
        class console:
            features = {"zswap": "N"}
            preamble: list[str] = []
    assert "zswap" in runner.unconfirmed(case, Run)
    Run.console.features = {"zswap": "Y"}
    assert runner.unconfirmed(case, Run) is None


def test_a_boot_swapping_to_zram_attaches_no_disk():
    """The kernel's partition scan of a disk is host I/O that lands at
    no fixed instruction: a zram boot goes without the disk."""
    zram = settings.setting("zram").args
    assert settings.swap_disk_mb(f"rmb.memcg=75 {zram}", 1024) == 0
    assert settings.swap_disk_mb("rmb.memcg=75", 1024) == 1024
    exp = settings.with_setting(BASE, "zram")
    (point, *_) = experiments.sweep_points(exp, [Target(MINIMAL, "x86_64")])
    assert runner.job_of(point.case("anonmm", 0)).boot.swap_mb == 0
