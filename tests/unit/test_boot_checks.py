"""The slab idle row's tolerances: exact for the scheme's own cache, a
couple of objects for the generic ones, and one dead mm_struct per CPU
but the counting one (each may keep it as its lazy TLB mm)."""

from rmapbench.check import boot_checks


def test_the_schemes_own_cache_is_exact():
    assert boot_checks.tolerance("anonmm", "anonmm", cpus=4) == 0


def test_mm_struct_allows_a_lazy_mm_per_other_cpu():
    assert boot_checks.tolerance("mm_struct", "anonmm", cpus=1) == 2
    assert boot_checks.tolerance("mm_struct", "anon_vma", cpus=4) == 3
    assert boot_checks.tolerance("vm_area_struct", "anon_vma", cpus=4) == 2
