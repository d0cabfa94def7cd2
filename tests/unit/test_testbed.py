"""The testbed of stacks and arches: one lookup, clear errors."""

import pytest

from rmapbench import testbed
from rmapbench.errors import UserError


def test_lookups_and_their_errors():
    assert testbed.stack("anonmm").scheme_symbol == "CONFIG_ANONMM"
    assert testbed.arch("i386").deb_arch == "i386"
    assert testbed.arch("x86_64").qemu == "qemu-system-x86_64"
    with pytest.raises(UserError, match="unknown stack 'objrmap': choose "
                                        "one of anon_vma, anonmm"):
        testbed.stack("objrmap")
    with pytest.raises(UserError, match="unknown arch 'arm64'"):
        testbed.arch("arm64")


def test_base_new_and_what_follows_from_them():
    assert (testbed.BASE, testbed.NEW) == ("anon_vma", "anonmm")
    assert testbed.colour("anon_vma") != testbed.colour("anonmm")
    assert testbed.colour("other") == testbed.OTHER_COLOUR
    assert testbed.stack_order("anonmm") == 1
    assert set(testbed.scheme_symbols()) == {"CONFIG_ANONMM",
                                             "CONFIG_ANON_VMA"}
    assert testbed.arches_with("fio") == ("i386", "x86_64")


def test_scheme_expectations():
    assert ("mremap_anon_copy_pages", "==", 0) in testbed.expectations(
        "anon_vma", "torture", "exit", 1)
    mm = testbed.expectations("anonmm", "torture", "exit", 1)
    assert mm == [("anon_rmap_orphan_pages", ">", 0)]
    assert testbed.expectations("anonmm", "torture", "exit", 0) == []
    assert testbed.expectations("unknown", "torture", "all", 1) == []


def test_a_rule_of_one_workload_spares_another_of_the_same_mode():
    # rmb-forkcopy's only mode is "all", as is torture's busiest: the
    # copies torture must make are nothing forkcopy owes
    assert ("mremap_anon_copy_pages", ">", 0) in testbed.expectations(
        "anonmm", "torture", "all", 0)
    assert testbed.expectations("anonmm", "forkcopy", "all", 0) == []


def test_anon_vma_copies_at_swap_in_only_under_ksm_or_whole_thp_swap():
    """A swap entry KSM left shared by unrelated processes, and a tail
    page of a THP swapped out whole (6.1 compares its ->index), are what
    anon_vma copies at swap-in: those races are spared the zero."""
    zero = ("anon_swapin_copy_pages", "==", 0)
    assert zero in testbed.expectations("anon_vma", "race", "mremap-swapin",
                                        None)
    assert zero in testbed.expectations("anon_vma", "race", "thp-split",
                                        None)
    for mode in ("ksm", "thp-swap"):
        spared = testbed.expectations("anon_vma", "race", mode, None)
        assert zero not in spared
        assert ("mremap_anon_copy_pages", "==", 0) in spared
