/*
 * rmb-torture: a correctness torture of the anonymous rmap.
 *
 * Families of processes share anonymous pages and then COW-write them,
 * move them with mremap (shared and unshared, before and after swap-out),
 * exit parents before children, exec, swap out and in across members and
 * swap off, while every process keeps track of what every one of its pages
 * must hold.  Every page of every process is verified at each step; a
 * page holding anything else (zeroed, stale, a sibling's) is a mismatch.
 *
 * A second check covers what a wrong rmap does without corrupting data: a
 * mapping the reverse map cannot find.  MADV_PAGEOUT reclaims the pages a
 * process maps exclusively, through try_to_unmap() and so through the
 * rmap walk; a page still present and exclusive after it (and four
 * retries) is one the walk missed.  Such "missed" pages are failures,
 * like mismatches.
 *
 * Processes: this program is the controller (a child subreaper); it
 * forks slot 0, the first member, in a process group of its own, and
 * drives members through one command pipe per slot; members answer on
 * one shared report pipe (fixed-size writes, atomic).  Members fork
 * further members and may exec this program again ("--member ...") with
 * a 256 kB argument blob, whose stack pages exec moves (shift_arg_pages)
 * and which the new image verifies and pushes out too.
 *
 * Memory pressure ("pressure"): every member clears its young bits
 * (/proc/self/clear_refs), then a balloon child asks for MemAvailable +
 * the family's working set: reclaim pushes the family's shared pages
 * (which MADV_PAGEOUT skips) out to swap, walking the rmap of each.
 * Pressure and swapoff run only on the rmapbench kernels (/proc/rmapbench
 * present), never on a host.
 *
 * mode=ksm runs every scenario as all does, with every region madvised
 * MERGEABLE and the members' pattern seeds drawn by generation alone, not
 * by slot: members that write at the same step write the same pages, and
 * ksmd (which the suite runs around it) merges them across the family,
 * exec'd members included (they learn the mode from RMB_TORTURE_KSM).
 * A page showing a sibling's data is then no longer told apart from its
 * own where the two wrote alike: mode=all keeps that check.
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/swap.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PR_SET_CHILD_SUBREAPER
#define PR_SET_CHILD_SUBREAPER 36
#endif

#define MAX_SLOTS 16
#define MAX_REGIONS 8
#define BLOB_ARGS 8
#define BLOB_LEN (32 * 1024 - 1)	/* under MAX_ARG_STRLEN with its NUL */
#define CMD_TIMEOUT_MS 120000
#define MEMBER_ALARM_S 900
#define ERRORS_PER_OP 3

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "all|cow|mremap|exit|exec|swapoff|ksm",
	  .sdef = "all", .help = "the scenario (all: each in turn; ksm: each "
	  "in turn over MERGEABLE regions that members write alike)" },
	{ .key = "pages", .def = 1024, .min = 64, .max = 1 << 20,
	  .help = "pages of the family's first shared region" },
	{ .key = "N", .def = 4, .min = 2, .max = 8,
	  .help = "members forked from the first process" },
	{ .key = "rounds", .def = 2, .min = 1, .max = 100,
	  .modes = "all|cow|mremap|ksm",
	  .help = "COW rounds (cow), move rounds after swap-out (mremap)" },
	{ .key = "pressure", .def = 1, .min = 0, .max = 1,
	  .help = "1: balloon phases push shared pages out (needs swap)" },
	{ .key = "seed", .def = 1, .min = 0, .max = 2147483647,
	  .help = "seed of the page patterns" },
	{ .key = NULL },
};

/* ---- commands and reports -------------------------------------------- */

enum { OP_VERIFY = 1, OP_WRITE, OP_MAP, OP_MOVE, OP_PAGEOUT, OP_FORK,
       OP_BORN, OP_EXEC, OP_EXIT, OP_PAGES, OP_SCAN, OP_COLD };
enum { MV_ALIGNED = 1, MV_SHIFTED, MV_HALF, MV_DONTUNMAP, MV_GROW };

struct cmd {
	int32_t op, a, b, c;
};

struct rep {			/* one pipe write: atomic */
	int32_t slot, op, pid, status;	/* status: 0 or an errno */
	int64_t checked, bad;		/* pages verified, mismatching */
	int64_t candidates, missed, swapped;	/* pageout, scan */
	int64_t value, aux;
};

/* ---- a member's view of its memory ------------------------------------ */

struct region {
	char *base;		/* NULL: unused */
	size_t pages;
	uint64_t idx0;		/* pattern index of page 0 */
	uint32_t *seeds;	/* per page: pattern seed; 0: must read zero */
};

static struct member {
	int slot, cmdfd, repfd;
	uint64_t seed, gen;
	struct region r[MAX_REGIONS];
	char *blob_lo, *blob_hi;	/* exec'd: argument pages */
	char **blob;
	int errors;
} me;

/* The pipes, created by the controller at fixed descriptors (an exec'd
 * member finds them there): slot s reads commands from CMD_RD(s), the
 * controller writes them to CMD_WR(s); reports go REP_WR -> REP_RD. */
#define FD_BASE 64
#define CMD_RD(s) (FD_BASE + (s))
#define CMD_WR(s) (FD_BASE + MAX_SLOTS + (s))
#define REP_RD (FD_BASE + 2 * MAX_SLOTS)
#define REP_WR (REP_RD + 1)

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* mode=ksm: regions MERGEABLE, seeds shared by the members (see top) */
#define KSM_ENV "RMB_TORTURE_KSM"
static int ksm_mode;

/* A fresh pattern seed for this member: never 0 (0 means "zero page");
 * under mode=ksm the same for every member at the same generation. */
static uint32_t new_seed(void)
{
	uint64_t slot = ksm_mode ? 0 : (uint64_t)me.slot;

	me.gen++;
	return 1 + (uint32_t)(mix(me.seed ^ mix((slot << 32) | me.gen)) %
			      0x7ffffffeu);
}

/* 1: read, 0: EOF */
static int read_full(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n > 0) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return 0;
		p += r;
		n -= (size_t)r;
	}
	return 1;
}

static void reply(struct rep *r, int op)
{
	r->slot = me.slot;
	r->op = op;
	r->pid = getpid();
	if (rmb_write_all(me.repfd, r, sizeof(*r)) != 0)
		_exit(RMB_EXIT_FAIL);	/* the controller is gone */
}

static struct region *region(int i)
{
	if (i < 0 || i >= MAX_REGIONS)
		rmb_die(RMB_EXIT_FAIL, "slot %d: region %d out of range",
			me.slot, i);
	return &me.r[i];
}

static uint32_t *seeds_alloc(size_t pages)
{
	uint32_t *s = calloc(pages, sizeof(*s));

	if (!s)
		rmb_die(RMB_EXIT_FAIL, "slot %d: no memory for %zu seeds",
			me.slot, pages);
	return s;
}

/* ---- member operations -------------------------------------------------- */

static int op_map(int ri, size_t pages)
{
	struct region *r = region(ri);
	size_t len = pages * rmb_page;
	char *p = rmb_hole(len, 0);
	uint32_t s = new_seed();

	if (!p || !rmb_map_anon(p, len))
		return errno ? errno : ENOMEM;
	if (ksm_mode && madvise(p, len, MADV_MERGEABLE) != 0)
		return errno;
	free(r->seeds);
	r->base = p;
	r->pages = pages;
	r->idx0 = (uint64_t)ri << 24;
	r->seeds = seeds_alloc(pages);
	for (size_t i = 0; i < pages; i++)
		r->seeds[i] = s;
	rmb_fill(p, pages, s, r->idx0);
	return 0;
}

/* Rewrite the pages i with i % stride == offset: COW breaks where shared. */
static long long op_write(int ri, int stride, int offset)
{
	struct region *r = region(ri);
	uint32_t s = new_seed();
	long long n = 0;

	if (!r->base || stride < 1)
		return 0;
	for (size_t i = (size_t)offset; i < r->pages; i += (size_t)stride) {
		r->seeds[i] = s;
		rmb_fill(r->base + i * rmb_page, 1, s, r->idx0 + i);
		n++;
	}
	return n;
}

static int page_zero(const char *p)
{
	const uint64_t *w = (const uint64_t *)p;

	for (size_t k = 0; k < rmb_page / 8; k++)
		if (w[k])
			return 0;
	return 1;
}

static void note_mismatch(int ri, size_t i, uint32_t want, const char *p)
{
	const uint32_t *w = (const uint32_t *)p;

	if (me.errors++ >= ERRORS_PER_OP)
		return;
	rmb_error("slot %d pid %d: region %d page %zu at %p: want seed %u "
		  "index %llu, found words %08x %08x %08x", me.slot,
		  (int)getpid(), ri, i, (const void *)p, want,
		  (unsigned long long)(me.r[ri].idx0 + i), w[0], w[1], w[2]);
}

static void blob_char_fill(char *s, int k)
{
	for (int j = 0; j < BLOB_LEN; j++)
		s[j] = (char)('A' + (int)((me.seed * 7 + (uint64_t)k * 131 +
					   (uint64_t)j * 7) % 26));
	s[BLOB_LEN] = '\0';
}

static long long verify_blob(long long *bad)
{
	static char want[BLOB_LEN + 1];
	long long pages = 0;

	if (!me.blob)
		return 0;
	for (int k = 0; k < BLOB_ARGS; k++) {
		blob_char_fill(want, k);
		if (strcmp(me.blob[k], want) != 0) {
			++*bad;
			rmb_error("slot %d pid %d: exec argument %d at %p does "
				  "not hold what was passed", me.slot,
				  (int)getpid(), k, (void *)me.blob[k]);
		}
	}
	pages = (me.blob_hi - me.blob_lo) / (long long)rmb_page;
	return pages > 0 ? pages : 0;
}

static void op_verify(struct rep *out)
{
	long long checked = 0, bad = 0;

	me.errors = 0;
	for (int ri = 0; ri < MAX_REGIONS; ri++) {
		struct region *r = &me.r[ri];

		for (size_t i = 0; r->base && i < r->pages; i++) {
			const char *p = r->base + i * rmb_page;
			int ok = r->seeds[i] ? rmb_verify(p, 1, r->seeds[i],
							  r->idx0 + i, 0) == 0
					     : page_zero(p);

			checked++;
			if (!ok) {
				bad++;
				note_mismatch(ri, i, r->seeds[i], p);
			}
		}
	}
	checked += verify_blob(&bad);
	out->checked = checked;
	out->bad = bad;
}

/* the pageout check of [p, p + pages), added to out */
static void pageout_range(char *p, size_t pages, struct rep *out)
{
	struct rmb_pageout po = { 0 };
	int err = rmb_pageout_check(p, pages, &po);

	if (err > 0)
		out->status = err;
	out->candidates += po.candidates;
	out->missed += po.missed;
	out->swapped += po.swapped;
}

/* MADV_PAGEOUT on everything; what stays present and exclusive was missed.
 * Without swap room nothing can go out: the check is then not made. */
static void op_pageout(struct rep *out)
{
	long long need_kb = 0;

	for (int ri = 0; ri < MAX_REGIONS; ri++)
		need_kb += (long long)(me.r[ri].pages * rmb_page >> 10);
	if (rmb_meminfo_kb("SwapFree") < need_kb + 16384) {
		out->value = 0;		/* not checked */
		return;
	}
	out->value = 1;
	for (int ri = 0; ri < MAX_REGIONS; ri++)
		if (me.r[ri].base)
			pageout_range(me.r[ri].base, me.r[ri].pages, out);
	if (me.blob_hi > me.blob_lo)
		pageout_range(me.blob_lo, (size_t)(me.blob_hi - me.blob_lo) /
			      rmb_page, out);
	if (out->missed > 0)
		rmb_error("slot %d pid %d: %lld of %lld exclusively mapped pages "
			  "still present after MADV_PAGEOUT: the rmap walk did "
			  "not find their mapping", me.slot, (int)getpid(),
			  (long long)out->missed, (long long)out->candidates);
}

/* Clear the young bits of every pte (and PG_referenced): pages the family
 * shares are then not "referenced by several mms" when reclaim first
 * meets them, which would activate them and keep them out of its reach. */
static int op_cold(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return 0;	/* no PROC_PAGE_MONITOR: pressure does less */
	if (write(fd, "1", 1) != 1)
		err = errno;
	close(fd);
	return err;
}

/* swap entries among the ptes of every region (after pressure) */
static void op_scan(struct rep *out)
{
	for (int ri = 0; ri < MAX_REGIONS; ri++) {
		struct rmb_pagemap pm;

		if (me.r[ri].base && rmb_pagemap_scan(me.r[ri].base,
						      me.r[ri].pages, &pm) == 0) {
			out->swapped += pm.swapped;
			out->value += pm.present;
		}
	}
}

/* how far exec moved the stack: STACK_TOP_MAX - end of [stack], kB */
static long long stack_shift_kb(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long lo, hi, top = RMB_32BIT ? 0xc0000000ull :
		0x7ffffffff000ull;
	char line[512];
	long long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") &&
		    sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			kb = hi <= top ? (long long)((top - hi) >> 10) : -1;
	fclose(f);
	return kb;
}

static void region_move_to(struct region *r, char *dst)
{
	r->base = dst;
}

static int op_move(int ri, int how, int ri2)
{
	struct region *r = region(ri), *r2;
	size_t len = r->pages * rmb_page, half;
	char *dst, *p;

	if (!r->base)
		return EINVAL;
	switch (how) {
	case MV_ALIGNED:
	case MV_SHIFTED:
		dst = rmb_hole(len, how == MV_SHIFTED ? rmb_page : 0);
		if (!dst)
			return ENOMEM;
		p = mremap(r->base, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
			   dst);
		if (p != dst)
			return errno ? errno : EFAULT;
		region_move_to(r, dst);
		return 0;
	case MV_HALF:	/* the upper half moves; it becomes region ri2 */
		r2 = region(ri2);
		half = r->pages / 2;
		dst = rmb_hole((r->pages - half) * rmb_page, rmb_page);
		if (!dst || r2->base)
			return ENOMEM;
		p = mremap(r->base + half * rmb_page, (r->pages - half) *
			   rmb_page, (r->pages - half) * rmb_page,
			   MREMAP_MAYMOVE | MREMAP_FIXED, dst);
		if (p != dst)
			return errno ? errno : EFAULT;
		r2->base = dst;
		r2->pages = r->pages - half;
		r2->idx0 = r->idx0 + half;
		r2->seeds = seeds_alloc(r2->pages);
		memcpy(r2->seeds, r->seeds + half, r2->pages * sizeof(uint32_t));
		r->pages = half;
		return 0;
	case MV_DONTUNMAP:	/* the old range stays, empty: region ri2 */
		r2 = region(ri2);
		dst = rmb_hole(len, 0);
		if (!dst || r2->base)
			return ENOMEM;
		p = mremap(r->base, len, len, MREMAP_MAYMOVE | MREMAP_FIXED |
			   MREMAP_DONTUNMAP, dst);
		if (p != dst)
			return errno ? errno : EFAULT;
		r2->base = r->base;
		r2->pages = r->pages;
		r2->idx0 = r->idx0;
		r2->seeds = seeds_alloc(r->pages);	/* zeros */
		region_move_to(r, dst);
		return 0;
	case MV_GROW:	/* moves to a hole twice the size; the tail reads 0 */
		dst = rmb_hole(2 * len, 0);
		if (!dst)
			return ENOMEM;
		p = mremap(r->base, len, 2 * len, MREMAP_MAYMOVE |
			   MREMAP_FIXED, dst);
		if (p != dst)
			return errno ? errno : EFAULT;
		r->seeds = realloc(r->seeds, 2 * r->pages * sizeof(uint32_t));
		if (!r->seeds)
			return ENOMEM;
		memset(r->seeds + r->pages, 0, r->pages * sizeof(uint32_t));
		r->pages *= 2;
		region_move_to(r, dst);
		return 0;
	}
	return EINVAL;
}

static void member_loop(void) __attribute__((noreturn));

static void op_fork(int child_slot, struct rep *out)
{
	pid_t pid = rmb_fork();

	if (pid == 0) {
		struct rep born;

		memset(&born, 0, sizeof(born));
		me.slot = child_slot;
		me.cmdfd = CMD_RD(child_slot);
		reply(&born, OP_BORN);
		member_loop();
	}
	if (pid < 0)
		out->status = errno;
	out->value = pid;
}

static void op_exec(int pages, struct rep *out)
{
	static char blob[BLOB_ARGS][BLOB_LEN + 1];
	char a_slot[16], a_cmd[16], a_rep[16], a_seed[32], a_pages[16];
	char *argv[8 + BLOB_ARGS];
	int n = 0;

	snprintf(a_slot, sizeof(a_slot), "%d", me.slot);
	snprintf(a_cmd, sizeof(a_cmd), "%d", me.cmdfd);	/* informative */
	snprintf(a_rep, sizeof(a_rep), "%d", me.repfd);
	snprintf(a_seed, sizeof(a_seed), "%llu", (unsigned long long)me.seed);
	snprintf(a_pages, sizeof(a_pages), "%d", pages);
	argv[n++] = "rmb-torture";
	argv[n++] = "--member";
	argv[n++] = a_slot;
	argv[n++] = a_cmd;
	argv[n++] = a_rep;
	argv[n++] = a_seed;
	argv[n++] = a_pages;
	for (int k = 0; k < BLOB_ARGS; k++) {
		blob_char_fill(blob[k], k);
		argv[n++] = blob[k];
	}
	argv[n] = NULL;
	execv("/proc/self/exe", argv);
	out->status = errno;		/* only on failure */
}

static void member_loop(void)
{
	struct cmd c;

	alarm(MEMBER_ALARM_S);
	for (;;) {
		struct rep r;

		if (!read_full(me.cmdfd, &c, sizeof(c)))
			_exit(RMB_EXIT_FAIL);	/* the controller is gone */
		memset(&r, 0, sizeof(r));
		switch (c.op) {
		case OP_VERIFY:
			op_verify(&r);
			break;
		case OP_WRITE:
			r.value = op_write(c.a, c.b, c.c);
			break;
		case OP_MAP:
			r.status = op_map(c.a, (size_t)c.b);
			break;
		case OP_MOVE:
			r.status = op_move(c.a, c.b, c.c);
			break;
		case OP_PAGEOUT:
			op_pageout(&r);
			break;
		case OP_FORK:
			op_fork(c.a, &r);
			break;
		case OP_EXEC:
			op_exec(c.a, &r);	/* returns only on failure */
			break;
		case OP_SCAN:
			op_scan(&r);
			break;
		case OP_COLD:
			r.status = op_cold();
			break;
		case OP_PAGES:
			for (int ri = 0; ri < MAX_REGIONS; ri++)
				r.value += (int64_t)me.r[ri].pages;
			break;
		case OP_EXIT:
			reply(&r, OP_EXIT);
			_exit(0);
		default:
			r.status = EINVAL;
		}
		if (r.status)
			rmb_error("slot %d pid %d: op %d (%d %d %d): %s", me.slot,
				  (int)getpid(), c.op, c.a, c.b, c.c,
				  strerror(r.status));
		reply(&r, c.op);
	}
}

/* The re-exec'd image: rmb-torture --member SLOT CMDFD REPFD SEED PAGES
 * BLOB... (the blob strings sit in the stack exec moved). */
static void member_exec_main(int argc, char **argv) __attribute__((noreturn));
static void member_exec_main(int argc, char **argv)
{
	struct rep r;

	rmb_init("torture");
	if (argc != 7 + BLOB_ARGS)
		rmb_die(RMB_EXIT_USAGE, "--member: %d arguments", argc);
	memset(&me, 0, sizeof(me));
	me.slot = atoi(argv[2]);
	me.cmdfd = CMD_RD(me.slot);
	me.repfd = REP_WR;
	me.seed = strtoull(argv[5], NULL, 10);
	me.gen = 1000;
	ksm_mode = getenv(KSM_ENV) != NULL;
	me.blob = argv + 7;
	/* whole pages strictly inside the strings: nothing else uses them */
	me.blob_lo = (char *)(((uintptr_t)me.blob[0] + rmb_page - 1) &
			      ~(uintptr_t)(rmb_page - 1));
	me.blob_hi = (char *)(((uintptr_t)me.blob[BLOB_ARGS - 1] + BLOB_LEN) &
			      ~(uintptr_t)(rmb_page - 1));
	if (me.blob_hi < me.blob_lo)
		me.blob_hi = me.blob_lo;
	memset(&r, 0, sizeof(r));
	r.status = op_map(0, (size_t)atoi(argv[6]));
	if (!r.status)
		op_verify(&r);
	r.value = (me.blob_hi - me.blob_lo) / (long long)rmb_page;
	r.aux = stack_shift_kb();
	reply(&r, OP_EXEC);
	member_loop();
}

/* ==== the controller ===================================================== */

struct totals {
	long long checked, bad, candidates, missed, swapped, pageouts_unchecked;
	long long pressure_pswpout, pressure_ns, pressure_swapped, pressure_ptes;
	long long blob_pages, stack_shift_kb;
	long long swapoff_ns;
	int members, max_members, processes, execs, moves, pressures, balloons;
	int swapoffs;
};

static struct ctl {
	pid_t pid[MAX_SLOTS];
	int alive[MAX_SLOTS], exiting[MAX_SLOTS];
	pid_t pgid, balloon;
	int guest;		/* an rmapbench kernel: pressure, swapoff */
	size_t pages;
	int n, rounds, pressure;
	struct rep stash[2 * MAX_SLOTS];
	int nstash;
	struct totals t;
} C;

static void abort_all(const char *fmt, ...) __attribute__((noreturn,
							   format(printf, 1, 2)));

static void kill_members(void)
{
	if (C.pgid > 0)
		kill(-C.pgid, SIGKILL);
	for (int s = 0; s < MAX_SLOTS; s++)
		if (C.alive[s] && C.pid[s] > 0)
			kill(C.pid[s], SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
}

static void abort_all(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rmb_error("%s", msg);
	kill_members();
	_exit(RMB_EXIT_FAIL);
}

static int slot_of(pid_t pid)
{
	for (int s = 0; s < MAX_SLOTS; s++)
		if (C.alive[s] && C.pid[s] == pid)
			return s;
	return -1;
}

static void describe_status(char *buf, size_t n, int st)
{
	if (WIFSIGNALED(st))
		snprintf(buf, n, "killed by signal %d", WTERMSIG(st));
	else
		snprintf(buf, n, "exit status %d", WEXITSTATUS(st));
}

/* Reap what died; a member that died unasked ends the run. */
static void reap(int block)
{
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, block ? 0 : WNOHANG)) > 0 ||
	       (pid < 0 && errno == EINTR)) {
		int s;
		char how[64];

		if (pid <= 0)
			continue;
		s = slot_of(pid);
		if (s < 0)
			continue;
		if (!C.exiting[s] || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			describe_status(how, sizeof(how), st);
			abort_all("member slot %d (pid %d) %s", s, (int)pid, how);
		}
		C.alive[s] = 0;
	}
}

/* A zombie, or no such process: a member that is no more. */
static int pid_gone(pid_t pid)
{
	char path[64], buf[512];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

static void send_cmd(int slot, int op, int a, int b, int c)
{
	struct cmd m = { op, a, b, c };
	ssize_t w;

	if (!C.alive[slot])
		abort_all("internal: slot %d is not alive (op %d)", slot, op);
	while ((w = write(CMD_WR(slot), &m, sizeof(m))) < 0 && errno == EINTR)
		;
	if (w != (ssize_t)sizeof(m))
		abort_all("slot %d: command pipe: %s", slot,
			  w < 0 ? strerror(errno) : "short write");
}

/* Wait for the report of (slot, op); others arriving first are stashed. */
static struct rep wait_rep(int slot, int op)
{
	uint64_t t0 = rmb_now_ns();
	struct pollfd pfd = { .fd = REP_RD, .events = POLLIN };
	struct rep r;

	for (;;) {
		for (int i = 0; i < C.nstash; i++)
			if (C.stash[i].slot == slot && C.stash[i].op == op) {
				r = C.stash[i];
				C.stash[i] = C.stash[--C.nstash];
				return r;
			}
		if (poll(&pfd, 1, 200) > 0) {
			if (!read_full(REP_RD, &r, sizeof(r)))
				abort_all("report pipe closed");
			if (r.slot == slot && r.op == op)
				return r;
			if (C.nstash >= (int)(sizeof(C.stash) /
					      sizeof(C.stash[0])))
				abort_all("unexpected report slot %d op %d",
					  r.slot, r.op);
			C.stash[C.nstash++] = r;
			continue;
		}
		if (!C.exiting[slot]) {
			reap(0);
			if (pid_gone(C.pid[slot]))
				abort_all("member slot %d (pid %d) died (its "
					  "parent member did not reap it)", slot,
					  (int)C.pid[slot]);
		}
		if (rmb_now_ns() - t0 > (uint64_t)CMD_TIMEOUT_MS * 1000000)
			abort_all("slot %d: no report for op %d in %d s", slot,
				  op, CMD_TIMEOUT_MS / 1000);
	}
}

static struct rep call(int slot, int op, int a, int b, int c)
{
	struct rep r;

	send_cmd(slot, op, a, b, c);
	r = wait_rep(slot, op);
	if (r.status)
		abort_all("slot %d: op %d (%d %d %d) failed: %s", slot, op, a,
			  b, c, strerror(r.status));
	return r;
}

static int count_alive(void)
{
	int n = 0;

	for (int s = 0; s < MAX_SLOTS; s++)
		n += C.alive[s];
	return n;
}

static void note_members(void)
{
	C.t.members = count_alive();
	if (C.t.members > C.t.max_members)
		C.t.max_members = C.t.members;
}

/* slot 0: forked by the controller, in a process group of its own */
static void spawn_first(uint64_t seed)
{
	pid_t pid = rmb_fork();

	if (pid < 0)
		abort_all("fork: %s", strerror(errno));
	if (pid == 0) {
		struct rep born;

		setpgid(0, 0);
		/* members keep only the read ends of commands and the write
		 * end of reports: a vanished controller means EOF */
		for (int s = 0; s < MAX_SLOTS; s++)
			close(CMD_WR(s));
		close(REP_RD);
		memset(&me, 0, sizeof(me));
		me.slot = 0;
		me.cmdfd = CMD_RD(0);
		me.repfd = REP_WR;
		me.seed = seed;
		memset(&born, 0, sizeof(born));
		reply(&born, OP_BORN);
		member_loop();
	}
	setpgid(pid, pid);
	C.pgid = pid;
	C.pid[0] = pid;
	C.alive[0] = 1;
	C.exiting[0] = 0;
	wait_rep(0, OP_BORN);
	C.t.processes++;
	note_members();
}

static void do_map(int slot, int ri, size_t pages)
{
	call(slot, OP_MAP, ri, (int)pages, 0);
}

static void do_fork(int parent, int child)
{
	struct rep r;

	if (C.alive[child])
		abort_all("internal: slot %d taken", child);
	send_cmd(parent, OP_FORK, child, 0, 0);
	r = wait_rep(parent, OP_FORK);
	if (r.status)
		abort_all("slot %d: fork: %s", parent, strerror(r.status));
	C.pid[child] = (pid_t)r.value;
	C.alive[child] = 1;
	C.exiting[child] = 0;
	wait_rep(child, OP_BORN);
	C.t.processes++;
	note_members();
}

static void do_exec(int slot, size_t pages)
{
	struct rep r;

	send_cmd(slot, OP_EXEC, (int)pages, 0, 0);
	r = wait_rep(slot, OP_EXEC);
	if (r.status)
		abort_all("slot %d: exec: %s", slot, strerror(r.status));
	C.t.checked += r.checked;
	C.t.bad += r.bad;
	C.t.execs++;
	C.t.blob_pages += r.value;
	if (r.aux >= 0 && (C.t.stack_shift_kb == 0 || r.aux < C.t.stack_shift_kb))
		C.t.stack_shift_kb = r.aux;	/* the smallest shift seen */
}

static void do_exit(int slot)
{
	C.exiting[slot] = 1;
	call(slot, OP_EXIT, 0, 0, 0);
	reap(0);
}

static void do_write(int slot, int ri, int stride, int offset)
{
	call(slot, OP_WRITE, ri, stride, offset);
}

static void do_move(int slot, int ri, int how, int ri2)
{
	call(slot, OP_MOVE, ri, how, ri2);
	C.t.moves++;
}

static void verify_all(void)
{
	for (int s = 0; s < MAX_SLOTS; s++) {
		struct rep r;

		if (!C.alive[s] || C.exiting[s])
			continue;
		r = call(s, OP_VERIFY, 0, 0, 0);
		C.t.checked += r.checked;
		C.t.bad += r.bad;
	}
}

static void pageout_all(void)
{
	for (int s = 0; s < MAX_SLOTS; s++) {
		struct rep r;

		if (!C.alive[s] || C.exiting[s])
			continue;
		r = call(s, OP_PAGEOUT, 0, 0, 0);
		if (!r.value) {
			C.t.pageouts_unchecked++;
			continue;
		}
		C.t.candidates += r.candidates;
		C.t.missed += r.missed;
		C.t.swapped += r.swapped;
	}
}

static long long family_pages(void)
{
	long long n = 0;

	for (int s = 0; s < MAX_SLOTS; s++)
		if (C.alive[s] && !C.exiting[s])
			n += call(s, OP_PAGES, 0, 0, 0).value;
	return n;
}

static void balloon(long long kb)
{
	int st;

	C.balloon = rmb_fork();
	if (C.balloon == 0)
		rmb_balloon(kb, (size_t)1 << 20, 24576);
	if (C.balloon < 0)
		abort_all("fork of the balloon: %s", strerror(errno));
	while (waitpid(C.balloon, &st, 0) < 0)
		if (errno != EINTR)
			abort_all("waitpid balloon: %s", strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char how[64];

		describe_status(how, sizeof(how), st);
		abort_all("the pressure balloon (%lld kB) %s", kb, how);
	}
	C.balloon = 0;
	C.t.balloons++;
}

/* The family's swap entries and all its ptes, summed over the members. */
static void family_scan(long long *swapped, long long *ptes)
{
	*swapped = *ptes = 0;
	for (int s = 0; s < MAX_SLOTS; s++) {
		struct rep r;

		if (!C.alive[s] || C.exiting[s])
			continue;
		r = call(s, OP_SCAN, 0, 0, 0);
		*swapped += r.swapped;
		*ptes += r.swapped + r.value;
	}
}

/* Every member clears its young bits, then a balloon asks for
 * MemAvailable + twice the family's pages + 32 MB: reclaim must take the
 * family's pages, shared ones included.  Reclaim order is not exact: a
 * balloon that left more than half of the family's ptes mapped is
 * followed by a bigger one (three at most).  Then every member pages out
 * at once, before anyone touches a page: a shared page whose walk missed
 * one of its mappings is now mapped there alone, exclusively, and that
 * pageout cannot unmap it either (a missed page). */
static void pressure(void)
{
	long long avail, swap_free, want, before, swapped = 0, ptes = 0;
	uint64_t t0;

	if (!C.pressure || !C.guest || rmb_meminfo_kb("SwapTotal") <= 0)
		return;
	before = rmb_vmstat("pswpout");
	t0 = rmb_now_ns();
	for (int b = 1; b <= 3; b++) {
		avail = rmb_avail_kb(0);
		swap_free = rmb_meminfo_kb("SwapFree");
		want = avail + b * (2 * family_pages() *
				    (long long)(rmb_page >> 10) + 32768);
		if (want > avail + swap_free - 32768)
			want = avail + swap_free - 32768;
		if (want <= avail)
			break;
		for (int s = 0; s < MAX_SLOTS; s++)
			if (C.alive[s] && !C.exiting[s])
				call(s, OP_COLD, 0, 0, 0);
		balloon(want);
		family_scan(&swapped, &ptes);
		if (2 * swapped >= ptes)
			break;
	}
	C.t.pressure_ns += (long long)(rmb_now_ns() - t0);
	C.t.pressure_pswpout += rmb_vmstat("pswpout") - before;
	C.t.pressure_swapped += swapped;
	C.t.pressure_ptes += ptes;
	C.t.pressures++;
	pageout_all();
}

/* Every active swap area of /proc/swaps: off (unuse brings every page
 * back while the family runs), then the caller verifies, then on again. */
static int swap_areas(char names[][128], int max)
{
	FILE *f = fopen("/proc/swaps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return 0;
	if (!fgets(line, sizeof(line), f)) {	/* header */
		fclose(f);
		return 0;
	}
	while (n < max && fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s", names[n]) == 1)
			n++;
	fclose(f);
	return n;
}

static char g_swaps[4][128];
static int g_nswaps;

static void swap_off(void)
{
	uint64_t t0 = rmb_now_ns();

	g_nswaps = 0;
	if (!C.guest || geteuid() != 0)
		return;
	g_nswaps = swap_areas(g_swaps, 4);
	for (int i = 0; i < g_nswaps; i++)
		if (swapoff(g_swaps[i]) != 0)
			abort_all("swapoff %s: %s", g_swaps[i], strerror(errno));
	C.t.swapoff_ns += (long long)(rmb_now_ns() - t0);
	C.t.swapoffs += g_nswaps > 0;
}

static void swap_on(void)
{
	for (int i = 0; i < g_nswaps; i++)
		if (swapon(g_swaps[i], 0) != 0)
			abort_all("swapon %s again: %s", g_swaps[i],
				  strerror(errno));
	g_nswaps = 0;
}

static void exit_all(void)
{
	for (int s = 0; s < MAX_SLOTS; s++)
		if (C.alive[s] && !C.exiting[s])
			do_exit(s);
	while (count_alive() > 0)
		reap(1);
}

/* Everyone but keep exits: keep's pages, shared until now, are then all
 * exclusive, so pageout must find every one of them however it was moved,
 * swapped or copied, and whichever (now dead) mm faulted it first. */
static void sole_survivor(int keep)
{
	uint64_t t0 = rmb_now_ns();

	for (int s = 0; s < MAX_SLOTS; s++)
		if (s != keep && C.alive[s] && !C.exiting[s])
			do_exit(s);
	/* a zombie has torn its mm down: wait for every one of them */
	for (int s = 0; s < MAX_SLOTS; s++)
		while (s != keep && C.alive[s] && !pid_gone(C.pid[s])) {
			if (rmb_now_ns() - t0 > (uint64_t)CMD_TIMEOUT_MS * 1000000)
				abort_all("slot %d (pid %d) does not exit", s,
					  (int)C.pid[s]);
			usleep(10000);
			reap(0);
		}
	pageout_all();
	verify_all();
}

/* ---- the scenarios ------------------------------------------------------- */

/* A tree of N members sharing R0 and R1; rounds of COW writes, each
 * member its own subset; pageout, pressure, verify throughout. */
static void sc_cow(void)
{
	int n = C.n;

	do_map(0, 0, C.pages);
	do_map(0, 1, C.pages / 4);
	for (int s = 1; s < n; s++)
		do_fork((s - 1) / 2, s);	/* grandchildren from s = 3 */
	for (int r = 0; r < C.rounds; r++) {
		for (int s = 0; s < n; s++) {
			do_write(s, 0, n, (s + r) % n);
			if (s % 2)
				do_write(s, 1, 2, r % 2);
		}
		verify_all();
	}
	pageout_all();
	verify_all();
	pressure();
	verify_all();
	pageout_all();
	verify_all();
	sole_survivor(n > 3 ? 3 : n - 1);	/* a grandchild if there is one */
	exit_all();
}

/* Shared and unshared moves, before and after swap-out. */
static void sc_mremap(void)
{
	int n = C.n;

	do_map(0, 0, C.pages);			/* shared after the forks */
	do_map(0, 1, C.pages / 2);
	for (int s = 1; s < n; s++)
		do_fork(0, s);
	do_map(0, 2, C.pages / 2);		/* unshared */
	/* before swap-out */
	do_move(0, 2, MV_ALIGNED, 0);		/* unshared, whole tables */
	do_move(0, 2, MV_SHIFTED, 0);		/* unshared, every pte */
	do_move(1, 0, MV_ALIGNED, 0);		/* shared */
	do_move(1, 1, MV_SHIFTED, 0);
	if (n > 2)
		do_move(2, 0, MV_HALF, 3);	/* shared, split */
	if (n > 3)
		do_move(3, 0, MV_DONTUNMAP, 4);	/* shared, old range empty */
	if (n > 4)
		do_move(4, 0, MV_GROW, 0);	/* shared, grows */
	verify_all();
	pageout_all();				/* unshared pages go out */
	verify_all();				/* ... and come back */
	do_move(0, 2, MV_ALIGNED, 0);		/* swap ptes and pages move */
	pageout_all();
	do_move(0, 2, MV_SHIFTED, 0);
	verify_all();
	pressure();				/* shared pages go out */
	for (int r = 0; r < C.rounds; r++) {
		/* after swap-out: swap entries move */
		do_move(1, 0, r % 2 ? MV_ALIGNED : MV_SHIFTED, 0);
		if (n > 2) {
			do_move(2, 3, MV_SHIFTED, 0);
			do_write(2, 3, 3, r % 3);	/* COW after the move */
		}
		do_move(0, 2, MV_SHIFTED, 0);
		verify_all();	/* swap-cache pages at other addresses */
		pageout_all();
		verify_all();
		pressure();
		verify_all();
	}
	sole_survivor(1);	/* moved R0 and R1, shared them with all */
	exit_all();
}

/* A chain of generations, each COW-writing its own part; the first ones
 * exit before their descendants, whose pages then belong to dead mms. */
static void sc_exit(void)
{
	int n = C.n, last = n - 1;

	do_map(0, 0, C.pages);
	for (int s = 1; s < n; s++) {
		do_fork(s - 1, s);
		do_write(s, 0, n, s);
		if (s == 1)
			do_map(1, 1, C.pages / 4);	/* shared by 2.. */
	}
	do_fork(last - 1, last + 1);		/* a sibling of the last */
	do_exit(0);				/* parents before children */
	if (n > 2)
		do_exit(1);
	verify_all();
	pressure();
	verify_all();
	pageout_all();
	verify_all();
	do_move(last, 0, MV_SHIFTED, 0);	/* orphan pages move */
	do_move(last + 1, 0, MV_ALIGNED, 0);
	pageout_all();
	verify_all();
	pressure();
	verify_all();
	sole_survivor(last);
	exit_all();
}

/* Members exec this program again: a new mm, its exec stack moved; the
 * exec'd ones fork new families; the first process exits. */
static void sc_exec(void)
{
	int n = C.n;

	do_map(0, 0, C.pages);
	do_map(0, 1, C.pages / 4);
	for (int s = 1; s < n; s++)
		do_fork(0, s);
	do_write(1, 0, 2, 0);
	do_exec(1, C.pages / 2);
	do_fork(1, n);				/* a new family of the exec'd */
	do_write(n, 0, 2, 1);
	if (n > 2)
		do_exec(2, C.pages / 4);
	do_exit(0);				/* the old family's first mm */
	verify_all();
	pageout_all();				/* the exec'd argument pages too */
	verify_all();
	pressure();
	verify_all();
	pageout_all();
	verify_all();
	sole_survivor(n);	/* its new family's first mm exits */
	exit_all();
}

/* Shared, moved, partly swapped family; swapoff brings everything back
 * while it lives; the pages unuse mapped must then be reclaimable. */
static void sc_swapoff(void)
{
	int n = C.n;

	do_map(0, 0, C.pages);
	do_map(0, 1, C.pages / 4);
	for (int s = 1; s < n; s++)
		do_fork(0, s);
	do_move(1, 0, MV_SHIFTED, 0);
	do_write(1, 0, 3, 1);
	do_map(0, 2, C.pages / 4);
	do_move(0, 2, MV_ALIGNED, 0);
	pageout_all();
	pressure();
	if (n > 2)
		do_move(2, 0, MV_HALF, 3);	/* swap entries move */
	do_exit(0);				/* orphans in swap */
	swap_off();
	verify_all();
	swap_on();
	pageout_all();
	verify_all();
	pressure();
	verify_all();
	sole_survivor(1);
	exit_all();
}

static const struct scenario {
	const char *name;
	void (*run)(void);
} scenarios[] = {
	{ "cow", sc_cow },
	{ "mremap", sc_mremap },
	{ "exit", sc_exit },
	{ "exec", sc_exec },
	{ "swapoff", sc_swapoff },
};

static void json_totals(struct rmb_json *j, const struct totals *t)
{
	rmb_json_int(j, "members_max_count", t->max_members);
	rmb_json_int(j, "processes_count", t->processes);
	rmb_json_int(j, "execs_count", t->execs);
	rmb_json_int(j, "moves_count", t->moves);
	rmb_json_int(j, "pressure_count", t->pressures);
	rmb_json_int(j, "pressure_balloon_count", t->balloons);
	rmb_json_int(j, "swapoff_count", t->swapoffs);
	rmb_json_int(j, "verified_pages", t->checked);
	rmb_json_int(j, "verify_mismatch_pages", t->bad);
	rmb_json_int(j, "pageout_candidate_pages", t->candidates);
	rmb_json_int(j, "pageout_missed_pages", t->missed);
	rmb_json_int(j, "pageout_swapped_pages", t->swapped);
	rmb_json_int(j, "pageout_unchecked_count", t->pageouts_unchecked);
	rmb_json_int(j, "pressure_pswpout_pages", t->pressure_pswpout);
	rmb_json_int(j, "pressure_swap_ptes_pages", t->pressure_swapped);
	rmb_json_int(j, "pressure_mapped_ptes_pages", t->pressure_ptes);
	rmb_json_int(j, "exec_blob_pages", t->blob_pages);
	rmb_json_int(j, "exec_stack_shift_kb", t->stack_shift_kb);
	rmb_json_int(j, "pressure_ns", t->pressure_ns);
	rmb_json_int(j, "swapoff_ns", t->swapoff_ns);
}

static void add_totals(struct totals *a, const struct totals *b)
{
	a->checked += b->checked;
	a->bad += b->bad;
	a->candidates += b->candidates;
	a->missed += b->missed;
	a->swapped += b->swapped;
	a->pageouts_unchecked += b->pageouts_unchecked;
	a->pressure_pswpout += b->pressure_pswpout;
	a->pressure_ns += b->pressure_ns;
	a->pressure_swapped += b->pressure_swapped;
	a->pressure_ptes += b->pressure_ptes;
	a->blob_pages += b->blob_pages;
	if (b->stack_shift_kb > 0 && (a->stack_shift_kb == 0 ||
				      b->stack_shift_kb < a->stack_shift_kb))
		a->stack_shift_kb = b->stack_shift_kb;
	a->swapoff_ns += b->swapoff_ns;
	if (b->max_members > a->max_members)
		a->max_members = b->max_members;
	a->processes += b->processes;
	a->execs += b->execs;
	a->moves += b->moves;
	a->pressures += b->pressures;
	a->balloons += b->balloons;
	a->swapoffs += b->swapoffs;
}

static void run_scenario(const struct scenario *sc, struct totals *sum,
			 uint64_t seed)
{
	struct rmb_snap s0, s1, d;
	struct rmb_json j;

	memset(&C.t, 0, sizeof(C.t));
	memset(C.alive, 0, sizeof(C.alive));
	C.nstash = 0;
	rmb_snap_take(&s0);
	spawn_first(seed);
	sc->run();
	rmb_snap_take(&s1);
	rmb_snap_delta(&d, &s0, &s1);
	rmb_result_begin(&j, "scenario");
	rmb_json_str(&j, "scenario", sc->name);
	json_totals(&j, &C.t);
	rmb_json_int(&j, "elapsed_ns", (long long)d.t_ns);
	rmb_json_delta(&j, &d);
	rmb_json_end(&j);
	add_totals(sum, &C.t);
}

static void check_params(void)
{
	size_t pages = (size_t)rmb_arg("pages");

	/* the family's private copies: at most every member's own set */
	rmb_need_mem_kb((long long)(pages * rmb_page >> 10) * 3 + 16384, 1,
			"pages");
	rmb_need_addr_space(16 * (uint64_t)pages * rmb_page +
			    32 * RMB_TABLE_SPAN, "pages");
}

int main(int argc, char **argv)
{
	struct rmb_snap s0, s1, d;
	struct totals sum;
	struct rmb_json j;
	uint64_t seed;
	int failed = 0;

	if (argc > 1 && !strcmp(argv[1], "--member"))
		member_exec_main(argc, argv);
	rmb_init("torture");
	rmb_parse_args(params, argc, argv);
	check_params();
	memset(&C, 0, sizeof(C));
	memset(&sum, 0, sizeof(sum));
	C.pages = (size_t)rmb_arg("pages");
	C.n = (int)rmb_arg("N");
	C.rounds = (int)rmb_arg("rounds");
	C.pressure = (int)rmb_arg("pressure");
	ksm_mode = rmb_mode_is("ksm");
	if (ksm_mode && setenv(KSM_ENV, "1", 1) != 0)
		rmb_die(RMB_EXIT_FAIL, "setenv: %s", strerror(errno));
	C.guest = strcmp(rmb_scheme(), "unknown") != 0;
	seed = (uint64_t)rmb_arg("seed");
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		rmb_die(RMB_EXIT_FAIL, "PR_SET_CHILD_SUBREAPER: %s",
			strerror(errno));
	for (int s = 0; s <= MAX_SLOTS; s++) {
		int fd[2];
		int rd = s < MAX_SLOTS ? CMD_RD(s) : REP_RD;
		int wr = s < MAX_SLOTS ? CMD_WR(s) : REP_WR;

		if (pipe(fd) != 0 || dup2(fd[0], rd) != rd ||
		    dup2(fd[1], wr) != wr)
			rmb_die(RMB_EXIT_FAIL, "pipe: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
	}
	rmb_snap_take(&s0);
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (rmb_mode_is("all") || ksm_mode ||
		    rmb_mode_is(scenarios[i].name))
			run_scenario(&scenarios[i], &sum,
				     seed * 1000003ull + i);
	rmb_snap_take(&s1);
	rmb_snap_delta(&d, &s0, &s1);
	rmb_result_begin(&j, "summary");
	json_totals(&j, &sum);
	rmb_json_int(&j, "elapsed_ns", (long long)d.t_ns);
	rmb_json_delta(&j, &d);
	rmb_json_end(&j);
	failed |= rmb_check_mismatch(sum.bad, sum.checked, "the families");
	if (sum.missed > 0) {
		rmb_error("pageout: %lld of %lld exclusively mapped pages were "
			  "not reclaimed: mappings the rmap walk cannot find",
			  sum.missed, sum.candidates);
		failed = 1;
	}
	return failed ? RMB_EXIT_FAIL : 0;
}
