/*
 * rmb-fork: what fork costs with many VMAs, down long chains, and how fast.
 *
 * mode=breadth  a parent with V single-page VMAs forks N children that
 *               pause on a pipe: latency of each fork() and kernel memory
 *               per child; then the children verify their inherited pages.
 * mode=depth    a chain of D generations: each verifies the pages it
 *               inherited, writes (COWs) all of them, prints its slab
 *               totals (one "generation" line) and forks the next.
 * mode=chain    the same chain with every parent exiting once it forked
 *               (the 2012 anon_vma growth reproducer): each generation
 *               verifies its heap, rewrites touch pages of it, forks the
 *               next and exits; D up to 100000.  "generation" lines at
 *               generations 1, 2, 5, 10, 20, 50, ... and the last.
 * mode=rate     N rounds of fork + child verifies and exits + wait.
 * mode=thp      the same rounds from a parent whose only anon memory is
 *               huge MB, table-span aligned and filled (THP-backed where
 *               THP is on: fork copies a pmd per 2 MB, exit zaps it);
 *               with cow=1 each child writes one page of every 2 MB (a
 *               huge COW: its pmd split, one 4 kB page copied).  Timed:
 *               the fork() call, and the whole round.
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "breadth|depth|chain|rate|thp",
	  .sdef = "breadth",
	  .help = "breadth: N live children; depth: chain of D generations; "
		  "chain: D generations, each parent exiting; rate: "
		  "fork+exit+wait loop; thp: the loop from THP-backed memory" },
	{ .key = "V", .modes = "breadth|rate", .def = 1000, .min = 1,
	  .max = 1 << 22, .help = "single-page VMAs in the parent" },
	{ .key = "N", .modes = "breadth|rate|thp", .def = 100, .min = 1,
	  .max = 1000000, .mode_max = "breadth:4096",
	  .help = "children (breadth) or rounds (rate, thp)" },
	{ .key = "huge", .modes = "thp", .def = 64, .min = 4, .max = 4096,
	  .help = "MB of the parent's memory, in whole 4 MB spans" },
	{ .key = "cow", .modes = "thp", .def = 0, .min = 0, .max = 1,
	  .help = "1: each child writes one page of every 2 MB" },
	{ .key = "kind", .choices = "split|gap", .sdef = "split",
	  .modes = "breadth|rate", .help = "VMA kind, as in rmb-vma" },
	{ .key = "D", .modes = "depth|chain", .def = 16, .min = 1,
	  .max = 100000, .mode_max = "depth:4096",
	  .help = "generations, the first process included" },
	{ .key = "pages", .modes = "depth|chain", .def = 256, .min = 1,
	  .max = 1 << 22, .help = "pages each generation inherits (depth: "
	  "and COWs)" },
	{ .key = "touch", .modes = "chain", .def = 32, .min = 1,
	  .max = 1 << 22, .help = "pages each generation rewrites (COWs), "
	  "the next ones round the heap; at most pages" },
	{ .key = "pageout", .modes = "chain", .def = 1, .min = 0, .max = 1,
	  .help = "1: at each line the generation pushes its heap out "
	  "(MADV_PAGEOUT: a walk of each page, which re-points orphans); "
	  "only in a guest with swap" },
	{ .key = "seed", .def = 1, .min = 0, .max = 2147483647,
	  .help = "seed of the page patterns" },
	{ .key = NULL },
};

static void make_vmas(struct rmb_vmaset *s)
{
	size_t v = (size_t)rmb_arg("V");
	int err;

	rmb_need_mem_kb((long long)v * (long long)(rmb_page / 1024 + 1), 0,
			"V VMAs with a page each");
	if (rmb_vmaset_reserve(s, v, rmb_arg_str("kind"), rmb_arg("seed")))
		rmb_die(RMB_EXIT_USAGE, "V=%zu: the address space has no room "
			"for %zu VMAs", v, v);
	if (rmb_vmaset_grow(s, v, &err) < v)
		rmb_die(RMB_EXIT_FAIL, "only %zu of %zu VMAs could be created: "
			"%s", s->n, v, strerror(err));
}

static int children_failed(int got, int want, int abnormal)
{
	if (got >= want && !abnormal)
		return 0;
	rmb_error("%d of %d children did not report, %d ended abnormally",
		  want - got, want, abnormal);
	return 1;
}

/* ---- mode=breadth ---------------------------------------------------- */

struct breadth {
	struct rmb_vmaset s;
	struct rmb_family f;
	uint64_t *lat;
	int n, err;
};

static void breadth_forks(struct breadth *b, int want)
{
	for (b->n = 0; b->n < want; b->n++) {
		uint64_t t0 = rmb_now_ns();
		pid_t pid = rmb_family_fork(&b->f);

		if (pid == 0)
			rmb_vmaset_child(&b->f, &b->s, b->n, 0);
		b->lat[b->n] = rmb_now_ns() - t0;
		if (pid < 0) {
			b->err = errno;
			return;
		}
	}
}

static void breadth_report(struct breadth *b, const struct rmb_snap *d,
			   const struct rmb_report *sum)
{
	struct rmb_json j;
	struct rmb_stats st;

	rmb_stats(b->lat, (size_t)b->n, &st);
	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "children_count", b->n);
	rmb_json_int(&j, "vmas_count", (long long)b->s.n);
	rmb_json_stats(&j, "fork", &st);
	rmb_json_int(&j, "verified_pages", sum->checked_pages);
	rmb_json_int(&j, "verify_mismatch_pages", sum->mismatch_pages);
	rmb_json_delta(&j, d);
	rmb_json_per(&j, d, "child", b->n);
	rmb_json_end(&j);
}

static void breadth_setup(struct breadth *b, int want)
{
	/* about 0.5 kB of kernel memory per inherited VMA, 64 kB per mm */
	rmb_need_mem_kb((long long)want * (rmb_arg("V") / 2 + 64), 0,
			"N children of V VMAs");
	make_vmas(&b->s);
	rmb_family_open(&b->f, want);
	b->lat = calloc((size_t)want, sizeof(*b->lat));
	if (!b->lat)
		rmb_die(RMB_EXIT_FAIL, "N=%d: out of memory", want);
}

static int run_breadth(void)
{
	static struct breadth b;
	int want = (int)rmb_arg("N"), got, abnormal, failed;
	struct rmb_snap s0, s1, d;
	struct rmb_report sum;

	breadth_setup(&b, want);
	rmb_snap_take(&s0);
	breadth_forks(&b, want);
	rmb_snap_take(&s1);
	rmb_snap_delta(&d, &s0, &s1);
	rmb_family_go(&b.f);
	got = rmb_family_collect(&b.f, RMB_REP_DONE, b.n, &sum);
	abnormal = rmb_family_finish(&b.f);
	breadth_report(&b, &d, &sum);
	failed = rmb_check_mismatch(sum.mismatch_pages, sum.checked_pages,
				    "the children");
	failed |= children_failed(got, b.n, abnormal);
	if (b.n < want) {
		rmb_error("fork %d of %d failed: %s", b.n + 1, want,
			  strerror(b.err));
		failed = 1;
	}
	return failed;
}

/* ---- mode=depth ------------------------------------------------------ */

struct depth {
	struct rmb_family f;
	struct rmb_snap base;
	char *region;
	size_t pages;
	int d;
	uint64_t seed;
};

/* The pattern generation g of a chain writes. */
static uint64_t gen_seed(uint64_t seed, int g)
{
	return seed + 0x10001ull * (uint64_t)g;
}

static void depth_line(const struct depth *c, int g, size_t bad,
		       uint64_t cow_ns)
{
	struct rmb_snap now, d;
	struct rmb_json j;

	rmb_result_since(&j, "generation", &c->base, &now, &d);
	rmb_json_int(&j, "generation", g);
	rmb_json_int(&j, "processes_count", g + 1);
	rmb_json_int(&j, "verified_pages", g ? (long long)c->pages : 0);
	rmb_json_int(&j, "verify_mismatch_pages", (long long)bad);
	rmb_json_int(&j, "cow_ns", (long long)cow_ns);
	rmb_json_snap(&j, &now);
	rmb_json_delta(&j, &d);
	rmb_json_end(&j);
}

/* Generation g (> 0 in a child): verify, COW, report, fork g + 1. */
static int depth_gen(struct depth *c, int g)
{
	size_t bad = 0;
	uint64_t t0;
	pid_t pid;
	int st;

	if (g > 0)
		bad = rmb_verify(c->region, c->pages, gen_seed(c->seed, g - 1), 0, 0);
	t0 = rmb_now_ns();
	rmb_fill(c->region, c->pages, gen_seed(c->seed, g), 0);
	depth_line(c, g, bad, rmb_now_ns() - t0);
	if (g > 0)
		rmb_family_send(&c->f, RMB_REP_DONE, g, (int64_t)c->pages,
				(int64_t)bad, 0);
	if (g + 1 >= c->d)
		return 0;
	pid = rmb_family_fork(&c->f);
	if (pid == 0)
		_exit(depth_gen(c, g + 1));
	if (pid < 0)
		rmb_die(RMB_EXIT_FAIL, "generation %d: fork: %s", g,
			strerror(errno));
	if (g == 0)
		return 0;	/* the first generation collects, then reaps */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : RMB_EXIT_FAIL;
}

static void depth_summary(const struct depth *c, const struct rmb_report *sum,
			  size_t bad0)
{
	struct rmb_snap now, d;
	struct rmb_json j;

	rmb_result_since(&j, "summary", &c->base, &now, &d);
	rmb_json_int(&j, "generations_count", c->d);
	rmb_json_int(&j, "verified_pages", sum->checked_pages +
		     (long long)c->pages);
	rmb_json_int(&j, "verify_mismatch_pages", sum->mismatch_pages +
		     (long long)bad0);
	rmb_json_snap(&j, &now);
	rmb_json_delta(&j, &d);
	rmb_json_end(&j);
}

static int run_depth(void)
{
	static struct depth c;
	struct rmb_report sum;
	size_t bad0;
	int got, abnormal, failed;

	c.d = (int)rmb_arg("D");
	c.pages = (size_t)rmb_arg("pages");
	c.seed = (uint64_t)rmb_arg("seed");
	rmb_need_addr_space((uint64_t)c.pages * rmb_page, "pages");
	rmb_need_mem_kb((long long)c.d * (long long)(c.pages * rmb_page / 1024
						     + 64), 0, "D x pages");
	rmb_family_open(&c.f, 1);
	rmb_snap_take(&c.base);
	c.region = rmb_map_anon(NULL, c.pages * rmb_page);
	if (!c.region)
		rmb_die(RMB_EXIT_FAIL, "mmap of %zu pages: %s", c.pages,
			strerror(errno));
	depth_gen(&c, 0);
	got = rmb_family_collect(&c.f, RMB_REP_DONE, c.d - 1, &sum);
	abnormal = rmb_family_finish(&c.f);
	bad0 = rmb_verify(c.region, c.pages, gen_seed(c.seed, 0), 0, 0);
	depth_summary(&c, &sum, bad0);
	failed = rmb_check_mismatch(sum.mismatch_pages + (long long)bad0,
				    sum.checked_pages + (long long)c.pages,
				    "the generations");
	return failed | children_failed(got, c.d - 1, abnormal);
}

/* ---- mode=chain ------------------------------------------------------ */

enum { CHAIN_LINE = 3 };	/* a report: a generation waits at a line */

struct gen_rec {		/* one per generation, in shared memory */
	uint64_t fork_ns;	/* its fork() of the next generation */
	uint32_t checked, bad;	/* pages it verified, and mismatched */
};

struct chain_shared {		/* MAP_SHARED: every generation writes it */
	struct rmb_pageout po;	/* the pageouts at the lines, summed */
	int fork_errno, reached;	/* the last generation that started */
	struct gen_rec gens[];
};

struct chain {
	struct rmb_family f;
	struct rmb_snap base;
	struct chain_shared *sh;
	uint32_t *owner;	/* the generation whose pattern page i holds */
	char *heap;
	size_t pages, touch;
	int d, pageout, ack[2];
	uint64_t seed, t0;
};

static volatile sig_atomic_t chain_abnormal;

/* The program reaps every generation as it ends (it is their subreaper),
 * so that ten thousand of them never pile up as zombies. */
static void chain_reap(int sig)
{
	int st, saved = errno;

	(void)sig;
	while (waitpid(-1, &st, WNOHANG) > 0)
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			chain_abnormal++;
	errno = saved;
}

/* A line at generations 1, 2, 5, 10, 20, 50, ... and at the last. */
static int chain_is_line(int g, int d)
{
	if (g == d - 1)
		return 1;
	while (g > 0 && g % 10 == 0)
		g /= 10;
	return g == 1 || g == 2 || g == 5;
}

static size_t chain_verify(const struct chain *c, int quick)
{
	size_t bad = 0;

	for (size_t i = 0; i < c->pages; i++)
		bad += rmb_verify(c->heap + i * rmb_page, 1,
				  gen_seed(c->seed, (int)c->owner[i]), i, quick);
	return bad;
}

/* Generation 0 writes the whole heap, generation g the touch pages from
 * g * touch on, round the heap. */
static void chain_touch(struct chain *c, int g)
{
	uint64_t first = g ? (uint64_t)g * c->touch % c->pages : 0;
	size_t n = g ? c->touch : c->pages;

	for (size_t k = 0; k < n; k++) {
		size_t i = (size_t)((first + k) % c->pages);

		c->owner[i] = (uint32_t)g;
		rmb_fill(c->heap + i * rmb_page, 1, gen_seed(c->seed, g), i);
	}
}

/* At a line: once the parent is gone, ask the program to count and wait
 * for its nod; then a full check and (pageout=1) the heap pushed out. */
static size_t chain_line(struct chain *c, int g, pid_t parent)
{
	char nod;
	size_t bad;

	while (g > 0 && getppid() == parent)
		usleep(1000);
	rmb_family_send(&c->f, CHAIN_LINE, g, 0, 0, 0);
	while (read(c->ack[0], &nod, 1) < 0 && errno == EINTR)
		;
	bad = chain_verify(c, 0);
	if (c->pageout)
		rmb_pageout_check(c->heap, c->pages, &c->sh->po);
	return bad;
}

/* The generations, from the first (forked by the program) on: each
 * verifies its heap (quick check), rewrites its touch pages, forks the
 * next and exits; the child goes round the loop as the next. */
static void chain_generations(struct chain *c)
{
	pid_t parent = 0, pid;

	close(c->ack[1]);
	for (int g = 0;; g++) {
		struct gen_rec *me = &c->sh->gens[g];
		uint64_t t0;

		c->sh->reached = g;
		if (g > 0) {
			me->bad = (uint32_t)chain_verify(c, 1);
			me->checked = (uint32_t)c->pages;
		}
		chain_touch(c, g);
		if (chain_is_line(g, c->d)) {
			me->bad += (uint32_t)chain_line(c, g, parent);
			me->checked += (uint32_t)c->pages;
		}
		if (g + 1 >= c->d)
			_exit(me->bad ? RMB_EXIT_FAIL : 0);
		parent = getpid();
		t0 = rmb_now_ns();
		pid = rmb_fork();
		if (pid == 0)
			continue;
		me->fork_ns = rmb_now_ns() - t0;
		if (pid < 0)
			c->sh->fork_errno = errno;
		_exit(me->bad || pid < 0 ? RMB_EXIT_FAIL : 0);
	}
}

/*
 * SLUB's /proc/slabinfo counts every object of a CPU's slab as active:
 * a count moves a slab at a time, more than a chain process holds.
 * Writing /sys/kernel/slab/<cache>/shrink flushes the CPU slabs first,
 * so that the count after it is the objects allocated.
 */
static void shrink_caches(void)
{
#define CACHE_NAME(id, name, flags) #name,
	static const char *const names[] = { RMB_SLABS(CACHE_NAME) };
#undef CACHE_NAME
	char path[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int fd;

		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink",
			 names[i]);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			rmb_write_all(fd, "1", 1);
			close(fd);
		}
	}
}

/* Exact counts, once they have held still for 200 ms (anonmm frees
 * through RCU, and a grace period takes tens of ms under TCG); at once
 * on a host, whose caches never hold still. */
static void chain_snap(struct rmb_snap *s)
{
	struct rmb_snap next;
	int guest = strcmp(rmb_scheme(), "unknown") != 0, still = 0;

	if (guest)
		shrink_caches();
	rmb_snap_take(s);
	for (int i = 0; i < 100 && guest && still < 4; i++) {
		usleep(50000);
		shrink_caches();
		rmb_snap_take(&next);
		if (memcmp(next.slab_objs, s->slab_objs, sizeof(s->slab_objs)))
			still = 0;
		else
			still++;
		*s = next;
	}
}

/* Fork latency of generations [from, to), verified pages of [0, upto). */
static void chain_forks(struct rmb_json *j, const struct chain *c, int from,
			int to, int upto)
{
	static uint64_t lat[100000];
	struct rmb_stats st;
	long long checked = 0, bad = 0;

	for (int g = from; g < to; g++)
		lat[g - from] = c->sh->gens[g].fork_ns;
	rmb_stats(lat, (size_t)(to - from), &st);
	rmb_json_stats(j, "fork", &st);
	for (int g = 0; g < upto; g++) {
		checked += c->sh->gens[g].checked;
		bad += c->sh->gens[g].bad;
	}
	rmb_json_int(j, "verified_pages", checked);
	rmb_json_int(j, "verify_mismatch_pages", bad);
}

/* rmap slab (anon_vma, anon_vma_chain, anonmm) grown since the base,
 * and per live process of the chain. */
static void chain_rmap(struct rmb_json *j, const struct rmb_snap *d,
		       int procs)
{
	long long objs = d->slab_objs[RMB_SLAB_ANON_VMA] +
		d->slab_objs[RMB_SLAB_AVC] + d->slab_objs[RMB_SLAB_ANONMM];
	long long bytes = d->slab_bytes[RMB_SLAB_ANON_VMA] +
		d->slab_bytes[RMB_SLAB_AVC] + d->slab_bytes[RMB_SLAB_ANONMM];

	rmb_json_int(j, "processes_count", procs);
	rmb_json_int(j, "rmap_slab_delta_objs_count", objs);
	rmb_json_int(j, "rmap_slab_delta_bytes", bytes);
	rmb_json_dbl(j, "rmap_slab_per_process_bytes",
		     procs ? (double)bytes / procs : 0);
}

/* The state since the base, once the caches hold still: rmap slab, the
 * pageouts so far, the absolute and delta groups; closes the line. */
static void chain_state(struct rmb_json *j, const struct chain *c,
			const struct rmb_snap *now, int procs)
{
	struct rmb_snap d;

	rmb_snap_delta(&d, &c->base, now);
	chain_rmap(j, &d, procs);
	rmb_json_int(j, "pageout_candidate_pages", c->sh->po.candidates);
	rmb_json_int(j, "pageout_missed_pages", c->sh->po.missed);
	rmb_json_snap(j, now);
	rmb_json_delta(j, &d);
	rmb_json_end(j);
}

/* Generation g waits at its line, reported at t; the previous line's
 * generation went on at since.  Every fork before g is recorded first. */
static void chain_line_print(const struct chain *c, int g, int from,
			     uint64_t since, uint64_t t)
{
	struct rmb_snap now;
	struct rmb_json j;

	for (int k = from, i = 0; k < g && i < 10000; i++)
		if (c->sh->gens[k].fork_ns)
			k++;
		else
			usleep(1000);
	chain_snap(&now);
	rmb_result_begin(&j, "generation");
	rmb_json_int(&j, "generation", g);
	rmb_json_int(&j, "elapsed_ns", (long long)(t - c->t0));
	rmb_json_dbl(&j, "forks_per_s", t > since ? (double)(g - from) * 1e9 /
		     (double)(t - since) : 0);
	chain_forks(&j, c, from, g, g);
	chain_state(&j, c, &now, 1);
}

static void chain_summary(const struct chain *c, uint64_t t_end)
{
	int ran = c->sh->reached + 1;
	struct rmb_snap now;
	struct rmb_json j;

	chain_snap(&now);
	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "generations_count", ran);
	rmb_json_int(&j, "elapsed_ns", (long long)(t_end - c->t0));
	rmb_json_dbl(&j, "forks_per_s", t_end > c->t0 ? (double)(ran - 1) *
		     1e9 / (double)(t_end - c->t0) : 0);
	chain_forks(&j, c, 0, ran - 1, ran);
	chain_state(&j, c, &now, 0);
}

static void chain_setup(struct chain *c)
{
	size_t bytes;

	c->d = (int)rmb_arg("D");
	c->pages = (size_t)rmb_arg("pages");
	c->touch = (size_t)rmb_arg("touch");
	c->seed = (uint64_t)rmb_arg("seed");
	c->pageout = rmb_arg("pageout") && rmb_meminfo_kb("SwapTotal") > 0 &&
		strcmp(rmb_scheme(), "unknown") != 0;
	if (c->touch > c->pages)
		rmb_die(RMB_EXIT_USAGE, "touch=%zu: more than the %zu pages",
			c->touch, c->pages);
	rmb_need_addr_space((uint64_t)c->pages * (rmb_page + 4), "pages");
	rmb_need_mem_kb((long long)(c->pages * (rmb_page + 4) / 512) + 8192, 0,
			"the heap of two generations");
	bytes = sizeof(*c->sh) + (size_t)c->d * sizeof(struct gen_rec);
	c->sh = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	c->heap = rmb_map_anon(NULL, c->pages * rmb_page);
	c->owner = rmb_map_anon(NULL, c->pages * sizeof(*c->owner));
	if (c->sh == MAP_FAILED || !c->heap || !c->owner || pipe(c->ack))
		rmb_die(RMB_EXIT_FAIL, "the chain's maps and pipe: %s",
			strerror(errno));
	rmb_family_open(&c->f, 1);
}

/* Lines until the last, or until the chain broke: the generations seen. */
static int chain_follow(struct chain *c)
{
	struct rmb_report r;
	uint64_t since = c->t0;
	int from = 0;

	for (int g = 0; g < c->d; g++) {
		if (!chain_is_line(g, c->d))
			continue;
		if (rmb_family_collect(&c->f, CHAIN_LINE, 1, &r) < 1)
			return 0;
		chain_line_print(c, g, from, since, rmb_now_ns());
		from = g;
		since = rmb_now_ns();
		rmb_write_all(c->ack[1], "1", 1);
	}
	return 1;
}

static int run_chain(void)
{
	static struct chain c;
	int complete, abnormal, failed;
	long long bad = 0;
	pid_t pid;

	chain_setup(&c);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGCHLD, chain_reap);
	chain_snap(&c.base);
	c.t0 = rmb_now_ns();
	pid = rmb_family_fork(&c.f);
	if (pid == 0)
		chain_generations(&c);
	if (pid < 0)
		rmb_die(RMB_EXIT_FAIL, "fork of generation 0: %s",
			strerror(errno));
	close(c.ack[0]);
	complete = chain_follow(&c);
	close(c.ack[1]);
	abnormal = rmb_family_finish(&c.f) + chain_abnormal;
	chain_summary(&c, rmb_now_ns());
	for (int g = 0; g <= c.sh->reached; g++)
		bad += c.sh->gens[g].bad;
	failed = rmb_check_mismatch(bad, 1, "the generations");
	if (!complete || abnormal) {
		rmb_error("the chain ended at generation %d of %d (%d ended "
			  "abnormally; fork: %s)", c.sh->reached + 1, c.d,
			  abnormal, c.sh->fork_errno ?
			  strerror(c.sh->fork_errno) : "ok");
		failed = 1;
	}
	if (c.sh->po.missed) {
		rmb_error("pageout left %lld pages mapped: a walk missed them",
			  c.sh->po.missed);
		failed = 1;
	}
	return failed;
}

/* ---- mode=rate ------------------------------------------------------- */

/* Child: exit status = mismatching pages, capped at 100. */
static void rate_child(const struct rmb_vmaset *s)
{
	size_t bad = rmb_vmaset_verify(s, 1);

	_exit(bad > 100 ? 100 : (int)bad);
}

static int rate_round(const struct rmb_vmaset *s, long long *bad)
{
	pid_t pid = rmb_fork();
	int st;

	if (pid == 0)
		rate_child(s);
	if (pid < 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st))
		return -1;
	*bad += WEXITSTATUS(st);
	return 0;
}

static void rate_report(const struct rmb_vmaset *s, uint64_t *lat, long n,
			uint64_t ns, long long bad)
{
	struct rmb_json j;
	struct rmb_stats st;

	rmb_stats(lat, (size_t)n, &st);
	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "rounds_count", n);
	rmb_json_int(&j, "vmas_count", (long long)s->n);
	rmb_json_int(&j, "elapsed_ns", (long long)ns);
	rmb_json_dbl(&j, "forks_per_s", ns ? (double)n * 1e9 / (double)ns : 0);
	rmb_json_stats(&j, "round", &st);
	rmb_json_int(&j, "verified_pages", (long long)s->n * n);
	rmb_json_int(&j, "verify_mismatch_pages", bad);
	rmb_json_end(&j);
}

static int run_rate(void)
{
	static struct rmb_vmaset s;
	long n = (long)rmb_arg("N"), i;
	uint64_t *lat = calloc((size_t)n, sizeof(*lat)), t0, start;
	long long bad = 0;
	int failed;

	if (!lat)
		rmb_die(RMB_EXIT_FAIL, "N=%ld: out of memory", n);
	make_vmas(&s);
	start = rmb_now_ns();
	for (i = 0; i < n; i++) {
		t0 = rmb_now_ns();
		if (rate_round(&s, &bad) < 0)
			break;
		lat[i] = rmb_now_ns() - t0;
	}
	rate_report(&s, lat, i, rmb_now_ns() - start, bad);
	failed = rmb_check_mismatch(bad, (long long)s.n * i, "the children");
	if (i < n) {
		rmb_error("round %ld of %ld failed: %s", i + 1, n,
			  strerror(errno));
		failed = 1;
	}
	return failed;
}

/* ---- mode=thp -------------------------------------------------------- */

#define HUGE_PAGES(p) ((size_t)RMB_TABLE_SPAN / 2 / (p))

/* The parent's memory: whole table spans, aligned, filled. */
static char *thp_region(size_t pages)
{
	size_t len = pages * rmb_page;
	char *p = rmb_hole(len, 0);

	rmb_need_mem_kb((long long)(len / 1024), 0, "huge MB");
	if (!p || !rmb_map_anon(p, len))
		rmb_die(RMB_EXIT_FAIL, "huge=%lld: mapping %zu bytes: %s",
			rmb_arg("huge"), len, strerror(errno));
	rmb_fill(p, pages, (uint64_t)rmb_arg("seed"), 0);
	return p;
}

/* Child: verify (quick), write a page of every 2 MB with cow, exit with
 * the mismatching pages, capped at 100. */
static void __attribute__((noreturn))
thp_child(char *p, size_t pages, int cow)
{
	size_t bad = rmb_verify(p, pages, (uint64_t)rmb_arg("seed"), 0, 1);

	if (cow)
		for (size_t i = 0; i < pages; i += HUGE_PAGES(rmb_page))
			*(volatile char *)(p + i * rmb_page) = p[i * rmb_page];
	_exit(bad > 100 ? 100 : (int)bad);
}

struct thp_run {
	uint64_t *fork_ns, *round_ns;
	long n;
	long long bad;
	long long huge_kb;	/* AnonHugePages once the region is filled */
};

static int thp_rounds(struct thp_run *r, char *p, size_t pages, long want)
{
	int cow = (int)rmb_arg("cow");

	for (r->n = 0; r->n < want; r->n++) {
		uint64_t t0 = rmb_now_ns();
		pid_t pid = rmb_fork();
		int st;

		if (pid == 0)
			thp_child(p, pages, cow);
		if (pid < 0)
			return -1;
		r->fork_ns[r->n] = rmb_now_ns() - t0;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st))
			return -1;
		r->bad += WEXITSTATUS(st);
		r->round_ns[r->n] = rmb_now_ns() - t0;
	}
	return 0;
}

static void thp_report(struct thp_run *r, size_t pages, uint64_t ns,
		       const struct rmb_snap *d)
{
	struct rmb_stats fork_st, round_st;
	struct rmb_json j;

	rmb_stats(r->fork_ns, (size_t)r->n, &fork_st);
	rmb_stats(r->round_ns, (size_t)r->n, &round_st);
	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "rounds_count", r->n);
	rmb_json_int(&j, "region_pages", (long long)pages);
	rmb_json_int(&j, "region_thp_kb", r->huge_kb);
	rmb_json_dbl(&j, "split_pmd_per_round_count", r->n ?
		     (double)d->ctr[RMB_C_THP_SPLIT_PMD] / (double)r->n : 0);
	rmb_json_int(&j, "elapsed_ns", (long long)ns);
	rmb_json_dbl(&j, "forks_per_s", ns ? (double)r->n * 1e9 / (double)ns
						: 0);
	rmb_json_stats(&j, "fork", &fork_st);
	rmb_json_stats(&j, "round", &round_st);
	rmb_json_int(&j, "verified_pages", (long long)pages * r->n);
	rmb_json_int(&j, "verify_mismatch_pages", r->bad);
	rmb_json_delta(&j, d);
	rmb_json_per(&j, d, "round", (double)r->n);
	rmb_json_end(&j);
}

static int run_thp(void)
{
	size_t pages = (size_t)(rmb_arg("huge") / 4 * 4) << 20;
	long n = (long)rmb_arg("N");
	struct thp_run r = { 0 };
	struct rmb_snap a, b, d;
	uint64_t start;
	char *p;
	int failed;

	pages /= rmb_page;
	p = thp_region(pages);
	r.huge_kb = rmb_meminfo_kb("AnonHugePages");
	r.fork_ns = calloc((size_t)n, sizeof(*r.fork_ns));
	r.round_ns = calloc((size_t)n, sizeof(*r.round_ns));
	if (!r.fork_ns || !r.round_ns)
		rmb_die(RMB_EXIT_FAIL, "N=%ld: out of memory", n);
	rmb_snap_take(&a);
	start = rmb_now_ns();
	failed = thp_rounds(&r, p, pages, n) != 0;
	start = rmb_now_ns() - start;
	rmb_snap_take(&b);
	rmb_snap_delta(&d, &a, &b);
	thp_report(&r, pages, start, &d);
	if (failed)
		rmb_error("round %ld of %ld failed: %s", r.n + 1, n,
			  strerror(errno));
	return rmb_check_mismatch(r.bad, (long long)pages * r.n,
				  "the children") || failed;
}

int main(int argc, char **argv)
{
	rmb_init("fork");
	rmb_parse_args(params, argc, argv);
	if (rmb_mode_is("breadth"))
		return run_breadth();
	if (rmb_mode_is("chain"))
		return run_chain();
	if (rmb_mode_is("thp"))
		return run_thp();
	return rmb_mode_is("depth") ? run_depth() : run_rate();
}
