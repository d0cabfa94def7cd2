/*
 * rmb-collapse: collapsing a bundle's base pages into THPs.
 *
 * A parent forks W workers (a bundle: one anonmm on anonmm, one anon_vma
 * root on anon_vma).  With THP off ("never": no huge faults, khugepaged
 * stopped) each worker maps mb MB, 2 MB aligned, writes it (base pages
 * of its own), and maps `holes` 2 MB vmas it never touches, each between
 * unmapped gaps so that none merges.  Then:
 *
 * mode=khugepaged  THP goes back to "always" with khugepaged scanning
 *                  every 10 ms at its default pages_to_scan; every worker
 *                  madvises its data MADV_HUGEPAGE (which enters its mm
 *                  on khugepaged's list), and the parent polls
 *                  AnonHugePages every millisecond until it has grown
 *                  by all the data or limit_s passes: THPs made per
 *                  second of guest time, khugepaged's full scans and CPU.
 *                  anon_vma passes over a vma never faulted (no
 *                  anon_vma), anonmm scans it (kernels/anonmm 0026: any
 *                  private vma may have anon pages), 512 pages of
 *                  pages_to_scan per 2 MB hole.
 * mode=madvise     every worker collapses its own data with MADV_COLLAPSE,
 *                  2 MB a call (collapse_huge_page() alone, no scan), THP
 *                  still "never" (MADV_COLLAPSE ignores it), no holes:
 *                  THPs collapsed per second from the word to the last
 *                  worker's report.
 *
 * Memory is compacted just before the word: a collapse allocates its THP
 * on the node of its pages alone, and a failed allocation sleeps
 * alloc_sleep_millisecs.  Then every worker verifies its data, and THP's
 * settings are put back as they were (at exit too).  On a host (no
 * /proc/rmapbench) the THP settings are left alone: the workers map,
 * fill (madvise: collapse with the host's MADV_COLLAPSE, where it has
 * one) and verify, and only the time to their reports is taken.  One
 * "summary" line.
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define THP "/sys/kernel/mm/transparent_hugepage/"
#define KHUGEPAGED THP "khugepaged/"
#define HUGE_SIZE ((size_t)2 << 20)
#define POLL_US 1000
/* a worker's report that its part is done: its MADV_COLLAPSEs that
 * worked (mode=madvise), or its MADV_HUGEPAGE */
#define REP_COLLAPSED 3

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "khugepaged|madvise", .sdef = "khugepaged",
	  .help = "khugepaged: khugepaged collapses the data; madvise: each "
		  "worker collapses its own with MADV_COLLAPSE" },
	{ .key = "W", .def = 8, .min = 1, .max = 4096,
	  .help = "workers forked from the parent (the bundle)" },
	{ .key = "mb", .def = 8, .min = 2, .max = 1 << 16,
	  .help = "MB of data of each worker, in whole 2 MB" },
	{ .key = "holes", .modes = "khugepaged", .def = 0, .min = 0,
	  .max = 16384,
	  .help = "2 MB vmas each worker maps and never touches" },
	{ .key = "limit_s", .modes = "khugepaged", .def = 120, .min = 1,
	  .max = 3600,
	  .help = "guest seconds khugepaged gets" },
	{ .key = "seed", .def = 1, .min = 0, .max = 2147483647,
	  .help = "seed of the page patterns" },
	{ .key = NULL },
};

struct plan {
	size_t pages, huge;	/* of one worker's data */
	int w, holes, guest, madv;
	uint64_t seed;
	int verify_go[2];	/* closed by the parent: verify now */
};

/* ---- THP's settings ---------------------------------------------------- */

/* the settings the run changes, and their values before it */
struct knob {
	const char *path;
	char old[64];
};

static struct knob knobs[] = {
	{ THP "enabled", "" },
	{ KHUGEPAGED "scan_sleep_millisecs", "" },
	{ KHUGEPAGED "alloc_sleep_millisecs", "" },
};

enum { K_ENABLED, K_SCAN_SLEEP, K_ALLOC_SLEEP, NKNOBS };

static int knobs_saved;		/* knobs[].old hold what to put back */
static void knobs_restore(void);

static void knob_set(int k, const char *value)
{
	if (rmb_write_file(knobs[k].path, value) != 0)
		rmb_die(RMB_EXIT_FAIL, "writing '%s' to %s: %s (rmb-collapse "
			"needs THP: the distro profile)", value, knobs[k].path,
			strerror(errno));
}

/* "always [madvise] never" -> "madvise" */
static void knobs_save(void)
{
	for (int k = 0; k < NKNOBS; k++) {
		FILE *f = fopen(knobs[k].path, "r");
		char buf[64] = "", *a, *b;

		if (!f || !fgets(buf, sizeof(buf), f))
			rmb_die(RMB_EXIT_FAIL, "reading %s: %s (rmb-collapse "
				"needs THP: the distro profile)",
				knobs[k].path, strerror(errno));
		fclose(f);
		a = strchr(buf, '[');
		b = a ? strchr(a, ']') : NULL;
		if (a && b) {
			*b = '\0';
			memmove(buf, a + 1, strlen(a + 1) + 1);
		}
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(knobs[k].old, sizeof(knobs[k].old), "%s", buf);
	}
	knobs_saved = 1;
	atexit(knobs_restore);
}

/* At exit too (atexit), so that a run that dies leaves THP as it was:
 * once, and without dying on a failed write. */
static void knobs_restore(void)
{
	if (!knobs_saved)
		return;
	knobs_saved = 0;
	for (int k = NKNOBS - 1; k >= 0; k--)
		if (rmb_write_file(knobs[k].path, knobs[k].old) != 0)
			rmb_error("restoring %s to '%s': %s", knobs[k].path,
				  knobs[k].old, strerror(errno));
}

/* ---- a worker ----------------------------------------------------------- */

/*
 * The data at a 2 MB boundary, then the holes, each 2 MB past the one
 * before: everything else of the reservation is unmapped again, so no
 * two vmas touch.
 */
static char *worker_map(const struct plan *p)
{
	size_t data = p->pages * rmb_page;
	size_t len = HUGE_SIZE + data + (size_t)p->holes * 2 * HUGE_SIZE;
	char *res = rmb_reserve(len), *start, *end;

	if (!res)
		return NULL;
	start = (char *)(((uintptr_t)res + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1));
	end = res + len;
	if (!rmb_map_anon(start, data))
		return NULL;
	for (int i = 0; i < p->holes; i++)
		if (!rmb_map_anon(start + data + (size_t)(2 * i + 1) *
				  HUGE_SIZE, HUGE_SIZE))
			return NULL;
	/* the head before the boundary, the gaps, the tail (never empty) */
	munmap(res, (size_t)(start - res));
	for (int i = 0; i < p->holes; i++)
		munmap(start + data + (size_t)(2 * i) * HUGE_SIZE, HUGE_SIZE);
	munmap(start + data + (size_t)(2 * p->holes) * HUGE_SIZE,
	       (size_t)(end - start) - data - (size_t)(2 * p->holes) *
	       HUGE_SIZE);
	return start;
}

/* MADV_COLLAPSE of each 2 MB: the collapses that worked.  Not timed
 * each: on one vCPU a call's time is also its siblings'. */
static int64_t worker_collapse(const struct plan *p, char *data)
{
	int64_t done = 0;

	for (size_t i = 0; i < p->huge; i++)
		done += madvise(data + i * HUGE_SIZE, HUGE_SIZE,
				MADV_COLLAPSE) == 0;
	return done;
}

static void __attribute__((noreturn))
worker(struct rmb_family *f, const struct plan *p, int idx)
{
	uint64_t first = (uint64_t)idx * p->pages;
	int64_t done = 0;
	char *data = worker_map(p), byte;
	size_t bad;

	close(p->verify_go[1]);
	if (!data) {
		rmb_error("worker %d: mapping its data and %d holes: %s", idx,
			  p->holes, strerror(errno));
		_exit(RMB_EXIT_FAIL);
	}
	rmb_fill(data, p->pages, p->seed, first);
	rmb_family_send(f, RMB_REP_READY, idx, 0, 0, 0);
	rmb_family_wait_go(f);
	if (p->madv)
		done = worker_collapse(p, data);
	else if (p->guest && madvise(data, p->pages * rmb_page,
				     MADV_HUGEPAGE) != 0)
		rmb_error("worker %d: madvise(MADV_HUGEPAGE): %s", idx,
			  strerror(errno));
	rmb_family_send(f, REP_COLLAPSED, idx, done, 0, 0);
	while (read(p->verify_go[0], &byte, 1) < 0 && errno == EINTR)
		;
	bad = rmb_verify(data, p->pages, p->seed, first, 0);
	rmb_family_send(f, RMB_REP_DONE, idx, (int64_t)p->pages,
			(int64_t)bad, 0);
	_exit(0);
}

/* ---- the parent ------------------------------------------------------- */

struct result {
	struct rmb_report ready, collapsed, done;
	struct rmb_snap s_go, s_end;
	uint64_t ns;		/* from the word to the last collapse */
	long long full_scans, pages_collapsed, cpu_ns;
	long long huge_go_kb, huge_kb;	/* AnonHugePages at the word, after */
	int got_collapsed, got_done, abnormal, timed_out;
};

/* khugepaged's own counters (0 where absent: a host) */
static long long khugepaged_number(const char *name)
{
	char path[128];
	long long v;

	snprintf(path, sizeof(path), KHUGEPAGED "%s", name);
	v = rmb_read_number(path);
	return v < 0 ? 0 : v;
}

/* Until AnonHugePages has grown by want_kb since the word (at t0), or
 * limit_s: 0, or -1; r->ns the time to then. */
static int wait_collapsed(long long want_kb, struct result *r, uint64_t t0)
{
	uint64_t limit = (uint64_t)rmb_arg("limit_s") * 1000000000ULL;
	int late = 0;

	while (rmb_meminfo_kb("AnonHugePages") - r->huge_go_kb < want_kb &&
	       !late) {
		usleep(POLL_US);
		late = rmb_now_ns() - t0 > limit;
	}
	r->ns = rmb_now_ns() - t0;
	return late ? -1 : 0;
}

static void collapse(struct rmb_family *f, const struct plan *p,
		     struct result *r)
{
	long long scans = khugepaged_number("full_scans");
	long long pages = khugepaged_number("pages_collapsed");
	long long want_kb = (long long)p->huge * p->w * (HUGE_SIZE >> 10);
	long long cpu0 = 0;
	uint64_t t0;

	/* free 2 MB blocks on the data's node: a collapse allocates its
	 * THP there alone, and a failure sleeps alloc_sleep_millisecs */
	if (p->guest)
		rmb_compact();
	if (p->guest && !p->madv) {
		knob_set(K_SCAN_SLEEP, "10");
		knob_set(K_ALLOC_SLEEP, "10");
		knob_set(K_ENABLED, "always");
		cpu0 = rmb_kthread_cpu_ns("khugepaged");
	}
	r->huge_go_kb = rmb_meminfo_kb("AnonHugePages");
	rmb_snap_take(&r->s_go);
	t0 = rmb_now_ns();
	rmb_family_go(f);
	r->got_collapsed = rmb_family_collect(f, REP_COLLAPSED, p->w,
					      &r->collapsed);
	if (p->guest && !p->madv && r->got_collapsed == p->w)
		r->timed_out = wait_collapsed(want_kb, r, t0) != 0;
	else
		r->ns = rmb_now_ns() - t0;
	rmb_snap_take(&r->s_end);
	r->full_scans = khugepaged_number("full_scans") - scans;
	r->pages_collapsed = khugepaged_number("pages_collapsed") - pages;
	r->cpu_ns = p->madv ? 0 : rmb_kthread_cpu_ns("khugepaged") - cpu0;
	r->huge_kb = rmb_meminfo_kb("AnonHugePages");
}

static void report(const struct plan *p, const struct result *r)
{
	struct rmb_snap d;
	struct rmb_json j;
	/* THPs made: AnonHugePages' growth (every process's, as the
	 * collapse counters are) */
	long long thps = (r->huge_kb - r->huge_go_kb) /
		(long long)(HUGE_SIZE >> 10);

	rmb_snap_delta(&d, &r->s_go, &r->s_end);
	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "data_thp_count", (long long)p->huge * p->w);
	rmb_json_int(&j, "collapsed_count", thps);
	rmb_json_int(&j, "collapse_alloc_count",
		     r->s_end.ctr[RMB_C_THP_COLLAPSE] -
		     r->s_go.ctr[RMB_C_THP_COLLAPSE]);
	rmb_json_int(&j, "anon_huge_kb", r->huge_kb);
	rmb_json_int(&j, "timed_out_count", r->timed_out);
	rmb_json_int(&j, "elapsed_ns", (long long)r->ns);
	rmb_json_dbl(&j, "collapsed_per_s", r->ns ? (double)thps * 1e9 /
		     (double)r->ns : 0);
	rmb_json_int(&j, "full_scans_count", r->full_scans);
	rmb_json_int(&j, "pages_collapsed_count", r->pages_collapsed);
	rmb_json_dbl(&j, "khugepaged_per_thp_ns", thps ? (double)r->cpu_ns /
		     (double)thps : 0);
	rmb_json_int(&j, "madvise_collapsed_count", r->collapsed.checked_pages);
	rmb_json_int(&j, "verified_pages", r->done.checked_pages);
	rmb_json_int(&j, "verify_mismatch_pages", r->done.mismatch_pages);
	rmb_json_delta(&j, &d);
	rmb_json_end(&j);
}

static void plan_make(struct plan *p)
{
	p->w = (int)rmb_arg("W");
	if (rmb_arg("mb") % 2)
		rmb_die(RMB_EXIT_USAGE, "mb=%lld: whole 2 MB only (a THP "
			"each)", rmb_arg("mb"));
	p->huge = (size_t)rmb_arg("mb") / 2;
	p->pages = p->huge * (HUGE_SIZE / rmb_page);
	p->holes = (int)rmb_arg("holes");
	p->seed = (uint64_t)rmb_arg("seed");
	p->madv = rmb_mode_is("madvise");
	p->guest = strcmp(rmb_scheme(), "unknown") != 0;
	rmb_need_mem_kb((long long)p->w * (long long)(p->pages * rmb_page >> 10)
			* 2 + 16384, 0, "the workers' data, and as much again "
			"for the collapses' new THPs");
	rmb_need_addr_space((uint64_t)(p->huge + 2 * (size_t)p->holes + 1) *
			    HUGE_SIZE, "a worker's data and holes");
	if (pipe(p->verify_go) != 0)
		rmb_die(RMB_EXIT_FAIL, "pipe: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	struct rmb_family f;
	struct result r = { 0 };
	struct plan p;

	rmb_init("collapse");
	rmb_parse_args(params, argc, argv);
	plan_make(&p);
	if (p.guest) {
		knobs_save();
		knob_set(K_ENABLED, "never");
	}
	rmb_family_open(&f, p.w);
	for (int i = 0; i < p.w; i++) {
		pid_t pid = rmb_family_fork(&f);

		if (pid == 0)
			worker(&f, &p, i);
		if (pid < 0)
			rmb_die(RMB_EXIT_FAIL, "fork of worker %d: %s", i,
				strerror(errno));
	}
	close(p.verify_go[0]);
	if (rmb_family_collect(&f, RMB_REP_READY, p.w, &r.ready) == p.w) {
		collapse(&f, &p, &r);
		close(p.verify_go[1]);
		r.got_done = rmb_family_collect(&f, RMB_REP_DONE, p.w,
						&r.done);
	}
	if (r.got_done < p.w)
		rmb_family_kill(&f);
	r.abnormal = rmb_family_finish(&f);
	knobs_restore();
	report(&p, &r);
	if (r.got_collapsed < p.w || r.got_done < p.w || r.abnormal)
		rmb_error("%d of %d workers reported, %d ended abnormally",
			  r.got_done, p.w, r.abnormal);
	if (r.timed_out)
		rmb_error("khugepaged collapsed too little in limit_s=%lld",
			  rmb_arg("limit_s"));
	return rmb_check_mismatch(r.done.mismatch_pages,
				  r.done.checked_pages, "the workers") ||
		r.got_collapsed < p.w || r.got_done < p.w || r.abnormal ||
		r.timed_out;
}
