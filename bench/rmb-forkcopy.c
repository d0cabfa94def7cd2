/*
 * rmb-forkcopy: what fork must copy of a private file mapping.
 *
 * fork copies no pte of a vma whose pages a fault can bring back (the
 * child refaults them from the file), but it must copy the anon pages a
 * private file mapping holds once written to (COW), and their swap
 * entries: the child's refault would see the file, not the parent's
 * writes.  anon_vma knows which vmas hold anon pages (vma->anon_vma);
 * anonmm keeps no per-vma record and looks at the page tables (kernels/
 * anonmm 0004).  Each case maps a file of /tmp (tmpfs) MAP_PRIVATE,
 * writes some of its pages one way, forks, and the child checks every
 * page: written ones hold the parent's data, the rest the file's.
 *
 *   written   plain writes to every other page
 *   swapped   written, then pushed out to swap (swap entries in a file
 *             vma; with no swap it is "written" again)
 *   forced    a read-only mapping written through /proc/self/mem, as a
 *             debugger sets a breakpoint (FOLL_FORCE COW)
 *   readonly  written, then mprotect()ed read-only
 *   clean     never written: the child sees the file
 *
 * Result: one "summary" line, the cases run and the pages checked and
 * mismatching in the children (must be 0).
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "all", .sdef = "all",
	  .help = "the only mode: every case in turn" },
	{ .key = "pages", .def = 64, .min = 2, .max = 65536,
	  .help = "pages of the file mapped in each case" },
	{ .key = "seed", .def = 1, .min = 1, .max = 2147483647,
	  .help = "seed of the page patterns" },
	{ .key = NULL },
};

enum { C_WRITTEN, C_SWAPPED, C_FORCED, C_READONLY, C_CLEAN, C_N };
static const char *const names[C_N] = { "written", "swapped", "forced",
					"readonly", "clean" };

static size_t npages;
static uint64_t seed;

/* A tmpfs file of npages pages holding pattern (seed + 1), unlinked. */
static int make_file(void)
{
	char path[] = "/tmp/rmb-forkcopy-XXXXXX";
	int fd = mkstemp(path);
	char *buf;

	if (fd < 0)
		rmb_die(RMB_EXIT_FAIL, "mkstemp in /tmp: %s", strerror(errno));
	unlink(path);
	buf = malloc(npages * rmb_page);
	if (!buf)
		rmb_die(RMB_EXIT_FAIL, "out of memory");
	rmb_fill(buf, npages, seed + 1, 0);
	if (write(fd, buf, npages * rmb_page) != (ssize_t)(npages * rmb_page))
		rmb_die(RMB_EXIT_FAIL, "writing the file: %s", strerror(errno));
	free(buf);
	return fd;
}

/* Written pages (odd ones; none for "clean") get pattern seed. */
static int written(int c, size_t i)
{
	return c != C_CLEAN && (i & 1);
}

/* pwrite through /proc/self/mem: FOLL_FORCE, the mapping read-only */
static void force_write(char *m)
{
	int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	char *buf = malloc(rmb_page);

	if (fd < 0 || !buf)
		rmb_die(RMB_EXIT_FAIL, "/proc/self/mem: %s", strerror(errno));
	for (size_t i = 1; i < npages; i += 2) {
		rmb_fill(buf, 1, seed, i);
		if (pwrite(fd, buf, rmb_page, (off_t)(uintptr_t)(m + i * rmb_page))
		    != (ssize_t)rmb_page)
			rmb_die(RMB_EXIT_FAIL, "write to /proc/self/mem: %s",
				strerror(errno));
	}
	free(buf);
	close(fd);
}

/* The pages that do not hold what they must. */
static size_t check(const char *m, int c)
{
	size_t bad = 0;

	for (size_t i = 0; i < npages; i++)
		bad += rmb_verify(m + i * rmb_page, 1,
				  written(c, i) ? seed : seed + 1, i, 0);
	return bad;
}

/* One case: returns mismatching pages seen by the child (or parent). */
static size_t run_case(int c)
{
	int fd = make_file(), status;
	int prot = c == C_FORCED ? PROT_READ : PROT_READ | PROT_WRITE;
	char *m = mmap(NULL, npages * rmb_page, prot, MAP_PRIVATE, fd, 0);
	size_t bad;
	pid_t pid;

	if (m == MAP_FAILED)
		rmb_die(RMB_EXIT_FAIL, "mmap of the file: %s", strerror(errno));
	if (c == C_FORCED)
		force_write(m);
	else
		for (size_t i = 1; c != C_CLEAN && i < npages; i += 2)
			rmb_fill(m + i * rmb_page, 1, seed, i);
	if (c == C_SWAPPED)
		madvise(m, npages * rmb_page, MADV_PAGEOUT);
	if (c == C_READONLY && mprotect(m, npages * rmb_page, PROT_READ))
		rmb_die(RMB_EXIT_FAIL, "mprotect: %s", strerror(errno));
	pid = rmb_fork();
	if (pid == 0)
		_exit(check(m, c) ? 1 : 0);
	if (waitpid(pid, &status, 0) != pid)
		rmb_die(RMB_EXIT_FAIL, "waitpid: %s", strerror(errno));
	bad = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : npages;
	if (bad)
		rmb_error("case %s: the child's pages mismatch (status %#x)",
			  names[c], status);
	bad += check(m, c);
	munmap(m, npages * rmb_page);
	close(fd);
	return bad;
}

int main(int argc, char **argv)
{
	struct rmb_snap a, b, d;
	struct rmb_json j;
	size_t bad = 0;

	rmb_init("forkcopy");
	rmb_parse_args(params, argc, argv);
	npages = (size_t)rmb_arg("pages");
	seed = (uint64_t)rmb_arg("seed");
	rmb_snap_take(&a);
	for (int c = 0; c < C_N; c++)
		bad += run_case(c);
	rmb_snap_take(&b);
	rmb_snap_delta(&d, &a, &b);

	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "cases_count", C_N);
	rmb_json_int(&j, "verified_pages", (long long)(2 * C_N * npages));
	rmb_json_int(&j, "verify_mismatch_pages", (long long)bad);
	rmb_json_delta(&j, &d);
	rmb_json_end(&j);
	return bad ? RMB_EXIT_FAIL : 0;
}
