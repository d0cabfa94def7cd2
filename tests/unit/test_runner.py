"""From a guest's console to records, and the store that keeps them."""

import dataclasses
from pathlib import Path

import pytest

import fakeguest
from rmapbench import guest, reparse, runner, store
from rmapbench import experiments
from rmapbench.errors import UserError
from rmapbench.record import Config

CASE = experiments.Case(Config("vma-cost", "x86_64", 512, "vma", "count",
                               (("V", 100),)), "anonmm", 0, 60.0)
OK_CONSOLE = """\
RMB-STEP 1/3 swapon
RMB-STEP-END 1 rc=0 ms=5
RMB-BEGIN rmapbench
scheme anonmm
RMB-END rmapbench
RMB-STEP 2/3 run rmb-vma mode=count V=100
RMB-RESULT {"workload":"vma","mode":"count","record":"summary","scheme":"anonmm","params":{"kind":"split"},"metrics":{"vmas_count":100,"slab_total_per_vma_bytes":150.5}}
RMB-STEP-END 2 rc=0 ms=300
RMB-DONE rc=0
"""


def fake_run(tmp_path: Path, text: str, timed_out=False) -> guest.GuestRun:
    return fakeguest.run_of(text, tmp_path / "console.log",
                            timed_out=timed_out)


def test_results_become_records(tmp_path):
    (rec,) = runner.records_of(CASE, fake_run(tmp_path, OK_CONSOLE), "r",
                               "tcg")
    assert rec["failed"] is False and rec["scheme"] == "anonmm"
    assert rec["metrics"] == {"vmas_count": 100,
                              "slab_total_per_vma_bytes": 150.5}
    assert rec["params"] == {"V": 100} and rec["boot"] == CASE.key()


def test_params_and_metrics_arrive_apart(tmp_path):
    line = ('RMB-RESULT {"workload":"vma","mode":"count","record":"summary",'
            '"scheme":"anonmm","arch":"x86_64","params":{"V":100,'
            '"kind":"split","seed":1},"metrics":{"vmas_count":100,'
            '"stop":"done","slab_total_per_vma_bytes":150.5}}')
    text = "\n".join(line if ln.startswith("RMB-RESULT") else ln
                     for ln in OK_CONSOLE.splitlines()) + "\n"
    (rec,) = runner.records_of(CASE, fake_run(tmp_path, text), "r", "tcg")
    assert rec["metrics"] == {"vmas_count": 100,
                              "slab_total_per_vma_bytes": 150.5}
    assert rec["guest_params"] == {"V": 100, "kind": "split", "seed": 1}
    assert rec["params"] == {"V": 100} and rec["scheme"] == "anonmm"


def test_a_fault_is_a_failed_record_without_numbers(tmp_path):
    text = OK_CONSOLE.replace(
        "RMB-DONE", "[ 9.0] BUG: Bad page state in process rmb-vma\nRMB-DONE")
    (rec,) = runner.records_of(CASE, fake_run(tmp_path, text), "r", "tcg")
    assert rec["failed"] is True and rec["metrics"] == {}
    assert "kernel fault" in rec["failure"]
    assert "Bad page state" in rec["excerpt"]


def test_a_timeout_is_a_failed_record(tmp_path):
    text = OK_CONSOLE.split("RMB-STEP 2/3")[0]
    (rec,) = runner.records_of(CASE, fake_run(tmp_path, text, True), "r",
                               "tcg")
    assert rec["failed"] and rec["failure"].startswith("timed out")


def test_no_result_is_a_failure(tmp_path):
    text = "\n".join(ln for ln in OK_CONSOLE.splitlines()
                     if not ln.startswith("RMB-RESULT")) + "\n"
    (rec,) = runner.records_of(CASE, fake_run(tmp_path, text), "r", "tcg")
    assert rec["failed"] and "no result" in rec["failure"]


def test_fio_section_becomes_a_record(tmp_path):
    case = experiments.Case(Config("swap-ceiling", "x86_64", 512, "fio",
                                   "write4k", ()), "anon_vma", 0, 60.0)
    text = ("RMB-STEP 1/1 section fio fio\nRMB-BEGIN fio\nnote: x\n"
            '{"jobs": [{"write": {"bw": 1000, "iops": 250.0}}]}\n'
            "RMB-END fio\nRMB-STEP-END 1 rc=0 ms=9\nRMB-DONE rc=0\n")
    (rec,) = runner.records_of(case, fake_run(tmp_path, text), "r", "tcg")
    assert rec["metrics"] == {"write_bw_kb_per_s": 1000,
                              "write_iops_per_s": 250.0}


def test_store_round_trip_and_resume(tmp_path, monkeypatch):
    monkeypatch.setattr(store.paths, "RESULTS", tmp_path)
    rdir = store.run_dir("t-1")
    assert not store.boot_done(rdir, "k")
    store.save_boot(rdir, "k", {"records": [{"a": 1}]})
    assert store.boot_done(rdir, "k")
    assert store.load_records(rdir) == [{"a": 1}]
    assert store.write_records(rdir).read_text() == '{"a": 1}\n'
    assert not list((rdir / "boots").glob(".*"))   # no temporary left


def test_store_refuses_bad_ids_and_missing_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(store.paths, "RESULTS", tmp_path)
    with pytest.raises(UserError, match="bad run id"):
        store.run_dir("../x")
    with pytest.raises(UserError, match="no results"):
        store.load_records(store.run_dir("absent"))


def test_memory_below_boot_minimum_is_refused():
    small = experiments.Case(Config("t", "x86_64", 32, "vma", "count", ()),
                             "anonmm", 0, 60.0)
    with pytest.raises(UserError, match="32 MB"):
        runner.check_memory([small])


def test_reparse_rebuilds_records_from_the_stored_console(tmp_path,
                                                          monkeypatch):
    monkeypatch.setattr(store.paths, "RESULTS", tmp_path)
    rdir = store.run_dir("old")
    log = store.log_file(rdir, CASE.key())
    log.parent.mkdir(parents=True)
    log.write_text(OK_CONSOLE)
    run = fake_run(tmp_path, OK_CONSOLE)
    (rec,) = runner.records_of(CASE, run, "old", "tcg")
    stale = {**rec, "metrics": {"vmas_count": 1}}
    store.save_boot(rdir, CASE.key(), {"key": CASE.key(), "seconds": 3.0,
                                       "failure": None, "command": [],
                                       "timed_out": False, "qemu_rc": 0,
                                       "records": [stale]})
    store.write_records(rdir)
    assert reparse.reparse(rdir) == (1, 1)
    assert store.load_records(rdir) == [rec]
    assert (rdir / "records.jsonl.before-reparse").read_text().count(
        '"vmas_count": 1}') == 1
    # a fault the old parser missed now fails the boot
    log.write_text(OK_CONSOLE.replace("RMB-DONE", "[ 2.0] Oops: 0002\n"
                                      "RMB-DONE"))
    reparse.reparse(rdir)
    (failed,) = store.load_records(rdir)
    assert failed["failed"] and "Oops" in failed["failure"]


def test_two_experiments_of_one_configuration_share_a_boot(tmp_path,
                                                           monkeypatch):
    monkeypatch.setattr(store.paths, "RESULTS", tmp_path)
    twin = dataclasses.replace(CASE, config=dataclasses.replace(
        CASE.config, experiment="vma-twin"))
    booted = fakeguest.install(monkeypatch, lambda boot: OK_CONSOLE)
    rdir = store.run_dir("shared")
    again = dataclasses.replace(CASE, rep=1)
    runner.execute([CASE, twin, again], rdir, "shared", "tcg")
    # a repetition is a boot of its own, even of the same configuration
    assert [log.name for _, log in booted] == [f"{CASE.key()}.log",
                                               f"{again.key()}.log"]
    recs = [r for r in store.load_records(rdir) if r["rep"] == 0]
    assert sorted(r["experiment"] for r in recs) == ["vma-cost", "vma-twin"]
    assert all(r["metrics"]["vmas_count"] == 100 for r in recs)
    alias = store.load_boots(rdir)[2]
    assert alias["key"] == twin.key() and \
        alias["shared_with"] == CASE.key()
    assert store.log_file(rdir, twin.key()).read_text() == OK_CONSOLE
    assert store.boot_done(rdir, twin.key())
    # each boot's records rebuild from its own console name
    assert reparse.reparse(rdir) == (3, 3)


def console_of(plan_text: str, failing: str = "") -> str:
    """What a guest running plan_text prints: each run line's vmas_count
    is its V; the run line containing failing ends with rc=1."""
    out = []
    lines = plan_text.splitlines()
    for n, line in enumerate(lines, 1):
        out.append(f"RMB-STEP {n}/{len(lines)} {line}")
        rc = 0
        if line.startswith("run "):
            v = dict(w.split("=") for w in line.split()[2:])["V"]
            out.append('RMB-RESULT {"workload":"vma","mode":"count",'
                       '"record":"summary","scheme":"anonmm",'
                       f'"params":{{}},"metrics":{{"vmas_count":{v}}}}}')
            rc = 1 if failing and failing in line else 0
        out.append(f"RMB-STEP-END {n} rc={rc} ms=5")
    out.append(f"RMB-DONE rc={int(bool(failing))}")
    return "\n".join(out) + "\n"


def test_packing_cases_run_in_one_boot_each_judged_alone(tmp_path,
                                                         monkeypatch):
    monkeypatch.setattr(store.paths, "RESULTS", tmp_path)
    small = dataclasses.replace(CASE, packs=True)
    big = dataclasses.replace(small, config=dataclasses.replace(
        small.config, params=(("V", 200),)))
    other_rep = dataclasses.replace(small, rep=1)
    booted = fakeguest.install(
        monkeypatch, lambda boot: console_of(boot.plan, failing="V=200"))
    rdir = store.run_dir("packed")
    runner.execute([small, big, other_rep], rdir, "packed", "tcg")
    plans = [b.plan for b, _ in booted]
    # one boot per repetition; swapon once, then each case after its mark
    assert len(plans) == 2
    assert plans[0].splitlines() == [
        "swapon", f"mark {small.key()}", "info",
        "run rmb-vma mode=count V=100", "info", f"mark {big.key()}",
        "info", "run rmb-vma mode=count V=200", "info"]
    recs = {(r["params"]["V"], r["rep"]): r for r in store.load_records(rdir)}
    assert recs[(100, 0)]["metrics"]["vmas_count"] == 100
    assert not recs[(100, 0)]["failed"] and not recs[(100, 1)]["failed"]
    # the step that failed is the big case's, and fails only that case
    assert recs[(200, 0)]["failed"]
    assert "run rmb-vma mode=count V=200" in recs[(200, 0)]["failure"]
    boots = {b["key"]: b for b in store.load_boots(rdir)}
    assert boots[small.key()]["failure"] is None
    assert boots[big.key()]["shared_with"] == small.key()
    # the records rebuild from the shared console, each case's own
    assert reparse.reparse(rdir) == (3, 3)
    rebuilt = {(r["params"]["V"], r["failed"])
               for r in store.load_records(rdir)}
    assert rebuilt == {(100, False), (200, True)}


def test_a_kernel_fault_fails_every_case_of_a_pack(tmp_path):
    small = dataclasses.replace(CASE, packs=True)
    big = dataclasses.replace(small, config=dataclasses.replace(
        small.config, params=(("V", 200),)))
    job = runner.group_job([small, big])
    text = console_of(job.boot.plan).replace(
        "RMB-DONE", "[    2.000000] BUG: Bad page state\nRMB-DONE")
    run = fake_run(tmp_path, text)
    for case in (small, big):
        records, failure = runner.case_records(case, run, "r", "tcg")
        assert records[0]["failed"] and "kernel fault (BUG)" in failure


def test_a_case_whose_mark_never_ran_has_no_results(tmp_path):
    small = dataclasses.replace(CASE, packs=True)
    big = dataclasses.replace(small, config=dataclasses.replace(
        small.config, params=(("V", 200),)))
    text = console_of(runner.group_job([small, big]).boot.plan)
    cut = text[:text.index(f"mark {big.key()}")].rsplit("\n", 2)[0]
    (rec,), failure = runner.case_records(big, fake_run(tmp_path, cut),
                                          "r", "tcg")
    assert rec["failed"] and "stopped before the end" in failure
