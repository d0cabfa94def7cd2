/*
 * rmb.h - the one helper library shared by the rmapbench guest workloads.
 *
 * Output: every measurement is one line "RMB-RESULT {json}", every error
 * one line "RMB-ERROR {json}" on stdout, each written with a single
 * write(2) so lines from several processes never interleave.  A result
 * line holds its identity (workload, mode, record, scheme, arch), the
 * parameters the program ran with ("params": {...}) and what it measured
 * ("metrics": {...}) apart (rmb_result_begin).
 * Exit codes: 0 ok, 1 run-time failure or data mismatch, 2 bad parameter.
 */
#ifndef RMB_H
#define RMB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/types.h>

#include "rmb-iface.h"

#define RMB_EXIT_FAIL 1
#define RMB_EXIT_USAGE 2

/* Newer than some C libraries' headers (both since Linux 5.7/5.4) */
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

#if UINTPTR_MAX == 0xffffffffu
#define RMB_ARCH "i386"
#define RMB_32BIT 1
#else
#define RMB_ARCH "x86_64"
#define RMB_32BIT 0
#endif

extern size_t rmb_page;		/* page size in bytes */

/* ---- start-up, errors, time ---------------------------------------- */

void rmb_init(const char *workload);
void rmb_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rmb_die(int code, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));
/* One RMB-ERROR line if bad > 0; returns 1 then, else 0. */
int rmb_check_mismatch(long long bad, long long checked, const char *what);
uint64_t rmb_now_ns(void);		/* CLOCK_MONOTONIC */
pid_t rmb_fork(void);			/* flushes stdio, then fork() */
/* all of buf to fd, across short writes and EINTR (gives up on error) */
int rmb_write_all(int fd, const void *buf, size_t n);	/* 0, or -1 */
/* text to the file at path (sysfs, procfs, cgroup files): 0, or -1 */
int rmb_write_file(const char *path, const char *text);

/* ---- peers: this program exec'd again, unrelated by fork --------------- */

struct rmb_peer {
	pid_t pid;
	int cmd, rep;		/* the peer's stdin; its fd 3 */
};
/* Start argv[] (argv[0] the name, then key=value) from /proc/self/exe,
 * and wait for its ready answer; dies if it does not start. */
void rmb_peer_start(struct rmb_peer *pr, char *const argv[]);
void rmb_peer_send(const struct rmb_peer *pr, char cmd);	/* or die */
long long rmb_peer_answer(const struct rmb_peer *pr);	/* or die */
int rmb_peer_reap(const struct rmb_peer *pr);	/* 0: exited with 0 */
int rmb_peer_say(long long answer);	/* in the peer: fd 3; 0, or -1 */

/* ---- key=value parameters ------------------------------------------ */

struct rmb_param {
	const char *key;
	const char *choices;	/* "a|b": a string parameter; NULL: integer */
	const char *modes;	/* "a|b": modes it applies to; NULL: all */
	const char *mode_max;	/* "a:N|b:M": a tighter max in those modes */
	const char *sdef;	/* default of a string parameter */
	long long def, min, max;	/* integer default and limits */
	const char *help;
	/* filled in by rmb_parse_args() */
	long long val;
	const char *sval;
	int given;
};

/* Parses argv; a table must hold a "mode" string parameter and end with
 * an entry whose key is NULL.  Bad input: one RMB-ERROR line, exit 2.
 * "help" alone prints the table and exits 0; "params" alone prints it as
 * one "RMB-PARAM {json}" line per parameter (the harness checks a run's
 * parameters against it before any boot, and bench/README.md's tables
 * are made from it). */
void rmb_parse_args(struct rmb_param *tab, int argc, char **argv);
long long rmb_arg(const char *key);
const char *rmb_arg_str(const char *key);
int rmb_mode_is(const char *mode);

/* ---- /proc readers ---------------------------------------------------- */

struct rmb_slab {
	long long active_objs, num_objs, objsize;
};

long long rmb_meminfo_kb(const char *field);	/* -1: no such field */
long long rmb_vmstat(const char *name);		/* -1: no such line */
int rmb_slabinfo(const char *cache, struct rmb_slab *out); /* -1: absent */
const char *rmb_scheme(void);		/* /proc/rmapbench, or "unknown" */
long long rmb_rmapbench(const char *name);	/* -1: absent */
/* The number a file (sysctl, sysfs, cgroup) starts with; -1 if it cannot
 * be read or starts with none ("max" in memory.max). */
long long rmb_read_number(const char *path);
/* CPU time of the threads whose comm starts with prefix (kswapd, ksmd,
 * khugepaged): schedstat's ns where the kernel keeps them, else ticks */
long long rmb_kthread_cpu_ns(const char *prefix);
long long rmb_kswapd_cpu_ns(void);	/* of kswapd* */
/* Counts of /proc/self/pagemap over [base, base + npages pages). */
struct rmb_pagemap {
	long long present, swapped, exclusive;	/* exclusive: and present */
};
int rmb_pagemap_scan(const void *base, size_t npages,
		     struct rmb_pagemap *out);	/* -1: no pagemap */
long long rmb_swapped_pages(const void *base, size_t npages); /* -1: no pagemap */
/*
 * move_pages(2) of [base, base + n pages) to NUMA node @node, with
 * MPOL_MF_MOVE_ALL (pages other processes map move too), in the caller's
 * arrays of n entries; returns how many pages are on @node after.  Dies
 * if the call fails.
 */
long long rmb_move_pages(void *base, long long n, int node, void **addr,
			 int *nodes, int *status);
/* One whole-memory compaction (/proc/sys/vm/compact_memory): 0 or -1. */
int rmb_compact(void);
/*
 * The pageout check: MADV_PAGEOUT over [base, base + npages pages), retried
 * a few times (a page under writeback or isolated by kswapd stays); a page
 * still present and exclusively mapped after it is one whose mapping the
 * rmap walk did not find.  Retries first split the range's huge pages
 * (rmb_split_huge_range): at a PTE-mapped THP that another mm maps too,
 * 6.1's MADV_PAGEOUT gives up on the rest of that page table, exclusive
 * pages after it included (madvise_cold_or_pageout_pte_range()).  Adds the
 * exclusive pages before (candidates), those left (missed) and the swap
 * ptes after (swapped) to *out.  Returns 0, an errno of madvise, or -1
 * without pagemap.
 */
struct rmb_pageout {
	long long candidates, missed, swapped;
};
int rmb_pageout_check(void *base, size_t npages, struct rmb_pageout *out);
/*
 * Split every THP mapped in [base, base + npages pages) of this process
 * (debugfs split_huge_pages, through the rmap walk): 0, or -1 where the
 * kernel has no THP or debugfs is not mounted.
 */
int rmb_split_huge_range(const void *base, size_t npages);
/* lru_add_drain() on every CPU: madvise(MADV_PAGEOUT) of a page from each */
void rmb_drain_lru_all_cpus(void);
long long rmb_nonresident_pages(const void *base, size_t npages);

/* ---- JSON result lines ---------------------------------------------- */

#define RMB_JSON_MAX 8192
struct rmb_json {
	char buf[RMB_JSON_MAX];
	size_t len;
	int overflow;
	int depth;		/* objects opened inside the line */
};

void rmb_json_begin(struct rmb_json *j);
void rmb_json_str(struct rmb_json *j, const char *key, const char *val);
void rmb_json_int(struct rmb_json *j, const char *key, long long val);
void rmb_json_dbl(struct rmb_json *j, const char *key, double val);
void rmb_json_open(struct rmb_json *j, const char *key);  /* "key":{ */
void rmb_json_close(struct rmb_json *j);		  /* } */
/* closes what is open, prints "RMB-RESULT {...}" */
void rmb_json_end(struct rmb_json *j);
/* begin + workload, mode, record, scheme, arch, "params": {every
 * parameter that applies to the mode}, then opens "metrics": {...} with
 * page_size_bytes and low_total_kb: what follows is a metric */
void rmb_result_begin(struct rmb_json *j, const char *record);
void rmb_json_sizes(struct rmb_json *j);	/* sizeof_* from /proc/rmapbench */

struct rmb_stats {
	uint64_t min, median, p90, max;
	double mean;
};
void rmb_stats(uint64_t *v, size_t n, struct rmb_stats *s); /* sorts v */
/* prefix_min_ns, prefix_median_ns, prefix_p90_ns, prefix_max_ns,
 * prefix_mean_ns */
void rmb_json_stats(struct rmb_json *j, const char *prefix,
		    const struct rmb_stats *s);

/* ---- page patterns ---------------------------------------------------- */

/* Page idx gets a pattern made from (seed, idx): a page that is zeroed,
 * stale or from another index fails the check.  It compresses about 4:1
 * (zram and zswap store it in a quarter of a page). */
void rmb_fill(void *base, size_t npages, uint64_t seed, uint64_t first);
/* Mismatching pages; quick checks only 4 words of each page. */
size_t rmb_verify(const void *base, size_t npages, uint64_t seed,
		  uint64_t first, int quick);
/* Pages that repeat: page i gets pattern i % patterns (KSM merges them),
 * the same in every process of the same seed. */
void rmb_fill_cycle(void *base, size_t npages, uint64_t seed,
		    size_t patterns);
size_t rmb_verify_cycle(const void *base, size_t npages, uint64_t seed,
			size_t patterns);
/* Write value to /sys/kernel/mm/ksm/<knob>, or die saying the kernel
 * has no KSM.  Only in an rmapbench guest: a host's KSM is not ours. */
void rmb_ksm_knob(const char *knob, long long value);

/* ---- kernel memory snapshots ----------------------------------------- */

/* RMB_SLAB_VMA, ... and RMB_C_WALK, ...: the caches and counters of
 * rmb-iface.h, in its order */
#define RMB_SLAB_ENUM(id, name, flags) RMB_SLAB_##id,
#define RMB_CTR_ENUM(id, name, unit, flags) RMB_C_##id,
#define RMB_SUM_ENUM(id, line, field) RMB_C_##id,
enum { RMB_SLABS(RMB_SLAB_ENUM) RMB_NSLAB };
enum { RMB_COUNTERS(RMB_CTR_ENUM) RMB_NVMSTAT };
/* the sums of /proc/rmapbench follow the vmstat counters in ctr[] */
enum { RMB_C_SUMS_ = RMB_NVMSTAT - 1, RMB_SUMS(RMB_SUM_ENUM) RMB_NCTR };
#undef RMB_SLAB_ENUM
#undef RMB_CTR_ENUM
#undef RMB_SUM_ENUM

struct rmb_snap {
	uint64_t t_ns;
	long long slab_objs[RMB_NSLAB];		/* active_objs */
	long long slab_bytes[RMB_NSLAB];	/* active_objs * objsize */
	/* free pages counted exactly: the zones' free counts with every
	 * CPU's vmstat diffs folded, plus the per-cpu lists (meminfo's
	 * MemFree/LowFree/HighFree leave both out; those are the fallback) */
	long long mem_free_kb, low_free_kb, high_free_kb;
	long long page_tables_kb, swap_free_kb;
	long long ctr[RMB_NCTR];	/* vmstat and sums, 0 if absent */
};

/* The cache name of RMB_SLAB_<id>. */
const char *rmb_slab_name(int i);
/*
 * The rmap caches' object counts (the RMB_F_RMAP caches of rmb-iface.h;
 * -1 for the other caches and for one this kernel lacks), read every poll_ms
 * until none has changed for still_ms: objects freed through call_rcu()
 * (anonmm's) are gone by then, a leaked one never is.  Returns 0, or -1
 * if they did not hold still within timeout_ms (counts: the last read).
 */
int rmb_slabs_still(long long counts[RMB_NSLAB], unsigned still_ms,
		    unsigned poll_ms, unsigned timeout_ms);

void rmb_snap_take(struct rmb_snap *s);
void rmb_snap_delta(struct rmb_snap *d, const struct rmb_snap *a,
		    const struct rmb_snap *b);	/* d = b - a */
long long rmb_free_kb(const struct rmb_snap *s); /* LowFree, else MemFree */
/* absolute: slab_<cache>_bytes, slab_<cache>_objs_count, page_tables_kb,
 * mem_free_kb, low_free_kb, high_free_kb */
void rmb_json_snap(struct rmb_json *j, const struct rmb_snap *s);
/* a delta: slab_<cache>_delta_bytes, slab_<cache>_delta_objs_count,
 * slab_total_delta_bytes, page_tables_delta_kb, memfree_consumed_kb,
 * lowfree_consumed_kb, and every counter (anon_rmap_walk_count, ...) */
void rmb_json_delta(struct rmb_json *j, const struct rmb_snap *d);
/* a delta divided by n: slab_<cache>_per_<unit>_bytes, ... */
void rmb_json_per(struct rmb_json *j, const struct rmb_snap *d,
		  const char *unit, double n);
/* rmb_result_begin, after taking *now and *d = *now - *base: for lines
 * that report the state and the growth since a base snapshot. */
void rmb_result_since(struct rmb_json *j, const char *record,
		      const struct rmb_snap *base, struct rmb_snap *now,
		      struct rmb_snap *d);

/* ---- memory and address-space checks (exit 2 on failure) ------------- */

/* MemAvailable (+ SwapFree), no more than the room below memory.max of
 * the process's memory cgroup when it has a limit */
long long rmb_avail_kb(int with_swap);
void rmb_need_mem_kb(long long kb, int with_swap, const char *what);
void rmb_need_addr_space(uint64_t bytes, const char *what);
void *rmb_reserve(size_t bytes);	/* PROT_NONE; NULL on failure */
/* A page table's span: one PMD on i386 (2-level paging), two on x86_64 */
#define RMB_TABLE_SPAN ((size_t)4 << 20)
/* A PROT_NONE hole of bytes at offset past an RMB_TABLE_SPAN boundary,
 * with at least a span reserved on either side: a region placed there has
 * no neighbour to merge with, and moves between two such holes may move
 * whole page tables.  NULL on failure. */
void *rmb_hole(size_t bytes, size_t offset);
/* Unmaps the hole and its reservation, whatever is mapped there now. */
void rmb_hole_free(void *hole, size_t bytes, size_t offset);
void *rmb_map_anon(void *addr, size_t bytes); /* RW, MAP_FIXED if addr */
/*
 * Balloon, for a child process: touch kb of new anonymous memory in maps
 * of chunk bytes, to push other pages out, then _exit(0).  Stops early
 * when a map fails or, if swapfree_floor_kb > 0, when SwapFree drops
 * under it (checked every 4 MB).
 */
void rmb_balloon(long long kb, size_t chunk, long long swapfree_floor_kb)
	__attribute__((noreturn));

/* ---- a set of single-page VMAs that cannot merge ----------------------- */

/* kind "split": adjacent pages, odd ones turned PROT_READ after being
 * written (they share one anon_vma on the anon_vma kernel); kind "gap":
 * each page followed by an unmapped page (an anon_vma each). */
struct rmb_vmaset {
	char *start, *base;
	size_t cap, n, stride, len;
	int gap;
	uint64_t seed;
};

int rmb_vmaset_reserve(struct rmb_vmaset *s, size_t cap, const char *kind,
		       uint64_t seed);		/* 0 or an errno */
int rmb_vmaset_add(struct rmb_vmaset *s);	/* 0 or an errno */
size_t rmb_vmaset_grow(struct rmb_vmaset *s, size_t n, int *err);
size_t rmb_vmaset_verify(const struct rmb_vmaset *s, int quick);

/* ---- a family of forked processes, paused on a pipe ------------------ */

enum { RMB_REP_READY = 1, RMB_REP_DONE = 2 };

struct rmb_report {		/* one pipe write, atomic (< PIPE_BUF) */
	int32_t kind, idx;
	int64_t checked_pages, mismatch_pages;
	int64_t majflt, minflt, utime_ns, stime_ns, value;
};

struct rmb_family {
	int go[2], res[2];
	pid_t *pids;
	int n, max;
	pid_t pgid;		/* kill(-pgid) on abort if > 0 */
	int reaped, abnormal;
};

void rmb_family_open(struct rmb_family *f, int max);
pid_t rmb_family_fork(struct rmb_family *f); /* 0 in the child */
void rmb_family_detach(struct rmb_family *f);	/* close every pipe end */
void rmb_family_wait_go(struct rmb_family *f);	/* child: until go */
void rmb_family_send(struct rmb_family *f, int kind, int idx,
		     int64_t checked, int64_t bad, int64_t value);
void rmb_family_go(struct rmb_family *f);	/* parent: release all */
/* Parent: read reports of kind until expect arrived, EOF, or a child
 * ended abnormally; sums them into sum; returns how many arrived. */
int rmb_family_collect(struct rmb_family *f, int kind, int expect,
		       struct rmb_report *sum);
int rmb_family_finish(struct rmb_family *f);	/* reap all; # abnormal */
void rmb_family_kill(struct rmb_family *f);
/* Child body: wait for go, verify the set, report DONE, _exit(0). */
void rmb_vmaset_child(struct rmb_family *f, const struct rmb_vmaset *s,
		      int idx, int quick) __attribute__((noreturn));

#endif
