"""The distro profile against Debian's config (rmapbench/debconfig.py),
on fabricated configs."""

import lzma

import pytest

from rmapbench import debconfig
from rmapbench.errors import UserError

KCONFIG = """config KSM
\tbool "Enable KSM"
menuconfig SWAP
\tbool "Swap"
config ZONE_DEVICE
\tbool
# config NOT_A_SYMBOL
"""


def test_mm_symbols_are_those_the_kconfig_declares():
    assert debconfig.mm_symbols(KCONFIG) == {
        "CONFIG_KSM", "CONFIG_SWAP", "CONFIG_ZONE_DEVICE"}


def test_each_difference_is_named_with_its_reason_or_as_unexplained():
    debian = {"CONFIG_KSM": "y", "CONFIG_SWAP": "y", "CONFIG_ZONE_DEVICE":
              "y", "CONFIG_NET": "y"}
    ours = {"CONFIG_SWAP": "y", "CONFIG_ZONE_DEVICE": "n"}
    diffs = debconfig.differences(ours, debian,
                                  debconfig.mm_symbols(KCONFIG))
    # unset counts as off; symbols outside mm are not compared
    assert diffs == [("CONFIG_KSM", "y", "n"),
                     ("CONFIG_ZONE_DEVICE", "y", "n")]
    lines, unexplained = debconfig.explain(diffs)
    assert unexplained == ["CONFIG_KSM"]
    assert lines[0] == "CONFIG_KSM: debian=y ours=n: UNEXPLAINED"
    assert lines[1].startswith("CONFIG_ZONE_DEVICE: debian=y ours=n: off "
                               "in both stacks")


def test_debian_s_config_is_read_compressed(tmp_path):
    path = tmp_path / "config.amd64_none_amd64.xz"
    path.write_bytes(lzma.compress(b"CONFIG_KSM=y\n# CONFIG_X is not set\n"))
    assert debconfig.debian_config(path) == {"CONFIG_KSM": "y",
                                             "CONFIG_X": "n"}


def test_a_missing_debian_config_names_the_package(tmp_path):
    with pytest.raises(UserError, match="install Debian's linux-config-6.1"):
        debconfig.debian_config(tmp_path / "none.xz")


def test_the_report_shows_each_debian_kernel_s_differences():
    from rmapbench.report import facts
    meta = {"debian_diff": {"x86_64 distro": [
        "CONFIG_ZONE_DEVICE: debian=y ours=n: off in both stacks",
        "CONFIG_KSM: debian=y ours=n: UNEXPLAINED"]}}
    text = "\n".join(facts.debian_diff(meta))
    assert "**x86_64 distro**: 2 symbol(s) differ" in text
    assert "Without a reason: CONFIG_KSM." in text
    assert facts.debian_diff({}) == []
