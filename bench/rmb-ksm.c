/*
 * rmb-ksm: what KSM costs each scheme: ksmd merging duplicate pages, then
 * reclaim walking the KSM pages it made.
 *
 * A bundle (a parent and `workers` children forked from it) and `procs`
 * unrelated processes (this program exec'd again, mode peer: bundles and
 * anon_vma roots of their own) each map `pages` pages whose contents
 * repeat `patterns` patterns, madvised MERGEABLE, in a memory cgroup of
 * their own.  pattern=cow: every worker writes its own copy of the
 * parent's pages (the same contents), so each KSM page ends up mapped
 * once by every process; pattern=shared: the workers map the parent's
 * pages as fork left them, and the pages to merge are mapped by the
 * whole bundle.  anon_vma makes such a page a KSM page in place; anonmm
 * does not (kernels/anonmm 0035: ksm_merge_shared_skip counts it), so
 * its merging stops at the peers' pages there.
 *
 * Then ksmd runs (run 1, every mergeable page each pass) until it has
 * merged every duplicate or four full scans passed with no new merge, or
 * limit_s: the mappings merged, the pages saved, the guest time to the
 * last merge, and ksmd's CPU time.  Then (reclaim=1) the cgroup's memory.reclaim pushes out
 * every page the processes have, KSM pages through rmap_walk_ksm():
 * the KSM walks, their mean time (/proc/rmapbench's ksm_rmap_walk_*)
 * and the visits per walk (of KSM and other anon pages alike: the
 * processes' few other pages are reclaimed too).  Every process verifies its pages at the
 * end, and ksmd unmerges everything (run 2) and stops.
 *
 * Needs a kernel with KSM and cgroup v2's memory controller (the distro
 * profile).  On a host (no /proc/rmapbench) the processes are set up and
 * verified, and nothing of the kernel's is touched: nothing is merged.
 * One "summary" line.
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define KSM "/sys/kernel/mm/ksm/"
#define CGROUP "/sys/fs/cgroup/"
#define GROUP CGROUP "rmb-ksm/"

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "merge|peer", .sdef = "merge",
	  .help = "merge: the run; peer: an unrelated process of it" },
	{ .key = "workers", .def = 8, .min = 0, .max = 4096,
	  .help = "children forked from the parent (the bundle)" },
	{ .key = "procs", .def = 4, .min = 0, .max = 256,
	  .help = "unrelated processes (exec'd) with the same pages" },
	{ .key = "pages", .def = 256, .min = 1, .max = 1 << 20,
	  .help = "pages each process maps" },
	{ .key = "patterns", .def = 16, .min = 1, .max = 1 << 20,
	  .help = "distinct page contents among them" },
	{ .key = "pattern", .choices = "cow|shared", .sdef = "cow",
	  .help = "cow: workers write their own copies; shared: fork's" },
	{ .key = "reclaim", .def = 1, .min = 0, .max = 1,
	  .help = "1: reclaim the cgroup's pages after merging" },
	{ .key = "limit_s", .def = 120, .min = 1, .max = 3600,
	  .help = "guest seconds ksmd gets to merge" },
	{ .key = "seed", .def = 1, .min = 0, .max = 2147483647,
	  .help = "seed of the page patterns" },
	{ .key = NULL },
};

static size_t pages, patterns;
static uint64_t seed;
/* an rmapbench guest: on a host (tests) KSM and cgroups are left alone */
static int guest;

/* ---- files ----------------------------------------------------------- */

static void write_or_die(const char *path, const char *text)
{
	if (rmb_write_file(path, text) != 0)
		rmb_die(RMB_EXIT_FAIL, "writing '%s' to %s: %s (rmb-ksm needs "
			"KSM and cgroup v2's memory controller: the distro "
			"profile)", text, path, strerror(errno));
}

static void ksm_run(int run)
{
	rmb_ksm_knob("run", run);
}

static long long ksm_number(const char *knob)
{
	char path[64];

	snprintf(path, sizeof(path), KSM "%s", knob);
	return rmb_read_number(path);
}

/* ---- the pages ------------------------------------------------------- */

static void fill(char *p)
{
	rmb_fill_cycle(p, pages, seed, patterns);
}

static long long verify(const char *p)
{
	return (long long)rmb_verify_cycle(p, pages, seed, patterns);
}

static char *map_mergeable(void)
{
	size_t len = pages * rmb_page;
	char *p = rmb_map_anon(NULL, len);

	if (!p)
		rmb_die(RMB_EXIT_FAIL, "mmap of %zu bytes: %s", len,
			strerror(errno));
	fill(p);
	if (madvise(p, len, MADV_MERGEABLE) != 0)
		rmb_die(RMB_EXIT_FAIL, "madvise(MADV_MERGEABLE): %s",
			strerror(errno));
	return p;
}

/* ---- the processes --------------------------------------------------- */

/*
 * A peer: its pages mapped, it says so on fd 3, waits for a byte on
 * stdin, verifies, answers its mismatching pages, and exits.
 */
static int __attribute__((noreturn)) peer(void)
{
	char *p = map_mergeable();
	char cmd;

	if (rmb_peer_say(0) != 0 || read(0, &cmd, 1) != 1)
		_exit(RMB_EXIT_FAIL);
	_exit(rmb_peer_say(verify(p)) ? RMB_EXIT_FAIL : 0);
}

struct peers {
	int n;
	struct rmb_peer *pr;
};

static void start_peers(struct peers *ps, int n)
{
	char a_pages[32], a_patterns[32], a_seed[32];
	char *argv[] = { "rmb-ksm", "mode=peer", a_pages, a_patterns, a_seed,
			 NULL };

	snprintf(a_pages, sizeof(a_pages), "pages=%zu", pages);
	snprintf(a_patterns, sizeof(a_patterns), "patterns=%zu", patterns);
	snprintf(a_seed, sizeof(a_seed), "seed=%llu",
		 (unsigned long long)seed);
	ps->n = n;
	ps->pr = calloc((size_t)n + 1, sizeof(*ps->pr));
	if (!ps->pr)
		rmb_die(RMB_EXIT_FAIL, "out of memory for %d peers", n);
	for (int i = 0; i < n; i++)
		rmb_peer_start(&ps->pr[i], argv);
}

/* Every peer verifies and exits: their mismatching pages, summed. */
static long long finish_peers(struct peers *ps)
{
	long long bad = 0;

	for (int i = 0; i < ps->n; i++) {
		rmb_peer_send(&ps->pr[i], 'v');
		bad += rmb_peer_answer(&ps->pr[i]);
		if (rmb_peer_reap(&ps->pr[i]) != 0)
			rmb_die(RMB_EXIT_FAIL, "peer %d ended abnormally", i);
	}
	return bad;
}

/* A worker: its copies written (cow), ready; at the go, verify. */
static void __attribute__((noreturn))
worker(struct rmb_family *f, char *p, int idx, int cow)
{
	if (cow)		/* a write of what is there: a COW copy */
		for (size_t i = 0; i < pages; i++) {
			volatile char *c = p + i * rmb_page;

			*c = *c;
		}
	rmb_family_send(f, RMB_REP_READY, idx, 0, 0, 0);
	rmb_family_wait_go(f);
	rmb_family_send(f, RMB_REP_DONE, idx, (int64_t)pages, verify(p), 0);
	_exit(0);
}

/* ---- ksmd ------------------------------------------------------------ */

struct merge {
	long long merged, saved, ns, cpu_ns, full_scans;
};

/*
 * The mappings merged: those of a KSM page (pages_shared), and the others
 * sharing it (pages_sharing), the memory saved.
 */
static long long merged_now(void)
{
	return ksm_number("pages_shared") + ksm_number("pages_sharing");
}

/*
 * Run ksmd until @target mappings are merged, or four full scans passed
 * without a new merge, or limit_s.
 */
static void merge(struct merge *m, long long target, long long limit_s)
{
	uint64_t t0 = rmb_now_ns(), last = t0;
	long long cpu0 = rmb_kthread_cpu_ns("ksmd"), scans0 = ksm_number("full_scans");
	long long seen = 0, scans_at = scans0, now;

	ksm_run(1);
	for (;;) {
		usleep(10000);
		now = merged_now();
		if (now != seen) {
			seen = now;
			last = rmb_now_ns();
			scans_at = ksm_number("full_scans");
		}
		if (seen >= target ||
		    ksm_number("full_scans") >= scans_at + 4 ||
		    rmb_now_ns() - t0 > (uint64_t)limit_s * 1000000000ULL)
			break;
	}
	m->merged = seen;
	m->saved = ksm_number("pages_sharing");
	m->ns = (long long)(last - t0);
	m->cpu_ns = rmb_kthread_cpu_ns("ksmd") - cpu0;
	m->full_scans = ksm_number("full_scans") - scans0;
}

/* The run in a memory cgroup of its own, and reclaim from it. */
static void enter_group(void)
{
	char pid[32];

	write_or_die(CGROUP "cgroup.subtree_control", "+memory");
	if (mkdir(GROUP, 0755) != 0 && errno != EEXIST)
		rmb_die(RMB_EXIT_FAIL, "mkdir %s: %s", GROUP, strerror(errno));
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	write_or_die(GROUP "cgroup.procs", pid);
}

static void leave_group(void)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	write_or_die(CGROUP "cgroup.procs", pid);
	rmdir(GROUP);
}

/*
 * ksmd stopped with nothing merged from before, then set to scan every
 * mergeable page (@all) each pass, 20 ms apart; the run in its cgroup.
 */
static void ksm_setup(long long all)
{
	ksm_run(2);
	ksm_run(0);
	rmb_ksm_knob("sleep_millisecs", 20);
	rmb_ksm_knob("pages_to_scan", all);
	enter_group();
}

/* memory.reclaim of all the group holds (EAGAIN: not all of it). */
static void reclaim_group(void)
{
	char bytes[32];

	snprintf(bytes, sizeof(bytes), "%lld",
		 rmb_read_number(GROUP "memory.current"));
	if (rmb_write_file(GROUP "memory.reclaim", bytes) != 0 &&
	    errno != EAGAIN)
		rmb_die(RMB_EXIT_FAIL, "memory.reclaim: %s", strerror(errno));
}

static double per(long long a, long long b)
{
	return b ? (double)a / (double)b : 0.0;
}

int main(int argc, char **argv)
{
	struct rmb_snap s0, s1, s2, d_merge, d_reclaim, d;
	struct rmb_family fam;
	struct rmb_report done = { 0 };
	struct merge m = { 0 };
	struct peers ps = { 0 };
	struct rmb_json j;
	long long workers, procs, target, bad, processes;
	int cow;
	char *p;

	rmb_init("ksm");
	rmb_parse_args(params, argc, argv);
	pages = (size_t)rmb_arg("pages");
	patterns = (size_t)rmb_arg("patterns");
	seed = (uint64_t)rmb_arg("seed");
	if (rmb_mode_is("peer"))
		peer();
	workers = rmb_arg("workers");
	procs = rmb_arg("procs");
	cow = !strcmp(rmb_arg_str("pattern"), "cow");
	processes = 1 + workers + procs;
	rmb_need_mem_kb(processes * (long long)(pages * rmb_page / 1024), 1,
			"every process's pages");
	guest = strcmp(rmb_scheme(), "unknown") != 0;
	if (guest)
		ksm_setup(processes * (long long)pages);
	/* the peers first: they would keep the family's pipes open */
	start_peers(&ps, (int)procs);
	p = map_mergeable();
	rmb_family_open(&fam, (int)workers);
	for (int i = 0; i < workers; i++)
		if (rmb_family_fork(&fam) == 0)
			worker(&fam, p, i, cow);
	if (rmb_family_collect(&fam, RMB_REP_READY, (int)workers, &done) <
	    workers)
		rmb_die(RMB_EXIT_FAIL, "workers did not all start");

	/* every mapping of every process merged */
	target = processes * (long long)pages;
	rmb_snap_take(&s0);
	if (guest)
		merge(&m, target, rmb_arg("limit_s"));
	rmb_snap_take(&s1);
	if (guest && rmb_arg("reclaim"))
		reclaim_group();
	rmb_snap_take(&s2);

	rmb_family_go(&fam);
	memset(&done, 0, sizeof(done));
	rmb_family_collect(&fam, RMB_REP_DONE, (int)workers, &done);
	bad = done.mismatch_pages + finish_peers(&ps) + verify(p);
	if (rmb_family_finish(&fam))
		rmb_die(RMB_EXIT_FAIL, "a worker ended abnormally");
	if (guest) {
		ksm_run(2);	/* unmerge everything, and stop */
		leave_group();
	}

	rmb_snap_delta(&d_merge, &s0, &s1);
	rmb_snap_delta(&d_reclaim, &s1, &s2);
	rmb_snap_delta(&d, &s0, &s2);
	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "processes_count", processes);
	rmb_json_int(&j, "target_pages", target);
	rmb_json_int(&j, "merged_pages", m.merged);
	rmb_json_int(&j, "saved_pages", m.saved);
	rmb_json_int(&j, "merge_ns", m.ns);
	rmb_json_dbl(&j, "merged_per_s", per(m.merged, m.ns) * 1e9);
	rmb_json_int(&j, "ksmd_cpu_ns", m.cpu_ns);
	rmb_json_dbl(&j, "ksmd_per_merged_ns", per(m.cpu_ns, m.merged));
	rmb_json_int(&j, "full_scans_count", m.full_scans);
	rmb_json_int(&j, "merge_shared_skip_count",
		     d_merge.ctr[RMB_C_KSM_SHARED_SKIP]);
	rmb_json_int(&j, "reclaim_ksm_walk_count",
		     d_reclaim.ctr[RMB_C_KSM_WALK]);
	rmb_json_dbl(&j, "ksm_walk_mean_ns",
		     per(d_reclaim.ctr[RMB_C_KSM_WALK_NS],
			 d_reclaim.ctr[RMB_C_KSM_WALK_TIMED]));
	rmb_json_dbl(&j, "visits_per_walk_count",
		     per(d_reclaim.ctr[RMB_C_VISIT],
			 d_reclaim.ctr[RMB_C_KSM_WALK] +
			 d_reclaim.ctr[RMB_C_WALK]));
	rmb_json_int(&j, "reclaim_pswpout_pages",
		     d_reclaim.ctr[RMB_C_PSWPOUT]);
	rmb_json_int(&j, "verified_pages", processes * (long long)pages);
	rmb_json_int(&j, "verify_mismatch_pages", bad);
	rmb_json_delta(&j, &d);
	rmb_json_end(&j);
	return rmb_check_mismatch(bad, processes * (long long)pages, "pages");
}
