/*
 * rmb-vma: what a VMA costs the kernel, and how many fit.
 *
 * mode=count     V single-page anonymous VMAs that cannot merge, each
 *                page written: slab bytes, page tables and LowFree per VMA.
 * mode=capacity  VMAs are added until mmap fails (ENOMEM: address space or
 *                vm.max_map_count) or LowFree (MemFree without highmem)
 *                falls under low_floor_kb; then children are forked, each
 *                inheriting every VMA (their pages stay COW-shared, so only
 *                kernel memory grows), until the floor, a failed fork or
 *                procs.  On i386 this exhausts lowmem with highmem free.
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "count|capacity", .sdef = "count",
	  .help = "count: kernel memory per VMA; capacity: VMAs until "
		  "memory or address space runs out" },
	{ .key = "V", .modes = "count", .def = 10000, .min = 1,
	  .max = 1 << 24, .help = "VMAs to create" },
	{ .key = "kind", .choices = "split|gap", .sdef = "split",
	  .help = "split: adjacent pages, alternating PROT_READ|PROT_WRITE "
		  "and PROT_READ; gap: pages with an unmapped page between" },
	{ .key = "low_floor_kb", .modes = "capacity", .def = 32768, .min = 0,
	  .max = 1LL << 40, .help = "stop before LowFree (MemFree where no "
		  "highmem) drops under this" },
	{ .key = "max_vmas", .modes = "capacity", .def = 1000000, .min = 1,
	  .max = 1 << 24, .help = "VMAs per process at most (shrunk to what the "
		  "address space holds)" },
	{ .key = "procs", .modes = "capacity", .def = 1024, .min = 1,
	  .max = 32768, .help = "processes at most, the first included" },
	{ .key = "seed", .def = 1, .min = 0, .max = 2147483647,
	  .help = "seed of the page patterns" },
	{ .key = NULL },
};

/* ---- mode=count ------------------------------------------------------ */

static void count_report(const struct rmb_vmaset *s, const struct rmb_snap *d,
			 uint64_t ns, size_t bad)
{
	struct rmb_json j;

	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "vmas_count", (long long)s->n);
	rmb_json_int(&j, "create_ns", (long long)ns);
	rmb_json_dbl(&j, "create_per_vma_ns", (double)ns / (double)s->n);
	rmb_json_int(&j, "verified_pages", (long long)s->n);
	rmb_json_int(&j, "verify_mismatch_pages", (long long)bad);
	rmb_json_sizes(&j);
	rmb_json_delta(&j, d);
	rmb_json_per(&j, d, "vma", (double)s->n);
	rmb_json_end(&j);
}

static int run_count(void)
{
	size_t v = (size_t)rmb_arg("V");
	struct rmb_vmaset s;
	struct rmb_snap a, b, d;
	uint64_t t0, ns;
	size_t bad;
	int err, failed;

	rmb_need_mem_kb((long long)v * (long long)(rmb_page / 1024 + 1), 0,
			"V VMAs with a page each");
	if (rmb_vmaset_reserve(&s, v, rmb_arg_str("kind"), rmb_arg("seed")))
		rmb_die(RMB_EXIT_USAGE, "V=%zu: the address space has no room "
			"for %zu %s VMAs", v, v, rmb_arg_str("kind"));
	rmb_snap_take(&a);
	t0 = rmb_now_ns();
	rmb_vmaset_grow(&s, v, &err);
	ns = rmb_now_ns() - t0;
	usleep(200000);		/* let RCU free what the tree updates retired */
	rmb_snap_take(&b);
	rmb_snap_delta(&d, &a, &b);
	bad = rmb_vmaset_verify(&s, 0);
	count_report(&s, &d, ns, bad);
	failed = rmb_check_mismatch((long long)bad, (long long)s.n, "the VMAs");
	if (s.n < v) {
		rmb_error("only %zu of %zu VMAs could be created: %s (is "
			  "vm.max_map_count high enough?)", s.n, v, strerror(err));
		failed = 1;
	}
	return failed;
}

/* ---- mode=capacity --------------------------------------------------- */

struct cap {
	struct rmb_vmaset s;
	struct rmb_family f;
	struct rmb_snap base;
	const char *free_field;	/* LowFree, or MemFree without highmem */
	int high;		/* HighTotal > 0 */
	long long floor_kb;
	int procs, max_procs, err;
	const char *phase1_stop, *stop;
};

static long long free_now(const struct cap *c)
{
	return rmb_meminfo_kb(c->free_field);
}

/* Which floor is crossed, if any.  HighFree is checked too: once highmem
 * is gone, user pages would need lowmem that lowmem_reserve withholds,
 * and the OOM killer would end the run instead of the floor. */
static const char *floor_hit(const struct cap *c, long long need_kb)
{
	if (free_now(c) - need_kb < c->floor_kb)
		return "low_floor";
	if (c->high && rmb_meminfo_kb("HighFree") < c->floor_kb)
		return "high_floor";
	return NULL;
}

static void cap_reserve(struct cap *c)
{
	size_t want = (size_t)rmb_arg("max_vmas");

	for (size_t n = want; n > 0; n = n / 4 * 3)
		if (!rmb_vmaset_reserve(&c->s, n, rmb_arg_str("kind"),
					rmb_arg("seed")))
			return;
	rmb_die(RMB_EXIT_FAIL, "no address space for even one VMA");
}

/* phase 1: this process's VMAs */
static void cap_fill(struct cap *c)
{
	int err;

	c->phase1_stop = "max_vmas";
	while (c->s.n < c->s.cap) {
		if (c->s.n % 64 == 0 && floor_hit(c, 0)) {
			c->phase1_stop = floor_hit(c, 0);
			return;
		}
		err = rmb_vmaset_add(&c->s);
		if (err) {
			c->phase1_stop = err == ENOMEM ? "enomem" : "error";
			c->err = err;
			return;
		}
	}
}

static void cap_fields(struct rmb_json *j, const struct cap *c,
		       const char *record, struct rmb_snap *d)
{
	struct rmb_snap now;

	rmb_result_since(j, record, &c->base, &now, d);
	rmb_json_int(j, "procs_count", c->procs);
	rmb_json_int(j, "vmas_per_proc_count", (long long)c->s.n);
	rmb_json_int(j, "vmas_count", (long long)c->s.n * c->procs);
	rmb_json_snap(j, &now);
	rmb_json_delta(j, d);
}

static void cap_step(const struct cap *c)
{
	struct rmb_json j;
	struct rmb_snap d;

	cap_fields(&j, c, "step", &d);
	rmb_json_int(&j, "verified_pages", 0);	/* the summary verifies */
	rmb_json_int(&j, "verify_mismatch_pages", 0);
	rmb_json_end(&j);
}

/* phase 2: children inherit the VMAs, each adds kernel memory only */
static void cap_fork(struct cap *c)
{
	long long est = rmb_free_kb(&c->base) - free_now(c);
	long long before, cost;
	pid_t pid;

	c->stop = "procs";
	while (c->procs < c->max_procs) {
		before = free_now(c);
		if (floor_hit(c, est + est / 4)) {
			c->stop = floor_hit(c, est + est / 4);
			return;
		}
		pid = rmb_family_fork(&c->f);
		if (pid == 0)
			rmb_vmaset_child(&c->f, &c->s, c->procs, 1);
		if (pid < 0) {
			c->stop = "fork_failed";
			c->err = errno;
			return;
		}
		c->procs++;
		cost = before - free_now(c);
		est = cost > 0 ? cost : est;
		cap_step(c);
	}
}

static int cap_summary(struct cap *c)
{
	struct rmb_json j;
	struct rmb_snap d;
	struct rmb_report sum;
	long long bad, checked;
	int got, abnormal;

	cap_fields(&j, c, "summary", &d);
	rmb_family_go(&c->f);
	got = rmb_family_collect(&c->f, RMB_REP_DONE, c->procs - 1, &sum);
	abnormal = rmb_family_finish(&c->f);
	bad = sum.mismatch_pages + (long long)rmb_vmaset_verify(&c->s, 0);
	checked = sum.checked_pages + (long long)c->s.n;
	rmb_json_str(&j, "phase1_stop", c->phase1_stop);
	rmb_json_str(&j, "stop", c->stop);
	rmb_json_str(&j, "stop_errno", c->err ? strerror(c->err) : "");
	rmb_json_int(&j, "verified_pages", checked);
	rmb_json_int(&j, "verify_mismatch_pages", bad);
	rmb_json_per(&j, &d, "vma", (double)c->s.n * c->procs);
	rmb_json_end(&j);
	if (got < c->procs - 1 || abnormal)
		rmb_error("%d of %d children did not report", c->procs - 1 - got,
			  c->procs - 1);
	return rmb_check_mismatch(bad, checked, "the VMAs") || abnormal ||
	       got < c->procs - 1;
}

static int run_capacity(void)
{
	static struct cap c;

	c.floor_kb = rmb_arg("low_floor_kb");
	c.max_procs = (int)rmb_arg("procs");
	c.procs = 1;
	c.free_field = rmb_meminfo_kb("LowTotal") > 0 ? "LowFree" : "MemFree";
	c.high = rmb_meminfo_kb("HighTotal") > 0;
	rmb_family_open(&c.f, c.max_procs);
	cap_reserve(&c);
	rmb_snap_take(&c.base);
	cap_fill(&c);
	cap_step(&c);
	c.stop = c.phase1_stop;
	if (!strstr(c.phase1_stop, "floor") && c.s.n > 0 &&
	    c.max_procs > 1)
		cap_fork(&c);
	return cap_summary(&c);
}

int main(int argc, char **argv)
{
	rmb_init("vma");
	rmb_parse_args(params, argc, argv);
	return rmb_mode_is("count") ? run_count() : run_capacity();
}
