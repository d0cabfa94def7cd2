/*
 * rmb-selfreclaim: reclaim of a process's own pages while its mmap_lock
 * is taken for write.
 *
 * anonmm's rmap walk (try_to_unmap, folio_referenced) try-locks the
 * mmap_lock of every mm that may map an anonymous page, the page's own
 * mm included, and keeps a page whose walk met a lock held for write or
 * with a writer queued (anon_rmap_contended_keep); anon_vma's walk takes
 * the anon_vma lock and never looks at mmap_lock.  Two ways a process
 * keeps reclaim from its own pages that way:
 *
 *   threads  one thread writes the data, more than memory holds, so
 *            that its faults' direct reclaim and kswapd must swap out
 *            the process's own pages, while `threads` sibling threads
 *            change the protection of a page of their own in a loop,
 *            each mprotect() taking the mmap_lock for write
 *            (contend=1); with contend=0 the same threads sleep: the
 *            control;
 *   fork     a parent writes the data, then forks `forks` children one
 *            after the other, each kept alive until the last fork:
 *            dup_mmap() holds the parent's mmap_lock (and the child's)
 *            for write while it allocates the child's page tables, so
 *            reclaim during a fork cannot unmap a page of the family.
 *
 * In an rmapbench guest with swap the data is MemAvailable + mb; on a
 * host or without swap it is mb alone, and nothing needs reclaim.
 *
 * The measured process (the writer, or the parent) is a child of this
 * one (a child subreaper, exempt from the OOM killer where it may be),
 * in a process group of its own; it keeps its progress in a shared
 * mapping, so the outcome is known however it ends: completed, killed
 * by the OOM killer (a SIGKILL this process did not send), or stalled
 * (killed here after limit_s without progress: a slow disk under a
 * loaded host makes a run slow, not stalled).  An OOM kill, a stall or a fork refused
 * is what the run measures, not a failure: the exit code is 1 only for
 * a page that read back wrong or a measured process that failed
 * otherwise.  The measured process ends by verifying every page of the
 * data (full check), the newest first: the pages still resident, then
 * those in swap, so the check swaps in little more than swap holds.
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_THREADS 64
#define MAX_FORKS 1024

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "threads|fork", .sdef = "threads",
	  .help = "threads: one thread writes the data while sibling threads "
		  "take the mmap_lock for write; fork: a parent with the data "
		  "forks child after child" },
	{ .key = "mb", .def = 32, .min = 1, .max = 1 << 20,
	  .help = "data in MB beyond MemAvailable, in a guest with swap "
		  "(/proc/rmapbench, SwapTotal > 0; elsewhere the data is mb "
		  "alone); SwapFree must hold mb and the children's page "
		  "tables (else exit 2)" },
	{ .key = "threads", .modes = "threads", .def = 1, .min = 1,
	  .max = MAX_THREADS,
	  .help = "sibling threads of the writer, each with a page of its "
		  "own" },
	{ .key = "contend", .modes = "threads", .def = 1, .min = 0, .max = 1,
	  .help = "1: each sibling loops on mprotect() of its page (the "
		  "mmap_lock taken for write) while the data is written and "
		  "verified; 0: the siblings sleep (the control)" },
	{ .key = "forks", .modes = "fork", .def = 16, .min = 1,
	  .max = MAX_FORKS,
	  .help = "children forked one after the other once the data is "
		  "written, each alive until the last fork" },
	{ .key = "limit_s", .def = 60, .min = 1, .max = 3600,
	  .help = "seconds the measured process may go without progress "
		  "(a page written or verified, a fork done); then it is "
		  "killed and the run counts as stalled" },
	{ .key = "seed", .def = 1, .min = 0, .max = 2147483647,
	  .help = "seed of the page patterns" },
	{ .key = NULL },
};

/* pages filled and verified between two updates of the progress */
#define CHUNK 256

struct plan {
	int fork_mode, threads, contend, forks, limit_s;
	int guest;		/* an rmapbench guest with swap */
	size_t pages;		/* the data */
	long long avail_kb;	/* MemAvailable at the start */
	uint64_t seed;
};

/*
 * What the measured process has done, in a mapping it shares with this
 * one: written as it goes, read once it has ended, however it ended.
 */
struct shared {
	long long filled_pages, verified_pages, mismatch_pages;
	long long forks_done, fork_errno, children_killed;
	long long mprotect_errno;
	long long mprotect_calls[MAX_THREADS];	/* a slot per sibling */
	uint64_t t_start, t_filled, t_forked, t_verify, t_verified;
	int done;
	uint64_t fork_ns[MAX_FORKS];
};

static volatile struct shared *sh;

/* ---- the measured process -------------------------------------------- */

static char *write_data(const struct plan *p)
{
	char *data;

	sh->t_start = rmb_now_ns();
	data = rmb_map_anon(NULL, p->pages * rmb_page);
	if (!data)
		rmb_die(RMB_EXIT_FAIL, "mmap of the data (%zu pages): %s",
			p->pages, strerror(errno));
	for (size_t i = 0; i < p->pages; i += CHUNK) {
		size_t n = p->pages - i < CHUNK ? p->pages - i : CHUNK;

		rmb_fill(data + i * rmb_page, n, p->seed, i);
		sh->filled_pages = (long long)(i + n);
	}
	sh->t_filled = rmb_now_ns();
	return data;
}

/* Every page, full check, from the last written down to the first. */
static void verify_data(const struct plan *p, const char *data)
{
	size_t i = p->pages;
	long long bad = 0;

	sh->t_verify = rmb_now_ns();
	while (i > 0) {
		size_t n = i < CHUNK ? i : CHUNK;

		i -= n;
		bad += (long long)rmb_verify(data + i * rmb_page, n, p->seed, i,
					     0);
		sh->verified_pages += (long long)n;
		sh->mismatch_pages = bad;
	}
	sh->t_verified = rmb_now_ns();
}

struct sibling {
	char *page;		/* a shmem page: no vma merges with it */
	int idx, contend, stop_fd;
};

static volatile int siblings_stop;

/*
 * contend=1: PROT_READ and back to PROT_NONE, over and over: each call
 * takes the mmap_lock for write and allocates nothing (the page's vma
 * is its own shmem file's, so it neither merges nor splits, and
 * nothing is accounted).  contend=0: asleep until the writer is done.
 */
static void *sibling_loop(void *arg)
{
	struct sibling *s = arg;
	char c;

	if (!s->contend) {
		while (read(s->stop_fd, &c, 1) < 0 && errno == EINTR)
			;
		return NULL;
	}
	while (!siblings_stop) {
		if (mprotect(s->page, rmb_page, PROT_READ) != 0 ||
		    mprotect(s->page, rmb_page, PROT_NONE) != 0) {
			sh->mprotect_errno = errno;
			break;
		}
		sh->mprotect_calls[s->idx] += 2;
	}
	return NULL;
}

static void run_threads(const struct plan *p) __attribute__((noreturn));
static void run_threads(const struct plan *p)
{
	static struct sibling sib[MAX_THREADS];
	static pthread_t t[MAX_THREADS];
	int stop[2], i;
	char *data;

	if (pipe(stop) != 0)
		rmb_die(RMB_EXIT_FAIL, "pipe: %s", strerror(errno));
	for (i = 0; i < p->threads; i++) {
		sib[i].page = mmap(NULL, rmb_page, PROT_NONE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (sib[i].page == MAP_FAILED)
			rmb_die(RMB_EXIT_FAIL, "mmap of a sibling's page: %s",
				strerror(errno));
		sib[i].idx = i;
		sib[i].contend = p->contend;
		sib[i].stop_fd = stop[0];
		errno = pthread_create(&t[i], NULL, sibling_loop, &sib[i]);
		if (errno)
			rmb_die(RMB_EXIT_FAIL, "sibling thread %d: %s", i,
				strerror(errno));
	}
	/* contended from the first page on: each sibling has taken the
	 * lock for write once before the writer starts */
	for (i = 0; p->contend && i < p->threads; i++)
		while (!sh->mprotect_calls[i] && !sh->mprotect_errno)
			sched_yield();
	data = write_data(p);
	verify_data(p, data);
	siblings_stop = 1;
	close(stop[1]);
	for (i = 0; i < p->threads; i++)
		pthread_join(t[i], NULL);
	sh->done = 1;
	_exit(0);
}

/*
 * The children wait for the write end of go to close (the parent's
 * alone: each child closes its copy), then exit.  A fork that fails
 * ends the forks: the run did not complete, and says why.
 */
static void run_fork(const struct plan *p) __attribute__((noreturn));
static void run_fork(const struct plan *p)
{
	char *data = write_data(p), c;
	int go[2], st;
	pid_t pid;

	if (pipe(go) != 0)
		rmb_die(RMB_EXIT_FAIL, "pipe: %s", strerror(errno));
	for (int i = 0; i < p->forks; i++) {
		uint64_t t = rmb_now_ns();

		pid = fork();
		if (pid == 0) {
			close(go[1]);
			while (read(go[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		if (pid < 0) {
			sh->fork_errno = errno;
			break;
		}
		sh->fork_ns[i] = rmb_now_ns() - t;
		sh->forks_done = i + 1;
	}
	sh->t_forked = rmb_now_ns();
	close(go[1]);
	while ((pid = wait(&st)) > 0 || errno == EINTR)
		if (pid > 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
			sh->children_killed++;
	verify_data(p, data);
	sh->done = 1;
	_exit(0);
}

/* ---- the OOM killer's choice ------------------------------------------ */

static int read_int_file(const char *path, int *val)
{
	char buf[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	*val = atoi(buf);
	return 0;
}

static int write_int_file(const char *path, int val)
{
	char buf[32];
	int fd = open(path, O_WRONLY | O_CLOEXEC), n, rc;

	if (fd < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%d", val);
	rc = rmb_write_all(fd, buf, (size_t)n);
	close(fd);
	return rc;
}

#define OOM_ADJ "/proc/self/oom_score_adj"

/*
 * This process takes no part in the measurement and must see it end:
 * -1000 where it may (root).  The measured process goes back to the
 * value this process had, an ordinary candidate of the OOM killer
 * (one left at -1000 would leave the killer nothing to take).
 */
struct oom_adj {
	int orig, exempt;
};

static void oom_exempt(struct oom_adj *a)
{
	a->exempt = read_int_file(OOM_ADJ, &a->orig) == 0 &&
		write_int_file(OOM_ADJ, -1000) == 0;
}

static void oom_ordinary(const struct oom_adj *a)
{
	if (a->exempt && write_int_file(OOM_ADJ, a->orig) != 0)
		rmb_die(RMB_EXIT_FAIL, "oom_score_adj: cannot set it back to "
			"%d: %s", a->orig, strerror(errno));
}

/* ---- supervisor ------------------------------------------------------- */

static void plan_make(struct plan *p)
{
	long long swap = rmb_meminfo_kb("SwapTotal"), data_kb, tables_kb;
	long long ptes = RMB_32BIT ? 1024 : 512;	/* ptes per table page */
	long long page_kb = (long long)(rmb_page >> 10);

	p->fork_mode = rmb_mode_is("fork");
	p->threads = p->fork_mode ? 0 : (int)rmb_arg("threads");
	p->contend = p->fork_mode ? 0 : (int)rmb_arg("contend");
	p->forks = p->fork_mode ? (int)rmb_arg("forks") : 0;
	p->limit_s = (int)rmb_arg("limit_s");
	p->seed = (uint64_t)rmb_arg("seed");
	p->avail_kb = rmb_avail_kb(0);
	p->guest = swap > 0 && strcmp(rmb_scheme(), "unknown") != 0;
	data_kb = rmb_arg("mb") * 1024 + (p->guest ? p->avail_kb : 0);
	/* each child copies the data's page tables */
	tables_kb = p->forks * (data_kb / page_kb / ptes + 2) * page_kb;
	rmb_need_mem_kb(data_kb + tables_kb + 8192, p->guest,
			"the data (MemAvailable + mb in a guest with swap) and "
			"the children's page tables");
	rmb_need_addr_space((uint64_t)data_kb << 10, "the data");
	p->pages = (size_t)(data_kb / page_kb);
}

struct result {
	struct rmb_snap s0, s1;
	uint64_t t0, t1;
	long long kswapd0, kswapd1;
	int status;
	int completed, oom_killed, stalled;
};

static volatile pid_t measured_pid;
static volatile sig_atomic_t limit_hit;
static unsigned int limit_s;
static long long last_progress;

/* Pages written and verified, forks done: what a live run advances. */
static long long progress(void)
{
	return sh->filled_pages + sh->verified_pages + sh->forks_done;
}

/*
 * limit_s is up: if the measured process got on meanwhile, wait another
 * limit_s; if not, it and its family go.
 */
static void on_alarm(int sig)
{
	long long now = progress();

	(void)sig;
	if (now != last_progress) {
		last_progress = now;
		alarm(limit_s);
		return;
	}
	limit_hit = 1;
	kill(-measured_pid, SIGKILL);
	kill(measured_pid, SIGKILL);
}

/* Every child, the orphans of the measured process included. */
static void reap_all(void)
{
	int st;

	while (waitpid(-1, &st, 0) > 0 || errno == EINTR)
		;
}

static void measure(const struct plan *p, struct result *r)
{
	struct sigaction sa;
	struct oom_adj adj;
	pid_t pid;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART: waitpid returns */
	sigaction(SIGALRM, &sa, NULL);
	oom_exempt(&adj);
	r->kswapd0 = rmb_kswapd_cpu_ns();
	rmb_snap_take(&r->s0);
	r->t0 = rmb_now_ns();
	pid = rmb_fork();
	if (pid == 0) {
		setpgid(0, 0);
		oom_ordinary(&adj);
		if (p->fork_mode)
			run_fork(p);
		run_threads(p);
	}
	if (pid < 0)
		rmb_die(RMB_EXIT_FAIL, "fork of the measured process: %s",
			strerror(errno));
	setpgid(pid, pid);
	measured_pid = pid;
	limit_s = (unsigned int)p->limit_s;
	alarm(limit_s);
	while (waitpid(pid, &r->status, 0) < 0)
		if (errno != EINTR)
			rmb_die(RMB_EXIT_FAIL, "waitpid: %s", strerror(errno));
	alarm(0);
	r->t1 = rmb_now_ns();
	kill(-pid, SIGKILL);		/* what is left of its family */
	reap_all();
	rmb_snap_take(&r->s1);
	r->kswapd1 = rmb_kswapd_cpu_ns();
	if (WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGKILL) {
		r->stalled = limit_hit;
		r->oom_killed = !limit_hit;
	}
	r->completed = WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0 &&
		sh->done && !sh->fork_errno && !sh->children_killed;
}

/* ---- report ---------------------------------------------------------- */

static long long since(uint64_t t, uint64_t from)
{
	return t && from && t >= from ? (long long)(t - from) : 0;
}

static void report_fork(struct rmb_json *j)
{
	static uint64_t lat[MAX_FORKS];
	struct rmb_stats st;
	long long n = sh->forks_done;

	for (long long i = 0; i < n; i++)
		lat[i] = sh->fork_ns[i];
	rmb_stats(lat, (size_t)n, &st);
	rmb_json_int(j, "forks_done_count", n);
	rmb_json_int(j, "fork_failed_count", sh->fork_errno != 0);
	rmb_json_int(j, "children_killed_count", sh->children_killed);
	rmb_json_stats(j, "fork", &st);
	rmb_json_int(j, "forks_ns", since(sh->t_forked, sh->t_filled));
}

static void report(const struct plan *p, const struct result *r)
{
	long long swap = rmb_meminfo_kb("SwapTotal"), calls = 0;
	uint64_t ns = r->t1 - r->t0;
	struct rmb_snap d;
	struct rmb_json j;

	rmb_snap_delta(&d, &r->s0, &r->s1);
	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "data_pages", (long long)p->pages);
	rmb_json_int(&j, "mem_available_kb", p->avail_kb);
	rmb_json_int(&j, "swap_total_kb", swap < 0 ? 0 : swap);
	rmb_json_int(&j, "completed_count", r->completed);
	rmb_json_int(&j, "oom_killed_count", r->oom_killed);
	rmb_json_int(&j, "stalled_count", r->stalled);
	rmb_json_int(&j, "filled_pages", sh->filled_pages);
	if (p->fork_mode) {
		report_fork(&j);
	} else {
		for (int i = 0; i < p->threads; i++)
			calls += sh->mprotect_calls[i];
		rmb_json_int(&j, "mprotect_calls_count", calls);
	}
	rmb_json_int(&j, "fill_ns", since(sh->t_filled, sh->t_start));
	rmb_json_int(&j, "verify_ns", since(sh->t_verified, sh->t_verify));
	rmb_json_int(&j, "elapsed_ns", (long long)ns);
	rmb_json_dbl(&j, "swapout_per_s", ns ? (double)d.ctr[RMB_C_PSWPOUT] *
		     1e9 / (double)ns : 0);
	rmb_json_int(&j, "kswapd_cpu_ns", r->kswapd1 - r->kswapd0);
	rmb_json_int(&j, "verified_pages", sh->verified_pages);
	rmb_json_int(&j, "verify_mismatch_pages", sh->mismatch_pages);
	rmb_json_delta(&j, &d);
	rmb_json_end(&j);
}

/* A measured process that failed in a way the run does not measure. */
static int failed_otherwise(const struct result *r)
{
	int st = r->status;

	if (WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL) {
		rmb_error("the measured process died of signal %d",
			  WTERMSIG(st));
		return 1;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
		rmb_error("the measured process failed (exit %d)",
			  WEXITSTATUS(st));
		return 1;
	}
	if (sh->mprotect_errno) {
		rmb_error("a sibling's mprotect() failed: %s",
			  strerror((int)sh->mprotect_errno));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct plan p;
	static struct result r;
	void *m;
	int failed;

	rmb_init("selfreclaim");
	rmb_parse_args(params, argc, argv);
	plan_make(&p);
	m = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		rmb_die(RMB_EXIT_FAIL, "mmap of the shared progress: %s",
			strerror(errno));
	sh = m;
	prctl(PR_SET_CHILD_SUBREAPER, 1);	/* orphans come back to us */
	measure(&p, &r);
	report(&p, &r);
	failed = rmb_check_mismatch(sh->mismatch_pages, sh->verified_pages,
				    "the data");
	return failed | failed_otherwise(&r);
}
