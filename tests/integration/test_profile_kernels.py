"""The kernels of every build profile other than the comparison's
defaults, where they are built ('harness.py build --profile NAME'):
their fragments hold, the stacks differ only in the scheme, and a
smoke boot's guest has the profile's NUMA nodes, cgroup v2 with memcg
and MGLRU on.  A kernel not built is skipped: 'make test' builds the
comparison's kernels only."""

import pytest

from rmapbench import guest, kbuild, profiles, smoke, testbed

OTHERS = [t for p in profiles.PROFILES for t in profiles.targets([p.name],
                                                                 None)
          if t not in profiles.COMPARE]
KERNELS = [(s, t) for t in OTHERS for s in testbed.stack_names()]


def built(stack: str, target: profiles.Target) -> bool:
    return kbuild.kernel_image(stack, target.arch, target.profile).exists()


def require(stack: str, target: profiles.Target) -> None:
    if not built(stack, target):
        pytest.skip(f"{stack} {target.label()} not built: run 'harness.py "
                    f"build --profile {target.profile} --stack {stack}'")


@pytest.mark.parametrize("stack,target", KERNELS)
def test_fragments_hold_in_the_built_config(stack, target):
    require(stack, target)
    config = kbuild.build_dir(stack, target.arch, target.profile) / ".config"
    kbuild.check_fragments(config, kbuild.config_fragments(
        stack, target.arch, target.profile))


@pytest.mark.parametrize("target", OTHERS)
def test_configs_differ_only_in_the_scheme(target):
    for stack in testbed.stack_names():
        require(stack, target)
    lines, unfair = kbuild.config_diff(target.arch, target.profile)
    assert unfair == [], lines


@pytest.mark.parametrize("stack,target", KERNELS)
def test_smoke_boot_has_the_profile_s_features(stack, target, tmp_path):
    require(stack, target)
    run = guest.run(smoke.boot_of(stack, target), tmp_path / "console.log")
    assert smoke.check(run) == [], run.boot.log.read_text()[-3000:]
    nodes = profiles.profile(target.profile).numa_nodes
    assert run.console.features.get("numa_nodes") == str(nodes)
