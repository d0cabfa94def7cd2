import io

from rmapbench.progress import Progress, fmt_seconds


def test_fmt_seconds():
    assert fmt_seconds(5.4) == "5s"
    assert fmt_seconds(125) == "2m05s"
    assert fmt_seconds(3725) == "1h02m"


def test_progress_lines_count_steps_and_estimate():
    out = io.StringIO()
    p = Progress(3, "build", stream=out)
    p.note("first")
    p.step_done()
    p.note("second")
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[build 1/3] first (elapsed 0s, ETA ?)")
    assert lines[1].startswith("[build 2/3] second (elapsed 0s, ETA 0s)")


def test_progress_takes_a_better_estimate():
    out = io.StringIO()
    Progress(1, "boot", stream=out).note("x", eta=90)
    assert "ETA 1m30s" in out.getvalue()


def test_the_eta_weighs_each_step_by_its_work(monkeypatch):
    """A pack of 3 cases done in 30 s leaves a one-case boot 10 s."""
    from rmapbench import progress
    now = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    out = io.StringIO()
    p = Progress(2, "boot", stream=out, work=4)
    now[0] += 30
    p.step_done(3)
    assert p.eta() == 10


def test_a_pack_weighs_its_cases():
    from rmapbench import executor, plan, qemu
    one = qemu.Boot("anonmm", "x86_64", plan.of("swapon", "info"), 256, 10)
    pack = qemu.Boot("anonmm", "x86_64", plan.of(
        "swapon", plan.mark("a"), "info", plan.mark("b"), "info",
        plan.mark("c"), "info"), 256, 10)
    assert executor.weight(one) == 1 and executor.weight(pack) == 3
