"""reparse rebuilds the case of an SMP boot (its key names the vCPUs)."""

from rmapbench import reparse
from rmapbench.experiments import Case
from rmapbench.record import Config


def test_the_case_of_an_smp_boot_keeps_its_vcpus():
    case = Case(Config("fastpath-fault-smp", "x86_64", 512, "fastpath",
                       "fault", (("L", 8), ("T", 2)), vcpus=2),
                "anonmm", 0, 300.0)
    rec = {**case.config.fields(), "stack": "anonmm", "rep": 0}
    got = reparse.case_of({"key": case.key(), "records": [rec]})
    assert got.key() == case.key() and got.config.vcpus == 2
