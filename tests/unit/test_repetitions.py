"""Repetitions decided per point from the declared metrics, and the
guest clocks boots run on."""

from dataclasses import replace

import pytest

import fabricate
from rmapbench import analysis, experiments, qemu, repetitions, stats
from rmapbench import profiles, runner, testbed, workloads
from rmapbench import store
from rmapbench.experiments import Experiment
from rmapbench.testbed import HOST, ICOUNT

STACKS = ["anon_vma", "anonmm"]
RATE = Experiment("t-rate", "fork", "rate", ("x86_64",),
                  fixed={"V": 10, "N": 5}, clocks=(ICOUNT,))
DEPTH = Experiment("t-depth", "fork", "depth", ("x86_64",),
                   sweep={"D": [2, 4, 8]}, clocks=(HOST,))


def rate_rec(stack: str, rep: int, value: float, clock: str = ICOUNT,
             exp: Experiment = RATE) -> dict:
    rec = fabricate.record(exp.name, stack, "x86_64", "fork", "rate",
                           exp.fixed, {"forks_per_s": value}, rep=rep)
    rec["clock"] = clock
    return rec


def depth_rec(stack: str, rep: int, d: int, value: float) -> dict:
    rec = fabricate.record("t-depth", stack, "x86_64", "fork", "depth",
                           {"D": d}, {"generation": d,
                                      "slab_total_delta_bytes": value},
                           rep=rep, record_kind="generation")
    rec["clock"] = HOST
    return rec


def decide(exp: Experiment, records: list[dict], fixed=None):
    points = experiments.sweep_points(exp, ["x86_64"])
    return points, repetitions.decisions(points, records, STACKS, fixed)


def test_policies_come_from_the_declared_metrics():
    assert repetitions.policy(RATE, ICOUNT, None).kind == repetitions.TIMED
    assert repetitions.policy(RATE, ICOUNT, None).start == 2
    assert repetitions.policy(RATE, HOST, None).start == 3
    assert repetitions.policy(DEPTH, HOST, None).kind == repetitions.EXACT
    assert repetitions.policy(DEPTH, HOST, 5).kind == repetitions.FIXED
    capped = Experiment("c", "fork", "rate", ("x86_64",), max_reps=2)
    assert repetitions.policy(capped, HOST, None).cap == 2
    assert repetitions.policy(capped, HOST, None).start == 2


def test_who_shares_the_host():
    assert repetitions.shares_host(RATE, ICOUNT)
    assert not repetitions.shares_host(RATE, HOST)
    assert repetitions.shares_host(DEPTH, HOST)      # exact counts only


def test_timed_points_start_then_stop_within_target():
    (point,), decided = decide(RATE, [])
    assert decided[point].boots == 2 and decided[point].why == "running"
    tight = [rate_rec(s, r, v) for r in range(2)
             for s, v in (("anon_vma", 200.0 + r * 0.1),
                          ("anonmm", 280.0 - r * 0.1))]
    (point,), decided = decide(RATE, tight)
    assert decided[point].boots == 2
    assert "within ±3%" in decided[point].why


def test_wide_points_grow_until_the_cap():
    recs = []
    for rep in range(6):
        recs += [rate_rec("anon_vma", rep, 200.0 * (1.3 if rep % 2 else 0.7)),
                 rate_rec("anonmm", rep, 280.0 * (0.7 if rep % 2 else 1.3))]
    (point,), decided = decide(RATE, recs[:4])
    assert decided[point].boots == 3 and decided[point].why == "running"
    (point,), decided = decide(RATE, recs)
    assert decided[point].boots == 6
    assert "cap of 6 reached" in decided[point].why
    assert "forks_per_s" in decided[point].why


def test_a_failed_boot_stops_the_point():
    recs = [rate_rec("anon_vma", r, 200.0 * (1 + r)) for r in range(2)]
    recs += [rate_rec("anonmm", 0, 280.0),
             fabricate.failed("t-rate", "anonmm", "x86_64", "fork", "rate",
                              RATE.fixed, rep=1)]
    recs[-1]["clock"] = ICOUNT
    (point,), decided = decide(RATE, recs)
    assert decided[point].boots == 2 and "failed" in decided[point].why


def test_exact_points_get_one_boot_and_a_check():
    points, decided = decide(DEPTH, [])
    assert [decided[p].boots for p in points] == [1, 2, 1]
    agree = [depth_rec(s, r, d, 1000.0 * d) for s in STACKS for d in (2, 8)
             for r in (0,)]
    agree += [depth_rec(s, r, 4, 4000.0) for s in STACKS for r in (0, 1)]
    points, decided = decide(DEPTH, agree)
    assert [decided[p].boots for p in points] == [1, 2, 1]
    assert "checked" in decided[points[1]].why
    assert store.checked({"repetitions": [
        {**p.config.fields(), "policy": decided[p].policy.kind}
        for p in points]}) == {p.config: store.EXACT for p in points}


def test_exact_points_that_disagree_are_repeated_as_timed():
    recs = [depth_rec(s, 0, d, 1000.0 * d) for s in STACKS for d in (2, 8)]
    recs += [depth_rec(s, r, 4, 4000.0 + r) for s in STACKS for r in (0, 1)]
    points, decided = decide(DEPTH, recs)
    assert all(decided[p].boots == 3 for p in points)
    assert all(decided[p].policy.kind == repetitions.TIMED for p in points)
    assert "disagreed" in decided[points[0]].why


def test_exact_with_one_checked_boot_compares_exactly():
    one = stats.summarize([160.0], deterministic=True, checked=True)
    other = stats.summarize([184.0], deterministic=True, checked=True)
    assert one.exact
    assert stats.compare("m", other, one).mark == stats.MARK_EXACT
    unchecked = stats.summarize([160.0], deterministic=True)
    assert not unchecked.exact
    assert stats.compare("m", other, unchecked).note == "n=1: no test"


ZRAM = replace(RATE, name="t-rate-zram", append="rmb.swap=zram",
               sweep={"N": [5, 10, 20]}, fixed={"V": 10})


def zram_rec(stack: str, rep: int, n: int, value: float) -> dict:
    rec = fabricate.record(ZRAM.name, stack, "x86_64", "fork", "rate",
                           {"V": 10, "N": n}, {"forks_per_s": value},
                           rep=rep)
    rec["clock"], rec["kernel_args"] = ICOUNT, ZRAM.append
    return rec


def test_diskless_icount_boots_are_checked_to_repeat_not_repeated():
    assert repetitions.policy(ZRAM, ICOUNT, None).kind == store.REPEATS
    # a disk, or a clock that does not count instructions: timed
    assert repetitions.policy(RATE, ICOUNT, None).kind == repetitions.TIMED
    assert repetitions.policy(ZRAM, HOST, None).kind == repetitions.TIMED
    packed = replace(ZRAM, packs=True)
    assert repetitions.policy(packed, ICOUNT, None).kind == repetitions.TIMED
    points, decided = decide(ZRAM, [])
    assert [decided[p].boots for p in points] == [1, 2, 1]
    same = [zram_rec(s, r, n, 100.0 * n + len(s)) for s in STACKS
            for n in (5, 10, 20) for r in ((0, 1) if n == 10 else (0,))]
    points, decided = decide(ZRAM, same)
    assert [decided[p].boots for p in points] == [1, 2, 1]
    assert "repeats exactly" in decided[points[0]].why
    checked = store.checked({"repetitions": [
        {**p.config.fields(), "policy": decided[p].policy.kind}
        for p in points]})
    assert set(checked.values()) == {store.REPEATS}
    # every metric of a checked point is exact, timed ones too, with a
    # ratio whose interval has no width
    (cs,) = [c for c in analysis.analyse(same, checked=checked)
             if c.key.param("N") == 5]
    cmp = cs.comparisons["forks_per_s"]
    assert cmp.mark == stats.MARK_EXACT and cmp.ratio.reach == 0


def check_moved(by: float) -> tuple[list, dict]:
    """The ZRAM experiment with its check point's anonmm value moved by
    the given fraction in its second boot (another seed)."""
    recs = [zram_rec(s, 0, n, 100.0 * n) for s in STACKS for n in (5, 20)]
    recs += [zram_rec(s, r, 10, 1000.0 * (1 + r * by * (s == "anonmm")))
             for s in STACKS for r in (0, 1)]
    return decide(ZRAM, recs)


def test_diskless_boots_the_seed_moves_are_repeated_as_timed():
    points, decided = check_moved(2 * repetitions.SEED_TOLERANCE)
    assert all(decided[p].policy.kind == repetitions.TIMED for p in points)
    # two boots each, and the check point's interval wants a third
    assert [decided[p].boots for p in points] == [2, 3, 2]
    assert "metrics disagreed" in decided[points[0]].why


def test_diskless_boots_the_seed_barely_moves_stay_single():
    points, decided = check_moved(repetitions.SEED_TOLERANCE / 2)
    assert [decided[p].boots for p in points] == [1, 2, 1]
    assert all(decided[p].policy.kind == store.REPEATS for p in points)


def test_each_repetition_boots_with_its_own_seed(tmp_path):
    exp = replace(ZRAM, sweep={"N": [5]})
    cases = experiments.expand([exp], ["anonmm"], ["x86_64"], 2)
    boots = [runner.job_of(c).boot for c in cases]
    assert sorted(b.seed for b in boots) == [1, 2]
    kernel = tmp_path / "bzImage"
    kernel.touch()
    for boot in boots:
        cmd = qemu.command(boot, kernel, kernel, "tcg", None)
        assert cmd[cmd.index("-seed") + 1] == str(boot.seed)
    # the host clock's boots differ anyway: no seed
    host = qemu.command(replace(boots[0], clock=HOST), kernel, kernel,
                        "tcg", None)
    assert "-seed" not in host


def test_clocks_expand_into_their_own_points_and_keys():
    both = Experiment("t", "fork", "rate", ("x86_64",), fixed={"N": 1},
                      clocks=(ICOUNT, HOST))
    cases = experiments.expand([both], STACKS, ["x86_64"], 1)
    clocks = sorted(c.config.clock for c in cases)
    assert clocks == [HOST, HOST, ICOUNT, ICOUNT]
    keys = {c.key() for c in cases}
    assert len(keys) == 4 and any(k.endswith("_icount_r0") for k in keys)
    assert cases[0].config != cases[-1].config


def test_icount_boots_count_instructions_under_tcg(tmp_path):
    kernel = tmp_path / "bzImage"
    kernel.write_text("")
    boot = qemu.Boot("anonmm", "x86_64", "", 256, 10, clock=ICOUNT)
    cmd = qemu.command(boot, kernel, tmp_path / "initrd", "kvm", None)
    assert cmd[cmd.index("-accel") + 1] == "tcg"
    assert cmd[cmd.index("-icount") + 1] == "shift=0,sleep=off"
    assert "noapictimer" in cmd[cmd.index("-append") + 1]
    boot = replace(boot, clock=HOST)
    cmd = qemu.command(boot, kernel, tmp_path / "initrd", "kvm", None)
    assert cmd[cmd.index("-accel") + 1] == "kvm" and "-icount" not in cmd


def test_multi_threaded_tcg_boots_have_a_second_possible_vcpu(tmp_path):
    """One possible vCPU makes QEMU 7.2 drop the guest's barriers (a
    lost virtio interrupt, qemu.smp_arg); icount and KVM are left be."""
    kernel = tmp_path / "bzImage"
    kernel.write_text("")

    def smp(accel: str, clock: str, vcpus: int) -> str:
        boot = qemu.Boot("anonmm", "x86_64", "", 256, 10, smp=vcpus,
                         clock=clock)
        cmd = qemu.command(boot, kernel, tmp_path / "initrd", accel, None)
        return cmd[cmd.index("-smp") + 1]
    assert smp("tcg", HOST, 1) == "1,maxcpus=2"
    assert smp("tcg", HOST, 4) == "4,maxcpus=4"
    assert smp("tcg", ICOUNT, 1) == "1"
    assert smp("kvm", HOST, 1) == "1"


def test_unknown_clock_is_refused():
    with pytest.raises(Exception, match="unknown clock 'tsc'"):
        testbed.clock("tsc")


def test_a_failed_check_boot_checks_nothing():
    recs = [depth_rec(s, 0, d, 1000.0 * d) for s in STACKS for d in (2, 8)]
    recs += [depth_rec(s, 0, 4, 4000.0) for s in STACKS]
    recs.append(depth_rec(STACKS[0], 1, 4, 4000.0))
    recs.append(fabricate.failed("t-depth", STACKS[1], "x86_64", "fork",
                                 "depth", {"D": 4}, rep=1))
    recs[-1]["clock"] = HOST
    points, decided = decide(DEPTH, recs)
    assert all(decided[p].policy.kind == repetitions.TIMED for p in points)


def test_icount_rr_boots_several_vcpus_with_the_backports_qemu(
        tmp_path, monkeypatch):
    """icount-rr runs its suite's QEMU with its firmware first, keeps
    ACPI (the MP table lists one CPU) and boots as many vCPUs as asked
    (no extra possible one: round-robin TCG)."""
    from rmapbench import experiments, qemusuite, testbed
    kernel = tmp_path / "bzImage"
    kernel.write_text("")
    monkeypatch.setattr(qemusuite, "binary",
                        lambda suite, name: f"/q/{suite}/{name}")
    monkeypatch.setattr(qemusuite, "firmware_args",
                        lambda suite: ["-L", f"/q/{suite}/fw"])
    boot = qemu.Boot("anonmm", "x86_64", "", 256, 10, smp=2,
                     clock=testbed.ICOUNT_RR)
    cmd = qemu.command(boot, kernel, tmp_path / "initrd", "kvm", None)
    assert cmd[:3] == ["/q/bookworm-backports/qemu-system-x86_64", "-L",
                       "/q/bookworm-backports/fw"]
    assert cmd[cmd.index("-accel") + 1] == "tcg"
    assert cmd[cmd.index("-smp") + 1] == "2"
    append = cmd[cmd.index("-append") + 1].split()
    assert "noapictimer" in append and "acpi=off" not in append
    experiments.check_vcpus((1, 2, 4), (testbed.ICOUNT_RR,))
    boot = replace(boot, clock=ICOUNT, smp=1)
    cmd = qemu.command(boot, kernel, tmp_path / "initrd", "kvm", None)
    assert cmd[0].endswith("qemu-system-x86_64") and "/q/" not in cmd[0]


def test_the_check_boot_goes_to_the_point_the_verdict_stands_on():
    # collapse-khugepaged sweeps holes 0 and 64 and its mode stands on
    # holes=0: a seed that moves that ratio must be seen, so the check
    # boot goes there, not to the middle of the sweep (holes=64)
    exp = next(e for e in workloads.experiments()
               if e.name == "collapse-khugepaged")
    points = experiments.sweep_points(exp, [profiles.Target("distro",
                                                            "x86_64")])
    decided = repetitions.decisions(points, [], STACKS, None)
    got = {dict(p.config.params)["holes"]: decided[p].boots for p in points}
    assert got == {0: 2, 64: 1}
    # an experiment that is none of its mode's main ones: the middle
    points, decided = decide(ZRAM, [])
    assert [decided[p].boots for p in points] == [1, 2, 1]
