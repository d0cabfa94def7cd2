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
