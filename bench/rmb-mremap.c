/*
 * rmb-mremap: moving an anonymous region back and forth.
 *
 * An R MB region is written, then moved `moves` times with
 * mremap(MREMAP_MAYMOVE | MREMAP_FIXED) between two ranges A and B of one
 * PROT_NONE reservation (the destination is always a hole, so no munmap
 * is timed).  With aligned=1 both ranges start on a 4 MB boundary and the
 * kernel may move whole page tables; aligned=0 offsets B by one page.
 *
 * mode=unshared  the region is mapped by this process only.
 * mode=shared    K children forked first keep the pages COW-shared; after
 *                the moves the parent rewrites its copy and the children
 *                verify theirs, still at A, or, with child_moves, each
 *                moves its own mapping that many times first (anonmm
 *                copies the pages another mm maps, anon_vma does not:
 *                the memory a guest needs then differs by scheme, and
 *                the counters cover the children's moves too).
 * mode=swapped   swap_pct % of the region is pushed out first
 *                (MADV_PAGEOUT, else a balloon process when there is swap).
 *
 * Where THP is on, the region (A is 4 MB aligned) faults as THPs;
 * ptemap=1 then makes each a PTE-mapped THP before anything else (its
 * second 1 MB mprotect()ed read-only and back: the pmd is split, the
 * folio stays whole); region_thp_kb says how much THPs back once the
 * region is filled, ptemapped_count how many pmds ptemap=1 split.
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_R_MB (RMB_32BIT ? 1024 : 1 << 20)

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "unshared|shared|swapped",
	  .sdef = "unshared", .help = "who else maps the region" },
	{ .key = "R_mb", .def = 64, .min = 1, .max = MAX_R_MB,
	  .help = "region size in MB; needs 2 x R_mb + 16 MB of contiguous "
		  "address space and R_mb of memory (2 x R_mb shared; swap "
		  "counts when swapped), else exit 2" },
	{ .key = "moves", .def = 10, .min = 1, .max = 1000000,
	  .help = "mremap calls (A->B, B->A, ...)" },
	{ .key = "K", .modes = "shared", .def = 4, .min = 1, .max = 1024,
	  .help = "children sharing the pages" },
	{ .key = "child_moves", .modes = "shared", .def = 0, .min = 0,
	  .max = 1000000,
	  .help = "moves each child makes of its own mapping after the "
		  "parent's, before it verifies (0: it verifies at A)" },
	{ .key = "swap_pct", .modes = "swapped", .def = 50, .min = 1,
	  .max = 100, .help = "part of the region (from its start) pushed out "
		  "before moving" },
	{ .key = "ptemap", .modes = "unshared|shared", .def = 0, .min = 0,
	  .max = 1, .help = "1: every THP of the region PTE-mapped (its pmd "
	  "split by an mprotect of its second half) before the moves" },
	{ .key = "aligned", .def = 1, .min = 0, .max = 1,
	  .help = "1: A and B on 4 MB boundaries (whole page tables may "
		  "move); 0: B one page off (every pte moves)" },
	{ .key = "seed", .def = 1, .min = 0, .max = 2147483647,
	  .help = "seed of the page patterns" },
	{ .key = NULL },
};

struct layout {
	char *res, *a, *b;
	size_t res_len, len, pages;
};

struct run {
	struct layout l;
	struct rmb_family f;
	struct rmb_snap s0, s1;
	uint64_t *lat;
	uint64_t seed, moves_ns;
	long moves;
	long long checked, bad;
	const char *pageout;
	long long pageout_pswpout, swapped, nonresident, verify_pswpin;
	long long huge_kb;	/* AnonHugePages once filled */
	long long ptemapped;	/* pmds ptemap=1 split */
	int children, got, abnormal;
};

static char *after_moves(const struct layout *l, long moves)
{
	return moves % 2 ? l->b : l->a;
}

static char *final_addr(const struct run *r)
{
	return after_moves(&r->l, r->moves);
}

/* [guard][A][gap][B][guard], A and B `span` long, guards >= 4 MB */
static void layout_make(struct layout *l, size_t len, int aligned)
{
	size_t span = (len + RMB_TABLE_SPAN - 1) & ~(RMB_TABLE_SPAN - 1);
	uintptr_t a;

	l->len = len;
	l->pages = len / rmb_page;
	l->res_len = 2 * span + 4 * RMB_TABLE_SPAN + rmb_page;
	l->res = rmb_reserve(l->res_len);
	if (!l->res)
		rmb_die(RMB_EXIT_USAGE, "R_mb=%zu: no room for 2 x %zu MB in "
			"the address space", len >> 20, len >> 20);
	a = ((uintptr_t)l->res + 2 * RMB_TABLE_SPAN - 1) & ~(RMB_TABLE_SPAN - 1);
	l->a = (char *)a;
	l->b = l->a + span + RMB_TABLE_SPAN + (aligned ? 0 : rmb_page);
	if (!rmb_map_anon(l->a, len) || munmap(l->b, len) != 0)
		rmb_die(RMB_EXIT_FAIL, "mapping the region: %s",
			strerror(errno));
}

/* Move m (from 0): A->B when m is even, B->A when odd; dies on failure. */
static void move_once(const struct layout *l, long m)
{
	char *src = after_moves(l, m), *dst = after_moves(l, m + 1);
	void *p = mremap(src, l->len, l->len, MREMAP_MAYMOVE | MREMAP_FIXED,
			 dst);

	if (p != dst)
		rmb_die(RMB_EXIT_FAIL, "move %ld: mremap %p -> %p: %s", m + 1,
			(void *)src, (void *)dst,
			p == MAP_FAILED ? strerror(errno) : "moved elsewhere");
}

static void do_moves(struct run *r)
{
	for (long m = 0; m < r->moves; m++) {
		uint64_t t0 = rmb_now_ns();

		move_once(&r->l, m);
		r->lat[m] = rmb_now_ns() - t0;
	}
}

/* ---- pushing pages out (mode=swapped) ---------------------------------- */

/* A process that asks for MemAvailable + kb, pushing kb of ours out. */
static const char *balloon(long long kb)
{
	long long avail = rmb_avail_kb(0), room = rmb_avail_kb(1) - 65536;
	long long want = avail + kb < room ? avail + kb : room;
	pid_t pid;
	int st;

	if (want <= avail)
		return "none";
	pid = rmb_fork();
	if (pid == 0)
		rmb_balloon(want, (size_t)64 << 20, 0);
	if (pid < 0)
		return "none";
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return "balloon";
}

static void push_out(struct run *r, int pct)
{
	size_t part = r->l.pages * (size_t)pct / 100 * rmb_page;
	long long before = rmb_vmstat("pswpout");

	if (madvise(r->l.a, part, MADV_PAGEOUT) == 0)
		r->pageout = "madv_pageout";
	else if (rmb_meminfo_kb("SwapTotal") > 0)
		r->pageout = balloon((long long)(part >> 10));
	else
		r->pageout = "none";
	r->pageout_pswpout = before >= 0 ? rmb_vmstat("pswpout") - before : 0;
	r->swapped = rmb_swapped_pages(r->l.a, r->l.pages);
	r->nonresident = rmb_nonresident_pages(r->l.a, r->l.pages);
}

/* ---- children (mode=shared) ------------------------------------------ */

static void share_child(struct run *r, int idx)
{
	long moves = (long)rmb_arg("child_moves");
	size_t bad;

	rmb_family_wait_go(&r->f);
	for (long m = 0; m < moves; m++)
		move_once(&r->l, m);
	bad = rmb_verify(after_moves(&r->l, moves), r->l.pages, r->seed, 0, 0);
	rmb_family_send(&r->f, RMB_REP_DONE, idx, (int64_t)r->l.pages,
			(int64_t)bad, 0);
	_exit(0);
}

static void fork_sharers(struct run *r, int k)
{
	rmb_family_open(&r->f, k);
	for (r->children = 0; r->children < k; r->children++) {
		pid_t pid = rmb_family_fork(&r->f);

		if (pid == 0)
			share_child(r, r->children);
		if (pid < 0) {
			rmb_family_kill(&r->f);
			rmb_die(RMB_EXIT_FAIL, "fork %d of %d: %s",
				r->children + 1, k, strerror(errno));
		}
	}
}

/* After the moves: the parent writes its copy, the children check theirs. */
static void check_sharers(struct run *r)
{
	struct rmb_report sum;
	uint64_t seed2 = r->seed + 0x5eed;

	rmb_fill(final_addr(r), r->l.pages, seed2, 0);
	rmb_family_go(&r->f);
	r->got = rmb_family_collect(&r->f, RMB_REP_DONE, r->children, &sum);
	r->abnormal = rmb_family_finish(&r->f);
	r->checked += sum.checked_pages;
	r->bad += sum.mismatch_pages;
	r->checked += (long long)r->l.pages;
	r->bad += (long long)rmb_verify(final_addr(r), r->l.pages, seed2, 0, 0);
}

/* ---- the run ----------------------------------------------------------- */

static void check_params(size_t len)
{
	int shared = rmb_mode_is("shared"), swapped = rmb_mode_is("swapped");

	rmb_need_mem_kb((long long)(len >> 10) * (shared ? 2 : 1) + 16384,
			swapped, "R_mb");
	rmb_need_addr_space(2 * (uint64_t)len + 4 * RMB_TABLE_SPAN, "R_mb");
}

static void report(const struct run *r)
{
	struct rmb_json j;
	struct rmb_stats st;
	struct rmb_snap d;

	rmb_snap_delta(&d, &r->s0, &r->s1);
	rmb_stats(r->lat, (size_t)r->moves, &st);
	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "region_pages", (long long)r->l.pages);
	rmb_json_int(&j, "children_count", r->children);
	rmb_json_int(&j, "region_thp_kb", r->huge_kb);
	rmb_json_int(&j, "ptemapped_count", r->ptemapped);
	rmb_json_stats(&j, "move", &st);
	rmb_json_int(&j, "moves_total_ns", (long long)r->moves_ns);
	/* the median move, as the headline: on the icount clock the moves
	 * repeat to the nanosecond but for the one a timer tick lands in
	 * (12,396 ns against 20,383), which moved a mean by 6% */
	rmb_json_dbl(&j, "move_per_page_ns",
		     (double)st.median / (double)r->l.pages);
	rmb_json_int(&j, "verified_pages", r->checked);
	rmb_json_int(&j, "verify_mismatch_pages", r->bad);
	if (rmb_mode_is("swapped")) {
		rmb_json_str(&j, "pageout_method", r->pageout);
		rmb_json_int(&j, "pageout_pswpout_pages", r->pageout_pswpout);
		rmb_json_int(&j, "swap_ptes_pages", r->swapped);
		rmb_json_int(&j, "nonresident_pages", r->nonresident);
		rmb_json_int(&j, "verify_pswpin_pages", r->verify_pswpin);
	}
	rmb_json_delta(&j, &d);
	rmb_json_end(&j);
}

static void check_alone(struct run *r)
{
	long long in0 = rmb_vmstat("pswpin");

	r->checked = (long long)r->l.pages;
	r->bad = (long long)rmb_verify(final_addr(r), r->l.pages, r->seed, 0, 0);
	r->verify_pswpin = in0 >= 0 ? rmb_vmstat("pswpin") - in0 : 0;
}

/* Split the pmd of every 2 MB of [p, p + len) (p 2 MB aligned), leaving
 * each THP whole but PTE-mapped: mprotect() of its second half. */
static void split_pmds(char *p, size_t len)
{
	size_t huge = RMB_TABLE_SPAN / 2;

	for (size_t off = 0; off + huge <= len; off += huge)
		if (mprotect(p + off + huge / 2, huge / 2, PROT_READ) != 0 ||
		    mprotect(p + off + huge / 2, huge / 2,
			     PROT_READ | PROT_WRITE) != 0)
			rmb_die(RMB_EXIT_FAIL, "mprotect: %s", strerror(errno));
}

static void setup(struct run *r)
{
	size_t len = (size_t)rmb_arg("R_mb") << 20;

	r->moves = (long)rmb_arg("moves");
	r->seed = (uint64_t)rmb_arg("seed");
	check_params(len);
	r->lat = calloc((size_t)r->moves, sizeof(*r->lat));
	if (!r->lat)
		rmb_die(RMB_EXIT_FAIL, "moves=%ld: out of memory", r->moves);
	layout_make(&r->l, len, (int)rmb_arg("aligned"));
	rmb_fill(r->l.a, r->l.pages, r->seed, 0);
	/* AnonHugePages counts PMD-mapped THPs only: read before ptemap */
	r->huge_kb = rmb_meminfo_kb("AnonHugePages");
	if ((rmb_mode_is("unshared") || rmb_mode_is("shared")) &&
	    rmb_arg("ptemap")) {
		long long before = rmb_vmstat("thp_split_pmd");

		split_pmds(r->l.a, len);
		r->ptemapped = before >= 0 ?
			rmb_vmstat("thp_split_pmd") - before : 0;
	}
	if (rmb_mode_is("shared"))
		fork_sharers(r, (int)rmb_arg("K"));
	if (rmb_mode_is("swapped"))
		push_out(r, (int)rmb_arg("swap_pct"));
}

int main(int argc, char **argv)
{
	static struct run r;
	int failed, children_move;

	rmb_init("mremap");
	rmb_parse_args(params, argc, argv);
	children_move = rmb_mode_is("shared") && rmb_arg("child_moves") > 0;
	setup(&r);
	rmb_snap_take(&r.s0);
	r.moves_ns = rmb_now_ns();
	do_moves(&r);
	r.moves_ns = rmb_now_ns() - r.moves_ns;
	if (!children_move)
		rmb_snap_take(&r.s1);
	if (rmb_mode_is("shared"))
		check_sharers(&r);
	else
		check_alone(&r);
	if (children_move)
		rmb_snap_take(&r.s1);
	report(&r);
	failed = rmb_check_mismatch(r.bad, r.checked, "the region");
	if (r.got < r.children || r.abnormal) {
		rmb_error("%d of %d children did not report", r.children - r.got,
			  r.children);
		failed = 1;
	}
	return failed;
}
