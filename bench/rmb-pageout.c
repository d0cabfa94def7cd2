/*
 * rmb-pageout: push the private pages of another process through reclaim.
 *
 * process_madvise(MADV_PAGEOUT) over every private mapping of process
 * `pid` (default 1, the guest's init): each page mapped only there is
 * reclaimed, so the kernel walks its rmap.  The correctness suite runs
 * it at the end of a boot, on init, before the final slab count: under
 * anonmm a page init swapped in after a child did keeps pointing at the
 * child's anonmm once the child exits (an orphan), and only a walk
 * re-points it; a leaked reference, on the other hand, no walk frees.
 *
 * One result line: the ranges advised, those the kernel refused (special
 * mappings), and the walk, orphan and pswpout counter deltas.
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_process_madvise
#define __NR_process_madvise 440
#endif

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "private", .sdef = "private",
	  .help = "the only mode: every private mapping" },
	{ .key = "pid", .def = 1, .min = 1, .max = 1 << 22,
	  .help = "the process whose pages are pushed out" },
	{ .key = NULL },
};

struct tally {
	long long ranges, refused, bytes;
};

/*
 * One private mapping.  The kernel refuses special mappings: EINVAL for
 * VM_PFNMAP/VM_IO ones ([vvar]), EFAULT for [vsyscall], which is no vma.
 */
static void advise_range(int pidfd, unsigned long lo, unsigned long hi,
			 struct tally *t)
{
	struct iovec iov = { (void *)lo, hi - lo };
	long n = syscall(__NR_process_madvise, pidfd, &iov, 1UL,
			 MADV_PAGEOUT, 0U);

	t->ranges++;
	if (n >= 0) {
		t->bytes += n;
	} else if (errno == EINVAL || errno == EFAULT) {
		t->refused++;
	} else {
		rmb_die(RMB_EXIT_FAIL, "process_madvise(MADV_PAGEOUT) of "
			"%lx-%lx: %s", lo, hi, strerror(errno));
	}
}

static void advise_all(int pid, int pidfd, struct tally *t)
{
	char path[64], line[512], perms[8];
	unsigned long lo, hi;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		rmb_die(RMB_EXIT_FAIL, "cannot read %s: %s", path,
			strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3)
			continue;
		if (perms[3] == 'p')
			advise_range(pidfd, lo, hi, t);
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	struct rmb_snap a, b, d;
	struct tally t = { 0 };
	struct rmb_json j;
	int pid, pidfd;

	rmb_init("pageout");
	rmb_parse_args(params, argc, argv);
	pid = (int)rmb_arg("pid");
	pidfd = (int)syscall(__NR_pidfd_open, pid, 0U);
	if (pidfd < 0)
		rmb_die(RMB_EXIT_FAIL, "pidfd_open(%d): %s", pid,
			strerror(errno));
	rmb_snap_take(&a);
	advise_all(pid, pidfd, &t);
	rmb_snap_take(&b);
	close(pidfd);
	rmb_snap_delta(&d, &a, &b);

	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "ranges_count", t.ranges);
	rmb_json_int(&j, "refused_ranges_count", t.refused);
	rmb_json_int(&j, "advised_kb", t.bytes / 1024);
	rmb_json_delta(&j, &d);
	rmb_json_end(&j);
	return 0;
}
