/*
 * The multi-call binary's entry (bench/Makefile): every rmb-<name>.c is
 * compiled with its main() renamed rmb_main_<name>, and out/<arch>/rmb
 * runs the program its argv[0] names (out/<arch>/rmb-<name> are
 * symbolic links to it).  One static C library for all the programs
 * instead of one each: the guest image holds about 1 MB of programs, not
 * 13, and the initramfs (in ramfs, which reclaim cannot take) pins that
 * much less of every guest's memory.
 *
 * progs.h, written by the Makefile, lists RMB_PROG(id, "rmb-<name>").
 */
#include <stdio.h>
#include <string.h>

#define RMB_PROG(id, name) int rmb_main_##id(int argc, char **argv);
#include "progs.h"
#undef RMB_PROG

static const struct {
	const char *name;
	int (*main)(int argc, char **argv);
} progs[] = {
#define RMB_PROG(id, name) { name, rmb_main_##id },
#include "progs.h"
#undef RMB_PROG
};

int main(int argc, char **argv)
{
	const char *base = argc > 0 ? strrchr(argv[0], '/') : NULL;
	size_t i;

	base = base ? base + 1 : argc > 0 ? argv[0] : "";
	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		if (strcmp(base, progs[i].name) == 0)
			return progs[i].main(argc, argv);
	fprintf(stderr, "rmb: '%s' is none of its programs: run it as "
		"bench/rmb-<name> (a link to it)\n", base);
	return 2;
}
