/* rmb-mem.c - page patterns, memory and address-space checks, VMA sets (see rmb.h) */
#define _GNU_SOURCE
#include "rmb.h"
#include "rmb-int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ====================================================================
 * page patterns
 */

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint32_t page_hash(uint64_t seed, uint64_t idx)
{
	return (uint32_t)mix64(seed ^ mix64(idx)) | 1u;	/* never 0 */
}

#define GOLD32 0x9e3779b9u

/*
 * Word k of a page: its first quarter a sequence no compressor shortens,
 * the rest one repeated word; every word depends on the page's hash.  A
 * page compresses to about a quarter of its size (lzo-rle, lzo), so
 * reclaim into zram or zswap frees most of each page it stores, as it
 * does with ordinary anonymous data; a disk swaps it as any page.
 */
static uint32_t page_word(uint32_t h, size_t k)
{
	return k < rmb_page / 16 ? h + (uint32_t)k * GOLD32 : h ^ GOLD32;
}

static void page_fill(uint32_t *w, uint64_t seed, uint64_t idx)
{
	size_t nw = rmb_page / 4;
	uint32_t h = page_hash(seed, idx);

	w[0] = h;
	w[1] = (uint32_t)idx;
	w[2] = (uint32_t)seed;
	for (size_t k = 3; k < nw; k++)
		w[k] = page_word(h, k);
}

static int page_ok(const uint32_t *w, uint64_t seed, uint64_t idx, int quick)
{
	size_t nw = rmb_page / 4;
	uint32_t h = page_hash(seed, idx);

	if (w[0] != h || w[1] != (uint32_t)idx || w[2] != (uint32_t)seed)
		return 0;
	if (quick)
		return w[nw - 1] == page_word(h, nw - 1);
	for (size_t k = 3; k < nw; k++)
		if (w[k] != page_word(h, k))
			return 0;
	return 1;
}

void rmb_fill(void *base, size_t npages, uint64_t seed, uint64_t first)
{
	for (size_t i = 0; i < npages; i++)
		page_fill((uint32_t *)((char *)base + i * rmb_page), seed,
			  first + i);
}

size_t rmb_verify(const void *base, size_t npages, uint64_t seed,
		  uint64_t first, int quick)
{
	size_t bad = 0;

	for (size_t i = 0; i < npages; i++)
		bad += !page_ok((const uint32_t *)((const char *)base +
						   i * rmb_page),
				seed, first + i, quick);
	return bad;
}

void rmb_fill_cycle(void *base, size_t npages, uint64_t seed,
		    size_t patterns)
{
	for (size_t i = 0; i < npages; i++)
		page_fill((uint32_t *)((char *)base + i * rmb_page), seed,
			  i % patterns);
}

size_t rmb_verify_cycle(const void *base, size_t npages, uint64_t seed,
			size_t patterns)
{
	size_t bad = 0;

	for (size_t i = 0; i < npages; i++)
		bad += !page_ok((const uint32_t *)((const char *)base +
						   i * rmb_page),
				seed, i % patterns, 0);
	return bad;
}

/* ====================================================================
 * memory and address space
 */

/*
 * The room left below memory.max of this process's cgroup (v2, mounted at
 * /sys/fs/cgroup), in kB; -1 if it has no limit or there is no cgroup v2.
 * Inside a memory cgroup MemAvailable is the machine's, not the
 * container's: a workload sized by it alone overruns the limit.
 */
static long long cgroup_room_kb(void)
{
	char rel[256], path[512], *p;
	long long max, cur;

	if (rmbi_read_file("/proc/self/cgroup", rmbi_buf, sizeof(rmbi_buf)) < 0)
		return -1;
	p = strstr(rmbi_buf, "0::");	/* the v2 hierarchy's line */
	if (!p || sscanf(p + 3, "%255s", rel) != 1 || !strcmp(rel, "/"))
		return -1;
	snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max", rel);
	max = rmb_read_number(path);
	if (max < 0)
		return -1;		/* "max": no limit */
	snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.current", rel);
	cur = rmb_read_number(path);
	if (cur < 0)
		return -1;
	return rmbi_nonneg(max - cur) >> 10;
}

long long rmb_avail_kb(int with_swap)
{
	long long avail, swap, room = cgroup_room_kb();

	if (rmbi_read_file("/proc/meminfo", rmbi_buf, sizeof(rmbi_buf)) < 0)
		return -1;
	avail = rmbi_kv_int(rmbi_buf, "MemAvailable");
	if (avail < 0)
		avail = rmbi_nonneg(rmbi_kv_int(rmbi_buf, "MemFree"));
	swap = rmbi_nonneg(rmbi_kv_int(rmbi_buf, "SwapFree"));
	if (room >= 0 && room < avail)
		avail = room;
	return avail + (with_swap ? swap : 0);
}

void rmb_need_mem_kb(long long kb, int with_swap, const char *what)
{
	long long avail = rmb_avail_kb(with_swap);

	if (avail >= 0 && kb > avail)
		rmb_die(RMB_EXIT_USAGE, "%s needs %lld kB but only %lld kB are "
			"available (MemAvailable%s)", what, kb, avail,
			with_swap ? " + SwapFree" : "");
}

void *rmb_reserve(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void *rmb_hole(size_t bytes, size_t offset)
{
	size_t len = bytes + offset + 3 * RMB_TABLE_SPAN;
	char *res = rmb_reserve(len), *a, *end;

	if (!res)
		return NULL;
	a = (char *)(((uintptr_t)res + 2 * RMB_TABLE_SPAN - 1) &
		     ~(RMB_TABLE_SPAN - 1));
	/* keep one span either side: [a - span, a + offset + bytes + span) */
	end = a + offset + bytes + RMB_TABLE_SPAN;
	if (a - RMB_TABLE_SPAN > res)
		munmap(res, (size_t)(a - RMB_TABLE_SPAN - res));
	if (end < res + len)
		munmap(end, (size_t)(res + len - end));
	return a + offset;
}

void rmb_hole_free(void *hole, size_t bytes, size_t offset)
{
	char *a = (char *)hole - offset;

	munmap(a - RMB_TABLE_SPAN, offset + bytes + 2 * RMB_TABLE_SPAN);
}

void *rmb_map_anon(void *addr, size_t bytes)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | (addr ? MAP_FIXED : 0);
	void *p = mmap(addr, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void rmb_need_addr_space(uint64_t bytes, const char *what)
{
	void *p = NULL;

	if (bytes < (uint64_t)SIZE_MAX / 2)
		p = rmb_reserve((size_t)bytes);
	if (!p)
		rmb_die(RMB_EXIT_USAGE, "%s needs %llu MB of contiguous address "
			"space, more than this %s process has", what,
			(unsigned long long)(bytes >> 20), RMB_ARCH);
	munmap(p, (size_t)bytes);
}

/* ====================================================================
 * VMA sets.  Layout: [unmapped page][VMA 0 (gap)][VMA 1 (gap)]...
 * [reserved PROT_NONE tail]: no VMA of the set has a mergeable neighbour,
 * and the tail keeps the VMA count before and after exactly n apart.
 */

int rmb_vmaset_reserve(struct rmb_vmaset *s, size_t cap, const char *kind,
		       uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->gap = !strcmp(kind, "gap");
	s->stride = s->gap ? 2 : 1;
	s->seed = seed;
	if (cap == 0 || cap > (SIZE_MAX / rmb_page - 2) / s->stride)
		return ENOMEM;
	s->len = (cap * s->stride + 2) * rmb_page;
	s->start = rmb_reserve(s->len);
	if (!s->start)
		return errno;
	munmap(s->start, rmb_page);
	s->base = s->start + rmb_page;
	s->cap = cap;
	return 0;
}

static char *vmaset_page(const struct rmb_vmaset *s, size_t i)
{
	return s->base + i * s->stride * rmb_page;
}

int rmb_vmaset_add(struct rmb_vmaset *s)
{
	char *p = vmaset_page(s, s->n);

	if (s->n >= s->cap)
		return ENOSPC;
	if (!rmb_map_anon(p, rmb_page))
		return errno;
	rmb_fill(p, 1, s->seed, s->n);	/* written before any mprotect */
	if (s->gap && munmap(p + rmb_page, rmb_page) != 0) {
		s->n++;		/* a VMA of its own next to the tail */
		return errno;
	}
	if (!s->gap && (s->n & 1) && mprotect(p, rmb_page, PROT_READ) != 0)
		return errno;	/* still merged with VMA n-1: not counted */
	s->n++;
	return 0;
}

size_t rmb_vmaset_grow(struct rmb_vmaset *s, size_t n, int *err)
{
	size_t made = 0;

	*err = 0;
	while (made < n && (*err = rmb_vmaset_add(s)) == 0)
		made++;
	return made;
}

size_t rmb_vmaset_verify(const struct rmb_vmaset *s, int quick)
{
	size_t bad = 0;

	for (size_t i = 0; i < s->n; i++)
		bad += rmb_verify(vmaset_page(s, i), 1, s->seed, i, quick);
	return bad;
}
