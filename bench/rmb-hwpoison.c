/*
 * rmb-hwpoison: a page a bundle shares, poisoned while every member maps
 * it; every member must lose it, and nothing else.
 *
 * Memory failure (MADV_HWPOISON injects it) must find every process
 * mapping the poisoned page: collect_procs() the ones to signal at once
 * (early kill), try_to_unmap() every pte, each turned into a hwpoison
 * entry that raises SIGBUS (BUS_MCEERR_AR) at the next touch.  A pte the
 * walk misses keeps the bad page mapped: its task reads it unharmed here,
 * where the poison is simulated, and would consume it on real hardware.
 * anonmm's walk try-locks each member's mmap_lock, so a member busy
 * changing its address space is where it could miss one
 * (kernels/anonmm: anonmm_try_to_unmap_wait).
 *
 * The parent fills pages pages and forks workers members, which only read
 * them (no copy-on-write: every pte maps the parent's page).  Each round
 * the parent poisons one more page, touches it itself, then has every
 * member touch it: each touch must end in SIGBUS BUS_MCEERR_AR at that
 * address, caught and jumped out of, and every page not poisoned must
 * still verify.  With contend=1 the members mprotect a private region of
 * their own in a loop meanwhile (their mmap_lock held for write, again
 * and again).  mode=early: the members ask for early kills
 * (PR_MCE_KILL_EARLY), and each must have had BUS_MCEERR_AO for the
 * page's address before it touches it.
 *
 * Poisons pages only in an rmapbench guest (CAP_SYS_ADMIN, and a kernel
 * with CONFIG_MEMORY_FAILURE: the distro profile); elsewhere it sets up,
 * verifies and says so (checked_count 0).  The poisoned pages are lost to
 * the guest (HardwareCorrupted in /proc/meminfo).
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MADV_HWPOISON
#define MADV_HWPOISON 100
#endif
#ifndef BUS_MCEERR_AR
#define BUS_MCEERR_AR 4
#endif
#ifndef BUS_MCEERR_AO
#define BUS_MCEERR_AO 5
#endif
#ifndef PR_MCE_KILL
#define PR_MCE_KILL 33
#define PR_MCE_KILL_SET 1
#define PR_MCE_KILL_EARLY 1
#endif

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "late|early", .sdef = "late",
	  .help = "late: the members learn of the poison when they touch the "
		  "page (SIGBUS BUS_MCEERR_AR); early: they asked for early "
		  "kills, and must get BUS_MCEERR_AO at once too" },
	{ .key = "workers", .def = 8, .min = 1, .max = 256,
	  .help = "forked members mapping the parent's pages" },
	{ .key = "pages", .def = 64, .min = 2, .max = 65536,
	  .help = "shared pages (one more is poisoned each round)" },
	{ .key = "rounds", .def = 8, .min = 1, .max = 256,
	  .help = "pages poisoned, one a round (fewer than pages)" },
	{ .key = "contend", .def = 0, .min = 0, .max = 1,
	  .help = "1: members mprotect a region of their own in a loop while "
		  "the page is poisoned (mmap_lock write contention); 0: they "
		  "wait" },
	{ .key = "seed", .def = 1, .min = 0, .max = 2147483647,
	  .help = "seed of the page patterns" },
	{ .key = NULL },
};

#define CONTEND_PAGES 256	/* each member's region it mprotects */
#define WAIT_S 120		/* for the members to finish a round */

struct slot {			/* one member's, in the shared control page */
	volatile int ready;	/* set up, mapping the pages */
	volatile int done;	/* the last round it checked */
	int64_t ar, missed, wrong, ao, ao_missed, bad, checked;
};

struct ctl {			/* MAP_SHARED: the parent's word to members */
	volatile int touch;	/* the round whose page to touch */
	volatile int stop;
	struct slot slot[];
};

/* What the SIGBUS handler saw: a touch's (jumped out of), or early kills */
static sigjmp_buf touch_env;
static volatile sig_atomic_t touch_armed;
static volatile int touch_code;
static void *volatile touch_addr;
static volatile int ao_count;
static void *volatile ao_addr;
static volatile int stray_count;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_code == BUS_MCEERR_AO) {
		ao_addr = si->si_addr;
		ao_count++;
		return;
	}
	if (touch_armed) {
		touch_armed = 0;
		touch_code = si->si_code;
		touch_addr = si->si_addr;
		siglongjmp(touch_env, 1);
	}
	stray_count++;
	_exit(3);	/* a SIGBUS nothing touched for: not ours to ignore */
}

static void catch_sigbus(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) != 0)
		rmb_die(RMB_EXIT_FAIL, "sigaction: %s", strerror(errno));
}

/* The page poisoned in round r (1-based): spread over the region. */
static size_t page_of(long long r, long long rounds, long long n)
{
	return (size_t)((r - 1) * (n - 1) / rounds) + 1;
}

/*
 * Touch the page at addr: 1 if it raised SIGBUS BUS_MCEERR_AR at addr,
 * 0 if it read (the poisoned page is still mapped), -1 if another SIGBUS.
 */
static int touch(const char *addr)
{
	if (sigsetjmp(touch_env, 1) == 0) {
		touch_armed = 1;
		(void)*(const volatile uint64_t *)addr;
		touch_armed = 0;
		return 0;
	}
	return touch_code == BUS_MCEERR_AR && touch_addr == addr ? 1 : -1;
}

/* Verify every page not poisoned by round r; mismatching pages. */
static int64_t verify_unpoisoned(const char *base, long long n,
				 long long rounds, long long r, uint64_t seed,
				 int64_t *checked)
{
	int64_t bad = 0;
	long long i, k;

	for (i = 0; i < n; i++) {
		for (k = 1; k <= r; k++)
			if (page_of(k, rounds, n) == (size_t)i)
				break;
		if (k <= r)
			continue;
		bad += (int64_t)rmb_verify(base + i * rmb_page, 1, seed,
					   (uint64_t)i, 1);
		++*checked;
	}
	return bad;
}

/* One round's checks in a member (or the parent): touch, early kill. */
static void check_round(struct slot *s, const char *base, long long n,
			long long rounds, long long r, uint64_t seed,
			int early)
{
	const char *addr = base + page_of(r, rounds, n) * rmb_page;
	int i, got;

	if (early) {
		/* sent before the parent's madvise() returned: pending */
		for (i = 0; i < 2000 && ao_count < r; i++)
			usleep(1000);
		if (ao_count != r || ao_addr != addr)
			s->ao_missed++;
		else
			s->ao++;
	}
	got = touch(addr);
	if (got > 0)
		s->ar++;
	else if (got == 0)
		s->missed++;
	else
		s->wrong++;
	s->bad += verify_unpoisoned(base, n, rounds, r, seed, &s->checked);
}

static void member(struct ctl *ctl, int idx, const char *base, long long n,
		   long long rounds, uint64_t seed, int early, int contend)
{
	struct slot *s = &ctl->slot[idx];
	size_t half = CONTEND_PAGES / 2 * rmb_page;
	char *own = NULL;
	int seen = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);	/* never outlive it */
	catch_sigbus();
	if (early && prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY,
			   0, 0) != 0)
		_exit(2);
	if (contend) {
		own = rmb_map_anon(NULL, CONTEND_PAGES * rmb_page);
		if (!own)
			_exit(2);
		rmb_fill(own, CONTEND_PAGES, seed + 1 + (uint64_t)idx, 0);
	}
	s->ready = 1;
	while (!ctl->stop) {
		int r = ctl->touch;

		if (r > seen) {
			check_round(s, base, n, rounds, r, seed, early);
			seen = r;
			__sync_synchronize();
			s->done = r;
		} else if (contend) {
			/* split and merge the vma: a writer, again and again */
			if (mprotect(own, half, PROT_READ) != 0 ||
			    mprotect(own, half, PROT_READ | PROT_WRITE) != 0)
				_exit(2);
		} else {
			usleep(1000);
		}
	}
	if (own && rmb_verify(own, CONTEND_PAGES, seed + 1 + (uint64_t)idx,
			      0, 0))
		s->bad++;
	_exit(stray_count ? 3 : 0);
}

/* Wait until every member has done round r; 0, or -1 after WAIT_S. */
static int wait_members(struct ctl *ctl, long long w, int r, int ready)
{
	uint64_t t0 = rmb_now_ns();
	long long i;

	for (;;) {
		for (i = 0; i < w; i++)
			if (ready ? !ctl->slot[i].ready : ctl->slot[i].done < r)
				break;
		if (i == w)
			return 0;
		if (rmb_now_ns() - t0 > (uint64_t)WAIT_S * 1000000000ULL)
			return -1;
		usleep(1000);
	}
}

int main(int argc, char **argv)
{
	long long w, n, rounds, r, i, poisoned = 0, inject_failed = 0;
	long long failed = 0, touched = 0, kb0, kb1;
	struct slot sum, self;
	struct rmb_snap a, b, d;
	struct rmb_json j;
	int early, contend, checked, status, err = 0;
	struct ctl *ctl;
	size_t ctl_bytes;
	pid_t *pids;
	uint64_t seed;
	char *base;

	rmb_init("hwpoison");
	rmb_parse_args(params, argc, argv);
	w = rmb_arg("workers");
	n = rmb_arg("pages");
	rounds = rmb_arg("rounds");
	seed = (uint64_t)rmb_arg("seed");
	early = rmb_mode_is("early");
	contend = (int)rmb_arg("contend");
	if (rounds >= n)
		rmb_die(RMB_EXIT_USAGE, "rounds=%lld: must be fewer than "
			"pages=%lld", rounds, n);
	/* only in an rmapbench guest: never poison the host's memory */
	checked = strcmp(rmb_scheme(), "unknown") != 0;

	ctl_bytes = sizeof(*ctl) + (size_t)w * sizeof(struct slot);
	ctl = mmap(NULL, ctl_bytes, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	base = rmb_map_anon(NULL, (size_t)n * rmb_page);
	pids = calloc((size_t)w, sizeof(*pids));
	if (ctl == MAP_FAILED || !base || !pids)
		rmb_die(RMB_EXIT_FAIL, "out of memory");
	memset(ctl, 0, ctl_bytes);
	memset(&self, 0, sizeof(self));
	rmb_fill(base, (size_t)n, seed, 0);
	catch_sigbus();
	for (i = 0; i < w; i++) {
		pids[i] = rmb_fork();
		if (pids[i] < 0)
			rmb_die(RMB_EXIT_FAIL, "fork: %s", strerror(errno));
		if (pids[i] == 0)
			member(ctl, (int)i, base, n, rounds, seed, early,
			       contend);
	}
	if (wait_members(ctl, w, 0, 1) != 0)
		rmb_die(RMB_EXIT_FAIL, "members not ready in %d s", WAIT_S);
	kb0 = rmb_meminfo_kb("HardwareCorrupted");
	rmb_snap_take(&a);
	for (r = 1; checked && r <= rounds; r++) {
		char *addr = base + page_of(r, rounds, n) * rmb_page;

		if (contend)
			usleep(2000);	/* the members are mprotecting */
		if (madvise(addr, rmb_page, MADV_HWPOISON) != 0) {
			err = errno;
			inject_failed++;
			rmb_error("round %lld: MADV_HWPOISON: %s%s", r,
				  strerror(err), err == EINVAL ?
				  " (no CONFIG_MEMORY_FAILURE: run it on a "
				  "kernel of the distro profile)" : "");
			if (err != EBUSY)
				break;
			/* the unmap failed: touch it all the same, and count
			 * the mappings memory failure left */
		} else {
			poisoned++;
		}
		/* the parent is not an early-kill process: late for it */
		check_round(&self, base, n, rounds, r, seed, 0);
		touched++;
		ctl->touch = (int)r;
		if (wait_members(ctl, w, (int)r, 0) != 0) {
			rmb_error("round %lld: members not done in %d s", r,
				  WAIT_S);
			break;
		}
	}
	rmb_snap_take(&b);
	kb1 = rmb_meminfo_kb("HardwareCorrupted");
	ctl->stop = 1;
	for (i = 0; i < w; i++) {
		if (waitpid(pids[i], &status, 0) != pids[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			rmb_error("member %lld (pid %d): status %#x", i,
				  (int)pids[i], status);
			failed++;
		}
	}
	if (!checked)	/* nothing poisoned: every page must verify */
		self.bad += verify_unpoisoned(base, n, rounds, 0, seed,
					      &self.checked);
	sum = self;
	for (i = 0; i < w; i++) {
		struct slot *s = &ctl->slot[i];

		sum.ar += s->ar;
		sum.missed += s->missed;
		sum.wrong += s->wrong;
		sum.ao += s->ao;
		sum.ao_missed += s->ao_missed;
		sum.bad += s->bad;
		sum.checked += s->checked;
	}
	rmb_snap_delta(&d, &a, &b);

	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "checked_count", checked);
	rmb_json_int(&j, "members_count", w);
	rmb_json_int(&j, "poisoned_pages", poisoned);
	rmb_json_int(&j, "inject_failed_count", inject_failed);
	rmb_json_int(&j, "hardware_corrupted_kb",
		     kb0 >= 0 && kb1 >= 0 ? kb1 - kb0 : -1);
	rmb_json_int(&j, "sigbus_ar_count", sum.ar);
	rmb_json_int(&j, "expected_ar_count", touched * (w + 1));
	rmb_json_int(&j, "missed_count", sum.missed);
	rmb_json_int(&j, "wrong_signal_count", sum.wrong);
	rmb_json_int(&j, "early_ao_count", sum.ao);
	rmb_json_int(&j, "early_missed_count", sum.ao_missed);
	rmb_json_int(&j, "workers_failed_count", failed);
	rmb_json_int(&j, "verified_pages", sum.checked);
	rmb_json_int(&j, "verify_mismatch_pages", sum.bad);
	rmb_json_delta(&j, &d);
	rmb_json_end(&j);
	if (sum.missed)
		rmb_error("%lld touches of a poisoned page read it: a mapping "
			  "memory failure did not unmap", (long long)sum.missed);
	if (sum.wrong)
		rmb_error("%lld touches raised another SIGBUS than "
			  "BUS_MCEERR_AR at the page", (long long)sum.wrong);
	if (sum.ao_missed)
		rmb_error("%lld early kills (BUS_MCEERR_AO at the page) not "
			  "received", (long long)sum.ao_missed);
	if (failed || inject_failed || sum.missed || sum.wrong ||
	    sum.ao_missed || (checked && poisoned < rounds))
		return RMB_EXIT_FAIL;
	return rmb_check_mismatch(sum.bad, sum.checked, "pages");
}
