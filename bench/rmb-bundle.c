/*
 * rmb-bundle: a prefork server's family under reclaim.
 *
 * The supervisor (this process, a child subreaper) forks a master; the
 * master forks W workers.  The family's data, mb in all, is mapped in
 * one of three patterns (mode):
 *
 *   private  each worker maps and writes its own mb / W: a page is
 *            mapped by one mm (Andrea's case);
 *   pair     as private, then, once every worker is up, each worker forks
 *            a short-lived helper that maps the worker's pages too: a
 *            page is mapped by 2 mms of a bundle of 2W + 2 (anonmm looks
 *            in the mms forked after the worker; anon_vma visits the two
 *            vmas);
 *   shared   the master writes mb before it forks: every page is mapped
 *            by the master and every worker (W + 1 mms).
 *
 * Every process of the family mlocks (on fault) every mapping but the
 * data, and the data stay locked too until every process is up; then
 * they are unlocked and their young bits cleared (/proc/self/clear_refs):
 * the family is idle, and the data are all reclaim may take from it.  Then a
 * balloon child of the supervisor mlocks memory until the first
 * swap-out (at most MemAvailable), then more until push_pct % of the
 * data's pages have been swapped out since it began.  The
 * counters over that phase are divided by the data pages it reclaimed
 * (swap entries in their owners' ptes afterwards).  The balloon goes,
 * and every process verifies its data (its owner counts the swap
 * entries first).  Without swap or without /proc/rmapbench (a host)
 * there is no balloon.  contend=1 adds, in each data owner, a thread
 * taking its mmap_lock for write in a loop while reclaim runs.
 * aligned=1 starts each owner's data on a 4 MB boundary: where THP is
 * on, THPs back every whole 2 MB of them.
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 1
#endif

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "private|pair|shared", .sdef = "private",
	  .help = "who maps a data page: one worker; a worker and its helper; "
		  "the master and every worker" },
	{ .key = "W", .def = 16, .min = 1, .max = 4096,
	  .mode_max = "shared:1000",
	  .help = "workers forked by the master (shared: a page mapped by "
		  "1022 mms or more looks DMA-pinned to reclaim, which keeps it)"
	},
	{ .key = "mb", .def = 16, .min = 1, .max = 1 << 16,
	  .help = "the family's data in MB (shared: once; else split among "
		  "the workers, at least a page each)" },
	{ .key = "push_pct", .def = 50, .min = 1, .max = 90,
	  .help = "the balloon locks memory until the first swap-out (at "
		  "most MemAvailable), then more until this part of the "
		  "data's pages has been swapped out in all" },
	{ .key = "contend", .def = 0, .min = 0, .max = 1,
	  .help = "1: each data owner runs a sibling thread that maps and "
		  "unmaps a page in a loop (mmap_lock taken for write) while "
		  "reclaim runs, so walks that try-lock the mm find it taken" },
	{ .key = "aligned", .def = 0, .min = 0, .max = 1,
	  .help = "1: each owner's data start on a 4 MB boundary (THPs back "
		  "every whole 2 MB of it where THP is on)" },
	{ .key = "seed", .def = 1, .min = 0, .max = 2147483647,
	  .help = "seed of the page patterns" },
	{ .key = NULL },
};

enum pattern { PRIVATE, PAIR, SHARED };

#define SWAPFREE_FLOOR_KB 32768

struct plan {
	enum pattern pat;
	int w;			/* workers */
	int procs;		/* family processes: master, workers, helpers */
	size_t pages;		/* data pages of one owner (worker or master) */
	long long data_pages;	/* distinct data pages */
	int push_pct;
	int contend;
	uint64_t seed;
	int helper_go[2];	/* pair: closed by the supervisor: fork helpers */
	int unlock_go[2];	/* closed once all are up: unlock the data */
};

enum { REP_UNLOCKED = 3 };	/* an owner's data went back to reclaim */

struct result {
	struct rmb_snap s0, s_ready, s_floor, s_stopped, s_pressed, s_done;
	struct rmb_report ready, done;
	long long kswapd0, kswapd1, balloon_kb, balloon_sys_ns;
	uint64_t t0, t_ready, t_floor, t_pressed, t_done;
	int got_ready, got_done, abnormal, pressure, balloon_died;
};

static uint64_t owner_seed(const struct plan *p, int idx)
{
	return p->pat == SHARED ? p->seed :
		p->seed + 1000003ull * (uint64_t)(idx + 1);
}

/* ---- what every family process does ---------------------------------- */

static ssize_t read_all(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	while (got + 1 < size && (n = read(fd, buf + got, size - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = 0;
	return (ssize_t)got;
}

/*
 * mlock2(MLOCK_ONFAULT) every mapping of this process but [skip, +len):
 * what it maps now and faults later there stays out of reclaim's way
 * (and out of the counters), so that the data are what reclaim takes.
 * Returns the mappings that could not be locked ([vsyscall] is no vma).
 */
static int lock_all_but(const char *skip, size_t len)
{
	static char maps[1 << 16];
	char *line, *next;
	int failed = 0;

	if (read_all("/proc/self/maps", maps, sizeof(maps)) < 0)
		return 1;
	for (line = maps; line && *line; line = next) {
		unsigned long lo, hi;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 ||
		    strstr(line, "[vsyscall]"))
			continue;
		if (skip && lo < (uintptr_t)skip + len && hi > (uintptr_t)skip)
			continue;
		failed += mlock2((void *)lo, hi - lo, MLOCK_ONFAULT) != 0;
	}
	return failed;
}

/* The family goes idle: reclaim finds no young bit. 1 if it could not. */
static int clear_young(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	int failed = fd < 0 || write(fd, "1", 1) != 1;

	if (fd >= 0)
		close(fd);
	return failed;
}

/* Reap what has ended; a child that failed takes the group down.  Also
 * the SIGCHLD handler of the master, workers and helpers: a member that
 * dies while the others sleep on a pipe ends the run at once. */
static void reap_or_kill(int hang)
{
	int st, saved = errno;
	pid_t pid;

	while ((pid = waitpid(-1, &st, hang ? 0 : WNOHANG)) != 0) {
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			break;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			kill(0, SIGKILL);
	}
	errno = saved;
}

static void on_child(int sig)
{
	(void)sig;
	reap_or_kill(0);
}

/* Until fd's write end is closed (nothing is ever written to it). */
static void wait_closed(int fd)
{
	char c;

	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
}

static char *map_data(size_t pages)
{
	size_t len = pages * rmb_page;
	char *m = rmb_arg("aligned") ? rmb_hole(len, 0) : NULL;

	if (!rmb_arg("aligned") || m)
		m = rmb_map_anon(m, len);

	if (!m)
		rmb_die(RMB_EXIT_FAIL, "mmap of %zu data pages: %s", pages,
			strerror(errno));
	return m;
}

/* Count the owner's swap ptes first (nothing has touched them since the
 * balloon), then verify: every page (or, for a shared worker, every
 * W-th), full check. */
static void verify_and_report(struct rmb_family *f, const struct plan *p,
			      const char *data, int idx, int owner)
{
	size_t bad = 0, checked = 0, step = 1, first = 0;
	long long swapped = 0;

	if (owner)
		swapped = rmb_swapped_pages(data, p->pages);
	if (p->pat == SHARED && idx < p->w) {
		step = (size_t)p->w;
		first = (size_t)idx;
	}
	for (size_t i = first; data && i < p->pages; i += step, checked++)
		bad += rmb_verify(data + i * rmb_page, 1, owner_seed(p, idx), i,
				  0);
	rmb_family_send(f, RMB_REP_DONE, idx, (int64_t)checked, (int64_t)bad,
			swapped < 0 ? 0 : swapped);
}

/* ---- helper, worker, master -------------------------------------------- */

/*
 * The owner of data (a private or pair worker, the shared master) maps
 * and writes them locked: starting a thousand processes reclaims (their
 * kernel stacks are order-2, and these kernels have no compaction), and
 * that must not take the data before the balloon does.
 */
static char *owned_data(const struct plan *p, int idx, int *prep)
{
	char *data = map_data(p->pages);

	*prep += mlock2(data, p->pages * rmb_page, MLOCK_ONFAULT) != 0;
	rmb_fill(data, p->pages, owner_seed(p, idx), 0);
	return data;
}

/*
 * contend=1: a sibling thread of a data owner takes its mmap_lock for
 * write over and over (a PROT_NONE page mapped and unmapped: no memory)
 * from the unlock of the data until the verification, the reclaim in
 * between.  anonmm's walks try-lock each mm of the bundle and skip one
 * whose lock is taken; anon_vma's walks do not take mmap_lock.
 */
static volatile int contend_stop;

static void *contend_loop(void *arg)
{
	(void)arg;
	while (!contend_stop) {
		void *p = mmap(NULL, rmb_page, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p != MAP_FAILED)
			munmap(p, rmb_page);
	}
	return NULL;
}

static int contend_start(const struct plan *p, pthread_t *t)
{
	return p->contend && pthread_create(t, NULL, contend_loop, NULL) != 0;
}

static void contend_end(const struct plan *p, pthread_t t)
{
	if (!p->contend)
		return;
	contend_stop = 1;
	pthread_join(t, NULL);
}

/* Once everyone is up, the data go back to reclaim, idle: no young bit. */
static void release_data(struct rmb_family *f, const struct plan *p,
			 const char *data, int idx, pthread_t *t)
{
	int failed;

	wait_closed(p->unlock_go[0]);
	failed = munlock(data, p->pages * rmb_page) != 0;
	failed += clear_young();
	failed += contend_start(p, t);
	rmb_family_send(f, REP_UNLOCKED, idx, 0, 0, failed);
}

static void helper(struct rmb_family *f, const struct plan *p,
		   const char *data, int idx)
{
	int prep;

	close(p->helper_go[0]);
	prep = lock_all_but(data, p->pages * rmb_page);
	rmb_family_send(f, RMB_REP_READY, idx, 0, 0, prep);
	wait_closed(f->go[0]);
	verify_and_report(f, p, data, idx, 0);
	_exit(0);
}

static void worker(struct rmb_family *f, const struct plan *p,
		   const char *shared, int idx)
{
	const char *data = shared;
	pthread_t t = 0;
	int prep;
	pid_t pid;

	if (p->pat == SHARED) {
		prep = lock_all_but(data, p->pages * rmb_page);
		prep += clear_young();
	} else {
		prep = lock_all_but(NULL, 0);
		data = owned_data(p, idx, &prep);
	}
	rmb_family_send(f, RMB_REP_READY, idx, 0, 0, prep);
	if (p->pat == PAIR) {
		wait_closed(p->helper_go[0]);
		pid = rmb_fork();
		if (pid == 0)
			helper(f, p, data, idx);
		if (pid < 0)
			kill(0, SIGKILL);
	}
	if (p->pat != SHARED)
		release_data(f, p, data, idx, &t);
	wait_closed(f->go[0]);
	if (p->pat != SHARED)
		contend_end(p, t);
	verify_and_report(f, p, data, idx, p->pat != SHARED);
	reap_or_kill(1);
	_exit(0);
}

static void master(struct rmb_family *f, const struct plan *p)
{
	char *data = NULL;
	pthread_t t = 0;
	int prep;
	pid_t pid;

	setpgid(0, 0);
	signal(SIGCHLD, on_child);
	close(p->helper_go[1]);
	close(p->unlock_go[1]);
	prep = lock_all_but(NULL, 0);
	if (p->pat == SHARED)
		data = owned_data(p, p->w, &prep);
	for (int i = 0; i < p->w; i++) {
		pid = rmb_fork();
		if (pid == 0)
			worker(f, p, data, i);
		if (pid < 0) {
			rmb_error("master: fork of worker %d of %d: %s", i + 1,
				  p->w, strerror(errno));
			kill(0, SIGKILL);
		}
	}
	rmb_family_send(f, RMB_REP_READY, p->w, 0, 0, prep);
	if (p->pat == SHARED)
		release_data(f, p, data, p->w, &t);
	wait_closed(f->go[0]);
	if (p->pat == SHARED)
		contend_end(p, t);
	verify_and_report(f, p, data, p->w, p->pat == SHARED);
	reap_or_kill(1);
	_exit(0);
}

/* ---- the balloon ------------------------------------------------------- */

/*
 * A child of the supervisor (the OOM killer's first choice): it locks
 * new memory up to floor_kb (MemAvailable less a margin) or until the
 * first page is swapped out, whichever comes first, so that the floor
 * needs no reclaim (on a two-node guest MemAvailable less the margin
 * already needs some); reports; waits for the word; then locks more
 * until want pages have been swapped out since it started (or kb are
 * locked, or swap runs low), reports, and waits to be killed.  So the
 * timed part is the part that reclaims, and the balloon stops growing
 * once push_pct % of the data is out.  Reclaim may still go further
 * (no_watermark_boost() below); locking a fixed amount more than
 * MemAvailable swaps out anything from a quarter to all of the data.
 */
struct balloon_msg {
	long long kb, sys_ns;	/* locked so far (< 0: -errno), its stime */
};

#define BALLOON_MARGIN_KB 8192
#define BALLOON_CHUNK (1u << 20)

/* Lock a megabyte at a time up to kb in all, or until pswpout reaches
 * stop: the step bounds what one step can swap out past the stop. */
static void balloon_grow(struct balloon_msg *m, long long kb, long long stop)
{
	struct rusage ru;

	while (m->kb >= 0 && m->kb < kb) {
		if (!rmb_map_anon(NULL, BALLOON_CHUNK))
			break;
		m->kb += BALLOON_CHUNK >> 10;
		if (rmb_meminfo_kb("SwapFree") < SWAPFREE_FLOOR_KB)
			break;
		if (rmb_vmstat("pswpout") >= stop)
			break;
	}
	getrusage(RUSAGE_SELF, &ru);
	m->sys_ns = ru.ru_stime.tv_sec * 1000000000LL +
		ru.ru_stime.tv_usec * 1000LL;
}

static void balloon(int out, int in, long long floor_kb, long long kb,
		    long long want)
{
	struct balloon_msg m = { 0, 0 };
	long long start = rmb_vmstat("pswpout");
	int afd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	char word;

	if (afd >= 0) {
		rmb_write_all(afd, "1000", 4);
		close(afd);
	}
	if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
		m.kb = -errno;
	balloon_grow(&m, floor_kb, start + 1);
	rmb_write_all(out, &m, sizeof(m));
	while (read(in, &word, 1) < 0 && errno == EINTR)
		;
	balloon_grow(&m, kb, start + want);
	rmb_write_all(out, &m, sizeof(m));
	for (;;)
		pause();
}

/* The balloon's next report, at time *t and state *s; 0 if it died. */
static int balloon_heard(int fd, struct balloon_msg *m, uint64_t *t,
			 struct rmb_snap *s, long long *kswapd)
{
	int got = read(fd, m, sizeof(*m)) == sizeof(*m);

	*t = rmb_now_ns();
	rmb_snap_take(s);
	*kswapd = rmb_kswapd_cpu_ns();
	return got;
}

/*
 * The balloon holds all it asked for, but kswapd may still be swapping
 * out towards its high watermark (up to 470 pages in 72 boots of 128 MB
 * guests, 1,163 in 512 MB ones).  The pressure ends at the last
 * swap-out before 100 ms without one.
 */
#define SETTLE_MS 100

static void reclaim_settled(struct result *r)
{
	long long last = rmb_vmstat("pswpout"), now;
	uint64_t t_last = r->t_pressed;

	for (int i = 0; i < 30000 / 10; i++) {
		usleep(10000);
		now = rmb_vmstat("pswpout");
		if (now != last) {
			last = now;
			t_last = rmb_now_ns();
		} else if (rmb_now_ns() - t_last >= SETTLE_MS * 1000000ull) {
			break;
		}
	}
	r->t_pressed = t_last;
	rmb_snap_take(&r->s_pressed);
	r->kswapd1 = rmb_kswapd_cpu_ns();
}

/*
 * Without watermark boosting.  A fragmentation event while the balloon
 * grows raises the watermarks by up to 150% of the high one, and
 * kswapd then reclaims to the boosted mark, so the pressure would not
 * be the same fraction of the data from boot to boot.  What varies
 * with the boost at 0 is reclaim writing ahead of its write
 * completions while the balloon's last megabyte faults in, and kswapd
 * finishing after it stops (settle_pswpout_pages); figures in
 * docs/measurements.md.
 * The guest is this run's alone: the setting is not restored.
 */
static void no_watermark_boost(void)
{
	int fd = open("/proc/sys/vm/watermark_boost_factor",
		      O_WRONLY | O_CLOEXEC);

	if (fd < 0 || rmb_write_all(fd, "0", 1) != 0)
		rmb_die(RMB_EXIT_FAIL, "vm.watermark_boost_factor: cannot "
			"set it to 0: %s", strerror(errno));
	close(fd);
}

/* The data pages the pressure is to swap out. */
static long long want_pages(const struct plan *p)
{
	return p->data_pages * p->push_pct / 100;
}

static void pressure(struct rmb_family *f, const struct plan *p,
		     struct result *r)
{
	long long avail = rmb_meminfo_kb("MemAvailable");
	long long push = want_pages(p) * (long long)(rmb_page >> 10);
	struct balloon_msg floor, top = { 0, 0 };
	int up[2], down[2], st;
	pid_t pid;

	if (pipe(up) != 0 || pipe(down) != 0)
		rmb_die(RMB_EXIT_FAIL, "pipe: %s", strerror(errno));
	no_watermark_boost();
	pid = rmb_fork();
	if (pid == 0) {
		rmb_family_detach(f);
		close(up[0]);
		close(down[1]);
		/*
		 * At most MemAvailable plus the push: with a larger
		 * bound, a balloon that outruns pswpout (a loaded host's
		 * swap writes) locks what the family's own pages and the
		 * kernel need once the data is out, and the OOM killer
		 * ends the boot.
		 */
		balloon(up[1], down[0], avail - BALLOON_MARGIN_KB,
			avail + push, want_pages(p));
	}
	if (pid < 0)
		rmb_die(RMB_EXIT_FAIL, "fork of the balloon: %s",
			strerror(errno));
	close(up[1]);
	close(down[0]);
	r->balloon_died = !balloon_heard(up[0], &floor, &r->t_floor,
					 &r->s_floor, &r->kswapd0);
	if (!r->balloon_died) {
		rmb_write_all(down[1], "1", 1);
		r->balloon_died = !balloon_heard(up[0], &top, &r->t_pressed,
						 &r->s_pressed, &r->kswapd1);
		r->s_stopped = r->s_pressed;
		reclaim_settled(r);
	}
	close(up[0]);
	close(down[1]);
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	r->balloon_kb = top.kb;
	r->balloon_sys_ns = top.sys_ns - floor.sys_ns;
}

/* ---- supervisor ------------------------------------------------------- */

static void plan_make(struct plan *p)
{
	long long total = rmb_arg("mb") << 20, threads;
	char buf[32];

	p->pat = rmb_mode_is("pair") ? PAIR : rmb_mode_is("shared") ? SHARED
		: PRIVATE;
	p->w = (int)rmb_arg("W");
	p->push_pct = (int)rmb_arg("push_pct");
	p->contend = (int)rmb_arg("contend");
	p->seed = (uint64_t)rmb_arg("seed");
	p->procs = 1 + p->w * (p->pat == PAIR ? 2 : 1);
	p->pages = (size_t)(total / (long long)rmb_page /
			    (p->pat == SHARED ? 1 : p->w));
	if (p->pages == 0)
		rmb_die(RMB_EXIT_USAGE, "mb=%lld gives %d workers no page each",
			rmb_arg("mb"), p->w);
	p->data_pages = (long long)p->pages * (p->pat == SHARED ? 1 : p->w);
	rmb_need_mem_kb(p->data_pages * (long long)(rmb_page >> 10) +
			(RMB_32BIT ? 64 : 128) * (long long)p->procs + 16384,
			0, "the family (data, and its processes' kernel memory)");
	rmb_need_addr_space((uint64_t)p->pages * rmb_page, "the data");
	threads = read_all("/proc/sys/kernel/threads-max", buf, sizeof(buf)) > 0
		? atoll(buf) : 0;
	if (threads > 0 && p->procs + 64 > threads)
		rmb_die(RMB_EXIT_USAGE, "%d processes: threads-max is %lld; "
			"give the guest more memory", p->procs, threads);
	if (pipe(p->helper_go) != 0 || pipe(p->unlock_go) != 0)
		rmb_die(RMB_EXIT_FAIL, "pipe: %s", strerror(errno));
}

static void abort_run(struct rmb_family *f, const char *what)
{
	rmb_family_kill(f);
	rmb_family_finish(f);
	rmb_die(RMB_EXIT_FAIL, "%s: a family member failed or was killed "
		"(out of memory?)", what);
}

/* Master and workers ready, then (pair) the helpers; then the owners
 * give their data back to reclaim. */
static void spawn(struct rmb_family *f, struct plan *p, struct result *r)
{
	struct rmb_report more;
	int owners = p->pat == SHARED ? 1 : p->w;
	pid_t pid = rmb_family_fork(f);

	if (pid == 0)
		master(f, p);
	if (pid < 0)
		rmb_die(RMB_EXIT_FAIL, "fork of the master: %s", strerror(errno));
	setpgid(pid, pid);
	f->pgid = pid;
	close(p->helper_go[0]);
	close(p->unlock_go[0]);
	r->got_ready = rmb_family_collect(f, RMB_REP_READY, p->w + 1, &r->ready);
	close(p->helper_go[1]);
	if (r->got_ready == p->w + 1 && p->pat == PAIR) {
		r->got_ready += rmb_family_collect(f, RMB_REP_READY, p->w,
						   &more);
		r->ready.value += more.value;
	}
	close(p->unlock_go[1]);
	if (r->got_ready < p->procs ||
	    rmb_family_collect(f, REP_UNLOCKED, owners, &more) < owners)
		abort_run(f, "start");
	r->ready.value += more.value;
}

static void run(struct rmb_family *f, struct plan *p, struct result *r)
{
	long long swap = rmb_meminfo_kb("SwapTotal");

	rmb_family_open(f, 1);
	rmb_snap_take(&r->s0);
	r->t0 = rmb_now_ns();
	spawn(f, p, r);
	r->t_ready = rmb_now_ns();
	rmb_snap_take(&r->s_ready);
	r->pressure = swap > 0 && strcmp(rmb_scheme(), "unknown") != 0;
	if (r->pressure) {
		pressure(f, p, r);
	} else {
		r->t_floor = r->t_pressed = r->t_ready;
		r->s_floor = r->s_stopped = r->s_pressed = r->s_ready;
	}
	rmb_family_go(f);
	r->got_done = rmb_family_collect(f, RMB_REP_DONE, p->procs, &r->done);
	r->t_done = rmb_now_ns();
	rmb_snap_take(&r->s_done);
	if (r->got_done < p->procs)
		rmb_family_kill(f);
	r->abnormal = rmb_family_finish(f);
}

/* ---- report ---------------------------------------------------------- */

static double per(long long count, long long pages)
{
	return pages > 0 ? (double)count / (double)pages : 0;
}

/*
 * Per data page reclaimed (found a swap entry in its owner's ptes after
 * the balloon): pswpout also counts the pages of the initramfs, which is
 * shmem and swaps out too, but their walks are not anon rmap walks.  The
 * walk time per page is the mean time of a walk (of those not switched
 * out; the others, timed apart, are reported beside it) times the walks
 * per page: under the icount
 * clock, the instructions reclaim spends in the rmap per page it frees.
 */
static void report_reclaim(struct rmb_json *j, const struct result *r,
			   const struct rmb_snap *d)
{
	long long out = d->ctr[RMB_C_PSWPOUT], data = r->done.value;
	uint64_t ns = r->t_pressed - r->t_floor;
	long long cpu = r->kswapd1 - r->kswapd0 + r->balloon_sys_ns;
	/* the mean of the walks that kept their cpu, for every walk made */
	double walk_ns = per(d->ctr[RMB_C_WALK_NS], d->ctr[RMB_C_WALK_TIMED]);

	rmb_json_int(j, "pressure_ns", (long long)ns);
	rmb_json_int(j, "balloon_locked_kb", r->balloon_kb);
	rmb_json_dbl(j, "data_swapout_per_s", ns ? (double)data * 1e9 /
		     (double)ns : 0);
	rmb_json_dbl(j, "swapout_per_s", ns ? (double)out * 1e9 / (double)ns
		     : 0);
	rmb_json_dbl(j, "visited_per_reclaimed_count",
		     per(d->ctr[RMB_C_VISIT] + d->ctr[RMB_C_SKIP], data));
	rmb_json_dbl(j, "anon_rmap_walk_per_reclaimed_count",
		     per(d->ctr[RMB_C_WALK], data));
	rmb_json_dbl(j, "anon_rmap_visit_per_reclaimed_count",
		     per(d->ctr[RMB_C_VISIT], data));
	rmb_json_dbl(j, "anon_rmap_skip_per_reclaimed_count",
		     per(d->ctr[RMB_C_SKIP], data));
	rmb_json_dbl(j, "anon_rmap_pte_per_reclaimed_count",
		     per(d->ctr[RMB_C_PTE], data));
	rmb_json_dbl(j, "anon_rmap_trylock_fail_per_reclaimed_count",
		     per(d->ctr[RMB_C_TRYLOCK], data));
	rmb_json_dbl(j, "anon_rmap_trylock_fail_per_walk_count",
		     per(d->ctr[RMB_C_TRYLOCK], d->ctr[RMB_C_WALK]));
	rmb_json_dbl(j, "anon_rmap_contended_keep_per_reclaimed_count",
		     per(d->ctr[RMB_C_CONTENDED_KEEP], data));
	rmb_json_dbl(j, "walk_mean_ns", walk_ns);
	rmb_json_dbl(j, "walk_slept_per_walk_count",
		     per(d->ctr[RMB_C_WALK_SLEPT],
			 d->ctr[RMB_C_WALK_TIMED] + d->ctr[RMB_C_WALK_SLEPT]));
	rmb_json_dbl(j, "walk_slept_mean_ns",
		     per(d->ctr[RMB_C_WALK_SLEPT_NS], d->ctr[RMB_C_WALK_SLEPT]));
	rmb_json_dbl(j, "anon_rmap_folio_trylock_fail_per_walk_count",
		     per(d->ctr[RMB_C_FOLIO_TRYLOCK], d->ctr[RMB_C_WALK]));
	rmb_json_dbl(j, "walk_per_reclaimed_ns",
		     walk_ns * per(d->ctr[RMB_C_WALK], data));
	rmb_json_int(j, "kswapd_cpu_ns", r->kswapd1 - r->kswapd0);
	rmb_json_int(j, "balloon_sys_ns", r->balloon_sys_ns);
	rmb_json_dbl(j, "reclaim_cpu_per_reclaimed_ns", per(cpu, data));
}

static void report(const struct plan *p, const struct result *r)
{
	struct rmb_snap spawn, pressed, verify, floor, settle;
	struct rmb_json j;
	long long mms = p->pat == SHARED ? p->w + 1 : p->pat == PAIR ? 2 : 1;

	rmb_snap_delta(&pressed, &r->s_ready, &r->s_pressed);
	rmb_snap_delta(&floor, &r->s_ready, &r->s_floor);
	rmb_snap_delta(&spawn, &r->s0, &r->s_ready);
	rmb_snap_delta(&verify, &r->s_pressed, &r->s_done);
	rmb_snap_delta(&settle, &r->s_stopped, &r->s_pressed);
	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "workers_count", p->w);
	rmb_json_int(&j, "processes_count", p->procs);
	rmb_json_int(&j, "data_pages", p->data_pages);
	rmb_json_int(&j, "mms_per_data_page_count", mms);
	rmb_json_int(&j, "lock_failed_count", r->ready.value);
	rmb_json_int(&j, "data_swapped_pages", r->done.value);
	rmb_json_int(&j, "spawn_ns", (long long)(r->t_ready - r->t0));
	rmb_json_int(&j, "spawn_pswpout_pages", spawn.ctr[RMB_C_PSWPOUT]);
	rmb_json_int(&j, "floor_ns", (long long)(r->t_floor - r->t_ready));
	rmb_json_int(&j, "floor_pswpout_pages", floor.ctr[RMB_C_PSWPOUT]);
	/* swapped out after the balloon stopped growing (kswapd) */
	rmb_json_int(&j, "settle_pswpout_pages", settle.ctr[RMB_C_PSWPOUT]);
	report_reclaim(&j, r, &pressed);
	rmb_json_int(&j, "verify_ns", (long long)(r->t_done - r->t_pressed));
	rmb_json_int(&j, "verify_pswpin_pages", verify.ctr[RMB_C_PSWPIN]);
	rmb_json_int(&j, "elapsed_ns", (long long)(r->t_done - r->t0));
	rmb_json_int(&j, "members_majflt_count", r->done.majflt);
	rmb_json_int(&j, "verified_pages", r->done.checked_pages);
	rmb_json_int(&j, "verify_mismatch_pages", r->done.mismatch_pages);
	rmb_json_delta(&j, &pressed);
	rmb_json_end(&j);
}

/*
 * The pressure must have reached the data: a quarter of what it was to
 * push out, at least.  A balloon the OOM killer took means reclaim gave
 * up before the push was done; say what reclaim did meanwhile (pages
 * swapped out, and pages kept because their walk met a contended lock:
 * anonmm keeps those it could not fully walk).
 */
static int pressure_failed(const struct plan *p, const struct result *r)
{
	long long want = want_pages(p);
	struct rmb_snap d;

	if (!r->pressure)
		return 0;
	if (r->balloon_died) {
		rmb_snap_delta(&d, &r->s_floor, &r->s_pressed);
		rmb_error("the balloon was OOM-killed before the push was done: "
			  "reclaim swapped out %lld pages and kept %lld because "
			  "a walk was contended (%lld failed try-locks in %lld "
			  "walks): give the guest more memory or lower push_pct",
			  d.ctr[RMB_C_PSWPOUT], d.ctr[RMB_C_CONTENDED_KEEP],
			  d.ctr[RMB_C_TRYLOCK], d.ctr[RMB_C_WALK]);
		return 1;
	}
	if (r->balloon_kb < 0) {
		rmb_error("the balloon could not mlock");
		return 1;
	}
	if (r->done.value * 4 < want) {
		rmb_error("the pressure swapped out %lld data pages of the %lld "
			  "it was to push out", (long long)r->done.value, want);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct rmb_family f;
	static struct plan p;
	static struct result r;
	int failed;

	rmb_init("bundle");
	rmb_parse_args(params, argc, argv);
	plan_make(&p);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	run(&f, &p, &r);
	report(&p, &r);
	failed = rmb_check_mismatch(r.done.mismatch_pages,
				    r.done.checked_pages, "the family");
	if (r.got_done < p.procs || r.abnormal) {
		rmb_error("%d of %d processes did not report, %d ended "
			  "abnormally", p.procs - r.got_done, p.procs,
			  r.abnormal);
		failed = 1;
	}
	return failed | pressure_failed(&p, &r);
}
