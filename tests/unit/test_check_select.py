"""harness.py check --test: the tests named, an unknown name refused."""

import pytest

from rmapbench.check.catalogue import catalogue
from rmapbench.check.suite import select
from rmapbench.errors import UserError


def test_select_keeps_the_tests_named_in_catalogue_order():
    _, tests = catalogue(False)
    picked = select(tests, ("orphan", "inject"))
    assert [t.name for t in picked] == [t.name for t in tests
                                        if t.name in ("orphan", "inject")]
    assert select(tests, ()) == tests


def test_select_refuses_an_unknown_name_and_lists_the_known():
    _, tests = catalogue(True)
    with pytest.raises(UserError) as err:
        select(tests, ("inject", "nosuch"))
    assert "nosuch" in str(err.value) and "torture-cow" in str(err.value)


def test_hwpoison_tests_run_on_distro_kernels_only():
    """Memory failure is in the distro profile alone: the minimal
    kernels do not run the hwpoison tests, the distro ones do, on 1, 2
    and 4 vCPUs in the full suite."""
    from rmapbench.check.suite import units
    from rmapbench.profiles import DISTRO, MINIMAL, Target

    groups, tests = catalogue(False)
    hw = [t for t in tests if t.kind == "hwpoison"]
    assert {t.vcpus for t in hw} == {None, 2, 4}
    assert "hwpoison-contend-smp2" in [t.name for t in hw]
    assert all(t.needs == ("memory_failure",) for t in hw)
    for target, want in ((Target(MINIMAL, "x86_64"), set()),
                         (Target(DISTRO, "x86_64"), {t.name for t in hw})):
        got = {t.name for u in units(groups, tests)
               for t in u.tests(tests, target) if t.kind == "hwpoison"}
        assert got == want, target


@pytest.mark.parametrize("variants, current, how", [
    (("",), "lockdep", "(make check-kernels)"),
    (("lockdep",), "", "(make check-variant VARIANT=lockdep)"),
    (("", "debugvm"), "kasan", "(make check-kernels)"),
])
def test_a_test_for_other_kernels_is_skipped_with_the_command_that_runs_it(
        monkeypatch, variants, current, how):
    """A test whose variants exclude the kernels at hand is skipped,
    and the reason names the command that runs it, whichever variants
    it lists (only the measured kernels, too)."""
    import dataclasses

    from rmapbench import paths
    from rmapbench.check import boots

    _, tests = catalogue(True)
    test = dataclasses.replace(
        next(t for t in tests if t.kind == "torture"), variants=variants)
    monkeypatch.setattr(paths, "variant", lambda: current)
    _, skipped = boots.files_and_skips([test], "x86_64")
    assert skipped[test.name].endswith(how), skipped


def test_a_unit_none_of_whose_tests_runs_on_a_kernel_is_not_booted(
        monkeypatch):
    """On the KASAN kernels the small-node family tests are skipped
    (they run on the measured and debugvm kernels only): their guest,
    which a KASAN kernel cannot boot in 64 MB, is not booted at all, and
    the table still shows each of them skipped with its reason."""
    from rmapbench import paths
    from rmapbench.check import suite
    from rmapbench.profiles import DISTRO, Target

    monkeypatch.setattr(paths, "variant", lambda: "kasan")
    monkeypatch.setattr(suite, "require_kernels", lambda *a: None)
    planned = suite.plan(["anonmm"], [Target(DISTRO, "x86_64")], False)
    assert "smallnodes" not in {sj.unit.name for sj in planned.jobs}
    family = {v.test: v for v in planned.unbooted}
    assert {"family-N16-mb64", "family-N12-mb72", "family-N20-mb72"} <= \
        set(family)
    assert all(v.verdict == "skip" and "make check-kernels" in v.reason
               for v in family.values())
    monkeypatch.setattr(paths, "variant", lambda: "")
    planned = suite.plan(["anonmm"], [Target(DISTRO, "x86_64")], False)
    assert "smallnodes" in {sj.unit.name for sj in planned.jobs}
    assert not planned.unbooted
