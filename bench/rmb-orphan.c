/*
 * rmb-orphan: an anonmm orphan made on purpose, and the walk that frees it.
 *
 * What a final slab count takes for a leak of the rmap's objects: the
 * parent's pages are pushed out to swap; a forked child swaps them in
 * first, so its first map points them at the child's anonmm; the
 * parent then maps them too; the child exits.  The pages,
 * mapped by the parent alone now, still point at the child's dead anonmm
 * and keep it alive (anonmm's orphans: 2004's anonmm had them too) until
 * a walk of a page re-points it at the parent's (anonmm_adopt).  The
 * parent's MADV_PAGEOUT is such a walk.
 *
 * The program counts the rmap slab caches (rmb-idle's way: until they
 * hold still) at idle, once the child has exited (pinned = growth) and
 * after the pageout (left = what the walk did not free), and prints
 * /proc/anonmm (DEBUG_VM kernels) at each stage.  On anonmm expect
 * pinned 1 and left 0; on anon_vma, which has no orphans, 0 and 0.
 * Needs swap and an rmapbench kernel; elsewhere it says so
 * (checked_count 0).
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "child", .sdef = "child",
	  .help = "the only mode: orphans of an exited child" },
	{ .key = "pages", .def = 64, .min = 1, .max = 65536,
	  .help = "pages the child maps first" },
	{ .key = "seed", .def = 1, .min = 0, .max = 2147483647,
	  .help = "seed of the page patterns" },
	{ .key = NULL },
};

/* The scheme's own rmap cache, once the counts have held still for 1 s. */
static long long still_count(int cache)
{
	long long counts[RMB_NSLAB];

	if (rmb_slabs_still(counts, 1000, 50, 30000) != 0)
		rmb_die(RMB_EXIT_FAIL, "the rmap slab counts did not hold "
			"still for 1 s within 30 s");
	return counts[cache];
}

/* /proc/anonmm, if this kernel has it, behind "RMB-ANONMM stage". */
static void listing(const char *stage)
{
	char line[256];
	FILE *f = fopen("/proc/anonmm", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("RMB-ANONMM %s %s", stage, line);
	fclose(f);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int cache = RMB_SLAB_ANONMM;
	long long idle, pinned, left, pages;
	struct rmb_pageout po = { 0 };
	struct rmb_snap a, b, d;
	struct rmb_json j;
	int pipefd[2], back[2], status, checked;
	uint64_t seed;
	size_t bad;
	char *p, c;
	pid_t pid;

	rmb_init("orphan");
	rmb_parse_args(params, argc, argv);
	pages = rmb_arg("pages");
	seed = (uint64_t)rmb_arg("seed");
	if (!strcmp(rmb_scheme(), "anon_vma"))
		cache = RMB_SLAB_ANON_VMA;
	checked = strcmp(rmb_scheme(), "unknown") != 0 &&
		  rmb_meminfo_kb("SwapFree") > pages * (long long)rmb_page / 512;
	p = rmb_map_anon(NULL, (size_t)pages * rmb_page);
	if (!p || pipe(pipefd) != 0 || pipe(back) != 0)
		rmb_die(RMB_EXIT_FAIL, "mmap/pipe: %s", strerror(errno));
	rmb_fill(p, (size_t)pages, seed, 0);
	idle = checked ? still_count(cache) : 0;
	listing("idle");
	rmb_snap_take(&a);
	/* out to swap, retried as the suite's pageout check does */
	if (checked && rmb_pageout_check(p, (size_t)pages, &po) == 0 &&
	    po.missed)
		rmb_die(RMB_EXIT_FAIL, "%lld of %lld pages would not go out to "
			"swap", po.missed, pages);
	pid = rmb_fork();
	if (pid == 0) {		/* first to map them: they point here */
		bad = rmb_verify(p, (size_t)pages, seed, 0, 0);
		/* and keep them mapped until the parent maps them too */
		if (write(pipefd[1], "x", 1) != 1 || read(back[0], &c, 1) != 1)
			_exit(2);
		_exit(bad ? 1 : 0);
	}
	if (read(pipefd[0], &c, 1) != 1)
		rmb_die(RMB_EXIT_FAIL, "the child did not answer");
	bad = rmb_verify(p, (size_t)pages, seed, 0, 0);	/* now here too */
	if (write(back[1], "x", 1) != 1)
		rmb_die(RMB_EXIT_FAIL, "pipe: %s", strerror(errno));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		rmb_die(RMB_EXIT_FAIL, "child: status %#x", status);
	pinned = checked ? still_count(cache) - idle : 0;
	listing("pinned");
	/* a walk of each page; retried, every CPU's LRU batch drained */
	if (checked) {
		memset(&po, 0, sizeof(po));
		rmb_pageout_check(p, (size_t)pages, &po);
	} else {
		madvise(p, (size_t)pages * rmb_page, MADV_PAGEOUT);
	}
	left = checked ? still_count(cache) - idle : 0;
	listing("walked");
	bad += rmb_verify(p, (size_t)pages, seed, 0, 0);
	rmb_snap_take(&b);
	rmb_snap_delta(&d, &a, &b);

	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "checked_count", checked);
	rmb_json_int(&j, "pinned_objs_count", pinned);
	rmb_json_int(&j, "left_objs_count", left);
	rmb_json_int(&j, "verified_pages", 3 * pages);
	rmb_json_int(&j, "verify_mismatch_pages", (long long)bad);
	rmb_json_delta(&j, &d);
	rmb_json_end(&j);
	return rmb_check_mismatch((long long)bad, 3 * pages, "pages");
}
