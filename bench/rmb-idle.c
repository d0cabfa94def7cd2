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

int main(int argc, char **argv)
{
	long long counts[RMB_NSLAB];
	uint64_t start;
	struct rmb_json j;
	int still;

	rmb_init("idle");
	rmb_parse_args(params, argc, argv);
	start = rmb_now_ns();
	still = rmb_slabs_still(counts, (unsigned)rmb_arg("still_ms"),
				(unsigned)rmb_arg("poll_ms"),
				(unsigned)rmb_arg("timeout_s") * 1000u) == 0;

	rmb_result_begin(&j, "idle");
	for (int i = 0; i < RMB_NSLAB; i++) {
		char key[64];

		if (counts[i] < 0)
			continue;
		snprintf(key, sizeof(key), "slab_%s_objs_count",
			 rmb_slab_name(i));
		rmb_json_int(&j, key, counts[i]);
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
