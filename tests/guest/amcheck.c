/*
 * amcheck: scratch guest checks used while porting anonmm (not wired into
 * the harness yet).  Build static (gcc -O2 -static, or -m32 for i386), drop
 * the binary into bench/out/<arch>/ for one boot only (the unit tests want
 * exactly the four workloads there), and run e.g. "run amcheck all" in a
 * guest plan after "swapon".  Tests: child-first, parent-first, swapoff
 * (mremap of swapped pages shared with a forked child, then swap-in in
 * either order or by swapoff, data verified), orphans (parent exits, the
 * child pushes the orphaned pages out: anon_rmap_orphan moves), cow-file
 * (private file mapping COWed before fork).  Exit status 0 = all passed.
 */
/* anonmm port checks, run in the guest: amcheck TEST [pages] */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <signal.h>
#include <sys/prctl.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#define PG 4096UL
static unsigned long npages = 1024;

static long vmstat(const char *name)
{
	char line[256]; long v = -1; size_t n = strlen(name);
	FILE *f = fopen("/proc/vmstat", "r");
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, name, n) && line[n] == ' ')
			v = atol(line + n + 1);
	if (f) fclose(f);
	return v;
}

static void fill(char *p, unsigned long seed)
{
	for (unsigned long i = 0; i < npages; i++)
		for (unsigned long j = 0; j < PG; j += 512)
			*(unsigned long *)(p + i * PG + j) = seed * 1000003 + i * 31 + j;
}

static long check(const char *who, char *p, unsigned long seed)
{
	long bad = 0;
	for (unsigned long i = 0; i < npages; i++)
		for (unsigned long j = 0; j < PG; j += 512)
			if (*(unsigned long *)(p + i * PG + j) != seed * 1000003 + i * 31 + j) {
				bad++;
				break;
			}
	printf("AMCHECK %s verify %s: %ld bad pages of %lu\n", who, bad ? "FAIL" : "ok", bad, npages);
	fflush(stdout);
	return bad;
}

static char *region(void)
{
	/* reserve space for A and B with a gap, so mremap can go to B */
	char *r = mmap(NULL, 3 * npages * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED) { perror("mmap"); exit(1); }
	munmap(r + npages * PG, 2 * npages * PG);
	mprotect(r, npages * PG, PROT_READ | PROT_WRITE);
	return r;
}

static int waitall(void)
{
	int st, rc = 0;
	while (wait(&st) > 0)
		if (!WIFEXITED(st) || WEXITSTATUS(st)) rc = 1;
	return rc;
}

/* swapped, fork, parent moves, then child/parent touch (order), or swapoff */
static int moved_swapped(int order)
{
	char *a = region(), *b = a + 2 * npages * PG;
	long c0 = vmstat("mremap_anon_copy"), rc = 0;
	int go[2];
	fill(a, 7);
	if (madvise(a, npages * PG, MADV_PAGEOUT)) perror("MADV_PAGEOUT");
	pipe(go);
	pid_t pid = fork();
	if (!pid) {
		char x;
		read(go[0], &x, 1);
		if (order == 2) usleep(1);
		exit(check("child", a, 7) ? 1 : 0);
	}
	if (mremap(a, npages * PG, npages * PG, MREMAP_MAYMOVE | MREMAP_FIXED, b) != b) {
		perror("mremap"); return 1;
	}
	printf("AMCHECK moved: mremap_anon_copy +%ld\n", vmstat("mremap_anon_copy") - c0);
	if (order == 2) {
		/* swapoff brings every entry back through unuse_pte */
		rc |= system("swapoff /dev/vda && swapon /dev/vda") != 0;
		write(go[1], "x", 1);
		rc |= check("parent", b, 7) != 0;
	} else if (order == 0) {	/* child first */
		write(go[1], "x", 1);
		rc |= waitall();
		rc |= check("parent", b, 7) != 0;
	} else {			/* parent first */
		rc |= check("parent", b, 7) != 0;
		write(go[1], "x", 1);
	}
	rc |= waitall();
	/* the parent's pages once more after pushing out again */
	madvise(b, npages * PG, MADV_PAGEOUT);
	rc |= check("parent-again", b, 7) != 0;
	munmap(b, npages * PG);
	return rc;
}

/* parent faults, forks, exits; the child pushes the orphans out */
static int orphans(void)
{
	long o0 = vmstat("anon_rmap_orphan"), s0 = vmstat("pswpout");
	int p[2];
	pipe(p);
	pid_t mid = fork();
	if (!mid) {
		char *a = region();
		fill(a, 9);
		pid_t c = fork();
		if (!c) {
			char x;
			close(p[1]);
			read(p[0], &x, 1);	/* EOF: the parent has exited */
			usleep(200000);
			if (madvise(a, npages * PG, MADV_PAGEOUT)) perror("MADV_PAGEOUT");
			int bad = check("orphan-child", a, 9) != 0;
			printf("AMCHECK orphans: anon_rmap_orphan +%ld pswpout +%ld\n",
			       vmstat("anon_rmap_orphan") - o0, vmstat("pswpout") - s0);
			exit(bad);
		}
		exit(0);
	}
	close(p[0]); close(p[1]);
	return waitall();
}

/* private file-backed mapping COWed before fork: child sees the COW */
static int cow_file(void)
{
	char path[] = "/tmp/amcheckXXXXXX";
	int fd = mkstemp(path), rc = 0;
	ftruncate(fd, npages * PG);
	char *m = mmap(NULL, npages * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	fill(m, 11);
	pid_t pid = fork();
	if (!pid) exit(check("cow-file-child", m, 11) ? 1 : 0);
	rc |= waitall();
	rc |= check("cow-file-parent", m, 11) != 0;
	unlink(path);
	return rc;
}

int main(int argc, char **argv)
{
	const char *t = argc > 1 ? argv[1] : "all";
	int rc = 0;
	if (argc > 2) npages = strtoul(argv[2], NULL, 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (!strcmp(t, "all") || !strcmp(t, "child-first")) rc |= moved_swapped(0);
	if (!strcmp(t, "all") || !strcmp(t, "parent-first")) rc |= moved_swapped(1);
	if (!strcmp(t, "all") || !strcmp(t, "swapoff")) rc |= moved_swapped(2);
	if (!strcmp(t, "all") || !strcmp(t, "orphans")) rc |= orphans();
	if (!strcmp(t, "all") || !strcmp(t, "cow-file")) rc |= cow_file();
	printf("AMCHECK %s rc=%d\n", t, rc);
	return rc;
}
