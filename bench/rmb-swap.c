/*
 * rmb-swap: a family of processes whose working set exceeds memory.
 *
 * This process (the supervisor, a child subreaper) forks a leader.  The
 * leader writes the shared set (shared_pct % of mb) and forks N members,
 * which keep those pages COW-shared; with exit_parent=1 the leader then
 * exits, so the shared pages belong to an exited mm (orphans).  Each
 * member writes its private set ((mb - shared) / N), reports ready, and
 * on "go" makes `passes` passes: verify the shared set, verify and rewrite
 * its private set.  The supervisor samples /proc/vmstat around the fill
 * and the passes.  Without swap it still runs (mb must then fit in RAM)
 * and reports 0 swapped pages.
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "family", .sdef = "family",
	  .help = "the only mode" },
	{ .key = "N", .def = 4, .min = 1, .max = 1024,
	  .help = "member processes (forked from one leader)" },
	{ .key = "mb", .def = 256, .min = 1, .max = 1 << 20,
	  .help = "total working set in MB: the shared set once plus all "
		  "private sets; must fit in MemAvailable + SwapFree, and one "
		  "member's sets in its address space (else exit 2)" },
	{ .key = "shared_pct", .def = 50, .min = 0, .max = 100,
	  .help = "part of mb written by the leader before forking, "
		  "COW-shared by all members" },
	{ .key = "exit_parent", .def = 0, .min = 0, .max = 1,
	  .help = "1: the leader exits right after forking (the shared "
		  "pages belong to an exited mm: orphans); 0: it stays, idle" },
	{ .key = "passes", .def = 2, .min = 0, .max = 1000,
	  .help = "passes of every member: verify the shared set, verify "
		  "and rewrite its private set" },
	{ .key = "seed", .def = 1, .min = 0, .max = 2147483647,
	  .help = "seed of the page patterns" },
	{ .key = NULL },
};

struct plan {
	size_t shared_pages, private_pages;	/* private: per member */
	int n, passes, exit_parent;
	uint64_t seed;
};

struct result {
	struct rmb_snap s0, s_ready, s_done, s_end;
	struct rmb_report ready, done;
	long long kswapd0, kswapd1;
	uint64_t t0, t_ready, t_done;
	int got_ready, got_done, abnormal;
};

static uint64_t private_seed(const struct plan *p, int idx, int pass)
{
	return p->seed + 1000003ull * (uint64_t)(idx + 1) + 7919ull * pass;
}

static char *map_or_die(size_t pages, const char *what)
{
	char *m;

	if (pages == 0)
		return NULL;
	m = rmb_map_anon(NULL, pages * rmb_page);
	if (!m)
		rmb_die(RMB_EXIT_FAIL, "mmap of the %s set (%zu pages): %s",
			what, pages, strerror(errno));
	return m;
}

/* ---- members and leader (children) ---------------------------------- */

static void member(struct rmb_family *f, const struct plan *p,
		   const char *shared, int idx)
{
	char *priv = map_or_die(p->private_pages, "private");
	size_t sp = p->shared_pages, pp = p->private_pages, bad = 0;
	long long checked = 0;
	int pass;

	rmb_fill(priv, pp, private_seed(p, idx, 0), 0);
	rmb_family_send(f, RMB_REP_READY, idx, 0, 0, 0);
	rmb_family_wait_go(f);
	for (pass = 1; pass <= p->passes; pass++) {
		bad += rmb_verify(shared, sp, p->seed, 0, 0);
		bad += rmb_verify(priv, pp, private_seed(p, idx, pass - 1), 0, 0);
		rmb_fill(priv, pp, private_seed(p, idx, pass), 0);
		checked += (long long)(sp + pp);
	}
	bad += rmb_verify(shared, sp, p->seed, 0, 0);
	bad += rmb_verify(priv, pp, private_seed(p, idx, p->passes), 0, 0);
	checked += (long long)(sp + pp);
	rmb_family_send(f, RMB_REP_DONE, idx, checked, (int64_t)bad, 0);
	_exit(0);
}

/* Reap the members; one that failed takes the whole group down (the
 * others may be waiting for go), which the supervisor then sees. */
static void leader_wait(void) __attribute__((noreturn));
static void leader_wait(void)
{
	int st;

	for (;;) {
		if (wait(&st) < 0) {
			if (errno == EINTR)
				continue;
			_exit(0);
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			kill(0, SIGKILL);
	}
}

static void leader(struct rmb_family *f, const struct plan *p)
{
	char *shared = map_or_die(p->shared_pages, "shared");

	setpgid(0, 0);
	rmb_fill(shared, p->shared_pages, p->seed, 0);
	for (int i = 0; i < p->n; i++) {
		pid_t pid = rmb_family_fork(f);

		if (pid == 0)
			member(f, p, shared, i);
		if (pid < 0) {
			rmb_family_kill(f);
			rmb_die(RMB_EXIT_FAIL, "leader: fork %d of %d: %s",
				i + 1, p->n, strerror(errno));
		}
	}
	rmb_family_detach(f);
	if (p->exit_parent)
		_exit(0);
	leader_wait();
}

/* ---- supervisor ------------------------------------------------------- */

static void plan_make(struct plan *p)
{
	uint64_t total = (uint64_t)rmb_arg("mb") << 20;
	uint64_t shared = total * (uint64_t)rmb_arg("shared_pct") / 100;

	p->n = (int)rmb_arg("N");
	p->passes = (int)rmb_arg("passes");
	p->exit_parent = (int)rmb_arg("exit_parent");
	p->seed = (uint64_t)rmb_arg("seed");
	p->shared_pages = (size_t)(shared / rmb_page);
	p->private_pages = (size_t)((total - shared) / rmb_page /
				    (uint64_t)p->n);
	rmb_need_mem_kb((long long)(total >> 10) + 8192 + 256LL * p->n, 1,
			"the working set mb");
	rmb_need_addr_space((uint64_t)(p->shared_pages + p->private_pages) *
			    rmb_page, "one member (shared + private set)");
}

static void abort_run(struct rmb_family *f, const char *what)
{
	rmb_family_kill(f);
	rmb_family_finish(f);
	rmb_die(RMB_EXIT_FAIL, "%s: a family member failed or was killed "
		"(out of memory?)", what);
}

static void run(struct rmb_family *f, const struct plan *p, struct result *r)
{
	pid_t pid;

	rmb_family_open(f, 1);
	r->kswapd0 = rmb_kswapd_cpu_ns();
	rmb_snap_take(&r->s0);
	r->t0 = rmb_now_ns();
	pid = rmb_family_fork(f);
	if (pid == 0)
		leader(f, p);
	if (pid < 0)
		rmb_die(RMB_EXIT_FAIL, "fork of the leader: %s", strerror(errno));
	setpgid(pid, pid);
	f->pgid = pid;
	r->got_ready = rmb_family_collect(f, RMB_REP_READY, p->n, &r->ready);
	r->t_ready = rmb_now_ns();
	if (r->got_ready < p->n)
		abort_run(f, "fill");
	rmb_snap_take(&r->s_ready);
	rmb_family_go(f);
	r->got_done = rmb_family_collect(f, RMB_REP_DONE, p->n, &r->done);
	r->t_done = rmb_now_ns();
	rmb_snap_take(&r->s_done);
	if (r->got_done < p->n)
		rmb_family_kill(f);
	r->abnormal = rmb_family_finish(f);
	rmb_snap_take(&r->s_end);
	r->kswapd1 = rmb_kswapd_cpu_ns();
}

static double per_s(long long count, uint64_t ns)
{
	return ns ? (double)count * 1e9 / (double)ns : 0;
}

static double ratio(long long a, long long b)
{
	return b > 0 ? (double)a / (double)b : 0;
}

static void report_swap(struct rmb_json *j, const struct result *r)
{
	struct rmb_snap fill, passes, all;
	uint64_t fill_ns = r->t_ready - r->t0, passes_ns = r->t_done - r->t_ready;
	uint64_t all_ns = r->t_done - r->t0;
	long long out;

	rmb_snap_delta(&fill, &r->s0, &r->s_ready);
	rmb_snap_delta(&passes, &r->s_ready, &r->s_done);
	rmb_snap_delta(&all, &r->s0, &r->s_done);
	out = all.ctr[RMB_C_PSWPOUT];
	rmb_json_int(j, "fill_ns", (long long)fill_ns);
	rmb_json_int(j, "passes_ns", (long long)passes_ns);
	rmb_json_int(j, "elapsed_ns", (long long)all_ns);
	rmb_json_int(j, "fill_pswpout_pages", fill.ctr[RMB_C_PSWPOUT]);
	rmb_json_int(j, "passes_pswpout_pages", passes.ctr[RMB_C_PSWPOUT]);
	rmb_json_int(j, "passes_pswpin_pages", passes.ctr[RMB_C_PSWPIN]);
	rmb_json_dbl(j, "swapout_per_s", per_s(out, all_ns));
	rmb_json_dbl(j, "passes_swapout_per_s",
		     per_s(passes.ctr[RMB_C_PSWPOUT], passes_ns));
	rmb_json_dbl(j, "anon_rmap_walk_per_swapout_count",
		     ratio(all.ctr[RMB_C_WALK], out));
	rmb_json_dbl(j, "anon_rmap_visit_per_swapout_count",
		     ratio(all.ctr[RMB_C_VISIT], out));
	rmb_json_dbl(j, "anon_rmap_pte_per_swapout_count",
		     ratio(all.ctr[RMB_C_PTE], out));
	/* both kernels time each anon rmap walk (patch 0001): the mean
	 * walk is the scheme's path under reclaim, on the icount clock its
	 * instruction count, where the swap-out rate also waits on the disk
	 */
	rmb_json_dbl(j, "walk_mean_ns", ratio(all.ctr[RMB_C_WALK_NS],
					      all.ctr[RMB_C_WALK_TIMED]));
	/* the walks switched out, timed apart: their share and mean */
	rmb_json_dbl(j, "walk_slept_per_walk_count",
		     ratio(all.ctr[RMB_C_WALK_SLEPT],
				 all.ctr[RMB_C_WALK_TIMED] +
				 all.ctr[RMB_C_WALK_SLEPT]));
	rmb_json_dbl(j, "walk_slept_mean_ns",
		     ratio(all.ctr[RMB_C_WALK_SLEPT_NS],
			   all.ctr[RMB_C_WALK_SLEPT]));
	rmb_json_int(j, "kswapd_cpu_ns", r->kswapd1 - r->kswapd0);
	rmb_json_delta(j, &all);
}

static void report(const struct plan *p, const struct result *r)
{
	struct rmb_json j;
	struct rmb_snap leak;
	long long swap = rmb_meminfo_kb("SwapTotal");

	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "members_count", p->n);
	rmb_json_int(&j, "shared_pages", (long long)p->shared_pages);
	rmb_json_int(&j, "private_per_member_pages", (long long)p->private_pages);
	rmb_json_int(&j, "working_set_pages", (long long)(p->shared_pages +
				     p->private_pages * (size_t)p->n));
	rmb_json_int(&j, "swap_total_kb", swap < 0 ? 0 : swap);
	report_swap(&j, r);
	rmb_json_int(&j, "members_majflt_count", r->done.majflt);
	rmb_json_int(&j, "members_minflt_count", r->done.minflt);
	rmb_json_int(&j, "members_user_ns", r->done.utime_ns);
	rmb_json_int(&j, "members_sys_ns", r->done.stime_ns);
	rmb_json_int(&j, "verified_pages", r->done.checked_pages);
	rmb_json_int(&j, "verify_mismatch_pages", r->done.mismatch_pages);
	rmb_snap_delta(&leak, &r->s0, &r->s_end);
	rmb_json_int(&j, "after_exit_slab_anon_vma_delta_objs_count",
		     leak.slab_objs[RMB_SLAB_ANON_VMA]);
	rmb_json_int(&j, "after_exit_slab_anonmm_delta_objs_count",
		     leak.slab_objs[RMB_SLAB_ANONMM]);
	rmb_json_end(&j);
}

int main(int argc, char **argv)
{
	static struct rmb_family f;
	static struct plan p;
	static struct result r;
	int failed;

	rmb_init("swap");
	rmb_parse_args(params, argc, argv);
	plan_make(&p);
	prctl(PR_SET_CHILD_SUBREAPER, 1);	/* orphans come back to us */
	run(&f, &p, &r);
	report(&p, &r);
	failed = rmb_check_mismatch(r.done.mismatch_pages,
				    r.done.checked_pages, "the family");
	if (r.got_done < p.n || r.abnormal) {
		rmb_error("%d of %d members did not report, %d processes ended "
			  "abnormally", p.n - r.got_done, p.n, r.abnormal);
		failed = 1;
	}
	return failed;
}
