"""The boot pipeline without QEMU: plans, the executor's resume, the
suite's boots per vCPU count."""

import json

import fakeguest
from rmapbench import check, executor, plan, qemu, store
from rmapbench.check import suite
from rmapbench.profiles import DISTRO, MINIMAL, Target


def test_plan_lines_and_owners():
    p = plan.Plan(name="g")
    p.add(plan.swapon(), "boot", main=True)
    n = p.add(plan.run("rmb-vma", {"mode": "count", "V": 10}), "t",
              main=True)
    p.add(plan.proc("slab", "/proc/slabinfo"), "t")
    assert p.text() == ("swapon\nrun rmb-vma mode=count V=10\n"
                        "section slab cat /proc/slabinfo\n")
    assert p.main == {"boot": 1, "t": n} and p.steps_of("t") == [2, 3]
    assert p.number("swapon") == 1
    assert plan.of(plan.info(), plan.sample(1)) == "info\nsample 1\n"


def test_executor_runs_what_the_store_lacks(tmp_path, monkeypatch):
    booted = fakeguest.install(monkeypatch, lambda boot: "RMB-DONE rc=0\n")
    jobs = [executor.Job(k, k, qemu.Boot("anonmm", "x86_64", f"sh {k}\n",
                                         mem_mb=128, timeout_s=9))
            for k in ("a", "b", "c")]
    store.save_boot(tmp_path, "b", {"key": "b", "mine": "old"})
    said = []
    out = executor.execute(jobs, tmp_path, "tcg",
                           lambda job, run: {"mine": job.key},
                           lambda job, r: said.append(job.key))
    assert [b.plan for b, _ in booted] == ["sh a\n", "sh c\n"]
    assert said == ["a", "c"]
    assert [r["mine"] for r in out] == ["a", "old", "c"]
    saved = json.loads(store.boot_file(tmp_path, "c").read_text())
    assert saved["failure"] is None and saved["seconds"] == 2.0
    assert store.log_file(tmp_path, "c").exists()


def test_a_test_asking_for_other_vcpus_gets_its_own_boot():
    groups = [check.Group("g", {"x86_64": 256}, 60.0)]
    tests = [check.torture_test("cow", "g", "pages=64"),
             check.Test("t2", "torture", "g", "run rmb-torture", "x",
                        vcpus=2)]
    units = suite.units(groups, tests)
    assert [u.name for u in units] == ["g", "g@2cpu"]
    x86 = Target(MINIMAL, "x86_64")
    assert [t.name for t in units[1].tests(tests, x86)] == ["t2"]
    assert [t.name for t in units[0].tests(tests, x86)] == [
        "torture-cow"]


def test_a_test_runs_only_where_the_profile_has_what_it_needs():
    groups = [check.Group("g", {"x86_64": 256}, 60.0)]
    tests = [check.torture_test("cow", "g", "pages=64"),
             check.Test("numa", "torture", "g", "run rmb-torture", "x",
                        needs=("numa",))]
    (unit,) = suite.units(groups, tests)
    assert [t.name for t in unit.tests(tests, Target(MINIMAL, "x86_64"))] \
        == ["torture-cow"]
    assert [t.name for t in unit.tests(tests, Target(DISTRO, "x86_64"))] \
        == ["torture-cow", "numa"]
