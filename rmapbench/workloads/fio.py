"""fio: Debian's fio writing 4k blocks straight to the swap device, the
ceiling of swap-out throughput on that device (drawn with swap's
figures).  No program of ours: the image packs fio (the fio extra) and
the plan runs it as a section whose JSON becomes one record.  On i386
the image packs Debian's fio:i386 and its libraries, downloaded into the
cache (debs.py).
"""

import json

from .. import console, plan, record, testbed
from ..record import Config
from .base import HIGHER, Experiment, Mode, Workload, metric

FIO_ARGS = ("--name=ceiling --filename=/dev/vda --rw=write --bs=4k "
            "--direct=1 --ioengine=libaio --iodepth=32 "
            "--output-format=json")
# MB written: the default comparison writes as much as its swap
# experiments swap out (64 MB), 'compare --full' as much as theirs
SIZE_MB = 64
FULL_SIZE_MB = 256


def steps(config: Config) -> list[str]:
    size = dict(config.params).get("mb", SIZE_MB)
    return [plan.info(),
            plan.section("fio", f"fio {FIO_ARGS} --size={size}M")]


def records(base: dict, con: console.Console) -> list[dict]:
    """The fio JSON section as one record: write bandwidth and IOPS."""
    scheme = con.section_pairs("rmapbench").get("scheme", "unknown")
    text = "\n".join(con.sections.get("fio", []))
    job = json.loads(text[text.index("{"):])["jobs"][0]["write"]
    return [record.measured(base, {"scheme": scheme}, {}, {
        "write_bw_kb_per_s": job["bw"], "write_iops_per_s": job["iops"]})]


WORKLOAD = Workload(
    "fio", None,
    modes=(Mode("write4k", (
        metric("write_bw_kb_per_s", "fio 4k write bandwidth", "kB/s",
               HIGHER),), main=("swap-ceiling", "swap-mem")),),
    experiments=(
        Experiment("swap-ceiling", "fio", "write4k",
                   testbed.arches_with("fio"), fixed={"mb": SIZE_MB},
                   mem_mb={"x86_64": [512]},
                   # the device's ceiling, the same under either scheme:
                   # two boots (each alone on the host clock) show it;
                   # 'compare --full' gives it the clock's three
                   max_reps=2,
                   full={"fixed": {"mb": FULL_SIZE_MB}, "max_reps": 0},
                   text="fio 4k writes of mb MB to the swap device: the "
                        "swap-out ceiling"),),
    extras=("fio",), steps=steps, records=records,
    order=50)
