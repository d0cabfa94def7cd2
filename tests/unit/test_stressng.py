"""stress-ng as a workload: the plan it runs and its YAML report read
into one record per boot."""

from rmapbench import console, experiments
from rmapbench.workloads import stressng

YAML = """---
system-info:
      stress-ng-version: 0.15.06
      pagesize: 4096

metrics:
    - stressor: mmap
      bogo-ops: 136
      bogo-ops-per-second-usr-sys-time: 70.1
      bogo-ops-per-second-real-time: 67.879997
      wall-clock-time: 2.003536
      user-time: 0.1
...
"""


def boot(mode: str, text: str) -> list[dict]:
    con = console.parse("RMB-BEGIN rmapbench\nscheme anonmm\n"
                        "RMB-END rmapbench\nRMB-BEGIN stressng\n" + text +
                        "RMB-END stressng\n")
    return stressng.records({"mode": mode, "workload": "stressng"}, con)


def test_the_report_becomes_a_record():
    (rec,) = boot("mmap", YAML)
    assert not rec["failed"] and rec["scheme"] == "anonmm"
    assert rec["metrics"] == {"bogo_ops_count": 136.0,
                              "bogo_ops_per_s": 67.879997,
                              "wall_clock_ns": 2003536000}


def test_a_report_without_the_stressor_is_a_failure():
    (rec,) = boot("vm", YAML)
    assert rec["failed"] and "no metrics for vm" in rec["failure"]


def test_every_mode_runs_its_stressor_with_a_report():
    for exp in experiments.by_name([f"stressng-{m}"
                                    for m in stressng.STRESSORS]):
        case = experiments.expand([exp], ["anonmm"], ["x86_64"], 1)[0]
        text = case.plan()
        assert f"stress-ng {stressng.STRESSORS[exp.mode]}" in text
        assert f"--yaml {stressng.REPORT}" in text
        assert case.extras() == ("stress-ng",)
