"""Build profiles: the registry, the kernels a command works on, the
QEMU machine of a NUMA profile, where a profile's kernels live, and
records and reports per profile (fabricated data: no kernel)."""

import pytest

import fabricate
from rmapbench import experiments, kbuild, paths, profiles, qemu, testbed
from rmapbench.analysis import analyse
from rmapbench.errors import UserError
from rmapbench.profiles import DISTRO, MINIMAL, Target
from rmapbench.record import Config, config_key
from rmapbench.report import decision, facts


def test_the_registry_says_everything_of_a_profile():
    assert profiles.profile_names() == (MINIMAL, DISTRO)
    minimal, distro = (profiles.profile(n) for n in (MINIMAL, DISTRO))
    assert minimal.arches == testbed.arch_names() and not minimal.suffix
    assert distro.arches == ("x86_64",) and distro.numa_nodes == 2
    assert "KSM" not in distro.off and "hugetlbfs" in distro.off
    for feature in ("thp", "ksm"):
        assert feature in distro.features and \
            feature not in minimal.features
    for p in profiles.PROFILES:
        assert (paths.KERNELS / "common" / "config" / p.fragment).is_file()
    with pytest.raises(UserError, match="unknown profile 'debian': choose "
                                        "one of minimal, distro"):
        profiles.profile("debian")


def test_the_comparison_s_kernels_are_one_registry_entry():
    assert profiles.targets(None, None) == list(profiles.COMPARE)
    full = profiles.targets(None, None, full=True)
    assert set(profiles.FULL_ADDS) <= set(full)
    assert profiles.targets(None, ["i386"]) == [Target(MINIMAL, "i386")]


def test_a_profile_takes_its_own_arches_and_refuses_others():
    assert profiles.targets([DISTRO], None) == [Target(DISTRO, "x86_64")]
    assert profiles.targets([MINIMAL, DISTRO], ["x86_64"]) == [
        Target(MINIMAL, "x86_64"), Target(DISTRO, "x86_64")]
    with pytest.raises(UserError, match="profile distro builds for x86_64 "
                                        "only, not i386"):
        profiles.targets([DISTRO], ["i386"])
    with pytest.raises(UserError, match="unknown arch 'arm64'"):
        profiles.targets([DISTRO], ["arm64"])


def test_labels_keep_the_minimal_kernels_names():
    assert Target(MINIMAL, "i386").label() == "i386"
    assert Target(DISTRO, "x86_64").label() == "x86_64 distro"
    assert profiles.names(["i386", Target(DISTRO, "x86_64")]) == [
        "i386", "x86_64/distro"]


@pytest.mark.parametrize("mem,vcpus,possible,smp,want", [
    # a socket per node, so no last-level cache spans two nodes
    (512, 2, 2, "2,maxcpus=2,sockets=2",
     ["node,nodeid=0,memdev=ram0,cpus=0-0",
      "node,nodeid=1,memdev=ram1,cpus=1-1"]),
    # one possible vCPU (icount): the second node holds memory only
    (256, 1, 1, "1,maxcpus=1,sockets=1",
     ["node,nodeid=0,memdev=ram0,cpus=0-0", "node,nodeid=1,memdev=ram1"]),
    # three vCPUs: four possible, two sockets of two
    (513, 3, 3, "3,maxcpus=4,sockets=2",
     ["node,nodeid=0,memdev=ram0,cpus=0-1",
      "node,nodeid=1,memdev=ram1,cpus=2-3"]),
])
def test_numa_nodes_split_memory_and_sockets(mem, vcpus, possible, smp,
                                             want):
    got, args = profiles.profile(DISTRO).machine(mem, vcpus, possible)
    assert got == smp
    assert [args[i + 1] for i in range(2, len(args), 4)] == want
    sizes = [int(args[i + 1].split("size=")[1].rstrip("M"))
             for i in range(0, len(args), 4)]
    assert sum(sizes) == mem


def test_a_distro_boot_gets_two_nodes_and_a_minimal_one_none(tmp_path):
    kernel = tmp_path / "bzImage"
    kernel.write_text("")
    base = dict(plan="", mem_mb=256, timeout_s=1)
    minimal = qemu.command(qemu.Boot("anonmm", "x86_64", **base), kernel,
                           kernel, "tcg", None)
    distro = qemu.command(qemu.Boot("anonmm", "x86_64", profile=DISTRO,
                                    **base), kernel, kernel, "tcg", None)
    assert "-numa" not in minimal
    assert minimal[minimal.index("-smp") + 1] == "1,maxcpus=2"
    # -smp 1,maxcpus=2 under TCG: both possible vCPUs have a node
    smp, nodes = profiles.profile(DISTRO).machine(256, 1, 2)
    assert distro[distro.index("-smp") + 1] == smp
    assert distro.count("-numa") == 2
    assert [a for a in distro if a not in minimal and a != smp] == nodes


def test_a_numa_profile_keeps_acpi_on_the_icount_clock(tmp_path):
    """icount boots pass acpi=off, which would hide the SRAT that
    describes the distro profile's nodes: its boots keep ACPI."""
    kernel = tmp_path / "bzImage"
    kernel.write_text("")
    base = dict(plan="", mem_mb=256, timeout_s=1)

    def append(profile: str, clock: str) -> list[str]:
        cmd = qemu.command(qemu.Boot("anonmm", "x86_64", profile=profile,
                                     clock=clock, **base),
                           kernel, kernel, "tcg", None)
        return cmd[cmd.index("-append") + 1].split()

    assert "acpi=off" not in append(DISTRO, "icount")
    assert "noapictimer" in append(DISTRO, "icount")
    assert "acpi=off" in append("minimal", "icount")


def test_each_profile_has_its_own_trees_and_fragment(monkeypatch, tmp_path):
    monkeypatch.setenv("RMAPBENCH_CACHE", str(tmp_path))
    monkeypatch.delenv("RMAPBENCH_VARIANT", raising=False)
    assert kbuild.kernel_image("anonmm", "x86_64") == (
        tmp_path / "trees" / "anonmm" / "out-x86_64" /
        "arch/x86/boot/bzImage")
    assert kbuild.build_dir("anonmm", "x86_64", DISTRO) == (
        tmp_path / "trees-distro" / "anonmm" / "out-x86_64")
    names = [f.name for f in kbuild.config_fragments("anonmm", "x86_64",
                                                     DISTRO)]
    assert names == ["base.config", "x86_64.config", "distro.config",
                     "config"]


def test_the_profiles_fragments_decide_what_base_leaves_open():
    """base.config holds what both profiles share: nothing a profile's
    fragment sets, or the line-by-line check would fail one of them."""
    common = paths.KERNELS / "common" / "config"
    base = kbuild.parse_config((common / "base.config").read_text())
    for p in profiles.PROFILES:
        frag = kbuild.parse_config((common / p.fragment).read_text())
        assert not set(base) & set(frag), p.name
    distro = kbuild.parse_config((common / "distro.config").read_text())
    for on in ("CONFIG_NUMA", "CONFIG_MIGRATION", "CONFIG_MEMCG",
               "CONFIG_LRU_GEN", "CONFIG_ZSWAP", "CONFIG_USERFAULTFD",
               "CONFIG_TRANSPARENT_HUGEPAGE",
               "CONFIG_TRANSPARENT_HUGEPAGE_ALWAYS", "CONFIG_THP_SWAP",
               "CONFIG_KSM"):
        assert distro[on] == "y", on
    for off in ("CONFIG_HUGETLBFS", "CONFIG_ZONE_DEVICE"):
        assert distro[off] == "n", off


def test_a_record_without_profile_is_minimal():
    old = {"experiment": "e", "arch": "i386", "mem_mb": 64, "workload": "w",
           "mode": "m", "params": {}}
    assert Config.of(old).profile == MINIMAL
    assert Config.of({**old, "profile": MINIMAL}) == Config.of(old)
    assert Config.of({**old, "profile": DISTRO}) != Config.of(old)
    assert Config.of(old).fields()["profile"] == MINIMAL
    assert config_key({**old, "profile": DISTRO}).label() == \
        "i386 distro 64MB"


def test_case_keys_of_minimal_boots_are_unchanged():
    (exp,) = experiments.by_name(["vma-cost"])
    minimal = experiments.expand([exp], ["anonmm"], ["x86_64"], 1)
    distro = experiments.expand([exp], ["anonmm"],
                                [Target(DISTRO, "x86_64")], 1)
    assert minimal == experiments.expand(
        [exp], ["anonmm"], [Target(MINIMAL, "x86_64")], 1)
    assert all("_x86_64_m" in c.key() for c in minimal)
    assert all("_x86_64_distro_m" in c.key() for c in distro)
    assert {c.config.profile for c in distro} == {DISTRO}


def as_distro(records: list[dict]) -> list[dict]:
    """The x86_64 records again, as the distro profile's."""
    return [{**r, "profile": DISTRO,
             "features": {"numa_nodes": "2", "lru_gen": "0x0007"}}
            for r in records if r["arch"] == "x86_64"]


def test_the_decision_answers_per_profile():
    records = fabricate.full_run()
    both = records + as_distro(records)
    text = "\n".join(decision.decision(both, analyse(both)))
    assert "Outcome, minimal profile:" in text
    assert "Outcome, distro profile:" in text
    assert "hugetlbfs" in text and "KSM is off" not in text
    assert "| x86_64 distro |" in text
    summary = decision.text_summary("t", both, analyse(both), [])
    assert "(distro): " in summary and "(minimal): " in summary
    # one profile: one outcome per regime, as before profiles
    alone = "\n".join(decision.decision(records, analyse(records)))
    assert "Outcome, " not in alone and "distro" not in alone


def test_the_environment_shows_each_profile_and_its_guests():
    records = fabricate.full_run()
    both = records + as_distro(records)
    meta = {**fabricate.metadata(), "config_diff": {
        "x86_64": ["CONFIG_ANONMM: anon_vma=n anonmm=y"],
        "x86_64 distro": ["CONFIG_ANONMM: anon_vma=n anonmm=y"]}}
    env = "\n".join(facts.environment(meta, both))
    assert "| profile minimal |" in env and "| profile distro |" in env
    assert "ZONE_DEVICE, hugetlbfs" in env
    assert "| guest features, x86_64 distro | numa_nodes=2 lru_gen=0x0007" \
        in env
    diff = "\n".join(facts.config_diff(meta))
    assert "**x86_64 distro**: 1 symbol(s) differ" in diff


def test_guests_that_saw_fewer_nodes_are_a_warning():
    records = as_distro(fabricate.full_run())
    assert not facts.node_warnings(records)
    one = [{**r, "clock": "icount", "features": {"numa_nodes": "1"}}
           for r in records[:3]]
    (line, _) = facts.node_warnings(records + one)
    assert line == ("> **WARNING:** 3 record(s) of the x86_64 distro "
                    "kernels on the icount clock come from guests that saw "
                    "1 NUMA node(s), not the 2 QEMU gave them.")


def test_the_decision_says_what_moved_between_the_profiles():
    records = fabricate.full_run()
    distro = as_distro(records)
    # the minimal profile measures no migration (it has none)
    minimal = [r for r in records if r.get("workload") != "migrate"]
    both = minimal + distro
    text = "\n".join(decision.decision(both, analyse(both)))
    assert "**Between the profiles.**" in text
    assert "Outcomes that held: VMA-heavy and lowmem-bound (anonmm)" in text
    assert "Measured in one profile only: page migration: move_pages, " \
        "compaction, NUMA balancing (distro only: needs " in text
    alone = "\n".join(decision.decision(records, analyse(records)))
    assert "Between the profiles" not in alone
