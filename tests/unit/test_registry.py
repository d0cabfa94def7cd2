"""The registry of stacks and arches: one lookup, clear errors."""

import pytest

from rmapbench import registry
from rmapbench.errors import UserError


def test_lookups_and_their_errors():
    assert registry.stack("anonmm").scheme_symbol == "CONFIG_ANONMM"
    assert registry.arch("i386").deb_arch == "i386"
    assert registry.arch("x86_64").qemu == "qemu-system-x86_64"
    with pytest.raises(UserError, match="unknown stack 'objrmap': choose "
                                        "one of anon_vma, anonmm"):
        registry.stack("objrmap")
    with pytest.raises(UserError, match="unknown arch 'arm64'"):
        registry.arch("arm64")


def test_base_new_and_what_follows_from_them():
    assert (registry.BASE, registry.NEW) == ("anon_vma", "anonmm")
    assert registry.colour("anon_vma") != registry.colour("anonmm")
    assert registry.colour("other") == registry.OTHER_COLOUR
    assert registry.stack_order("anonmm") == 1
    assert set(registry.scheme_symbols()) == {"CONFIG_ANONMM",
                                              "CONFIG_ANON_VMA"}
    assert registry.arches_with("fio") == ("i386", "x86_64")


def test_scheme_expectations():
    assert ("mremap_anon_copy_pages", "==", 0) in registry.expectations(
        "anon_vma", "torture", "exit", 1)
    mm = registry.expectations("anonmm", "torture", "exit", 1)
    assert mm == [("anon_rmap_orphan_pages", ">", 0)]
    assert registry.expectations("anonmm", "torture", "exit", 0) == []
    assert registry.expectations("unknown", "torture", "all", 1) == []


def test_a_rule_of_one_workload_spares_another_of_the_same_mode():
    # rmb-forkcopy's only mode is "all", as is torture's busiest: the
    # copies torture must make are nothing forkcopy owes
    assert ("mremap_anon_copy_pages", ">", 0) in registry.expectations(
        "anonmm", "torture", "all", 0)
    assert registry.expectations("anonmm", "forkcopy", "all", 0) == []
