/* rmb-proc.c - /proc readers and kernel-memory snapshots (see rmb.h) */
#define _GNU_SOURCE
#include "rmb.h"
#include "rmb-int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ====================================================================
 * /proc readers
 */

ssize_t rmbi_read_file(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (len + 1 < size) {
		ssize_t r = read(fd, buf + len, size - 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

/* The line "name value", "name: value kB" or "name value ..." in buf. */
static const char *kv_line(const char *buf, const char *name)
{
	size_t n = strlen(name);
	const char *l = buf;

	while (l && *l) {
		if (!strncmp(l, name, n) &&
		    (l[n] == ' ' || l[n] == '\t' || l[n] == ':'))
			return l + n + (l[n] == ':');
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return NULL;
}

long long rmbi_kv_int(const char *buf, const char *name)
{
	const char *v = kv_line(buf, name);

	return v ? strtoll(v, NULL, 10) : -1;
}

static long long file_int(const char *path, const char *name)
{
	if (rmbi_read_file(path, rmbi_buf, sizeof(rmbi_buf)) < 0)
		return -1;
	return rmbi_kv_int(rmbi_buf, name);
}

long long rmb_read_number(const char *path)
{
	long long v;

	if (rmbi_read_file(path, rmbi_buf, sizeof(rmbi_buf)) < 0 ||
	    sscanf(rmbi_buf, "%lld", &v) != 1)
		return -1;
	return v;
}

long long rmb_meminfo_kb(const char *field)
{
	return file_int("/proc/meminfo", field);
}

long long rmb_vmstat(const char *name)
{
	return file_int("/proc/vmstat", name);
}

long long rmb_rmapbench(const char *name)
{
	return file_int("/proc/rmapbench", name);
}

int rmbi_slab_parse(const char *buf, const char *cache, struct rmb_slab *o)
{
	const char *l = kv_line(buf, cache);

	if (!l || sscanf(l, "%lld %lld %lld", &o->active_objs, &o->num_objs,
			 &o->objsize) != 3) {
		memset(o, 0, sizeof(*o));
		return -1;
	}
	return 0;
}

int rmb_slabinfo(const char *cache, struct rmb_slab *out)
{
	if (rmbi_read_file("/proc/slabinfo", rmbi_buf, sizeof(rmbi_buf)) < 0) {
		memset(out, 0, sizeof(*out));
		return -1;
	}
	return rmbi_slab_parse(rmbi_buf, cache, out);
}

const char *rmb_scheme(void)
{
	return rmbi_scheme;
}

void rmbi_load_scheme(void)
{
	const char *v;
	size_t n = 0;

	if (rmbi_read_file("/proc/rmapbench", rmbi_buf, sizeof(rmbi_buf)) < 0)
		return;
	v = kv_line(rmbi_buf, "scheme");
	if (!v)
		return;
	while (*v == ' ' || *v == '\t')
		v++;
	while (n + 1 < sizeof(rmbi_scheme) && (isalnum((unsigned char)v[n]) ||
					     v[n] == '_' || v[n] == '-'))
		n++;
	if (n > 0) {
		memcpy(rmbi_scheme, v, n);
		rmbi_scheme[n] = '\0';
	}
}

/* utime + stime in clock ticks of /proc/<pid>/stat (fields 14, 15) */
static long long stat_ticks(const char *pid)
{
	char path[300];
	const char *p;
	long long ut = 0, st = 0;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	if (rmbi_read_file(path, rmbi_buf, sizeof(rmbi_buf)) < 0)
		return 0;
	p = strrchr(rmbi_buf, ')');
	for (int i = 0; p && i < 12; i++)	/* to the space before field 14 */
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %lld %lld", &ut, &st) != 2)
		return 0;
	return ut + st;
}

long long rmb_kthread_cpu_ns(const char *prefix)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	long long ns = 0, one, hz = sysconf(_SC_CLK_TCK);
	char path[300];

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (rmbi_read_file(path, rmbi_buf, sizeof(rmbi_buf)) <= 0 ||
		    strncmp(rmbi_buf, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/schedstat", e->d_name);
		if (rmbi_read_file(path, rmbi_buf, sizeof(rmbi_buf)) > 0 &&
		    sscanf(rmbi_buf, "%lld", &one) == 1)
			ns += one;
		else if (hz > 0)
			ns += stat_ticks(e->d_name) * (1000000000LL / hz);
	}
	closedir(d);
	return ns;
}

long long rmb_kswapd_cpu_ns(void)
{
	return rmb_kthread_cpu_ns("kswapd");
}

int rmb_pagemap_scan(const void *base, size_t npages,
		     struct rmb_pagemap *out)
{
	uint64_t ent[512];
	size_t done = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	memset(out, 0, sizeof(*out));
	if (fd < 0)
		return -1;
	while (done < npages) {
		size_t n = npages - done < 512 ? npages - done : 512;
		off_t off = (off_t)(((uintptr_t)base / rmb_page + done) * 8);
		ssize_t r = pread(fd, ent, n * 8, off);

		if (r <= 0)
			break;
		for (size_t i = 0; i < (size_t)r / 8; i++) {
			int present = (int)((ent[i] >> 63) & 1);

			out->present += present;
			out->swapped += (long long)((ent[i] >> 62) & 1);
			out->exclusive += present && ((ent[i] >> 56) & 1);
		}
		done += (size_t)r / 8;
	}
	close(fd);
	return 0;
}

#ifndef MPOL_MF_MOVE_ALL
#define MPOL_MF_MOVE_ALL (1 << 2)
#endif

long long rmb_move_pages(void *base, long long n, int node, void **addr,
			 int *nodes, int *status)
{
	long long i, there = 0;

	for (i = 0; i < n; i++) {
		addr[i] = (char *)base + i * (long long)rmb_page;
		nodes[i] = node;
		status[i] = -1;
	}
	if (syscall(SYS_move_pages, 0, (unsigned long)n, addr, nodes, status,
		    MPOL_MF_MOVE_ALL) < 0)
		rmb_die(RMB_EXIT_FAIL, "move_pages: %s", strerror(errno));
	for (i = 0; i < n; i++)
		there += status[i] == node;
	return there;
}

void rmb_ksm_knob(const char *knob, long long value)
{
	char path[96], buf[32];

	snprintf(path, sizeof(path), "/sys/kernel/mm/ksm/%s", knob);
	snprintf(buf, sizeof(buf), "%lld\n", value);
	if (rmb_write_file(path, buf) != 0)
		rmb_die(RMB_EXIT_FAIL, "writing %lld to %s: %s (a kernel "
			"without KSM? this needs the distro profile)", value,
			path, strerror(errno));
}

int rmb_compact(void)
{
	return rmb_write_file("/proc/sys/vm/compact_memory", "1");
}

long long rmb_swapped_pages(const void *base, size_t npages)
{
	struct rmb_pagemap pm;

	return rmb_pagemap_scan(base, npages, &pm) < 0 ? -1 : pm.swapped;
}

#define RMB_PAGEOUT_PASSES 5

/*
 * A page faulted in on another CPU may still sit in that CPU's LRU add
 * batch, where MADV_PAGEOUT (which drains only the calling CPU's) cannot
 * isolate it.  madvise from each CPU in turn drains them all.
 */
void rmb_drain_lru_all_cpus(void)
{
	static char *page;
	cpu_set_t old, one;
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (ncpus < 2 || sched_getaffinity(0, sizeof(old), &old) != 0)
		return;
	if (!page)
		page = rmb_map_anon(NULL, rmb_page);
	for (long cpu = 0; page && cpu < ncpus && cpu < CPU_SETSIZE; cpu++) {
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one) == 0)
			madvise(page, rmb_page, MADV_PAGEOUT);
	}
	sched_setaffinity(0, sizeof(old), &old);
}

int rmb_pageout_check(void *base, size_t npages, struct rmb_pageout *out)
{
	struct rmb_pagemap pm;

	if (npages == 0)
		return 0;
	if (rmb_pagemap_scan(base, npages, &pm) < 0)
		return -1;
	out->candidates += pm.exclusive;
	for (int pass = 0; pass < RMB_PAGEOUT_PASSES && pm.exclusive > 0;
	     pass++) {
		if (pass > 0) {
			usleep(20000u << pass);
			rmb_drain_lru_all_cpus();
			rmb_split_huge_range(base, npages);
		}
		if (madvise(base, npages * rmb_page, MADV_PAGEOUT) != 0)
			return errno;
		rmb_pagemap_scan(base, npages, &pm);
	}
	out->missed += pm.exclusive;
	out->swapped += pm.swapped;
	return 0;
}

#define RMB_SPLIT_HUGE "/sys/kernel/debug/split_huge_pages"

int rmb_split_huge_range(const void *base, size_t npages)
{
	char buf[80];
	int fd = open(RMB_SPLIT_HUGE, O_WRONLY | O_CLOEXEC);
	int n, err;

	if (fd < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%d,0x%lx,0x%lx", (int)getpid(),
		     (unsigned long)base,
		     (unsigned long)base + npages * rmb_page);
	err = rmb_write_all(fd, buf, (size_t)n);
	close(fd);
	return err;
}

long long rmb_nonresident_pages(const void *base, size_t npages)
{
	unsigned char *vec = malloc(npages ? npages : 1);
	long long count = 0;

	if (!vec)
		return -1;
	if (mincore((void *)base, npages * rmb_page, vec) != 0) {
		free(vec);
		return -1;
	}
	for (size_t i = 0; i < npages; i++)
		count += !(vec[i] & 1);
	free(vec);
	return count;
}

/* ====================================================================
 * snapshots
 */

#define SLAB_NAME(id, name, flags) #name,
static const char *const slab_names[RMB_NSLAB] = { RMB_SLABS(SLAB_NAME) };
#undef SLAB_NAME
#define SLAB_FLAGS(id, name, flags) (flags),
static const int slab_flags[RMB_NSLAB] = { RMB_SLABS(SLAB_FLAGS) };
#undef SLAB_FLAGS

const char *rmb_slab_name(int i)
{
	return slab_names[i];
}

/* the rmap caches' active_objs; -1 for the others and for one absent */
static void rmap_counts(long long counts[RMB_NSLAB])
{
	struct rmb_slab s;

	for (int i = 0; i < RMB_NSLAB; i++)
		counts[i] = (slab_flags[i] & RMB_F_RMAP) &&
			    rmb_slabinfo(slab_names[i], &s) == 0 ?
			    s.active_objs : -1;
}

int rmb_slabs_still(long long counts[RMB_NSLAB], unsigned still_ms,
		    unsigned poll_ms, unsigned timeout_ms)
{
	uint64_t start = rmb_now_ns(), since = start;
	long long now[RMB_NSLAB];

	rmap_counts(counts);
	for (;;) {
		usleep(poll_ms * 1000u);
		rmap_counts(now);
		if (memcmp(now, counts, sizeof(now)) != 0) {
			memcpy(counts, now, sizeof(now));
			since = rmb_now_ns();
		}
		if (rmb_now_ns() - since >= still_ms * 1000000ull)
			return 0;
		if (rmb_now_ns() - start >= timeout_ms * 1000000ull)
			return -1;
	}
}

/* { /proc/vmstat or /proc/rmapbench line, result field } */
#define CTR_NAMES(id, name, unit, flags) { #name, #name "_" #unit },
#define SUM_NAMES(id, line, field) { #line, #field },
static const char *const ctr_names[RMB_NCTR][2] = {
	RMB_COUNTERS(CTR_NAMES)
	RMB_SUMS(SUM_NAMES)
};
#undef CTR_NAMES
#undef SUM_NAMES

long long rmbi_nonneg(long long v)
{
	return v < 0 ? 0 : v;
}

static void snap_slabs(struct rmb_snap *s)
{
	int ok = rmbi_read_file("/proc/slabinfo", rmbi_buf, sizeof(rmbi_buf)) >= 0;

	for (int i = 0; i < RMB_NSLAB; i++) {
		struct rmb_slab sl = { 0, 0, 0 };

		if (ok)
			rmbi_slab_parse(rmbi_buf, slab_names[i], &sl);
		s->slab_objs[i] = sl.active_objs;
		s->slab_bytes[i] = sl.active_objs * sl.objsize;
	}
}

static void snap_meminfo(struct rmb_snap *s)
{
	if (rmbi_read_file("/proc/meminfo", rmbi_buf, sizeof(rmbi_buf)) < 0)
		rmbi_buf[0] = '\0';
	s->mem_free_kb = rmbi_nonneg(rmbi_kv_int(rmbi_buf, "MemFree"));
	s->low_free_kb = rmbi_nonneg(rmbi_kv_int(rmbi_buf, "LowFree"));
	s->high_free_kb = rmbi_nonneg(rmbi_kv_int(rmbi_buf, "HighFree"));
	s->page_tables_kb = rmbi_nonneg(rmbi_kv_int(rmbi_buf, "PageTables"));
	s->swap_free_kb = rmbi_nonneg(rmbi_kv_int(rmbi_buf, "SwapFree"));
}

static const char *next_line(const char *l)
{
	l = strchr(l, '\n');
	return l ? l + 1 : NULL;
}

/*
 * The free memory of a snapshot, counted page for page.  meminfo's
 * MemFree and LowFree leave out two things: the pages waiting in the
 * per-cpu lists, which are free, and each CPU's vmstat diffs not yet
 * folded into the zone counters.  The lists refill from the buddy
 * allocator a batch at a time (63 pages, 252 kB, in our guests), so a
 * LowFree difference moved in 252 kB steps: at 20,000 VMAs, 12.9 B per
 * VMA, and a change to the boot path alone once moved anon_vma's lowmem
 * per VMA from 116.1 to 129.0 B.  Here: reading
 * /proc/sys/vm/stat_refresh folds the diffs, then /proc/zoneinfo gives
 * each zone's free pages and each CPU's list count.  The free fields
 * keep meminfo's values where zoneinfo cannot be read.
 */
static void snap_free(struct rmb_snap *s)
{
	long long all = 0, high = 0, v;
	int in_high = 0, seen = 0;
	char zone[16];

	rmbi_read_file("/proc/sys/vm/stat_refresh", rmbi_buf, sizeof(rmbi_buf));
	if (rmbi_read_file("/proc/zoneinfo", rmbi_buf, sizeof(rmbi_buf)) < 0)
		return;
	for (const char *l = rmbi_buf; l; l = next_line(l)) {
		if (sscanf(l, "Node %*d, zone %15s", zone) == 1) {
			in_high = !strcmp(zone, "HighMem");
		} else if (sscanf(l, " pages free %lld", &v) == 1 ||
			   sscanf(l, " count: %lld", &v) == 1) {
			all += v;
			high += in_high ? v : 0;
			seen = 1;
		}
	}
	if (!seen)
		return;
	v = sysconf(_SC_PAGESIZE) / 1024;
	s->mem_free_kb = all * v;
	s->high_free_kb = high * v;
	s->low_free_kb = rmbi_low_total_kb > 0 ? (all - high) * v : 0;
}

static void snap_counters(struct rmb_snap *s, const char *path, int from,
			  int to)
{
	if (rmbi_read_file(path, rmbi_buf, sizeof(rmbi_buf)) < 0)
		rmbi_buf[0] = '\0';
	for (int i = from; i < to; i++)
		s->ctr[i] = rmbi_nonneg(rmbi_kv_int(rmbi_buf, ctr_names[i][0]));
}

static void snap_vmstat(struct rmb_snap *s)
{
	snap_counters(s, "/proc/vmstat", 0, RMB_NVMSTAT);
	snap_counters(s, "/proc/rmapbench", RMB_NVMSTAT, RMB_NCTR);
}

void rmb_snap_take(struct rmb_snap *s)
{
	snap_slabs(s);
	snap_meminfo(s);
	snap_free(s);
	snap_vmstat(s);
	s->t_ns = rmb_now_ns();
}

void rmb_snap_delta(struct rmb_snap *d, const struct rmb_snap *a,
		    const struct rmb_snap *b)
{
	for (int i = 0; i < RMB_NSLAB; i++) {
		d->slab_objs[i] = b->slab_objs[i] - a->slab_objs[i];
		d->slab_bytes[i] = b->slab_bytes[i] - a->slab_bytes[i];
	}
	for (int i = 0; i < RMB_NCTR; i++)
		d->ctr[i] = b->ctr[i] - a->ctr[i];
	d->mem_free_kb = b->mem_free_kb - a->mem_free_kb;
	d->low_free_kb = b->low_free_kb - a->low_free_kb;
	d->high_free_kb = b->high_free_kb - a->high_free_kb;
	d->page_tables_kb = b->page_tables_kb - a->page_tables_kb;
	d->swap_free_kb = b->swap_free_kb - a->swap_free_kb;
	d->t_ns = b->t_ns - a->t_ns;
}

long long rmb_free_kb(const struct rmb_snap *s)
{
	return rmbi_low_total_kb > 0 ? s->low_free_kb : s->mem_free_kb;
}

static void json_slab_field(struct rmb_json *j, int i, const char *what,
			    long long v)
{
	char key[96];

	snprintf(key, sizeof(key), "slab_%s_%s", slab_names[i], what);
	rmb_json_int(j, key, v);
}

void rmb_json_snap(struct rmb_json *j, const struct rmb_snap *s)
{
	for (int i = 0; i < RMB_NSLAB; i++) {
		json_slab_field(j, i, "bytes", s->slab_bytes[i]);
		json_slab_field(j, i, "objs_count", s->slab_objs[i]);
	}
	rmb_json_int(j, "page_tables_kb", s->page_tables_kb);
	rmb_json_int(j, "mem_free_kb", s->mem_free_kb);
	rmb_json_int(j, "low_free_kb", s->low_free_kb);
	rmb_json_int(j, "high_free_kb", s->high_free_kb);
}

static long long slab_total(const struct rmb_snap *d)
{
	long long t = 0;

	for (int i = 0; i < RMB_NSLAB; i++)
		t += d->slab_bytes[i];
	return t;
}

void rmb_json_delta(struct rmb_json *j, const struct rmb_snap *d)
{
	for (int i = 0; i < RMB_NSLAB; i++) {
		json_slab_field(j, i, "delta_bytes", d->slab_bytes[i]);
		json_slab_field(j, i, "delta_objs_count", d->slab_objs[i]);
	}
	rmb_json_int(j, "slab_total_delta_bytes", slab_total(d));
	rmb_json_int(j, "page_tables_delta_kb", d->page_tables_kb);
	rmb_json_int(j, "memfree_consumed_kb", -d->mem_free_kb);
	rmb_json_int(j, "lowfree_consumed_kb", -d->low_free_kb);
	for (int i = 0; i < RMB_NCTR; i++)
		rmb_json_int(j, ctr_names[i][1], d->ctr[i]);
}

void rmb_json_per(struct rmb_json *j, const struct rmb_snap *d,
		  const char *unit, double n)
{
	char key[96];

	if (n <= 0)
		n = 1;
	for (int i = 0; i < RMB_NSLAB; i++) {
		snprintf(key, sizeof(key), "slab_%s_per_%s_bytes",
			 slab_names[i], unit);
		rmb_json_dbl(j, key, (double)d->slab_bytes[i] / n);
	}
	snprintf(key, sizeof(key), "slab_total_per_%s_bytes", unit);
	rmb_json_dbl(j, key, (double)slab_total(d) / n);
	snprintf(key, sizeof(key), "page_tables_per_%s_bytes", unit);
	rmb_json_dbl(j, key, (double)d->page_tables_kb * 1024 / n);
	snprintf(key, sizeof(key), "memfree_consumed_per_%s_bytes", unit);
	rmb_json_dbl(j, key, (double)-d->mem_free_kb * 1024 / n);
	snprintf(key, sizeof(key), "lowfree_consumed_per_%s_bytes", unit);
	rmb_json_dbl(j, key, (double)-d->low_free_kb * 1024 / n);
}
