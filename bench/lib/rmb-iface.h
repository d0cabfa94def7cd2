/*
 * rmb-iface.h - the guest interface both kernels expose, declared once
 * (docs/interface.md says what each entry means).
 *
 * X-macro lists: the workloads' library (rmb.h, rmb.c) expands them into
 * its enums and name tables, and the harness reads this file
 * (rmapbench/iface.py) for the metrics, the plots, the sampler of
 * bench/init.sh and the correctness suite.  Keep one entry per line, in
 * the form shown: iface.py parses the lines, not C.
 *
 * Flags say who uses an entry:
 *   RMB_F_COST    a structure in the cost of a VMA (tables, stacked bars)
 *   RMB_F_RMAP    a cache of the rmap: slub_debug'd and leak-checked by
 *                 the correctness suite
 *   RMB_F_SAMPLE  sampled over time by init's "sample" verb
 *   RMB_F_SMOKE   the smoke boot requires it in /proc/vmstat
 */
#ifndef RMB_IFACE_H
#define RMB_IFACE_H

#define RMB_F_COST	1
#define RMB_F_RMAP	2
#define RMB_F_SAMPLE	4
#define RMB_F_SMOKE	8

/* Slab caches of /proc/slabinfo (boot with slab_nomerge):
 * X(enum suffix, cache name, flags).  maple_node: 6.1 keeps VMAs in a
 * maple tree, which both schemes pay for. */
#define RMB_SLABS(X) \
	X(VMA, vm_area_struct, RMB_F_COST | RMB_F_RMAP | RMB_F_SAMPLE) \
	X(ANON_VMA, anon_vma, RMB_F_COST | RMB_F_RMAP | RMB_F_SAMPLE) \
	X(AVC, anon_vma_chain, RMB_F_COST | RMB_F_RMAP | RMB_F_SAMPLE) \
	X(ANONMM, anonmm, RMB_F_COST | RMB_F_RMAP | RMB_F_SAMPLE) \
	X(MM, mm_struct, RMB_F_RMAP) \
	X(MAPLE, maple_node, RMB_F_COST)

/* /proc/vmstat counters: X(enum suffix, vmstat name, unit, flags); a
 * result line calls the counter's growth <name>_<unit>.  The first
 * thirteen are the instrumentation kernels/common/patches adds (a scheme that
 * never does the thing reads 0, never missing). */
#define RMB_COUNTERS(X) \
	X(WALK, anon_rmap_walk, count, RMB_F_SMOKE | RMB_F_SAMPLE) \
	X(VISIT, anon_rmap_visit, count, RMB_F_SMOKE | RMB_F_SAMPLE) \
	X(PTE, anon_rmap_pte, count, RMB_F_SMOKE | RMB_F_SAMPLE) \
	X(SKIP, anon_rmap_skip, count, RMB_F_SMOKE) \
	X(TRYLOCK, anon_rmap_trylock_fail, count, RMB_F_SMOKE) \
	X(FOLIO_TRYLOCK, anon_rmap_folio_trylock_fail, count, RMB_F_SMOKE) \
	X(CONTENDED_KEEP, anon_rmap_contended_keep, pages, RMB_F_SMOKE) \
	X(ORPHAN, anon_rmap_orphan, pages, RMB_F_SMOKE) \
	X(MREMAP_COPY, mremap_anon_copy, pages, RMB_F_SMOKE) \
	X(SWAPIN_COPY, anon_swapin_copy, pages, RMB_F_SMOKE) \
	X(TEST_PTE, anon_pages_test_pte, count, RMB_F_SMOKE) \
	X(KSM_WALK, ksm_rmap_walk, count, RMB_F_SMOKE) \
	X(KSM_SHARED_SKIP, ksm_merge_shared_skip, count, RMB_F_SMOKE) \
	X(PSWPOUT, pswpout, pages, RMB_F_SMOKE | RMB_F_SAMPLE) \
	X(PSWPIN, pswpin, pages, RMB_F_SMOKE | RMB_F_SAMPLE) \
	X(PGMAJFAULT, pgmajfault, count, RMB_F_SAMPLE) \
	X(PGSCAN_KSWAPD, pgscan_kswapd, pages, 0) \
	X(PGSCAN_DIRECT, pgscan_direct, pages, 0) \
	X(PGSTEAL_KSWAPD, pgsteal_kswapd, pages, 0) \
	X(PGSTEAL_DIRECT, pgsteal_direct, pages, 0) \
	X(OOM_KILL, oom_kill, count, 0) \
	X(PGMIGRATE_OK, pgmigrate_success, pages, 0) \
	X(PGMIGRATE_FAIL, pgmigrate_fail, pages, 0) \
	X(NUMA_PTE, numa_pte_updates, count, 0) \
	X(NUMA_HINT, numa_hint_faults, count, 0) \
	X(NUMA_MIGRATED, numa_pages_migrated, pages, 0) \
	X(THP_FAULT, thp_fault_alloc, count, 0) \
	X(THP_COLLAPSE, thp_collapse_alloc, count, 0) \
	X(THP_SPLIT_PMD, thp_split_pmd, count, 0) \
	X(THP_SPLIT, thp_split_page, count, 0) \
	X(THP_SPLIT_FAIL, thp_split_page_failed, count, 0) \
	X(THP_SWPOUT, thp_swpout, count, 0) \
	X(THP_SWPOUT_FALLBACK, thp_swpout_fallback, count, 0)

/* Sums of /proc/rmapbench that the kernel keeps in 64 bits (a vm event
 * cannot hold them on i386): X(enum suffix, line, result field).  Walks
 * of anon folios timed with local_clock() (kernels/common/patches/0001),
 * and of KSM pages apart (0034):
 * the ns and the count of those whose task kept its cpu, then of those
 * switched out (their time includes other tasks').  Snapshots hold them
 * after the /proc/vmstat counters, and a result line shows their growth
 * as it shows the counters'. */
#define RMB_SUMS(X) \
	X(WALK_NS, anon_rmap_walk_ns, anon_rmap_walk_ns) \
	X(WALK_TIMED, anon_rmap_walk_timed, anon_rmap_walk_timed_count) \
	X(WALK_SLEPT_NS, anon_rmap_walk_slept_ns, anon_rmap_walk_slept_ns) \
	X(WALK_SLEPT, anon_rmap_walk_slept, anon_rmap_walk_slept_count) \
	X(KSM_WALK_NS, ksm_rmap_walk_ns, ksm_rmap_walk_ns) \
	X(KSM_WALK_TIMED, ksm_rmap_walk_timed, ksm_rmap_walk_timed_count) \
	X(KSM_WALK_SLEPT_NS, ksm_rmap_walk_slept_ns, ksm_rmap_walk_slept_ns) \
	X(KSM_WALK_SLEPT, ksm_rmap_walk_slept, ksm_rmap_walk_slept_count)

/* sizeof_<struct> lines of /proc/rmapbench: X(struct name); a structure
 * the running scheme does not have reads 0. */
#define RMB_SIZES(X) \
	X(vm_area_struct) \
	X(mm_struct) \
	X(anon_vma) \
	X(anon_vma_chain) \
	X(anonmm)

/* /proc/meminfo fields init's sampler prints as <field>_kb:
 * X(field, flags) */
#define RMB_MEMINFO(X) \
	X(MemFree, RMB_F_SAMPLE) \
	X(LowFree, RMB_F_SAMPLE) \
	X(HighFree, RMB_F_SAMPLE) \
	X(SwapFree, RMB_F_SAMPLE) \
	X(PageTables, RMB_F_SAMPLE)

#endif
