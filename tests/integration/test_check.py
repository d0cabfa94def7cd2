"""The correctness suite (rmapbench/check.py, 'harness.py check --quick')
on the six kernels 'make test' builds (both profiles): every test passes
on the anon_vma stack, and the anonmm stack passes exactly the same
tests.  Under TCG the quick suite takes a few minutes for the six.

tests/unit/test_check_judges.py feeds the suite's judge made-up consoles
(no kernel)."""

import json

import pytest

from rmapbench import check, kbuild, profiles, testbed

TARGETS = profiles.targets(profiles.profile_names(), None)
KERNELS = [(s, t) for s in testbed.stack_names() for t in TARGETS]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    for stack, t in KERNELS:
        if not kbuild.kernel_image(stack, t.arch, t.profile).exists():
            pytest.fail(f"{stack} {t.label()} kernel not built: run "
                        "'harness.py build --profile minimal,distro' "
                        "(make test does)")
    out = tmp_path_factory.mktemp("check")
    rc = check.run_check(list(testbed.stack_names()), TARGETS, "auto",
                         True, out)
    result = json.loads((out / "check.json").read_text())
    return rc, result, out


def verdicts_of(result, stack):
    return {(v["test"], v["kernel"].split("/")[1]): v
            for v in result["verdicts"]
            if v["kernel"].split("/")[0] == stack}


def test_quick_suite_runs_every_test_on_every_kernel(quick):
    _, result, out = quick
    assert (out / "check.md").exists()
    _, tests = check.catalogue(quick=True)
    for stack, target in KERNELS:
        got = verdicts_of(result, stack)
        kernel = target.label()
        has = profiles.profile(target.profile).has
        for t in tests:
            if target.arch in t.arches and has(t.needs):
                assert (t.name, kernel) in got, (t.name, stack, kernel)
            else:
                assert (t.name, kernel) not in got, (t.name, stack, kernel)
        for row in ("no kernel fault", "swapon, final swapoff",
                    "slabs back to idle"):
            assert (f"quick: {row}", kernel) in got, (row, stack, kernel)


def test_everything_passes_on_anon_vma(quick):
    _, result, _ = quick
    bad = [f"{t} {a}: {v['verdict']} {v['reason']}"
           for (t, a), v in verdicts_of(result, "anon_vma").items()
           if v["verdict"] != check.PASS]
    assert bad == []


def test_anonmm_passes_exactly_as_anon_vma(quick):
    rc, result, _ = quick
    base = verdicts_of(result, "anon_vma")
    other = verdicts_of(result, "anonmm")
    assert set(base) == set(other)
    differ = [f"{t} {a}: anon_vma {base[(t, a)]['verdict']}, anonmm "
              f"{other[(t, a)]['verdict']} ({other[(t, a)]['reason']})"
              for (t, a) in base
              if base[(t, a)]["verdict"] != other[(t, a)]["verdict"]]
    assert differ == [] and result["mismatches"] == []
    assert rc == 0


def test_torture_really_swapped_and_verified(quick):
    _, result, _ = quick
    for v in result["verdicts"]:
        if v["test"].startswith("torture-"):
            d = v["details"]
            assert d["verified_pages"] > 0, v
            assert d["pswpout_pages"] > 0, v
            assert d["pressure_swap_ptes_pages"] > 0, v
