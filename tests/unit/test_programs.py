"""Parameters declared once, by the programs: the harness reads their
tables, refuses bad values before a boot, and bench/README.md's tables
are made from them.  Result lines keep params and metrics apart, and a
line of an older (flat) run splits into the same record."""

import json
import subprocess

import pytest

from rmapbench import paths, programs, record
from rmapbench.errors import UserError


def test_tables_come_from_the_programs():
    fork = {p.key: p for p in programs.table("rmb-fork")}
    assert fork["N"].default == 100 and fork["N"].max == 1000000
    assert fork["N"].max_in("breadth") == 4096
    assert fork["N"].max_in("rate") == 1000000
    assert fork["kind"].choices == ("split", "gap")
    assert fork["D"].modes == ("depth", "chain")
    assert fork["D"].max_in("depth") == 4096
    assert fork["D"].max_in("chain") == 100000


@pytest.mark.parametrize("values,says", [
    ({"Q": [3]}, "unknown parameter 'Q' of workload fork"),
    ({"N": [8, 5000]}, "N=5000 out of range [1, 4096] in mode breadth"),
    ({"D": [2]}, "parameter D does not apply to mode breadth"),
    ({"kind": ["huge"]}, "kind=huge: must be one of split|gap"),
    ({"V": ["many"]}, "V=many: not an integer"),
])
def test_bad_values_are_refused_with_the_valid_ones(values, says):
    with pytest.raises(UserError) as err:
        programs.check("rmb-fork", "fork", "breadth", values)
    assert says in str(err.value)
    assert "mode breadth takes: V=1000 [1..4194304], N=100 [1..4096]" in \
        str(err.value)


def test_good_values_pass():
    programs.check("rmb-fork", "fork", "rate", {"N": [5000], "V": [10]})


def test_the_readme_tables_are_current():
    readme = (paths.BENCH / "README.md").read_text()
    for src in sorted(paths.BENCH.glob("rmb-*.c")):      # every program
        assert f"<!-- params: {src.stem} -->" in readme, src.stem
    assert programs.readme(readme) == readme, \
        "run 'harness.py params --readme'"


def test_a_result_line_splits_into_params_and_metrics():
    programs.table("rmb-fork")           # builds bench/ for the host
    out = subprocess.run([str(paths.BENCH / "out/x86_64/rmb-fork"),
                          "mode=rate", "N=5", "V=20"], capture_output=True,
                         text=True, check=True).stdout
    line = json.loads(out.splitlines()[0].split(" ", 1)[1])
    params, metrics = record.split(line)
    assert params == {"V": 20, "N": 5, "kind": "split", "seed": 1}
    assert "forks_per_s" in metrics and "N" not in metrics
    flat = {k: v for k, v in line.items() if k not in ("params", "metrics")}
    assert record.flat(line) == {**flat, **params, **metrics}
