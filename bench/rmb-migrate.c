/*
 * rmb-migrate: pages shared across a bundle, migrated while its members
 * change their address spaces.
 *
 * Migration turns every pte of a page into a migration entry and must
 * find each again to point it at the new page; a pte left holding an
 * entry hangs its task, and a pte pointed at the wrong page corrupts it.
 * anonmm's walk try-locks each mm of the bundle, so this is where it
 * could lose one (kernels/anonmm: anonmm_try_to_migrate).
 *
 * The parent fills 2 x pages pages and drops every other one, so that the
 * pages kept sit among free holes that compaction fills by migrating
 * them; it forks workers, which map those pages with it.  Each worker
 * also fills a private region and, until told to stop, verifies the
 * shared pages and its own, and changes its address space under the
 * walk: mprotect() of half its region and back (a writer on its
 * mmap_lock), mremap() of it away and back (the index moves), MADV_PAGEOUT
 * of it when there is swap (swap-in on the next check), and every few
 * rounds one worker exits and another is forked.  The parent meanwhile
 * asks for whole-memory compaction (/proc/sys/vm/compact_memory) rounds
 * times.  Every page is verified at the end.  With churn=0 the workers
 * wait instead, and the parent compacts a steady bundle: what compaction
 * costs each scheme rather than whether it survives the churn.
 *
 * Needs an rmapbench kernel with compaction; elsewhere it says so
 * (checked_count 0) and only verifies.  With compaction, a run that
 * migrated no page fails (nothing was tested); expect no mismatch on
 * either scheme.
 *
 * mode=move measures what a migration costs each scheme: the parent's
 * pages, mapped by it and by every worker (pattern=shared) or by it
 * alone after every worker wrote its own copies (pattern=cow: anon_vma
 * still visits every worker's vma, anonmm finds the parent first), are
 * moved by move_pages(2) to the other NUMA node and back, rounds times,
 * each call timed.
 *
 * mode=balance measures what NUMA balancing's migrations cost: every
 * worker writes its own copy of the parent's pages on node 0's CPU, then
 * reads it on node 1's, and the kernel's NUMA balancing (hinting faults)
 * moves each copy to node 1 by itself; the parent times how long until
 * 90% of the copies moved.  Copies, not the parent's shared pages: 6.1's
 * NUMA balancing leaves a page mapped by several processes (a shared
 * copy-on-write page) alone.
 *
 * mode=offline is compact with memory hot-remove instead of compaction:
 * each round takes the next memory block of ZONE_MOVABLE offline (every
 * page in it migrated elsewhere) and online again, while the bundle
 * churns; needs a kernel with MEMORY_HOTREMOVE booted with movablecore=.
 * A block still migrating after a minute is interrupted and counted.
 *
 * move needs two NUMA nodes, balance two nodes with a CPU each and NUMA
 * balancing on: in an rmapbench guest without them they fail; outside
 * one (checked_count 0) they only set up and verify.
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "compact|move|balance|offline",
	  .sdef = "compact",
	  .help = "compact: whole-memory compaction rounds while the bundle "
		  "churns; move: the cost of move_pages(2) between two nodes; "
		  "balance: NUMA balancing moving the workers' copies; "
		  "offline: memory blocks offlined and onlined while it churns" },
	{ .key = "workers", .def = 8, .min = 1, .max = 1024,
	  .help = "forked workers mapping the shared pages" },
	{ .key = "pages", .def = 1024, .min = 16, .max = 262144,
	  .help = "shared pages (compact: and each worker's private pages / 4;"
		  " balance: each worker's copy)"
	},
	{ .key = "rounds", .def = 20, .min = 1, .max = 100000,
	  .modes = "compact|move|offline",
	  .help = "compaction (offline: offline) rounds (move: moves to the "
		  "other node and back)"
	},
	{ .key = "pattern", .choices = "shared|cow", .sdef = "shared",
	  .modes = "move",
	  .help = "shared: the parent's pages mapped by it and every worker; "
		  "cow: every worker wrote its own copy, the parent's are "
		  "mapped by the parent alone" },
	{ .key = "churn", .def = 1, .min = 0, .max = 1,
	  .modes = "compact|offline",
	  .help = "1: workers verify and change their address spaces, and "
		  "some exit and are forked again, all through the run; 0: "
		  "they wait, a steady bundle, and verify at the end" },
	{ .key = "pageout", .def = 1, .min = 0, .max = 1,
	  .modes = "compact|offline",
	  .help = "1: churning workers page their private regions out when "
		  "there is swap (reclaim's walks join compaction's); 0: not" },
	{ .key = "seconds", .def = 60, .min = 1, .max = 3600,
	  .modes = "balance",
	  .help = "fail if 90% of the copies have not moved by then" },
	{ .key = "scan_ms", .def = 0, .min = 0, .max = 60000,
	  .modes = "balance",
	  .help = "NUMA balancing's scan delay and shortest scan period, in "
		  "ms, set before the workers are forked (debugfs "
		  "sched/numa_balancing); 0: the kernel's (1000)" },
	{ .key = "seed", .def = 1, .min = 0, .max = 2147483647,
	  .help = "seed of the page patterns" },
	{ .key = NULL },
};

#define PRIVATE_SEED_OFF 1000003

struct ctl {			/* MAP_SHARED: the parent's word to workers */
	volatile int stop;
	int churn;		/* workers change their address spaces */
};

/* Pages [0, n) of the shared region, every other one of what was filled */
static size_t verify_shared(const char *base, size_t n, uint64_t seed,
			    int quick)
{
	size_t i, bad = 0;

	for (i = 0; i < n; i++)
		bad += rmb_verify(base + 2 * i * rmb_page, 1, seed, 2 * i,
				  quick);
	return bad;
}

/*
 * One round of address-space changes on the private region; NULL, said
 * in an RMB-ERROR line, if a call failed.
 */
static char *churn(char *priv, size_t n, char *spare, int swap)
{
	size_t half = n / 2 * rmb_page;
	char *moved;

	if (mprotect(priv, half, PROT_READ) != 0 ||
	    mprotect(priv, half, PROT_READ | PROT_WRITE) != 0) {
		rmb_error("worker %d: mprotect: %s", (int)getpid(),
			  strerror(errno));
		return NULL;
	}
	moved = mremap(priv, n * rmb_page, n * rmb_page,
		       MREMAP_MAYMOVE | MREMAP_FIXED, spare);
	if (moved == MAP_FAILED) {
		rmb_error("worker %d: mremap of %zu pages: %s", (int)getpid(),
			  n, strerror(errno));
		return NULL;
	}
	if (swap)
		madvise(moved, n * rmb_page, MADV_PAGEOUT);
	return moved;
}

/* A worker: verify and churn until told to stop; exit 1 on a mismatch. */
static void worker(const char *shared, size_t n, uint64_t seed,
		   struct ctl *ctl, int id, int swap)
{
	size_t np = n / 4 > 0 ? n / 4 : 1, bad = 0;
	uint64_t pseed = seed + PRIVATE_SEED_OFF + (uint64_t)id;
	char *priv = rmb_map_anon(NULL, np * rmb_page);
	char *spare = rmb_map_anon(NULL, np * rmb_page);
	char *moved;

	if (!priv || !spare)
		_exit(2);
	rmb_fill(priv, np, pseed, 0);
	while (!ctl->churn && !ctl->stop)
		usleep(20000);
	while (!ctl->stop && !bad) {
		bad += verify_shared(shared, n, seed, 1);
		moved = churn(priv, np, spare, swap);
		if (!moved)
			_exit(2);
		spare = priv;		/* its range is free now: next target */
		priv = moved;
		bad += rmb_verify(priv, np, pseed, 0, 1);
	}
	bad += verify_shared(shared, n, seed, 0);
	bad += rmb_verify(priv, np, pseed, 0, 0);
	_exit(bad ? 1 : 0);
}

static pid_t start_worker(const char *shared, size_t n, uint64_t seed,
			  struct ctl *ctl, int id, int swap)
{
	pid_t pid = rmb_fork();

	if (pid < 0)
		rmb_die(RMB_EXIT_FAIL, "fork: %s", strerror(errno));
	if (pid == 0)
		worker(shared, n, seed, ctl, id, swap);
	return pid;
}

/* Wait for one worker; count it as failed unless it exited 0. */
static int reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return 1;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		rmb_error("worker %d: status %#x", (int)pid, status);
		return 1;
	}
	return 0;
}

/* The CPUs of NUMA node node (its sysfs cpulist, e.g. "0-1,4") into set
 * if set; returns how many, or -1 if the node has no such list. */
static int node_cpus(int node, cpu_set_t *set)
{
	char path[64], list[256], *tok, *save = NULL;
	int count = 0, lo, hi;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist",
		 node);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(list, sizeof(list), f))
		list[0] = '\0';
	fclose(f);
	if (set)
		CPU_ZERO(set);
	for (tok = strtok_r(list, ",\n", &save); tok;
	     tok = strtok_r(NULL, ",\n", &save)) {
		if (sscanf(tok, "%d-%d", &lo, &hi) != 2)
			hi = lo = atoi(tok);
		for (; lo <= hi && lo < CPU_SETSIZE; lo++, count++)
			if (set)
				CPU_SET(lo, set);
	}
	return count;
}

/* Run the calling task on node's CPUs only. */
static void pin_to_node(int node)
{
	cpu_set_t set;

	if (node_cpus(node, &set) <= 0 ||
	    sched_setaffinity(0, sizeof(set), &set) != 0)
		rmb_die(RMB_EXIT_FAIL, "cannot run on node %d's CPUs: %s", node,
			strerror(errno));
}

/* x / n, or 0 when nothing was counted */
static double per(long long x, long long n)
{
	return n > 0 ? (double)x / (double)n : 0;
}

/* 1 in an rmapbench guest with NUMA node 1 (cpus: with CPUs on nodes 0
 * and 1, and NUMA balancing on), 0 outside one; in an rmapbench guest
 * without them, fails saying what is missing. */
static int in_guest_with_nodes(int cpus)
{
	if (!strcmp(rmb_scheme(), "unknown"))
		return 0;
	if (access("/sys/devices/system/node/node1", F_OK) != 0)
		rmb_die(RMB_EXIT_FAIL, "mode %s needs two NUMA nodes: run it "
			"on a kernel of the distro profile", rmb_arg_str("mode"));
	if (cpus && (node_cpus(0, NULL) <= 0 || node_cpus(1, NULL) <= 0 ||
		     rmb_read_number("/proc/sys/kernel/numa_balancing") != 1))
		rmb_die(RMB_EXIT_FAIL, "mode balance needs a CPU on each node "
			"(2 vCPUs or more) and kernel.numa_balancing=1");
	return 1;
}

/* ---- move: move_pages(2) of the parent's pages, timed ------------------ */

/* Workers that map the parent's pages (cow: write their own copies) and
 * sleep until killed. */
static void start_sleepers(pid_t *pids, long long w, char *p, long long n,
			   int cow)
{
	long long i;

	for (i = 0; i < w; i++) {
		pids[i] = rmb_fork();
		if (pids[i] < 0)
			rmb_die(RMB_EXIT_FAIL, "fork: %s", strerror(errno));
		if (pids[i] == 0) {
			if (cow)
				rmb_fill(p, (size_t)n, 7, 0);
			for (;;)
				pause();
		}
	}
}

static int move_main(long long w, long long n, long long rounds,
		     uint64_t seed)
{
	int cow = !strcmp(rmb_arg_str("pattern"), "cow");
	int checked = in_guest_with_nodes(0);
	long long r, moved = 0, short_pages = 0, bad;
	uint64_t *lat = calloc((size_t)(2 * rounds), sizeof(*lat));
	void **addr = calloc((size_t)n, sizeof(*addr));
	int *nodes = calloc((size_t)n, sizeof(*nodes));
	int *status = calloc((size_t)n, sizeof(*status));
	pid_t *pids = calloc((size_t)w, sizeof(*pids));
	char *p = rmb_map_anon(NULL, (size_t)n * rmb_page);
	struct rmb_snap a, b, d;
	struct rmb_stats st;
	struct rmb_json j;
	uint64_t t0;
	long long i;

	if (!lat || !addr || !nodes || !status || !pids || !p)
		rmb_die(RMB_EXIT_FAIL, "out of memory");
	rmb_fill(p, (size_t)n, seed, 0);
	start_sleepers(pids, w, p, n, cow);
	sleep(1);		/* every worker has written its copies (cow) */
	if (checked)
		rmb_move_pages(p, n, 0, addr, nodes, status);
	rmb_snap_take(&a);
	for (r = 0; checked && r < 2 * rounds; r++) {
		int node = (int)(1 - r % 2);
		long long there;

		t0 = rmb_now_ns();
		there = rmb_move_pages(p, n, node, addr, nodes, status);
		lat[r] = rmb_now_ns() - t0;
		moved += there;
		short_pages += n - there;
	}
	rmb_snap_take(&b);
	for (i = 0; i < w; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	bad = (long long)rmb_verify(p, (size_t)n, seed, 0, 0);
	rmb_snap_delta(&d, &a, &b);
	rmb_stats(lat, checked ? (size_t)(2 * rounds) : 0, &st);

	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "checked_count", checked);
	rmb_json_int(&j, "moves_count", checked ? 2 * rounds : 0);
	rmb_json_int(&j, "moved_pages", moved);
	rmb_json_int(&j, "not_moved_pages", short_pages);
	rmb_json_dbl(&j, "move_per_page_ns",
		     checked ? st.median / (double)n : 0);
	rmb_json_dbl(&j, "visited_per_moved_count",
		     per(d.ctr[RMB_C_VISIT], moved));
	rmb_json_stats(&j, "move", &st);
	rmb_json_int(&j, "verified_pages", n);
	rmb_json_int(&j, "verify_mismatch_pages", bad);
	rmb_json_delta(&j, &d);
	rmb_json_end(&j);
	return rmb_check_mismatch(bad, n, "pages");
}

/* The end of a result line of the bundle's modes: the workers and pages
 * verified and the counters' growth d; fails if a worker did. */
static void end_result(struct rmb_json *j, const struct rmb_snap *d,
		       long long failed, long long w, long long n,
		       long long bad)
{
	rmb_json_int(j, "workers_failed_count", failed);
	rmb_json_int(j, "verified_pages", n);
	rmb_json_int(j, "verify_mismatch_pages", bad);
	rmb_json_delta(j, d);
	rmb_json_end(j);
	if (failed)
		rmb_die(RMB_EXIT_FAIL, "%lld of %lld workers failed (data "
			"mismatch or error)", failed, w);
}

/* ---- balance: NUMA balancing of the workers' own copies ---------------- */

struct balance_ctl {		/* MAP_SHARED: parent and workers */
	volatile int stop;
	volatile int ready;	/* workers that wrote their copies */
};

/* A worker: write its copy on node 0, then read it on node 1 until told
 * to stop; exit 1 on a mismatch. */
static void balance_worker(char *p, long long n, uint64_t seed,
			   struct balance_ctl *ctl, int checked)
{
	size_t bad = 0;

	if (checked)
		pin_to_node(0);		/* the copies are allocated on node 0 */
	rmb_fill(p, (size_t)n, seed, 0);
	__sync_fetch_and_add(&ctl->ready, 1);
	if (checked)
		pin_to_node(1);
	while (!ctl->stop && !bad)
		bad += rmb_verify(p, (size_t)n, seed, 0, 1);
	bad += rmb_verify(p, (size_t)n, seed, 0, 0);
	_exit(bad ? 1 : 0);
}

/*
 * NUMA balancing scans a task's address space (task_numa_work) once the
 * task has run for its scan period, the first time after the scan delay:
 * 1000 ms each by default, of the task's own run time, so W workers
 * sharing a CPU wait about W seconds for their first scan.  6.1 has the
 * tunables in debugfs.  A new mm takes the delay at fork.
 */
static void set_numa_scan_ms(long long ms)
{
	static const char *const knobs[] = { "scan_delay_ms",
					     "scan_period_min_ms" };
	char path[96], text[24];
	int len = snprintf(text, sizeof(text), "%lld\n", ms);

	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		int fd;

		snprintf(path, sizeof(path),
			 "/sys/kernel/debug/sched/numa_balancing/%s", knobs[i]);
		fd = open(path, O_WRONLY);
		if (fd < 0 || rmb_write_all(fd, text, (size_t)len) != 0)
			rmb_die(RMB_EXIT_FAIL, "cannot set %s to %lld: %s (it "
				"needs a kernel with DEBUG_FS and SCHED_DEBUG, "
				"debugfs mounted)", path, ms, strerror(errno));
		close(fd);
	}
}

static int balance_main(long long w, long long n, uint64_t seed)
{
	int checked = in_guest_with_nodes(1);
	long long seconds = rmb_arg("seconds"), want = w * n * 9 / 10;
	long long i, failed = 0, got = 0, bad;
	uint64_t t0, converge = 0, limit = (uint64_t)seconds * 1000000000ULL;
	struct balance_ctl *ctl = mmap(NULL, rmb_page, PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t *pids = calloc((size_t)w, sizeof(*pids));
	char *p = rmb_map_anon(NULL, (size_t)n * rmb_page);
	struct rmb_snap a, b, d;
	struct rmb_json j;

	if (ctl == MAP_FAILED || !pids || !p)
		rmb_die(RMB_EXIT_FAIL, "out of memory");
	if (checked && rmb_arg("scan_ms"))
		set_numa_scan_ms(rmb_arg("scan_ms"));
	if (checked)
		pin_to_node(0);
	rmb_fill(p, (size_t)n, seed, 0);
	for (i = 0; i < w; i++) {
		pids[i] = rmb_fork();
		if (pids[i] < 0)
			rmb_die(RMB_EXIT_FAIL, "fork: %s", strerror(errno));
		if (pids[i] == 0)
			balance_worker(p, n, seed + 1 + (uint64_t)i, ctl,
				       checked);
	}
	while (ctl->ready < w)
		usleep(10000);
	rmb_snap_take(&a);
	t0 = rmb_now_ns();
	while (checked && !converge && rmb_now_ns() - t0 < limit) {
		usleep(20000);
		got = rmb_vmstat("numa_pages_migrated") - a.ctr[RMB_C_NUMA_MIGRATED];
		if (got >= want)
			converge = rmb_now_ns() - t0;
	}
	rmb_snap_take(&b);
	ctl->stop = 1;
	for (i = 0; i < w; i++)
		failed += reap(pids[i]);
	bad = (long long)rmb_verify(p, (size_t)n, seed, 0, 0);
	rmb_snap_delta(&d, &a, &b);

	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "checked_count", checked);
	rmb_json_int(&j, "copies_pages", w * n);
	rmb_json_int(&j, "converge_ns", (long long)converge);
	rmb_json_dbl(&j, "visited_per_migrated_count",
		     per(d.ctr[RMB_C_VISIT], d.ctr[RMB_C_NUMA_MIGRATED]));
	rmb_json_dbl(&j, "hint_faults_per_migrated_count",
		     per(d.ctr[RMB_C_NUMA_HINT], d.ctr[RMB_C_NUMA_MIGRATED]));
	end_result(&j, &d, failed, w, n, bad);
	if (checked && !converge)
		rmb_die(RMB_EXIT_FAIL, "NUMA balancing moved %lld of the %lld "
			"pages of the copies in %lld s, not 90%%", got, w * n,
			seconds);
	return rmb_check_mismatch(bad, n, "pages");
}

/* ---- offline: memory blocks taken offline and back --------------------- */

#define MEMORY_DIR "/sys/devices/system/memory"
#define OFFLINE_LIMIT_S 60	/* an offline still migrating: interrupted */

struct offline_count {
	long long done, busy, interrupted;
};

/* Write s to block's state file: 0, or the errno of the write. */
static int block_state(int block, const char *s)
{
	char path[96];
	int fd, err = 0;

	snprintf(path, sizeof(path), MEMORY_DIR "/memory%d/state", block);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	if (write(fd, s, strlen(s)) < 0)
		err = errno;
	close(fd);
	return err;
}

/* Whether memory block is online in ZONE_MOVABLE (its valid_zones then
 * names that zone alone): the blocks whose every page can migrate. */
static int movable_block(int block)
{
	char path[96], zones[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), MEMORY_DIR "/memory%d/valid_zones",
		 block);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(zones, sizeof(zones), f))
		zones[0] = '\0';
	fclose(f);
	return !strcmp(zones, "Movable\n");
}

static void on_alarm(int sig)
{
	(void)sig;		/* only interrupts the write */
}

/* Take the next movable block offline and online again; counts what
 * happened.  A block still migrating after OFFLINE_LIMIT_S seconds is
 * interrupted (the kernel retries an offline until a signal comes). */
static void offline_once(struct offline_count *c)
{
	static int next;
	struct sigaction sa = { .sa_handler = on_alarm };
	int k, block, err;

	sigaction(SIGALRM, &sa, NULL);	/* no SA_RESTART: EINTR */
	for (k = 0; k < 4096; k++) {
		block = (next + k) % 4096;
		if (!movable_block(block))
			continue;
		next = block + 1;
		alarm(OFFLINE_LIMIT_S);
		err = block_state(block, "offline");
		alarm(0);
		if (!err && block_state(block, "online_movable"))
			rmb_die(RMB_EXIT_FAIL, "memory block %d went offline "
				"but not online again: %s", block,
				strerror(errno));
		c->done += !err;
		c->interrupted += err == EINTR;
		c->busy += err && err != EINTR;
		return;
	}
	rmb_die(RMB_EXIT_FAIL, "no memory block is online in ZONE_MOVABLE: "
		"boot with movablecore= (e.g. movablecore=50%%)");
}

int main(int argc, char **argv)
{
	long long w, n, rounds, r, failed = 0, bad;
	struct rmb_snap a, b, d;
	struct rmb_json j;
	uint64_t seed, t0, ns = 0;
	struct offline_count oc = { 0 };
	struct ctl *ctl;
	pid_t *pids;
	char *shared;
	int checked, swap, offline, i;

	rmb_init("migrate");
	rmb_parse_args(params, argc, argv);
	w = rmb_arg("workers");
	n = rmb_arg("pages");
	rounds = rmb_arg("rounds");
	seed = (uint64_t)rmb_arg("seed");
	if (rmb_mode_is("move"))
		return move_main(w, n, rounds, seed);
	if (rmb_mode_is("balance"))
		return balance_main(w, n, seed);
	/* only in an rmapbench guest: never touch the host's memory */
	offline = rmb_mode_is("offline");
	checked = strcmp(rmb_scheme(), "unknown") != 0 &&
		  access(offline ? MEMORY_DIR "/memory0/state" :
			 "/proc/sys/vm/compact_memory", W_OK) == 0;
	swap = rmb_arg("pageout") && rmb_meminfo_kb("SwapTotal") > 0;
	shared = rmb_map_anon(NULL, 2 * (size_t)n * rmb_page);
	ctl = mmap(NULL, rmb_page, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pids = calloc((size_t)w, sizeof(*pids));
	if (!shared || ctl == MAP_FAILED || !pids)
		rmb_die(RMB_EXIT_FAIL, "mmap: %s", strerror(errno));
	ctl->churn = (int)rmb_arg("churn");
	rmb_fill(shared, 2 * (size_t)n, seed, 0);
	/* free every other page: the pages kept sit among holes */
	for (i = 0; i < n; i++)
		madvise(shared + (2 * (size_t)i + 1) * rmb_page, rmb_page,
			MADV_DONTNEED);
	for (i = 0; i < w; i++)
		pids[i] = start_worker(shared, (size_t)n, seed, ctl, i, swap);
	rmb_snap_take(&a);
	for (r = 0; r < rounds; r++) {
		t0 = rmb_now_ns();
		if (checked && offline)
			offline_once(&oc);
		else if (checked && rmb_compact() != 0)
			rmb_die(RMB_EXIT_FAIL, "compact_memory: %s",
				strerror(errno));
		ns += rmb_now_ns() - t0;
		if (ctl->churn && r % 4 == 3) {	/* one exits, one forks */
			i = (int)(r / 4 % w);
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
			pids[i] = start_worker(shared, (size_t)n, seed, ctl,
					       (int)(w + r), swap);
		}
		if (!checked)
			usleep(10000);
	}
	rmb_snap_take(&b);
	ctl->stop = 1;
	for (i = 0; i < w; i++)
		failed += reap(pids[i]);
	bad = (long long)verify_shared(shared, (size_t)n, seed, 0);
	rmb_snap_delta(&d, &a, &b);

	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "checked_count", checked);
	rmb_json_int(&j, "swap_count", swap);
	rmb_json_int(&j, "compact_rounds_count",
		     checked && !offline ? rounds : 0);
	rmb_json_int(&j, "offlined_count", oc.done);
	rmb_json_int(&j, "offline_busy_count", oc.busy);
	rmb_json_int(&j, "offline_interrupted_count", oc.interrupted);
	rmb_json_int(&j, "compact_ns", (long long)ns);
	rmb_json_dbl(&j, "migrated_per_s",
		     ns ? d.ctr[RMB_C_PGMIGRATE_OK] * 1e9 / (double)ns : 0);
	rmb_json_dbl(&j, "visited_per_migrated_count",
		     per(d.ctr[RMB_C_VISIT], d.ctr[RMB_C_PGMIGRATE_OK]));
	end_result(&j, &d, failed, w, n, bad);
	if (checked && offline && !oc.done)
		rmb_die(RMB_EXIT_FAIL, "no memory block went offline in %lld "
			"rounds (%lld busy, %lld interrupted after %d s): nothing "
			"was tested", rounds, oc.busy, oc.interrupted,
			OFFLINE_LIMIT_S);
	if (checked && d.ctr[RMB_C_PGMIGRATE_OK] <= 0)
		rmb_die(RMB_EXIT_FAIL, "%lld %s rounds migrated no page: "
			"nothing was tested", rounds,
			offline ? "offline" : "compaction");
	return rmb_check_mismatch(bad, n, "pages");
}
