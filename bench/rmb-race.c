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
 * mremap-kill: a child moves a region of whole page tables that it
 *   shares with its live parent (anonmm copies every page as it moves),
 *   and the parent SIGKILLs it somewhere in the move: round 0 times a
 *   whole move, the others kill at 10% to 90% of that time.  anonmm stops
 *   a move at a kill rather than copy more pages for a dying task, and
 *   moves back what it moved (move_vma's error path): into the old page
 *   tables its forward move emptied pte by pte but left in place, which a
 *   move back by whole tables once met with a WARNING in
 *   move_normal_pmd().  anon_vma moves the tables whole, too fast to be
 *   caught inside.  killed_inside_count counts the kills that landed
 *   inside mremap().  Failures: round 0's move failing or mismatching,
 *   the parent's pages mismatching, a pageout of them missing one, the
 *   child dying of anything but the kill.
 *
 * thp-mremap: a region of whole page-table spans (RMB_TABLE_SPAN, 4 MB,
 *   aligned; faulted as THPs where THP is on) shared by fork; the parent mremap()s it away, to an aligned
 *   address in even rounds (the pmds move whole: a shared folio is split
 *   or copied first under anonmm) and one page off in odd ones (every pmd
 *   is split), while the child, on the other CPU, pushes its mapping out
 *   (round % 3 == 0: reclaim's walk, THP swap or split), COW-writes every
 *   page (1: huge COW falls back to a pmd split), or mprotect()s the
 *   middle half read-only and back (2: a pmd split in the child alone).
 *   Both then verify their pages; the parent unmaps, and a pageout of the
 *   child's pages must find every one.  Failures as for mremap-swapin.
 *
 * thp-split: THPs shared by fork (whole table spans, as thp-mremap);
 *   the parent splits its own (debugfs split_huge_pages: the split's
 *   unmap and remap walk both mms, and anonmm's fails where the child's
 *   mmap_lock is held) while the child, on the other CPU, by round % 5:
 *   mprotect()s the middle half back and forth until the split is over
 *   (a contended member), swaps in the last quarter, pushed out before
 *   the fork, moves its first huge page away and back (a shared folio:
 *   anonmm copies it), forks children that read every page, COW-write
 *   every eighth and exit, or drops one page of each THP and writes it
 *   again (the deferred split queue).  Failures as for mremap-swapin,
 *   and the child's mremap failing.
 *
 * collapse-fork: the parent MADV_COLLAPSEs base pages it shares with the
 *   child (faulted with MADV_NOHUGEPAGE; in odd sixths of the rounds the
 *   first huge page a PTE-mapped THP; the first page of each 2 MB written
 *   again after the fork, since 6.1 collapses no range without a
 *   writable pte), while the child forks children that read and exit,
 *   COW-writes every page, or swaps in the quarter pushed out before the
 *   fork (round % 3).  A collapse may fail (busy pages, EAGAIN:
 *   collapse_failed_count, collapse_errno the last errno); the suite
 *   wants thp_collapse_alloc.
 *
 * thp-swap: THPs shared by fork; a balloon presses memory (reclaim swaps
 *   the THPs out whole or split, its walk meeting the child) while the
 *   child mprotect()s until it is over (a contended member) or swaps its
 *   pages back in (round % 2); then the parent swaps its own back in.
 *
 * ksm: a region whose pages repeat a few patterns, madvised
 *   MERGEABLE, with ksmd running; an unrelated process (rmb-race exec'd
 *   again, mode ksm-peer: another anonmm bundle, another anon_vma root)
 *   maps the same patterns.  Each round waits until ksmd has merged half
 *   the region, then forks a child and, on two CPUs at once, the parent
 *   moves the region away (mremap unmerges it first), presses memory with
 *   a balloon and swaps the region back in (reclaim's walk of KSM pages,
 *   KSM pages swapped out and in, the swap-in copy for the other
 *   bundle), or migrates it (move_pages() to the other node, or
 *   compaction: the walk of a KSM page keeps the mms it changed), by
 *   round / 3 % 3; while the child pushes its mapping out and back, COW-
 *   writes every page, or unmerges it (round % 3), and the peer pushes
 *   its own out and back.  ksmd meanwhile merges, forks' children map
 *   merged pages, and the child's exit ends with rmap items left behind.
 *   Every process verifies its pages.  The child checks its pageout (after
 *   the parent has unmapped) only where it holds no KSM page by then
 *   (rounds it wrote or unmerged); at the end, ksmd unmerges everything
 *   (run 2) and the peer checks its pageout.  Failures as for
 *   mremap-swapin, and pages_shared not 0 after the unmerge.
 *
 * In a guest every round of the THP modes (thp-mremap, thp-split,
 * collapse-fork, thp-swap) compacts memory before its region faults.
 *
 * Without swap (or on a host) nothing is pushed out: the rounds run, but
 * checked_count is 0 (the pageout checks are not made).
 *
 * Result: one "summary" line with the rounds run and the failures of
 * each kind; an RMB-ERROR line per failing round (the first few).
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define ERRORS_SHOWN 5

static struct rmb_param params[] = {
	{ .key = "mode",
	  .choices = "mremap-swapin|mremap-kill|thp-mremap|thp-split|"
		     "collapse-fork|thp-swap|ksm|ksm-peer",
	  .sdef = "mremap-swapin", .help = "the race to drive" },
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
	atomic_int ready, go, moved, started, finished;
	atomic_int done;	/* the parent's side of the round is over */
	long long child_bad, child_missed, child_present, child_errno;
	long long child_op_errno;	/* a child's own mremap failed */
	long long move_ns;
};

struct tally {
	long long rounds, mremap_failed, parent_bad, child_bad, missed;
	long long not_swapped, child_died, moved_pages;
	long long killed_inside, killed_after;
	long long not_merged, peer_bad, ksm_left;
	long long child_op_failed, collapse_failed, collapse_errno;
};

/* What a round of a mode needs besides its tally and its number. */
struct race {
	struct line *l;
	size_t pages;
	uint64_t seed;
	char *src, *dst;	/* mremap-kill, thp-mremap: holes of whole tables */
	char *dst_off;		/* thp-mremap: a hole one page off alignment */
	int huge;		/* the THP modes: compact before each fault */
	long long full_ns;	/* mremap-kill: round 0's whole move */
	struct rmb_peer peer;	/* ksm: the unrelated peer */
};

static int ncpus;
static int checked;		/* swap to push pages to: checks are made */

/* an rmapbench guest: a host's memory, KSM and THPs are left alone */
static int in_guest(void)
{
	return strcmp(rmb_scheme(), "unknown") != 0;
}

/* a host (no /proc/rmapbench) or no swap: the checks need swap */
static int can_check(size_t pages)
{
	return in_guest() &&
	       rmb_meminfo_kb("SwapFree") >=
	       (long long)(4 * pages * rmb_page / 1024);
}

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
 * A child's end: verify its pages, wait until the parent has dropped its
 * copy, then check that a pageout can unmap every page it maps alone.
 */
static void __attribute__((noreturn))
child_end(struct line *l, char *p, size_t pages, uint64_t seed)
{
	struct rmb_pageout po = { 0 };

	l->child_bad = (long long)rmb_verify(p, pages, seed, 0, 0);
	spin_until(&l->moved);
	l->child_errno = checked ? rmb_pageout_check(p, pages, &po) : 0;
	l->child_missed = po.missed;
	l->child_present = po.candidates;
	_exit(0);
}

/*
 * The child: swap the region in on CPU 1 at the parent's go, verify it,
 * wait until the parent has dropped its copy, then check that a pageout
 * can unmap every page it maps alone.
 */
static void __attribute__((noreturn))
child(struct line *l, char *p, size_t pages, uint64_t seed)
{
	pin(1);
	atomic_store(&l->ready, 1);
	spin_until(&l->go);
	touch_down(p, pages);
	child_end(l, p, pages, seed);
}

static void report_round(struct tally *t, long long round, const char *what,
			 long long n)
{
	long long failures = t->mremap_failed + t->parent_bad + t->child_bad +
			     t->missed + t->child_died + t->child_op_failed;

	if (failures <= ERRORS_SHOWN)
		rmb_error("round %lld: %s (%lld)", round, what, n);
}

/*
 * Tell the child the parent's copy is gone, wait for it, and add what it
 * found (its pages, its pageout check) to t.
 */
static void child_outcome(struct tally *t, struct line *l, pid_t pid,
			  long long round)
{
	int status;

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

/*
 * The parent's side of a round: move its pages at @from to @dst at once,
 * then verify them where they are; returns that address.
 */
static char *parent_move(struct tally *t, char *from, char *dst,
			 size_t pages, uint64_t seed, long long round)
{
	size_t len = pages * rmb_page;
	char *moved = mremap(from, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
			     dst);

	if (moved == MAP_FAILED) {
		t->mremap_failed++;
		report_round(t, round, "mremap failed", errno);
		moved = from;
	} else {
		t->moved_pages += (long long)pages;
	}
	if (rmb_verify(moved, pages, seed, 0, 0)) {
		t->parent_bad++;
		report_round(t, round, "parent: pages mismatch", 0);
	}
	return moved;
}

/* fork(), or die saying why */
static pid_t fork_side(void)
{
	pid_t pid = rmb_fork();

	if (pid < 0)
		rmb_die(RMB_EXIT_FAIL, "fork: %s", strerror(errno));
	return pid;
}

/* One mremap-swapin round; adds what went wrong to t. */
static void round_swapin(struct tally *t, struct race *rc,
			 long long round)
{
	struct line *l = rc->l;
	size_t pages = rc->pages;
	uint64_t seed = rc->seed + (uint64_t)round;
	size_t len = pages * rmb_page;
	char *p = rmb_map_anon(NULL, len);
	char *dst = rmb_reserve(len);
	long long swapped;
	char *moved;
	pid_t pid;

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
	pid = fork_side();
	if (pid == 0)
		child(l, p, pages, seed);
	touch(p, pages);		/* mapped once, still in swap cache */
	spin_until(&l->ready);
	atomic_store(&l->go, 1);
	moved = parent_move(t, p, dst, pages, seed, round);
	munmap(moved, len);		/* the child maps them alone now */
	child_outcome(t, l, pid, round);
}

/* Write every page's first word back as it is, last page first: a COW. */
static void rewrite_down(char *p, size_t pages)
{
	for (size_t i = pages; i-- > 0;) {
		volatile char *c = p + i * rmb_page;

		*c = *c;
	}
}

/* Map the source region afresh, filled for this round's seed. */
/*
 * Make the THP modes' huge pages likely: late in a boot memory may hold
 * no free 2 MB block, and a round would fault none.  In a guest only;
 * compaction is one more rmap walker racing the round.
 */
static void compact_for_thp(const struct race *rc)
{
	if (rc->huge && in_guest())
		rmb_compact();
}

static void map_src(const struct race *rc, uint64_t seed)
{
	size_t len = rc->pages * rmb_page;

	compact_for_thp(rc);
	if (!rmb_map_anon(rc->src, len))
		rmb_die(RMB_EXIT_FAIL, "mmap of %zu bytes: %s", len,
			strerror(errno));
	rmb_fill(rc->src, rc->pages, seed, 0);
	memset(rc->l, 0, sizeof(*rc->l));
}

/*
 * The mover: move the shared region on CPU 1 at the parent's go, say
 * when the move started, how long it took and whether it ended; then
 * check what it moved.
 */
static void __attribute__((noreturn))
mover(struct line *l, const struct race *rc, uint64_t seed)
{
	size_t len = rc->pages * rmb_page;
	uint64_t t0;
	char *moved;

	pin(1);
	atomic_store(&l->ready, 1);
	spin_until(&l->go);
	t0 = rmb_now_ns();
	atomic_store(&l->started, 1);
	moved = mremap(rc->src, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
		       rc->dst);
	l->move_ns = (long long)(rmb_now_ns() - t0);
	l->child_errno = moved == MAP_FAILED ? errno : 0;
	atomic_store(&l->finished, 1);
	if (moved != MAP_FAILED)
		l->child_bad = (long long)rmb_verify(moved, rc->pages, seed,
						     0, 0);
	_exit(0);
}

/* Sleep ns nanoseconds (across signals). */
static void sleep_ns(long long ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000,
			       .tv_nsec = ns % 1000000000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The mover's end: killed (inside or after its move), or exited. */
static void kill_outcome(struct tally *t, const struct line *l,
			 long long round, int status)
{
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
		if (atomic_load(&l->finished))
			t->killed_after++;
		else
			t->killed_inside++;
		return;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		t->child_died++;
		report_round(t, round, "mover ended abnormally", status);
		return;
	}
	if (l->child_errno) {
		t->mremap_failed++;
		report_round(t, round, "mover: mremap failed", l->child_errno);
	} else if (l->child_bad) {
		t->child_bad++;
		report_round(t, round, "mover: pages mismatch", l->child_bad);
	}
}

/*
 * One mremap-kill round: round 0 times a whole move; every other kills
 * the mover at (round % 9 + 1) tenths of that.  Then the parent's own
 * pages must hold, and (with swap) a pageout must find every one.
 */
static void round_kill(struct tally *t, struct race *rc, long long round)
{
	struct line *l = rc->l;
	uint64_t seed = rc->seed + (uint64_t)round;
	size_t len = rc->pages * rmb_page;
	struct rmb_pageout po = { 0 };
	pid_t pid;
	int status, err;

	map_src(rc, seed);
	pid = fork_side();
	if (pid == 0)
		mover(l, rc, seed);
	spin_until(&l->ready);
	atomic_store(&l->go, 1);
	if (round > 0) {
		spin_until(&l->started);
		sleep_ns(rc->full_ns * (round % 9 + 1) / 10);
		kill(pid, SIGKILL);
	}
	if (waitpid(pid, &status, 0) != pid)
		rmb_die(RMB_EXIT_FAIL, "waitpid: %s", strerror(errno));
	kill_outcome(t, l, round, status);
	if (round == 0)
		rc->full_ns = l->move_ns > 0 ? l->move_ns : 1;
	if (atomic_load(&l->finished) && !l->child_errno)
		t->moved_pages += (long long)rc->pages;
	if (rmb_verify(rc->src, rc->pages, seed, 0, 0)) {
		t->parent_bad++;
		report_round(t, round, "parent: pages mismatch", 0);
	}
	err = checked ? rmb_pageout_check(rc->src, rc->pages, &po) : 0;
	if (err > 0)
		rmb_die(RMB_EXIT_FAIL, "MADV_PAGEOUT: %s", strerror(err));
	if (po.missed) {
		t->missed++;
		report_round(t, round, "parent: pages still present after "
			     "MADV_PAGEOUT (the walk did not find them)",
			     po.missed);
	}
	munmap(rc->src, len);
	t->rounds++;
}

/*
 * Memory pressure from a balloon process: what is available and twice
 * the region, freed as it exits.  MADV_PAGEOUT leaves pages mapped more
 * than once alone, KSM pages too: reclaim's walk pushes them out.
 */
static void press(size_t len)
{
	long long kb = rmb_meminfo_kb("MemAvailable") + (long long)(len >> 9);
	pid_t pid = fork_side();
	int status;

	if (pid == 0)
		rmb_balloon(kb, (size_t)1 << 20, 24576);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		rmb_die(RMB_EXIT_FAIL, "the pressure balloon (%lld kB) ended "
			"abnormally (status %d)", kb, status);
}

/* ---- thp-split, collapse-fork, thp-swap ---------------------------- */

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25	/* 6.1's value; older libc headers lack it */
#endif

#define HUGE_BYTES ((size_t)RMB_TABLE_SPAN / 2)	/* one pmd's worth */

/* what the child of a round of a THP mode does */
enum { ACT_MPROTECT, ACT_SWAPIN, ACT_MREMAP, ACT_FORK_EXIT, ACT_DONTNEED,
       ACT_COW, ACT_PAGEOUT, ACT_MPROTECT_ONCE };

/* Until the parent's side is done: mprotect() the middle half read-only
 * and back, each time holding the child's mmap_lock for write. */
static void mprotect_until_done(struct line *l, char *p, size_t len)
{
	do {
		if (mprotect(p + len / 4, len / 2, PROT_READ) != 0 ||
		    mprotect(p + len / 4, len / 2, PROT_READ | PROT_WRITE))
			_exit(RMB_EXIT_FAIL);
	} while (!atomic_load(&l->done));
}

/* Until the parent's side is done: a grandchild that reads every page
 * and COW-writes every eighth, then exits. */
static void fork_exit_until_done(struct line *l, char *p, size_t pages)
{
	do {
		pid_t pid = rmb_fork();
		int status;

		if (pid < 0)
			_exit(RMB_EXIT_FAIL);
		if (pid == 0) {
			touch(p, pages);
			for (size_t i = 0; i < pages; i += 8)
				*(volatile char *)(p + i * rmb_page) =
					p[i * rmb_page];
			_exit(0);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			_exit(RMB_EXIT_FAIL);
	} while (!atomic_load(&l->done));
}

/*
 * Until the parent's side is done: one page in the middle of each huge
 * page dropped (MADV_DONTNEED: the folio goes on the deferred split
 * queue) and written again as it was.
 */
static void dontneed_until_done(struct line *l, char *p, size_t pages,
				uint64_t seed)
{
	size_t step = HUGE_BYTES / rmb_page;

	do {
		for (size_t i = step / 2; i < pages; i += step) {
			if (madvise(p + i * rmb_page, rmb_page,
				    MADV_DONTNEED) != 0)
				_exit(RMB_EXIT_FAIL);
			rmb_fill(p + i * rmb_page, 1, seed, i);
		}
	} while (!atomic_load(&l->done));
}

/*
 * Move the first huge page of the child's copy away and back: a folio
 * the parent maps too, so anonmm copies (or splits) what it moves.
 */
static void move_away_and_back(struct line *l, char *p, char *hole)
{
	if (mremap(p, HUGE_BYTES, HUGE_BYTES, MREMAP_MAYMOVE | MREMAP_FIXED,
		   hole) == MAP_FAILED ||
	    mremap(hole, HUGE_BYTES, HUGE_BYTES,
		   MREMAP_MAYMOVE | MREMAP_FIXED, p) == MAP_FAILED)
		l->child_op_errno = errno;
}

/* A child of the thp modes: pinned, ready, then @act at the go. */
static void __attribute__((noreturn))
act_child(const struct race *rc, uint64_t seed, int act)
{
	struct line *l = rc->l;
	size_t pages = rc->pages, len = pages * rmb_page;
	char *p = rc->src;

	prctl(PR_SET_PDEATHSIG, SIGKILL);	/* its loops wait for the parent */
	pin(1);
	atomic_store(&l->ready, 1);
	spin_until(&l->go);
	switch (act) {
	case ACT_MPROTECT:
		mprotect_until_done(l, p, len);
		break;
	case ACT_SWAPIN:
		do
			touch_down(p, pages);
		while (!atomic_load(&l->done));
		break;
	case ACT_MREMAP:
		move_away_and_back(l, p, rc->dst);
		break;
	case ACT_FORK_EXIT:
		fork_exit_until_done(l, p, pages);
		break;
	case ACT_DONTNEED:
		dontneed_until_done(l, p, pages, seed);
		break;
	case ACT_COW:
		rewrite_down(p, pages);
		break;
	case ACT_PAGEOUT:
		madvise(p, len, MADV_PAGEOUT);
		break;
	case ACT_MPROTECT_ONCE:
		if (mprotect(p + len / 4, len / 2, PROT_READ) != 0 ||
		    mprotect(p + len / 4, len / 2, PROT_READ | PROT_WRITE))
			_exit(RMB_EXIT_FAIL);
		touch_down(p, pages);
		break;
	}
	child_end(l, p, pages, seed);
}

/* Fork the round's child, release it, and return its pid. */
static pid_t start_act(const struct race *rc, uint64_t seed, int act)
{
	pid_t pid = fork_side();

	if (pid == 0)
		act_child(rc, seed, act);
	spin_until(&rc->l->ready);
	atomic_store(&rc->l->go, 1);
	return pid;
}

/* One thp-mremap round; adds what went wrong to t. */
static void round_thp(struct tally *t, struct race *rc, long long round)
{
	static const int acts[] = { ACT_PAGEOUT, ACT_COW, ACT_MPROTECT_ONCE };
	uint64_t seed = rc->seed + (uint64_t)round;
	char *dst = round % 2 ? rc->dst_off : rc->dst;
	char *moved;
	pid_t pid;

	map_src(rc, seed);
	pid = start_act(rc, seed, acts[round % 3]);
	moved = parent_move(t, rc->src, dst, rc->pages, seed, round);
	munmap(moved, rc->pages * rmb_page);	/* src is free for the next */
	child_outcome(t, rc->l, pid, round);
}

/* The parent's side is done: verify its pages, drop them, and collect
 * the child's outcome (its own failed mremap, once it has exited). */
static void end_act(struct tally *t, const struct race *rc, pid_t pid,
		    uint64_t seed, long long round)
{
	atomic_store(&rc->l->done, 1);
	if (rmb_verify(rc->src, rc->pages, seed, 0, 0)) {
		t->parent_bad++;
		report_round(t, round, "parent: pages mismatch", 0);
	}
	munmap(rc->src, rc->pages * rmb_page);
	child_outcome(t, rc->l, pid, round);	/* waits for the child */
	if (rc->l->child_op_errno) {
		t->child_op_failed++;
		report_round(t, round, "child: its mremap away and back failed",
			     rc->l->child_op_errno);
	}
}

/* Push the last quarter of the region out (before the fork: the swap
 * entries are then shared). */
static void push_quarter(struct tally *t, const struct race *rc)
{
	size_t q = rc->pages / 4;
	char *p = rc->src + (rc->pages - q) * rmb_page;

	if (madvise(p, q * rmb_page, MADV_PAGEOUT) != 0)
		rmb_die(RMB_EXIT_FAIL, "MADV_PAGEOUT: %s", strerror(errno));
	if (checked && rmb_swapped_pages(p, q) < (long long)q / 2)
		t->not_swapped++;
}

/*
 * One thp-split round: the parent splits its THPs, which the child maps
 * too (debugfs split_huge_pages: the split's unmap and remap walk both
 * mms), while the child mprotect()s (a contended member: anonmm's split
 * fails), swaps in pages pushed out before the fork, moves a huge page
 * away and back, forks and exits, or drops a page of each THP.
 */
static void round_split(struct tally *t, struct race *rc, long long round)
{
	static const int acts[] = { ACT_MPROTECT, ACT_SWAPIN, ACT_MREMAP,
				    ACT_FORK_EXIT, ACT_DONTNEED };
	int act = acts[round % 5];
	uint64_t seed = rc->seed + (uint64_t)round;
	pid_t pid;

	map_src(rc, seed);
	if (act == ACT_SWAPIN)
		push_quarter(t, rc);
	pid = start_act(rc, seed, act);
	if (in_guest() && rmb_split_huge_range(rc->src, rc->pages) != 0)
		rmb_die(RMB_EXIT_FAIL, "writing to /sys/kernel/debug/split_huge_pages: %s "
			"(thp-split needs debugfs and THP)", strerror(errno));
	end_act(t, rc, pid, seed, round);
}

/*
 * Map the region as base pages (MADV_NOHUGEPAGE while it faults), its
 * first huge page as a PTE-mapped THP when @ptemapped (faulted huge,
 * then its pmd split by an mprotect of one page), and make all of it
 * eligible for collapse again.
 */
static void map_src_small(const struct race *rc, uint64_t seed, int ptemapped)
{
	size_t len = rc->pages * rmb_page;
	size_t skip = ptemapped ? HUGE_BYTES : 0;
	char *p = rc->src;

	compact_for_thp(rc);
	if (!rmb_map_anon(p, len))
		rmb_die(RMB_EXIT_FAIL, "mmap of %zu bytes: %s", len,
			strerror(errno));
	if (madvise(p + skip, len - skip, MADV_NOHUGEPAGE) != 0)
		rmb_die(RMB_EXIT_FAIL, "MADV_NOHUGEPAGE: %s", strerror(errno));
	rmb_fill(p, rc->pages, seed, 0);
	if (ptemapped && (mprotect(p, rmb_page, PROT_READ) != 0 ||
			  mprotect(p, rmb_page, PROT_READ | PROT_WRITE) != 0))
		rmb_die(RMB_EXIT_FAIL, "mprotect: %s", strerror(errno));
	if (madvise(p, len, MADV_HUGEPAGE) != 0)
		rmb_die(RMB_EXIT_FAIL, "MADV_HUGEPAGE: %s", strerror(errno));
	memset(rc->l, 0, sizeof(*rc->l));
}

/*
 * One collapse-fork round: the parent collapses (MADV_COLLAPSE) base
 * pages it shares with the child, a PTE-mapped THP among them in odd
 * sixths, some swapped out before the fork in others, while the child
 * forks and exits, COW-writes every page, or swaps them in.
 */
static void round_collapse(struct tally *t, struct race *rc, long long round)
{
	static const int acts[] = { ACT_FORK_EXIT, ACT_COW, ACT_SWAPIN };
	int act = acts[round % 3];
	uint64_t seed = rc->seed + (uint64_t)round;
	pid_t pid;

	map_src_small(rc, seed, round / 3 % 2);
	if (act == ACT_SWAPIN)
		push_quarter(t, rc);
	pid = start_act(rc, seed, act);
	/* 6.1 collapses no range without one writable pte (SCAN_PAGE_RO):
	 * the first page of each 2 MB is COW-written before */
	for (size_t i = 0; i < rc->pages; i += HUGE_BYTES / rmb_page)
		*(volatile char *)(rc->src + i * rmb_page) =
			rc->src[i * rmb_page];
	if (madvise(rc->src, rc->pages * rmb_page, MADV_COLLAPSE) != 0) {
		t->collapse_failed++;	/* EAGAIN, EBUSY: not an error */
		t->collapse_errno = errno;
	}
	end_act(t, rc, pid, seed, round);
}

/*
 * One thp-swap round: memory pressed by a balloon (reclaim swaps the
 * shared THPs out whole or split, its walk meeting the child) while the
 * child mprotect()s (a contended member) or swaps its pages back in;
 * then the parent swaps its own in.
 */
static void round_swap(struct tally *t, struct race *rc, long long round)
{
	int act = round % 2 ? ACT_SWAPIN : ACT_MPROTECT;
	uint64_t seed = rc->seed + (uint64_t)round;
	pid_t pid;

	map_src(rc, seed);
	pid = start_act(rc, seed, act);
	if (in_guest())
		press(rc->pages * rmb_page);
	touch(rc->src, rc->pages);
	end_act(t, rc, pid, seed, round);
}

/* ---- ksm ------------------------------------------------------------ */

#define KSM "/sys/kernel/mm/ksm/"
#define KSM_PATTERNS 8		/* distinct page contents in a region */

/* A KSM knob, in a guest only: a host's KSM is left alone (tests). */
static void ksm_knob(const char *knob, long long value)
{
	if (in_guest())
		rmb_ksm_knob(knob, value);
}

static void ksm_fill(char *p, size_t pages, uint64_t seed)
{
	rmb_fill_cycle(p, pages, seed, KSM_PATTERNS);
}

static long long ksm_verify(const char *p, size_t pages, uint64_t seed)
{
	return (long long)rmb_verify_cycle(p, pages, seed, KSM_PATTERNS);
}

static void ksm_mergeable(char *p, size_t len, int advice)
{
	if (madvise(p, len, advice) != 0)
		rmb_die(RMB_EXIT_FAIL, "madvise(MADV_%sMERGEABLE): %s",
			advice == MADV_MERGEABLE ? "" : "UN", strerror(errno));
}

/* Wait (at most 10 s) until ksmd has merged half of this process's pages. */
static int ksm_wait_merged(size_t pages)
{
	if (!in_guest())
		return 0;	/* a host: its ksmd is not ours to run */
	for (int i = 0; i < 1000; i++) {
		if (rmb_read_number("/proc/self/ksm_merging_pages") >=
		    (long long)pages / 2)
			return 1;
		usleep(10000);
	}
	return 0;
}

static void push_out_and_back(char *p, size_t pages)
{
	madvise(p, pages * rmb_page, MADV_PAGEOUT);
	touch_down(p, pages);
}

/*
 * The peer, exec'd (another bundle): its region merged with the parent's,
 * then one command byte at a time on stdin, answered on fd 3: 'x' push
 * the region out and back, and verify it; 'q' (after the parent's
 * unmerge of everything) verify, check the pageout, and exit.
 */
static int __attribute__((noreturn)) ksm_peer(size_t pages, uint64_t seed)
{
	size_t len = pages * rmb_page;
	char *p = rmb_map_anon(NULL, len);
	struct rmb_pageout po = { 0 };
	long long answer;
	char cmd;

	if (!p)
		rmb_die(RMB_EXIT_FAIL, "peer: mmap: %s", strerror(errno));
	ksm_fill(p, pages, seed);
	ksm_mergeable(p, len, MADV_MERGEABLE);
	if (rmb_peer_say(0) != 0)
		_exit(RMB_EXIT_FAIL);
	while (read(0, &cmd, 1) == 1) {
		if (cmd == 'x')
			push_out_and_back(p, pages);
		answer = ksm_verify(p, pages, seed);
		if (cmd == 'q' && !answer && checked) {
			if (rmb_pageout_check(p, pages, &po) > 0)
				_exit(RMB_EXIT_FAIL);
			answer = -po.missed;	/* negative: pages missed */
		}
		if (rmb_peer_say(answer) != 0 || cmd == 'q')
			_exit(0);
	}
	_exit(RMB_EXIT_FAIL);
}

/* Start the peer: this program again, in a bundle of its own. */
static void ksm_start_peer(struct race *rc)
{
	char pages[32], seed[32];
	char *argv[] = { "rmb-race", "mode=ksm-peer", pages, seed, NULL };

	snprintf(pages, sizeof(pages), "pages=%zu", rc->pages);
	snprintf(seed, sizeof(seed), "seed=%llu", (unsigned long long)rc->seed);
	rmb_peer_start(&rc->peer, argv);
}

/*
 * Migrate the region: to NUMA node 1 and back where the guest has it
 * (move_pages(), MPOL_MF_MOVE_ALL: KSM pages are mapped by several
 * processes), else one whole-memory compaction.
 */
static void migrate_region(char *p, size_t pages)
{
	void **addr = calloc(pages, sizeof(*addr));
	int *nodes = calloc(pages, sizeof(*nodes));
	int *status = calloc(pages, sizeof(*status));

	if (!addr || !nodes || !status)
		rmb_die(RMB_EXIT_FAIL, "out of memory for move_pages arrays");
	if (access("/sys/devices/system/node/node1", F_OK) == 0) {
		rmb_move_pages(p, (long long)pages, 1, addr, nodes, status);
		rmb_move_pages(p, (long long)pages, 0, addr, nodes, status);
	} else if (rmb_compact() != 0) {
		rmb_die(RMB_EXIT_FAIL, "compact_memory: %s", strerror(errno));
	}
	free(addr);
	free(nodes);
	free(status);
}

/* The ksm child: at the go, the round's action on its merged mapping. */
static void __attribute__((noreturn))
ksm_child(struct line *l, char *p, size_t pages, uint64_t seed,
	  long long round)
{
	struct rmb_pageout po = { 0 };

	pin(1);
	atomic_store(&l->ready, 1);
	spin_until(&l->go);
	if (round % 3 == 0)
		push_out_and_back(p, pages);
	else if (round % 3 == 1)
		rewrite_down(p, pages);
	else
		ksm_mergeable(p, pages * rmb_page, MADV_UNMERGEABLE);
	l->child_bad = ksm_verify(p, pages, seed);
	spin_until(&l->moved);
	/* no KSM page left to it: every page must be found */
	if (checked && round % 3)
		l->child_errno = rmb_pageout_check(p, pages, &po);
	l->child_missed = po.missed;
	_exit(0);
}

/* The parent's side of a ksm round: returns where its pages are now. */
static char *ksm_parent(struct tally *t, const struct race *rc,
			uint64_t seed, long long round)
{
	size_t len = rc->pages * rmb_page;
	char *p = rc->src;

	switch (round / 3 % 3) {
	case 0:
		p = mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
			   rc->dst);
		if (p == MAP_FAILED) {
			t->mremap_failed++;
			report_round(t, round, "mremap failed", errno);
			p = rc->src;
		} else {
			t->moved_pages += (long long)rc->pages;
		}
		break;
	case 1:
		press(len);
		touch_down(p, rc->pages);
		break;
	default:
		migrate_region(p, rc->pages);
	}
	if (ksm_verify(p, rc->pages, seed)) {
		t->parent_bad++;
		report_round(t, round, "parent: pages mismatch", 0);
	}
	return p;
}

/* One ksm round; adds what went wrong to t. */
static void round_ksm(struct tally *t, struct race *rc, long long round)
{
	struct line *l = rc->l;
	size_t len = rc->pages * rmb_page;
	long long peer_bad;
	char *moved;
	pid_t pid;

	if (!rmb_map_anon(rc->src, len))
		rmb_die(RMB_EXIT_FAIL, "mmap of %zu bytes: %s", len,
			strerror(errno));
	ksm_fill(rc->src, rc->pages, rc->seed);
	ksm_mergeable(rc->src, len, MADV_MERGEABLE);
	memset(l, 0, sizeof(*l));
	if (!ksm_wait_merged(rc->pages))
		t->not_merged++;
	pid = fork_side();
	if (pid == 0)
		ksm_child(l, rc->src, rc->pages, rc->seed, round);
	spin_until(&l->ready);
	atomic_store(&l->go, 1);
	rmb_peer_send(&rc->peer, 'x');
	moved = ksm_parent(t, rc, rc->seed, round);
	munmap(moved, len);		/* src is free for the next */
	child_outcome(t, l, pid, round);
	peer_bad = rmb_peer_answer(&rc->peer);
	if (peer_bad) {
		t->peer_bad++;
		report_round(t, round, "peer: pages mismatch", peer_bad);
	}
}

/* ksm: ksmd on, the peer started; and at the end, unmerge and check. */
static void ksm_begin(struct race *rc)
{
	ksm_knob("run", 0);
	ksm_knob("pages_to_scan", (long long)(4 * rc->pages));
	ksm_knob("sleep_millisecs", 5);
	ksm_knob("run", 1);
	ksm_start_peer(rc);
}

static void ksm_end(struct tally *t, struct race *rc)
{
	long long peer;

	ksm_knob("run", 2);	/* unmerge every KSM page, and stop */
	if (in_guest())
		t->ksm_left = rmb_read_number(KSM "pages_shared");
	if (t->ksm_left)
		rmb_error("%lld KSM pages left after unmerging all",
			  t->ksm_left);
	rmb_peer_send(&rc->peer, 'q');
	peer = rmb_peer_answer(&rc->peer);
	if (peer > 0)
		t->peer_bad++;
	if (peer < 0) {
		t->missed++;
		rmb_error("peer: %lld pages still present after MADV_PAGEOUT "
			  "(the walk did not find them)", -peer);
	}
	if (rmb_peer_reap(&rc->peer) != 0)
		t->child_died++;
	ksm_knob("run", 0);
}

/* The modes: a round each, what its region needs, a start and an end. */
struct mode {
	const char *name;
	void (*round)(struct tally *t, struct race *rc, long long round);
	int holes;		/* src, dst, dst_off: holes of whole tables */
	int huge;		/* pages rounded up to whole table spans */
	int copies;		/* copies of the region memory must hold */
	void (*begin)(struct race *rc);
	void (*end)(struct tally *t, struct race *rc);
};

static const struct mode modes[] = {
	{ "mremap-swapin", round_swapin, 0, 0, 2, NULL, NULL },
	{ "mremap-kill", round_kill, 1, 0, 2, NULL, NULL },
	{ "thp-mremap", round_thp, 1, 1, 2, NULL, NULL },
	{ "thp-split", round_split, 1, 1, 2, NULL, NULL },
	{ "collapse-fork", round_collapse, 1, 1, 3, NULL, NULL },
	{ "thp-swap", round_swap, 1, 1, 2, NULL, NULL },
	{ "ksm", round_ksm, 1, 0, 3, ksm_begin, ksm_end },
};

static const struct mode *the_mode(void)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (rmb_mode_is(modes[i].name))
			return &modes[i];
	rmb_die(RMB_EXIT_USAGE, "mode=%s has no rounds", rmb_arg_str("mode"));
}

/* The region's holes: src, dst, and dst one page off alignment. */
static void reserve_holes(struct race *rc, size_t len)
{
	rc->src = rmb_hole(len, 0);
	rc->dst = rmb_hole(len, 0);
	rc->dst_off = rmb_hole(len, rmb_page);
	if (!rc->src || !rc->dst || !rc->dst_off)
		rmb_die(RMB_EXIT_FAIL, "reserving 3 x %zu bytes: %s", len,
			strerror(errno));
}

int main(int argc, char **argv)
{
	struct rmb_snap a, b, d;
	struct tally t = { 0 };
	struct race rc = { 0 };
	const struct mode *m;
	struct rmb_json j;
	size_t pages, len;
	long long failures;
	char what[64];

	rmb_init("race");
	rmb_parse_args(params, argc, argv);
	pages = (size_t)rmb_arg("pages");
	if (rmb_mode_is("ksm-peer")) {
		checked = can_check(pages);
		ksm_peer(pages, (uint64_t)rmb_arg("seed"));
	}
	m = the_mode();
	if (m->huge) {		/* whole huge pages: a span covers a pmd */
		size_t huge = RMB_TABLE_SPAN / rmb_page;

		pages = (pages + huge - 1) / huge * huge;
	}
	len = pages * rmb_page;
	ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(what, sizeof(what), "the region, %d times", m->copies);
	rmb_need_mem_kb((long long)(m->copies * len / 1024), 1, what);
	rmb_need_addr_space(3 * (uint64_t)len + 12 * RMB_TABLE_SPAN, "pages");
	checked = can_check(pages);
	rc.pages = pages;
	rc.huge = m->huge;
	rc.seed = (uint64_t)rmb_arg("seed");
	rc.l = mmap(NULL, rmb_page, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rc.l == MAP_FAILED)
		rmb_die(RMB_EXIT_FAIL, "mmap: %s", strerror(errno));
	if (m->holes)
		reserve_holes(&rc, len);
	pin(0);
	rmb_snap_take(&a);
	if (m->begin)
		m->begin(&rc);
	for (long long r = 0; r < rmb_arg("rounds"); r++)
		m->round(&t, &rc, r);
	if (m->end)
		m->end(&t, &rc);
	rmb_snap_take(&b);
	rmb_snap_delta(&d, &a, &b);
	failures = t.mremap_failed + t.parent_bad + t.child_bad + t.missed +
		   t.child_died + t.peer_bad + (t.ksm_left != 0) +
		   t.child_op_failed;

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
	rmb_json_int(&j, "killed_inside_count", t.killed_inside);
	rmb_json_int(&j, "killed_after_count", t.killed_after);
	rmb_json_int(&j, "full_move_ns", rc.full_ns);
	rmb_json_int(&j, "not_merged_count", t.not_merged);
	rmb_json_int(&j, "peer_mismatch_count", t.peer_bad);
	rmb_json_int(&j, "ksm_left_pages", t.ksm_left);
	rmb_json_int(&j, "child_op_failed_count", t.child_op_failed);
	rmb_json_int(&j, "collapse_failed_count", t.collapse_failed);
	rmb_json_int(&j, "collapse_errno", t.collapse_errno);
	rmb_json_delta(&j, &d);
	rmb_json_end(&j);
	return failures ? RMB_EXIT_FAIL : 0;
}
