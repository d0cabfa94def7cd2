/*
 * rmb-race: targeted tests of races between rmap paths on several CPUs.
 *
 * Each mode drives one interleaving that was once wrong, round after
 * round, with the two sides pinned to different CPUs and released at the
 * same instant; each round then checks the data and what the rmap can
 * find.  On one CPU the races cannot open: the program runs, says so
 * (cpus_count 1), and the suite does not count that as a pass.
 *
 * mremap-swapin: a region filled, pushed out (MADV_PAGEOUT) and shared
 *   by fork; the parent swaps every page back in (each page mapped once,
 *   in the swap cache, while the child still holds swap ptes), then the
 *   child swaps the same pages in while the parent mremap()s the region
 *   away.  A page may only follow the parent's move if the child cannot
 *   reach it (the child goes from the top down, so that the two meet in
 *   every round): a decision that anonmm once took from an unlocked snapshot
 *   (mapcount, then swap count) while the child's do_swap_page() sat
 *   between swap_free() and page_add_anon_rmap().  Failures: mremap()
 *   failing (it moved a page it must not, stopped short, ENOMEM), a
 *   mismatching page in either process, or a page the child maps that a
 *   pageout cannot unmap (its index names another address: the walk can
 *   never find it).
 *
 * Without swap (or on a host) the pages never go out: the rounds run, but
 * checked_count is 0.
 *
 * Result: one "summary" line with the rounds run and the failures of
 * each kind; an RMB-ERROR line per failing round (the first few).
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define ERRORS_SHOWN 5

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "mremap-swapin", .sdef = "mremap-swapin",
	  .help = "the race to drive" },
	{ .key = "pages", .def = 256, .min = 16, .max = 1 << 18,
	  .help = "pages of the region moved in each round" },
	{ .key = "rounds", .def = 300, .min = 1, .max = 100000,
	  .help = "rounds (a fresh region and child each)" },
	{ .key = "seed", .def = 1, .min = 0, .max = 2147483647,
	  .help = "seed of the page patterns" },
	{ .key = NULL },
};

/* One shared page: the start line, and what the child found. */
struct line {
	atomic_int ready, go, moved;
	long long child_bad, child_missed, child_present, child_errno;
};

struct tally {
	long long rounds, mremap_failed, parent_bad, child_bad, missed;
	long long not_swapped, child_died, moved_pages;
};

static int ncpus;
static int checked;		/* swap to push pages to: checks are made */

static void pin(int cpu)
{
	cpu_set_t set;

	if (ncpus < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu % ncpus, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		rmb_die(RMB_EXIT_FAIL, "sched_setaffinity(cpu %d): %s", cpu,
			strerror(errno));
}

static void spin_until(atomic_int *flag)
{
	while (!atomic_load(flag))
		if (ncpus < 2)
			sched_yield();
}

/* Read one word of every page: a swap-in each. */
static void touch(const char *p, size_t pages)
{
	for (size_t i = 0; i < pages; i++)
		(void)*(volatile const char *)(p + i * rmb_page);
}

/*
 * The same from the last page down: the parent's move goes up, so the
 * two meet once in every round, whichever is faster.
 */
static void touch_down(const char *p, size_t pages)
{
	for (size_t i = pages; i-- > 0;)
		(void)*(volatile const char *)(p + i * rmb_page);
}

/*
 * The child: swap the region in on CPU 1 at the parent's go, verify it,
 * wait until the parent has dropped its copy, then check that a pageout
 * can unmap every page it maps alone.
 */
static void __attribute__((noreturn))
child(struct line *l, char *p, size_t pages, uint64_t seed)
{
	struct rmb_pageout po = { 0 };
	int err;

	pin(1);
	atomic_store(&l->ready, 1);
	spin_until(&l->go);
	touch_down(p, pages);
	l->child_bad = (long long)rmb_verify(p, pages, seed, 0, 0);
	spin_until(&l->moved);
	err = checked ? rmb_pageout_check(p, pages, &po) : 0;
	l->child_errno = err;
	l->child_missed = po.missed;
	l->child_present = po.candidates;
	_exit(0);
}

static void report_round(struct tally *t, long long round, const char *what,
			 long long n)
{
	long long failures = t->mremap_failed + t->parent_bad + t->child_bad +
			     t->missed + t->child_died;

	if (failures <= ERRORS_SHOWN)
		rmb_error("round %lld: %s (%lld)", round, what, n);
}

/* One round; adds what went wrong to t. */
static void round_once(struct tally *t, struct line *l, size_t pages,
		       uint64_t seed, long long round)
{
	size_t len = pages * rmb_page;
	char *p = rmb_map_anon(NULL, len);
	char *dst = rmb_reserve(len);
	long long swapped;
	char *moved;
	pid_t pid;
	int status;

	if (!p || !dst)
		rmb_die(RMB_EXIT_FAIL, "mmap of %zu bytes: %s", len,
			strerror(errno));
	rmb_fill(p, pages, seed, 0);
	if (madvise(p, len, MADV_PAGEOUT) != 0)
		rmb_die(RMB_EXIT_FAIL, "MADV_PAGEOUT: %s", strerror(errno));
	swapped = rmb_swapped_pages(p, pages);
	if (checked && swapped < (long long)pages / 2)
		t->not_swapped++;
	memset(l, 0, sizeof(*l));
	pid = rmb_fork();
	if (pid < 0)
		rmb_die(RMB_EXIT_FAIL, "fork: %s", strerror(errno));
	if (pid == 0)
		child(l, p, pages, seed);
	touch(p, pages);		/* mapped once, still in swap cache */
	spin_until(&l->ready);
	atomic_store(&l->go, 1);
	moved = mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (moved == MAP_FAILED) {
		t->mremap_failed++;
		report_round(t, round, "mremap failed", errno);
		moved = p;
	} else {
		t->moved_pages += (long long)pages;
	}
	if (rmb_verify(moved, pages, seed, 0, 0)) {
		t->parent_bad++;
		report_round(t, round, "parent: pages mismatch", 0);
	}
	munmap(moved, len);		/* the child maps them alone now */
	atomic_store(&l->moved, 1);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		t->child_died++;
		report_round(t, round, "child ended abnormally", status);
		return;
	}
	if (l->child_bad) {
		t->child_bad++;
		report_round(t, round, "child: pages mismatch", l->child_bad);
	}
	if (l->child_missed) {
		t->missed++;
		report_round(t, round, "child: pages still present after "
			     "MADV_PAGEOUT (the walk did not find them)",
			     l->child_missed);
	}
	if (l->child_errno > 0)
		rmb_die(RMB_EXIT_FAIL, "child: MADV_PAGEOUT: %s",
			strerror((int)l->child_errno));
	t->rounds++;
}

int main(int argc, char **argv)
{
	struct rmb_snap a, b, d;
	struct tally t = { 0 };
	struct rmb_json j;
	struct line *l;
	size_t pages;
	long long failures;
	uint64_t seed;

	rmb_init("race");
	rmb_parse_args(params, argc, argv);
	pages = (size_t)rmb_arg("pages");
	seed = (uint64_t)rmb_arg("seed");
	ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	rmb_need_mem_kb((long long)(2 * pages * rmb_page / 1024), 1,
			"the region, twice");
	/* a host (no /proc/rmapbench) or no swap: the races need swap */
	checked = strcmp(rmb_scheme(), "unknown") != 0 &&
		  rmb_meminfo_kb("SwapFree") >=
		  (long long)(4 * pages * rmb_page / 1024);
	l = mmap(NULL, rmb_page, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (l == MAP_FAILED)
		rmb_die(RMB_EXIT_FAIL, "mmap: %s", strerror(errno));
	pin(0);
	rmb_snap_take(&a);
	for (long long r = 0; r < rmb_arg("rounds"); r++)
		round_once(&t, l, pages, seed + (uint64_t)r, r);
	rmb_snap_take(&b);
	rmb_snap_delta(&d, &a, &b);
	failures = t.mremap_failed + t.parent_bad + t.child_bad + t.missed +
		   t.child_died;

	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "cpus_count", ncpus);
	rmb_json_int(&j, "checked_count", checked);
	rmb_json_int(&j, "rounds_count", t.rounds);
	rmb_json_int(&j, "failed_rounds_count", failures);
	rmb_json_int(&j, "mremap_failed_count", t.mremap_failed);
	rmb_json_int(&j, "parent_mismatch_count", t.parent_bad);
	rmb_json_int(&j, "child_mismatch_count", t.child_bad);
	rmb_json_int(&j, "pageout_missed_count", t.missed);
	rmb_json_int(&j, "child_died_count", t.child_died);
	rmb_json_int(&j, "not_swapped_count", t.not_swapped);
	rmb_json_int(&j, "moved_pages", t.moved_pages);
	rmb_json_delta(&j, &d);
	rmb_json_end(&j);
	return failures ? RMB_EXIT_FAIL : 0;
}
