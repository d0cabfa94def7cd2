"""The correctness suite: every kernel must pass it, anonmm exactly as
anon_vma does.  A benchmark of a kernel that corrupts memory is worthless.

Three kinds of test run in QEMU guests of each kernel, grouped into a few
boots (docs/correctness.md has the list, what each checks and what is left
out and why):

- torture: bench/rmb-torture, families of processes sharing, COW-writing,
  moving, exec'ing, exiting, swapping and swapping off anonymous pages,
  every page of every process verified, plus the rmap-completeness check
  (a page MADV_PAGEOUT cannot reclaim is a mapping the walk missed);
- selftest: the 6.1 tree's own mm selftests that apply to this config
  (bench/selftests.mk builds them static for both arches);
- stress: Debian's stress-ng memory stressors under memory pressure with
  swap (the arches whose testbed entry packs stress-ng).

After every boot: no kernel fault line anywhere in the console, the slab
caches of the rmap back at their idle counts, and a final swapoff that
releases every swap entry (boot_checks.py).

One job per module: catalogue (the tests and groups), boots (a boot's
plan, kernel arguments and image extras), judges (a verdict per test),
boot_checks (the rows every boot adds), render (the tables), suite
(running it all through the executor).
"""

from .boot_checks import IDLE_SLAB_TOLERANCE
from .boots import CHECK_APPEND, IDLE, PAGEOUT_INIT, SETTLE, make_plan
from .catalogue import Group, Test, catalogue, selftest, stress_test, \
    torture_test
from .judges import judge_boot
from .suite import default_out_dir, run_check
from .verdict import FAIL, PASS, SKIP, Verdict

__all__ = ["CHECK_APPEND", "FAIL", "Group", "IDLE", "IDLE_SLAB_TOLERANCE",
           "PAGEOUT_INIT", "PASS", "SETTLE", "SKIP", "Test", "Verdict",
           "catalogue", "default_out_dir", "judge_boot", "make_plan",
           "run_check", "selftest", "stress_test", "torture_test"]
