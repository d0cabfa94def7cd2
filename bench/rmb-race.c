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
#include <sys/wait.h>
#include <unistd.h>

#define ERRORS_SHOWN 5

static struct rmb_param params[] = {
	{ .key = "mode",
	  .choices = "mremap-swapin|mremap-kill|thp-mremap|ksm|ksm-peer",
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
	long long child_bad, child_missed, child_present, child_errno;
	long long move_ns;
};

struct tally {
	long long rounds, mremap_failed, parent_bad, child_bad, missed;
	long long not_swapped, child_died, moved_pages;
	long long killed_inside, killed_after;
	long long not_merged, peer_bad, ksm_left;
};

/* What a round of a mode needs besides its tally and its number. */
struct race {
	struct line *l;
	size_t pages;
	uint64_t seed;
	char *src, *dst;	/* mremap-kill, thp-mremap: holes of whole tables */
	char *dst_off;		/* thp-mremap: a hole one page off alignment */
	long long full_ns;	/* mremap-kill: round 0's whole move */
	int peer_cmd, peer_rep;	/* ksm: pipes to and from the peer */
	pid_t peer;
};

static int ncpus;
static int checked;		/* swap to push pages to: checks are made */

/* a host (no /proc/rmapbench) or no swap: the checks need swap */
static int can_check(size_t pages)
{
	return strcmp(rmb_scheme(), "unknown") != 0 &&
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
			     t->missed + t->child_died;

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
static void round_swapin(struct tally *t, const struct race *rc,
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

/* The thp-mremap child: at the go, the round's action on its mapping. */
static void __attribute__((noreturn))
thp_child(struct line *l, char *p, size_t pages, uint64_t seed,
	  long long round)
{
	size_t len = pages * rmb_page;

	pin(1);
	atomic_store(&l->ready, 1);
	spin_until(&l->go);
	switch (round % 3) {
	case 0:
		madvise(p, len, MADV_PAGEOUT);
		break;
	case 1:
		rewrite_down(p, pages);
		break;
	default:
		if (mprotect(p + len / 4, len / 2, PROT_READ) != 0 ||
		    mprotect(p + len / 4, len / 2, PROT_READ | PROT_WRITE))
			_exit(RMB_EXIT_FAIL);
		touch_down(p, pages);
	}
	child_end(l, p, pages, seed);
}

/* Map the source region afresh, filled for this round's seed. */
static void map_src(const struct race *rc, uint64_t seed)
{
	size_t len = rc->pages * rmb_page;

	if (!rmb_map_anon(rc->src, len))
		rmb_die(RMB_EXIT_FAIL, "mmap of %zu bytes: %s", len,
			strerror(errno));
	rmb_fill(rc->src, rc->pages, seed, 0);
	memset(rc->l, 0, sizeof(*rc->l));
}

/* One thp-mremap round; adds what went wrong to t. */
static void round_thp(struct tally *t, const struct race *rc, long long round)
{
	struct line *l = rc->l;
	uint64_t seed = rc->seed + (uint64_t)round;
	char *dst = round % 2 ? rc->dst_off : rc->dst;
	char *moved;
	pid_t pid;

	map_src(rc, seed);
	pid = fork_side();
	if (pid == 0)
		thp_child(l, rc->src, rc->pages, seed, round);
	spin_until(&l->ready);
	atomic_store(&l->go, 1);
	moved = parent_move(t, rc->src, dst, rc->pages, seed, round);
	munmap(moved, rc->pages * rmb_page);	/* src is free for the next */
	child_outcome(t, l, pid, round);
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

/* ---- ksm ------------------------------------------------------------ */

#define KSM "/sys/kernel/mm/ksm/"
#define KSM_PATTERNS 8		/* distinct page contents in a region */

/* A KSM knob, in a guest only: a host's KSM is left alone (tests). */
static void ksm_knob(const char *knob, long long value)
{
	if (strcmp(rmb_scheme(), "unknown"))
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
	if (!strcmp(rmb_scheme(), "unknown"))
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
	answer = 0;
	if (rmb_write_all(3, &answer, sizeof(answer)) != 0)
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
		if (rmb_write_all(3, &answer, sizeof(answer)) != 0 ||
		    cmd == 'q')
			_exit(0);
	}
	_exit(RMB_EXIT_FAIL);
}

static long long peer_ask(const struct race *rc, char cmd)
{
	long long answer;

	if (rmb_write_all(rc->peer_cmd, &cmd, 1) != 0 ||
	    read(rc->peer_rep, &answer, sizeof(answer)) != sizeof(answer))
		rmb_die(RMB_EXIT_FAIL, "the ksm peer (pid %d) went away",
			(int)rc->peer);
	return answer;
}

/* Start the peer: this program again, in a bundle of its own. */
static void ksm_start_peer(struct race *rc)
{
	char pages[32], seed[32];
	int cmd[2], rep[2];
	long long ready;

	snprintf(pages, sizeof(pages), "pages=%zu", rc->pages);
	snprintf(seed, sizeof(seed), "seed=%llu", (unsigned long long)rc->seed);
	if (pipe(cmd) != 0 || pipe(rep) != 0)
		rmb_die(RMB_EXIT_FAIL, "pipe: %s", strerror(errno));
	rc->peer = fork_side();
	if (rc->peer == 0) {
		if (dup2(cmd[0], 0) < 0 || dup2(rep[1], 3) < 0)
			_exit(RMB_EXIT_FAIL);
		execl("/proc/self/exe", "rmb-race", "mode=ksm-peer", pages,
		      seed, (char *)NULL);
		_exit(RMB_EXIT_FAIL);
	}
	close(cmd[0]);
	close(rep[1]);
	rc->peer_cmd = cmd[1];
	rc->peer_rep = rep[0];
	if (read(rc->peer_rep, &ready, sizeof(ready)) != sizeof(ready))
		rmb_die(RMB_EXIT_FAIL, "the ksm peer did not start");
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
static void round_ksm(struct tally *t, const struct race *rc, long long round)
{
	struct line *l = rc->l;
	size_t len = rc->pages * rmb_page;
	long long peer_bad;
	char *moved;
	pid_t pid;
	char go = 'x';

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
	if (rmb_write_all(rc->peer_cmd, &go, 1) != 0)
		rmb_die(RMB_EXIT_FAIL, "the ksm peer went away");
	moved = ksm_parent(t, rc, rc->seed, round);
	munmap(moved, len);		/* src is free for the next */
	child_outcome(t, l, pid, round);
	if (read(rc->peer_rep, &peer_bad, sizeof(peer_bad)) !=
	    sizeof(peer_bad))
		rmb_die(RMB_EXIT_FAIL, "the ksm peer went away");
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

static void ksm_end(struct tally *t, const struct race *rc)
{
	long long peer;
	int status;

	ksm_knob("run", 2);	/* unmerge every KSM page, and stop */
	if (strcmp(rmb_scheme(), "unknown"))
		t->ksm_left = rmb_read_number(KSM "pages_shared");
	if (t->ksm_left)
		rmb_error("%lld KSM pages left after unmerging all",
			  t->ksm_left);
	peer = peer_ask(rc, 'q');
	if (peer > 0)
		t->peer_bad++;
	if (peer < 0) {
		t->missed++;
		rmb_error("peer: %lld pages still present after MADV_PAGEOUT "
			  "(the walk did not find them)", -peer);
	}
	if (waitpid(rc->peer, &status, 0) != rc->peer || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		t->child_died++;
	ksm_knob("run", 0);
}

int main(int argc, char **argv)
{
	struct rmb_snap a, b, d;
	struct tally t = { 0 };
	struct race rc = { 0 };
	struct rmb_json j;
	size_t pages, len;
	long long failures;
	int kill_mode, thp_mode, ksm_mode;

	rmb_init("race");
	rmb_parse_args(params, argc, argv);
	pages = (size_t)rmb_arg("pages");
	if (rmb_mode_is("ksm-peer")) {
		checked = can_check(pages);
		ksm_peer(pages, (uint64_t)rmb_arg("seed"));
	}
	len = pages * rmb_page;
	kill_mode = rmb_mode_is("mremap-kill");
	thp_mode = rmb_mode_is("thp-mremap");
	ksm_mode = rmb_mode_is("ksm");
	if (thp_mode) {		/* whole huge pages: a span covers a pmd */
		size_t huge = RMB_TABLE_SPAN / rmb_page;

		pages = (pages + huge - 1) / huge * huge;
		len = pages * rmb_page;
	}
	ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	rmb_need_mem_kb((long long)((ksm_mode ? 3 : 2) * len / 1024), 1,
			ksm_mode ? "the region, three times" : "the region, twice");
	rmb_need_addr_space(3 * (uint64_t)len + 12 * RMB_TABLE_SPAN, "pages");
	checked = can_check(pages);
	rc.pages = pages;
	rc.seed = (uint64_t)rmb_arg("seed");
	rc.l = mmap(NULL, rmb_page, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rc.l == MAP_FAILED)
		rmb_die(RMB_EXIT_FAIL, "mmap: %s", strerror(errno));
	if (kill_mode || thp_mode || ksm_mode) {
		rc.src = rmb_hole(len, 0);
		rc.dst = rmb_hole(len, 0);
		rc.dst_off = thp_mode ? rmb_hole(len, rmb_page) : rc.dst;
		if (!rc.src || !rc.dst || !rc.dst_off)
			rmb_die(RMB_EXIT_FAIL, "reserving 3 x %zu bytes: %s",
				len, strerror(errno));
	}
	pin(0);
	rmb_snap_take(&a);
	if (ksm_mode)
		ksm_begin(&rc);
	for (long long r = 0; r < rmb_arg("rounds"); r++) {
		if (kill_mode)
			round_kill(&t, &rc, r);
		else if (thp_mode)
			round_thp(&t, &rc, r);
		else if (ksm_mode)
			round_ksm(&t, &rc, r);
		else
			round_swapin(&t, &rc, r);
	}
	if (ksm_mode)
		ksm_end(&t, &rc);
	rmb_snap_take(&b);
	rmb_snap_delta(&d, &a, &b);
	failures = t.mremap_failed + t.parent_bad + t.child_bad + t.missed +
		   t.child_died + t.peer_bad + (t.ksm_left != 0);

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
	rmb_json_delta(&j, &d);
	rmb_json_end(&j);
	return failures ? RMB_EXIT_FAIL : 0;
}
