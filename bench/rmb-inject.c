/*
 * rmb-inject: the anon rmap's failure paths, driven by fault injection.
 *
 * On a kernel with CONFIG_FAULT_INJECTION, FAILSLAB and FAIL_PAGE_ALLOC
 * (the suite's "faultinject" variant), /proc/thread-self/fail-nth makes
 * the n-th allocation this thread attempts fail.  For each operation
 * below, and for n = 1, 2, ... until the operation no longer reaches an
 * n-th allocation, set fail-nth to n, do the operation, and check:
 * a system call may fail (ENOMEM, or EAGAIN for fork), but every page
 * still holds what it must, in the process and at the address where it
 * must now be; a failed mremap leaves the old mapping with all its data.
 * What leaks (an rmap object the failure path forgot) the suite's slab
 * count finds after the program; what faults, the console.
 *
 * mremap:  move a region: alone (sole member: page tables move whole),
 *          shared with a child (pages copied as they move), and pushed
 *          out and shared (swap entries move, the child copies at
 *          swap-in); the child verifies its own view afterwards.  Also
 *          shared and two table spans long between 4 MB-aligned holes,
 *          failed every eighth of the way: the move back after the
 *          failure meets old tables emptied pte by pte (once a WARNING
 *          in move_normal_pmd), and a pageout must then find every page
 *          the mover maps alone
 * mremap-back: the move back after a failed move must not fail.  Two
 *          table spans, the second shared with a child (its pages are
 *          copied as they move), the first mapped by the mover alone
 *          but not exclusively (the child unmapped it: its tables move
 *          whole).  Once the n-th point has failed the move, every page
 *          allocation of the mover fails too (fail_page_alloc at 100%,
 *          for this thread alone), and so does every folio trylock of
 *          anonmm's move (fail_anonmm_trylock, where the kernel has it:
 *          as if kswapd held each folio lock); the move back must still
 *          bring every page home, and a pageout find each one
 * fork:    fork a process mapping a region; the child verifies it
 * exec:    a child execs this program (bprm_mm_init: a fresh mm and its
 *          rmap object, freed again if exec fails)
 * swapin:  a page moved by one process while a child holds its swap
 *          entry: the child's fault copies it; inject into that fault
 *          (a failed fault is retried by the kernel)
 *
 * Without fail-nth (any other kernel), or outside an rmapbench guest
 * (no /proc/rmapbench: a host's injection is never touched), nothing is
 * injected: the program says so (injectable_count 0) and succeeds.  The fault attrs'
 * filters are set through debugfs, which the program mounts: failslab
 * and fail_page_alloc must not ignore sleeping or highmem allocations,
 * nor order-0 pages.
 *
 * Result: one "summary" line: operations done, injections that made a
 * call fail, that the call survived, and the mismatching pages (must be
 * 0); an RMB-ERROR line per mismatch.
 */
#define _GNU_SOURCE
#include "lib/rmb.h"
#include "lib/inject-probe.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAIL_NTH "/proc/thread-self/fail-nth"
#define MAKE_IT_FAIL "/proc/thread-self/make-it-fail"
#define DEBUGFS "/sys/kernel/debug"

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "all|mremap|mremap-back|fork|exec|swapin",
	  .sdef = "all", .help = "the operations to inject into" },
	{ .key = "pages", .def = 64, .min = 1, .max = 4096,
	  .help = "pages of each region" },
	{ .key = "max_nth", .def = 400, .min = 1, .max = 100000,
	  .help = "the most injection points tried per operation" },
	{ .key = "seed", .def = 1, .min = 0, .max = 2147483647,
	  .help = "seed of the page patterns" },
	{ .key = NULL },
};

struct tally {
	long long ops, failed, survived, bad, exhausted;
	long long killed;	/* execs failed past the point of no return */
	long long tables_failed;	/* MV_TABLES moves failed (and back) */
	long long back_failed;		/* mremap-back moves failed (and back) */
	int back_trylock;		/* fail_anonmm_trylock is there */
};

static size_t npages;

/* ---- fault injection ------------------------------------------------ */

/* Let failslab and fail_page_alloc fail every allocation fail-nth picks. */
static int injection_setup(void)
{
	static const char *const files[][2] = {
		{ "failslab/ignore-gfp-wait", "N" },
		{ "fail_page_alloc/ignore-gfp-wait", "N" },
		{ "fail_page_alloc/ignore-gfp-highmem", "N" },
		{ "fail_page_alloc/min-order", "0" },
		{ "failslab/verbose", "0" },
		{ "fail_page_alloc/verbose", "0" },
	};
	char path[128];

	/* only in an rmapbench guest: never touch a host's fault injection */
	if (!strcmp(rmb_scheme(), "unknown") || access(FAIL_NTH, W_OK) != 0)
		return 0;
	if (access(DEBUGFS "/failslab", F_OK) != 0 &&
	    mount("debugfs", DEBUGFS, "debugfs", 0, NULL) != 0)
		rmb_die(RMB_EXIT_FAIL, "mount debugfs on %s: %s", DEBUGFS,
			strerror(errno));
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), DEBUGFS "/%s", files[i][0]);
		if (rmb_write_file(path, files[i][1]) != 0)
			rmb_die(RMB_EXIT_FAIL, "cannot set %s to %s: %s", path,
				files[i][1], strerror(errno));
	}
	return 1;
}

static void fail_nth(long long n)
{
	char text[32];

	snprintf(text, sizeof(text), "%lld", n);
	if (rmb_write_file(FAIL_NTH, text) != 0)
		rmb_die(RMB_EXIT_FAIL, "write %s to %s: %s", text, FAIL_NTH,
			strerror(errno));
}

/* Turn injection off; true if the n-th point was reached (injected). */
static int injected(void)
{
	char text[32] = "";
	int fd = open(FAIL_NTH, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof(text) - 1);

	if (fd >= 0)
		close(fd);
	fail_nth(0);
	return n > 0 && atoi(text) == 0;
}

/* ---- regions ---------------------------------------------------------- */

/* pages of a region, filled; at an address (a hole) if at is set */
static char *region(uint64_t seed, size_t pages, char *at)
{
	char *p = rmb_map_anon(at, pages * rmb_page);

	if (!p)
		rmb_die(RMB_EXIT_FAIL, "mmap: %s", strerror(errno));
	rmb_fill(p, pages, seed, 0);
	return p;
}

static void check(struct tally *t, const char *what, long long nth,
		  const char *p, size_t pages, uint64_t seed)
{
	size_t bad = rmb_verify(p, pages, seed, 0, 0);

	if (bad) {
		t->bad += (long long)bad;
		rmb_error("%s, fail-nth %lld: %zu of %zu pages mismatch", what,
			  nth, bad, pages);
	}
}

/* A child that waits for a byte on fd, verifies p, exits 0 or 1. */
static pid_t holder(int fd, const char *p, size_t pages, uint64_t seed)
{
	pid_t pid = rmb_fork();
	char c;

	if (pid != 0)
		return pid;
	if (read(fd, &c, 1) != 1)
		_exit(3);
	_exit(rmb_verify(p, pages, seed, 0, 0) ? 1 : 0);
}

static void reap(struct tally *t, const char *what, long long nth,
		 pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		t->bad++;
		rmb_error("%s, fail-nth %lld: the child's pages mismatch "
			  "(status %#x)", what, nth, status);
	}
}

/* ---- operations: each returns 1 if injection hit (go on), else 0 ---- */

enum { MV_ALONE, MV_SHARED, MV_SWAPPED, MV_TABLES };
static const char *const mv_name[] = { "mremap alone", "mremap shared",
				       "mremap swapped",
				       "mremap shared tables" };

/* MV_TABLES: two table spans, between 4 MB-aligned holes */
#define TABLES_PAGES (2 * RMB_TABLE_SPAN / rmb_page)

/*
 * After a failed move of MV_TABLES, every page the mover maps alone (the
 * copies its move made, then moved back) must be found by a pageout: the
 * move back put each index back with its pte.
 */
static void check_found(struct tally *t, const char *what, long long nth,
			char *p, size_t pages)
{
	struct rmb_pageout po = { 0 };
	int err;

	if (rmb_meminfo_kb("SwapFree") < (long long)(2 * pages * rmb_page /
						     1024))
		return;		/* nowhere to push them: not checked */
	err = rmb_pageout_check(p, pages, &po);
	if (err > 0)
		rmb_die(RMB_EXIT_FAIL, "MADV_PAGEOUT: %s", strerror(err));
	if (po.missed) {
		t->bad += po.missed;
		rmb_error("%s, fail-nth %lld: %lld of %lld pages still present "
			  "after MADV_PAGEOUT (the walk did not find them)",
			  what, nth, po.missed, po.candidates);
	}
}

static int op_mremap(struct tally *t, int kind, long long nth, uint64_t seed)
{
	size_t pages = kind == MV_TABLES ? TABLES_PAGES : npages;
	size_t len = pages * rmb_page;
	char *at = kind == MV_TABLES ? rmb_hole(len, 0) : NULL;
	char *dst = kind == MV_TABLES ? rmb_hole(len, 0) : rmb_reserve(len);
	char *p, *moved;
	pid_t pid = 0;
	int go[2], hit, err;

	if (!dst || (kind == MV_TABLES && !at) || pipe(go) != 0)
		rmb_die(RMB_EXIT_FAIL, "mmap/pipe: %s", strerror(errno));
	p = region(seed, pages, at);
	if (kind == MV_SWAPPED)
		madvise(p, len, MADV_PAGEOUT);
	if (kind != MV_ALONE)
		pid = holder(go[0], p, pages, seed);
	fail_nth(nth);
	moved = mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	err = errno;
	hit = injected();
	t->ops++;
	if (moved == MAP_FAILED) {
		if (err != ENOMEM)
			rmb_die(RMB_EXIT_FAIL, "%s, fail-nth %lld: mremap: %s",
				mv_name[kind], nth, strerror(err));
		t->failed++;
		t->tables_failed += kind == MV_TABLES;
		moved = p;	/* the old mapping keeps every page */
	} else if (hit) {
		t->survived++;
	}
	check(t, mv_name[kind], nth, moved, pages, seed);
	if (kind == MV_TABLES && moved == p)
		check_found(t, mv_name[MV_TABLES], nth, p, pages);
	if (pid) {
		if (write(go[1], "g", 1) != 1)
			rmb_die(RMB_EXIT_FAIL, "pipe: %s", strerror(errno));
		reap(t, mv_name[kind], nth, pid);
	}
	close(go[0]);
	close(go[1]);
	if (kind == MV_TABLES) {
		rmb_hole_free(p, len, 0);
		rmb_hole_free(dst, len, 0);
		return hit;
	}
	munmap(moved, len);
	if (moved != dst)
		munmap(dst, len);
	return hit;
}

static int op_fork(struct tally *t, long long nth, uint64_t seed)
{
	char *p = region(seed, npages, NULL);
	pid_t pid;
	int hit, err;

	fail_nth(nth);
	pid = fork();
	if (pid == 0)
		_exit(rmb_verify(p, npages, seed, 0, 0) ? 1 : 0);
	err = errno;
	hit = injected();
	t->ops++;
	if (pid < 0) {
		if (err != ENOMEM && err != EAGAIN)
			rmb_die(RMB_EXIT_FAIL, "fork, fail-nth %lld: %s", nth,
				strerror(err));
		t->failed++;
	} else {
		t->survived += hit;
		reap(t, "fork", nth, pid);
	}
	check(t, "fork", nth, p, npages, seed);
	munmap(p, npages * rmb_page);
	return hit;
}

/*
 * Exit codes of the exec child: the new image (inject-probe, beside this
 * program) tells whether the n-th point came (fail-nth survives exec,
 * not fork); the old one, after a failed execv, whether injection failed
 * it.  A failure after exec's point of no return (the old mm already
 * gone) cannot return to the caller: bprm_execve() kills it with
 * SIGSEGV, on either scheme.  A new image that crashed instead would
 * print "segfault at", which fails the boot.
 */
enum { EX_MISMATCH = 1, EX_SURVIVED = PROBE_CAME,
       EX_NOT_REACHED = PROBE_NOT_REACHED, EX_FAILED, EX_FAILED_ALONE,
       EX_KILLED = 256 /* not an exit code */ };

static char probe_path[4096];

/* inject-probe, in the directory of this program. */
static void find_probe(void)
{
	ssize_t n = readlink("/proc/self/exe", probe_path,
			     sizeof(probe_path) - sizeof(INJECT_PROBE) - 1);
	char *slash;

	if (n <= 0)
		rmb_die(RMB_EXIT_FAIL, "readlink /proc/self/exe: %s",
			strerror(errno));
	probe_path[n] = 0;
	slash = strrchr(probe_path, '/');
	strcpy(slash ? slash + 1 : probe_path, INJECT_PROBE);
	if (access(probe_path, X_OK) != 0)
		rmb_die(RMB_EXIT_FAIL, "%s: %s (make -C bench builds it)",
			probe_path, strerror(errno));
}

/* The child sets fail-nth itself: the parent's fork must not use it. */
static int op_exec(struct tally *t, long long nth, uint64_t seed)
{
	char *p = region(seed, npages, NULL);
	int status, code;
	pid_t pid;

	pid = rmb_fork();
	if (pid == 0) {
		char *argv[] = { INJECT_PROBE, NULL };

		fail_nth(nth);
		execv(probe_path, argv);
		code = injected() ? EX_FAILED : EX_FAILED_ALONE;
		_exit(rmb_verify(p, npages, seed, 0, 0) ? EX_MISMATCH : code);
	}
	t->ops++;
	if (waitpid(pid, &status, 0) != pid)
		code = -1;
	else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
		code = EX_KILLED;
	else
		code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	check(t, "exec", nth, p, npages, seed);
	munmap(p, npages * rmb_page);
	switch (code) {
	case EX_KILLED:
		t->failed++;
		t->killed++;
		return 1;
	case EX_SURVIVED:
		t->survived++;
		return 1;
	case EX_FAILED:
		t->failed++;
		return 1;
	case EX_NOT_REACHED:
		return 0;
	case EX_FAILED_ALONE:
		rmb_die(RMB_EXIT_FAIL, "exec, fail-nth %lld: execv failed "
			"without an injection", nth);
	}
	t->bad++;
	rmb_error("exec, fail-nth %lld: the child ended with status %#x", nth,
		  status);
	return 0;
}

/*
 * The parent pushes a shared region out and moves it; the child, still
 * holding the swap entries at the old address, swaps in with injection:
 * each page found mapped (by the parent, at its new address) is copied.
 */
static int op_swapin(struct tally *t, long long nth, uint64_t seed)
{
	size_t len = npages * rmb_page;
	char *p = region(seed, npages, NULL), *dst = rmb_reserve(len);
	char *moved;
	int go[2], res[2], status;
	long long hit = 0;
	pid_t pid;

	if (!dst || pipe(go) != 0 || pipe(res) != 0)
		rmb_die(RMB_EXIT_FAIL, "mmap/pipe: %s", strerror(errno));
	madvise(p, len, MADV_PAGEOUT);
	pid = rmb_fork();
	if (pid == 0) {
		char c;

		if (read(go[0], &c, 1) != 1)
			_exit(3);
		fail_nth(nth);
		(void)*(volatile char *)p;	/* the faulting read */
		c = injected() ? 'f' : 'n';
		if (write(res[1], &c, 1) != 1)
			_exit(3);
		_exit(rmb_verify(p, npages, seed, 0, 0) ? 1 : 0);
	}
	moved = mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (moved == MAP_FAILED)
		rmb_die(RMB_EXIT_FAIL, "swapin: mremap: %s", strerror(errno));
	(void)*(volatile char *)moved;	/* swapped in and mapped, moved */
	if (write(go[1], "g", 1) != 1)
		rmb_die(RMB_EXIT_FAIL, "pipe: %s", strerror(errno));
	if (read(res[0], &status, 1) == 1)
		hit = (char)status == 'f';
	reap(t, "swapin", nth, pid);
	t->ops++;
	t->survived += hit;
	check(t, "swapin", nth, moved, npages, seed);
	close(go[0]);
	close(go[1]);
	close(res[0]);
	close(res[1]);
	munmap(moved, len);
	return (int)hit;
}

/* ---- the move back after a failure: mremap-back ------------------- */

/*
 * The attributes that fail every page allocation and folio trylock of a
 * thread with make-it-fail set, once its fail-nth has fired; off again
 * with on = 0.  Returns whether fail_anonmm_trylock is there (anonmm).
 */
static int back_attrs(int on)
{
	static const char *const attrs[] = { "fail_page_alloc",
					     "fail_anonmm_trylock" };
	static const char *const files[][3] = {	/* file, on, off */
		{ "task-filter", "Y", "N" },
		{ "times", "-1", "1" },
		{ "verbose", "0", "0" },
		{ "probability", "100", "0" },
	};
	char path[128];
	int trylock = 0;

	for (size_t a = 0; a < 2; a++) {
		snprintf(path, sizeof(path), DEBUGFS "/%s", attrs[a]);
		if (a == 1 && access(path, F_OK) != 0)
			break;		/* anon_vma: no folio trylock to fail */
		trylock = a == 1;
		for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
			snprintf(path, sizeof(path), DEBUGFS "/%s/%s",
				 attrs[a], files[f][0]);
			if (rmb_write_file(path, files[f][on ? 1 : 2]) != 0)
				rmb_die(RMB_EXIT_FAIL, "cannot set %s: %s",
					path, strerror(errno));
		}
	}
	return trylock;
}

static void pwrite_text(int fd, const char *text, const char *path)
{
	if (pwrite(fd, text, strlen(text), 0) != (ssize_t)strlen(text))
		rmb_die(RMB_EXIT_FAIL, "write %s to %s: %s", text, path,
			strerror(errno));
}

/*
 * mremap with make-it-fail set around it and fail-nth armed: both files
 * opened beforehand, for after the n-th point no allocation of this
 * thread succeeds until make-it-fail is cleared (and a path walk or a
 * fault would need one).  Returns the mremap's result, its errno in
 * *err, and whether the n-th point came in *hit.
 */
static char *mremap_failing(char *p, size_t len, char *dst, long long nth,
			    int *err, int *hit)
{
	int nfd = open(FAIL_NTH, O_RDWR | O_CLOEXEC);
	int mfd = open(MAKE_IT_FAIL, O_RDWR | O_CLOEXEC);
	char text[32];
	char *moved;
	ssize_t n;

	if (nfd < 0 || mfd < 0)
		rmb_die(RMB_EXIT_FAIL, "open %s, %s: %s", FAIL_NTH,
			MAKE_IT_FAIL, strerror(errno));
	snprintf(text, sizeof(text), "%lld", nth);
	pwrite_text(mfd, "1", MAKE_IT_FAIL);
	pwrite_text(nfd, text, FAIL_NTH);
	moved = mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	*err = errno;
	memset(text, 0, sizeof(text));
	n = pread(nfd, text, sizeof(text) - 1, 0);
	pwrite_text(nfd, "0", FAIL_NTH);
	pwrite_text(mfd, "0", MAKE_IT_FAIL);
	close(nfd);
	close(mfd);
	*hit = n > 0 && atoi(text) == 0;
	return moved;
}

/* The child of mremap-back: maps the second span only, verifies it. */
static pid_t back_holder(int fd, char *p, size_t half, uint64_t seed)
{
	pid_t pid = rmb_fork();
	char c;

	if (pid != 0)
		return pid;
	munmap(p, half * rmb_page);
	if (read(fd, &c, 1) != 1)
		_exit(3);
	_exit(rmb_verify(p + half * rmb_page, half, seed, half, 0) ? 1 : 0);
}

static int op_mremap_back(struct tally *t, long long nth, uint64_t seed)
{
	const char *what = "mremap back";
	size_t pages = TABLES_PAGES, len = pages * rmb_page;
	char *p, *dst = rmb_hole(len, 0), *at = rmb_hole(len, 0), *moved;
	int go[2], hit, err;
	pid_t pid;

	if (!dst || !at || pipe(go) != 0)
		rmb_die(RMB_EXIT_FAIL, "mmap/pipe: %s", strerror(errno));
	p = region(seed, pages, at);
	pid = back_holder(go[0], p, pages / 2, seed);
	moved = mremap_failing(p, len, dst, nth, &err, &hit);
	t->ops++;
	if (moved == MAP_FAILED) {
		if (err != ENOMEM)
			rmb_die(RMB_EXIT_FAIL, "%s, fail-nth %lld: mremap: %s",
				what, nth, strerror(err));
		t->failed++;
		t->back_failed++;
		moved = p;	/* the old mapping keeps every page */
	} else if (hit) {
		t->survived++;
	}
	check(t, what, nth, moved, pages, seed);
	if (moved == p)
		check_found(t, what, nth, p, pages);
	if (write(go[1], "g", 1) != 1)
		rmb_die(RMB_EXIT_FAIL, "pipe: %s", strerror(errno));
	reap(t, what, nth, pid);
	close(go[0]);
	close(go[1]);
	rmb_hole_free(p, len, 0);
	rmb_hole_free(dst, len, 0);
	return hit;
}

/*
 * n = 1, 2, ... until an operation reaches no n-th injection point; for
 * MV_TABLES (a copy per page, thousands) n = 1, 1 + stride, ... with an
 * eighth of its pages as the stride, so every table is failed in.
 */
static void sweep(struct tally *t, const char *what, int kind,
		  uint64_t seed)
{
	const int tables = kind == MV_TABLES || !strcmp(what, "mremap-back");
	long long stride = tables ? TABLES_PAGES / 8 : 1;
	long long i, nth, max = rmb_arg("max_nth");

	for (i = 0; i < max; i++) {
		int hit;

		nth = 1 + i * stride;

		if (!strcmp(what, "mremap"))
			hit = op_mremap(t, kind, nth, seed + (uint64_t)nth);
		else if (!strcmp(what, "mremap-back"))
			hit = op_mremap_back(t, nth, seed + (uint64_t)nth);
		else if (!strcmp(what, "fork"))
			hit = op_fork(t, nth, seed + (uint64_t)nth);
		else if (!strcmp(what, "exec"))
			hit = op_exec(t, nth, seed + (uint64_t)nth);
		else
			hit = op_swapin(t, nth, seed + (uint64_t)nth);
		if (!hit)
			return;
	}
	t->exhausted++;		/* still injecting at max_nth */
}

int main(int argc, char **argv)
{
	static const char *const ops[] = { "mremap", "mremap-back", "fork",
					   "exec", "swapin" };
	struct rmb_snap a, b, d;
	struct tally t = { 0 };
	struct rmb_json j;
	int injectable;
	uint64_t seed;

	rmb_init("inject");
	rmb_parse_args(params, argc, argv);
	find_probe();
	npages = (size_t)rmb_arg("pages");
	seed = (uint64_t)rmb_arg("seed");
	injectable = injection_setup();
	rmb_snap_take(&a);
	for (size_t i = 0; injectable && i < sizeof(ops) / sizeof(ops[0]);
	     i++) {
		if (!rmb_mode_is("all") && !rmb_mode_is(ops[i]))
			continue;
		if (!strcmp(ops[i], "mremap-back")) {
			t.back_trylock = back_attrs(1);
			sweep(&t, ops[i], 0, seed);
			back_attrs(0);
			continue;
		}
		if (strcmp(ops[i], "mremap")) {
			sweep(&t, ops[i], 0, seed);
			continue;
		}
		for (int kind = MV_ALONE; kind <= MV_TABLES; kind++)
			sweep(&t, ops[i], kind, seed);
	}
	rmb_snap_take(&b);
	rmb_snap_delta(&d, &a, &b);

	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "injectable_count", injectable);
	rmb_json_int(&j, "operations_count", t.ops);
	rmb_json_int(&j, "failed_calls_count", t.failed);
	rmb_json_int(&j, "exec_killed_count", t.killed);
	rmb_json_int(&j, "survived_injections_count", t.survived);
	rmb_json_int(&j, "exhausted_sweeps_count", t.exhausted);
	rmb_json_int(&j, "tables_failed_count", t.tables_failed);
	rmb_json_int(&j, "back_failed_count", t.back_failed);
	rmb_json_int(&j, "back_trylock_injectable_count", t.back_trylock);
	rmb_json_int(&j, "mismatch_pages", t.bad);
	rmb_json_delta(&j, &d);
	rmb_json_end(&j);
	return t.bad ? RMB_EXIT_FAIL : 0;
}
