"""bench/lib/rmb-iface.h: the one list of caches, counters and sizes,
read the same way by the C library and by the harness."""

import subprocess

from rmapbench import iface, paths

LISTER = r"""
#include <stdio.h>
#include "rmb-iface.h"
#define SLAB(id, name, flags) printf("slab %s %d\n", #name, flags);
#define CTR(id, name, unit, flags) printf("ctr %s_%s %d\n", #name, #unit, flags);
#define SIZE(name) printf("size %s\n", #name);
#define MEM(name, flags) printf("mem %s %d\n", #name, flags);
#define SUM(id, line, field) printf("sum %s\n", #line);
int main(void)
{
	RMB_SLABS(SLAB) RMB_COUNTERS(CTR) RMB_SIZES(SIZE) RMB_MEMINFO(MEM)
	RMB_SUMS(SUM)
	return 0;
}
"""


def test_the_harness_reads_what_the_c_library_expands(tmp_path):
    src = tmp_path / "lister.c"
    src.write_text(LISTER)
    exe = tmp_path / "lister"
    subprocess.run(["gcc", "-Wall", "-Werror", "-I", str(paths.BENCH / "lib"),
                    "-o", str(exe), str(src)], check=True)
    from_c = subprocess.run([str(exe)], capture_output=True, text=True,
                            check=True).stdout.splitlines()
    from_py = [f"slab {s.name} {s.flags}" for s in iface.all_slabs()]
    from_py += [f"ctr {c.field} {c.flags}" for c in iface.counters()]
    from_py += [f"size {s}" for s in iface.sizes()]
    from_py += [f"mem {m} {iface.SAMPLE}" for m in iface.meminfo()]
    from_py += [f"sum {s}" for s in iface.sums()]
    assert from_c == from_py


def test_what_each_user_gets():
    assert iface.slabs(iface.COST) == ("vm_area_struct", "anon_vma",
                                       "anon_vma_chain", "anonmm",
                                       "maple_node")
    assert set(iface.slabs(iface.RMAP)) == {
        "anonmm", "anon_vma", "anon_vma_chain", "vm_area_struct",
        "mm_struct"}
    smoke = [c.name for c in iface.counters(iface.SMOKE)]
    assert smoke[:3] == ["anon_rmap_walk", "anon_rmap_visit",
                         "anon_rmap_pte"] and "pswpout" in smoke
    assert "sizeof" not in "".join(iface.sizes())
    assert iface.sums() == ("anon_rmap_walk_ns", "anon_rmap_walk_timed",
                            "anon_rmap_walk_slept_ns", "anon_rmap_walk_slept",
                            "ksm_rmap_walk_ns", "ksm_rmap_walk_timed",
                            "ksm_rmap_walk_slept_ns", "ksm_rmap_walk_slept")
    config = iface.sampler_config()
    assert "RMB_SAMPLE_SLABS='vm_area_struct|anon_vma|anon_vma_chain|" \
           "anonmm'" in config
    assert "pswpout" in config and "MemFree|LowFree" in config


def test_smoke_requires_the_timed_sums_to_move_not_the_slept_ones():
    """A short smoke boot may switch no walk out: only the sums of the
    walks that kept their cpu must have moved, and they are the header's."""
    from rmapbench import smoke
    assert set(smoke.SUMS_MUST_MOVE) <= set(iface.sums())
    assert {"anon_rmap_walk_slept_ns", "anon_rmap_walk_slept"} <= \
        set(iface.sums()) - set(smoke.SUMS_MUST_MOVE)
