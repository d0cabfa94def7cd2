/*
 * rmb-fork: what fork costs with many VMAs, down long chains, and how fast.
 *
 * mode=breadth  a parent with V single-page VMAs forks N children that
 *               pause on a pipe: latency of each fork() and kernel memory
 *               per child; then the children verify their inherited pages.
 * mode=depth    a chain of D generations: each verifies the pages it
 *               inherited, writes (COWs) all of them, prints its slab
 *               totals (one "generation" line) and forks the next.
 * mode=rate     N rounds of fork + child verifies and exits + wait.
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "breadth|depth|rate", .sdef = "breadth",
	  .help = "breadth: N live children; depth: chain of D generations; "
		  "rate: fork+exit+wait loop" },
	{ .key = "V", .modes = "breadth|rate", .def = 1000, .min = 1,
	  .max = 1 << 22, .help = "single-page VMAs in the parent" },
	{ .key = "N", .modes = "breadth|rate", .def = 100, .min = 1,
	  .max = 1000000, .mode_max = "breadth:4096",
	  .help = "children (breadth) or rounds (rate)" },
	{ .key = "kind", .choices = "split|gap", .sdef = "split",
	  .modes = "breadth|rate", .help = "VMA kind, as in rmb-vma" },
	{ .key = "D", .modes = "depth", .def = 16, .min = 1, .max = 4096,
	  .help = "generations, the first process included" },
	{ .key = "pages", .modes = "depth", .def = 256, .min = 1,
	  .max = 1 << 22, .help = "pages each generation inherits and COWs" },
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

static uint64_t gen_seed(const struct depth *c, int g)
{
	return c->seed + 0x10001ull * (uint64_t)g;
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
		bad = rmb_verify(c->region, c->pages, gen_seed(c, g - 1), 0, 0);
	t0 = rmb_now_ns();
	rmb_fill(c->region, c->pages, gen_seed(c, g), 0);
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
	bad0 = rmb_verify(c.region, c.pages, gen_seed(&c, 0), 0, 0);
	depth_summary(&c, &sum, bad0);
	failed = rmb_check_mismatch(sum.mismatch_pages + (long long)bad0,
				    sum.checked_pages + (long long)c.pages,
				    "the generations");
	return failed | children_failed(got, c.d - 1, abnormal);
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

int main(int argc, char **argv)
{
	rmb_init("fork");
	rmb_parse_args(params, argc, argv);
	if (rmb_mode_is("breadth"))
		return run_breadth();
	return rmb_mode_is("depth") ? run_depth() : run_rate();
}
