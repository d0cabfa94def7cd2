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
#define DEBUGFS "/sys/kernel/debug"

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "all|mremap|fork|exec|swapin",
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
};

static size_t npages;

/* ---- fault injection ------------------------------------------------ */

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

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
		if (write_file(path, files[i][1]) != 0)
			rmb_die(RMB_EXIT_FAIL, "cannot set %s to %s: %s", path,
				files[i][1], strerror(errno));
	}
	return 1;
}

static void fail_nth(long long n)
{
	char text[32];

	snprintf(text, sizeof(text), "%lld", n);
	if (write_file(FAIL_NTH, text) != 0)
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
static void check_found(struct tally *t, long long nth, char *p,
			size_t pages)
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
			  mv_name[MV_TABLES], nth, po.missed, po.candidates);
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
		check_found(t, nth, p, pages);
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

/*
 * n = 1, 2, ... until an operation reaches no n-th injection point; for
 * MV_TABLES (a copy per page, thousands) n = 1, 1 + stride, ... with an
 * eighth of its pages as the stride, so every table is failed in.
 */
static void sweep(struct tally *t, const char *what, int kind,
		  uint64_t seed)
{
	long long stride = kind == MV_TABLES ? TABLES_PAGES / 8 : 1;
	long long i, nth, max = rmb_arg("max_nth");

	for (i = 0; i < max; i++) {
		int hit;

		nth = 1 + i * stride;

		if (!strcmp(what, "mremap"))
			hit = op_mremap(t, kind, nth, seed + (uint64_t)nth);
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
	static const char *const ops[] = { "mremap", "fork", "exec",
					   "swapin" };
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
	rmb_json_int(&j, "mismatch_pages", t.bad);
	rmb_json_delta(&j, &d);
	rmb_json_end(&j);
	return t.bad ? RMB_EXIT_FAIL : 0;
}
