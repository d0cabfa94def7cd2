/*
 * rmb-idle: the rmap slab caches' object counts, once they hold still.
 *
 * The correctness suite compares these counts before and after its tests
 * to find leaked objects.  A count read at one instant is not exact:
 * objects freed through call_rcu() (anonmm's) stay counted until a grace
 * period has passed, and the process reading the count was itself forked
 * a moment ago (under anonmm its forked member is freed that way at its
 * exec).  So read every `poll_ms` until no count has changed for
 * `still_ms`, and print that.  A leak never goes away; a pending free
 * does, within a grace period or two.  Counts that never hold still
 * within `timeout_s` fail the program (exit 1) with what they were.
 *
 * Result: one "idle" line, slab_<cache>_objs_count for every rmap cache
 * present, and how long it waited.
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "slabs", .sdef = "slabs",
	  .help = "the only mode: the rmap slab caches" },
	{ .key = "still_ms", .def = 1000, .min = 100, .max = 60000,
	  .help = "how long the counts must not change" },
	{ .key = "poll_ms", .def = 50, .min = 10, .max = 1000,
	  .help = "time between two reads" },
	{ .key = "timeout_s", .def = 30, .min = 1, .max = 600,
	  .help = "give up (and fail) after this long" },
	{ .key = NULL },
};

/* every cache of the guest interface; the rmap ones are read */
#define CACHE(id, name, flags) { #name, (flags) & RMB_F_RMAP },
static const struct {
	const char *name;
	int rmap;
} caches[] = { RMB_SLABS(CACHE) };
#undef CACHE
#define NCACHES (sizeof(caches) / sizeof(caches[0]))

/* active_objs of each rmap cache; -1 for one this kernel does not have */
static void read_counts(long long *n)
{
	struct rmb_slab s;

	for (size_t i = 0; i < NCACHES; i++)
		n[i] = !caches[i].rmap || rmb_slabinfo(caches[i].name, &s) < 0 ?
		       -1 : s.active_objs;
}

int main(int argc, char **argv)
{
	long long now[NCACHES], last[NCACHES];
	uint64_t start, since, poll_ns, still_ns, timeout_ns;
	struct rmb_json j;
	int still;

	rmb_init("idle");
	rmb_parse_args(params, argc, argv);
	poll_ns = (uint64_t)rmb_arg("poll_ms") * 1000000u;
	still_ns = (uint64_t)rmb_arg("still_ms") * 1000000u;
	timeout_ns = (uint64_t)rmb_arg("timeout_s") * 1000000000u;
	start = since = rmb_now_ns();
	read_counts(last);
	for (;;) {
		usleep((useconds_t)(poll_ns / 1000));
		read_counts(now);
		if (memcmp(now, last, sizeof(now)) != 0) {
			memcpy(last, now, sizeof(now));
			since = rmb_now_ns();
		}
		still = rmb_now_ns() - since >= still_ns;
		if (still || rmb_now_ns() - start >= timeout_ns)
			break;
	}

	rmb_result_begin(&j, "idle");
	for (size_t i = 0; i < NCACHES; i++) {
		char key[64];

		if (now[i] < 0)
			continue;
		snprintf(key, sizeof(key), "slab_%s_objs_count",
			 caches[i].name);
		rmb_json_int(&j, key, now[i]);
	}
	rmb_json_int(&j, "still", still);
	rmb_json_int(&j, "waited_ms",
		     (long long)((rmb_now_ns() - start) / 1000000u));
	rmb_json_end(&j);
	if (!still)
		rmb_die(RMB_EXIT_FAIL, "the rmap slab counts did not hold "
			"still for %lld ms within %lld s",
			rmb_arg("still_ms"), rmb_arg("timeout_s"));
	return 0;
}
