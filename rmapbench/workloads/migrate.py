"""migrate: what page migration costs each scheme (bench/rmb-migrate.c).

Migration must find every pte of a page twice: to make each a migration
entry, and to point each at the new page.  anon_vma walks the page's
anon_vma tree; anonmm walks the bundle, try-locking each mm, and keeps
the lock of each mm where it made an entry until the restore
(kernels/anonmm 0017).  Two modes:

- move: move_pages(2) of the parent's pages to the other NUMA node and
  back, timed per call; pattern=shared (every worker maps them: both
  walks visit W + 1 mappings) or cow (every worker wrote its own copy:
  anon_vma still visits every worker's vma, anonmm finds the parent at
  once).  Needs two NUMA nodes: the distro profile.
- compact: whole-memory compaction rounds while the bundle mprotects,
  mremaps, pages out, exits and forks; the correctness suite's test, and
  here the migrations that succeeded and failed (anonmm fails a page
  whose mapping mm holds or awaits its mmap_lock for write).

Neither is in the default comparison yet: both need the distro profile's
kernels ('harness.py run --workload migrate --profile distro').
"""

from .base import HIGHER, NEUTRAL, Mode, Workload, metric

WALK = (
    metric("anon_rmap_visit_count", "mms (anonmm) or vmas (anon_vma) "
           "visited", "visits", NEUTRAL, exact=True),
    metric("anon_rmap_trylock_fail_count", "failed rmap try-locks",
           "try-locks", NEUTRAL, exact=True),
    metric("pgmigrate_fail_pages", "migrations failed", "pages"),
)

MOVE = (
    metric("move_per_page_ns", "move_pages() per page (median call)",
           "ns", timed=True),
    metric("moved_pages", "pages moved", "pages", HIGHER, exact=True),
    *WALK,
)

COMPACT = (
    metric("pgmigrate_success_pages", "pages migrated by compaction",
           "pages", HIGHER),
    *WALK,
    metric("verify_mismatch_pages", "pages wrong after the run", "pages",
           exact=True),
)

WORKLOAD = Workload(
    "migrate", "rmb-migrate",
    modes=(Mode("compact", COMPACT), Mode("move", MOVE)),
    experiments=(),
    order=80)
