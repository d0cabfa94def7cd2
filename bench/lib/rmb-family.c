/* rmb-family.c - families of forked processes paused on a pipe (see rmb.h) */
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
 * families
 */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void rmb_family_open(struct rmb_family *f, int max)
{
	memset(f, 0, sizeof(*f));
	f->max = max;
	f->pids = calloc((size_t)(max > 0 ? max : 1), sizeof(pid_t));
	if (!f->pids || pipe(f->go) != 0 || pipe(f->res) != 0)
		rmb_die(RMB_EXIT_FAIL, "family of %d: %s", max, strerror(errno));
}

pid_t rmb_family_fork(struct rmb_family *f)
{
	pid_t pid = rmb_fork();

	if (pid == 0) {
		close_fd(&f->go[1]);
		close_fd(&f->res[0]);
		f->n = 0;
		f->pgid = 0;
	} else if (pid > 0 && f->n < f->max) {
		f->pids[f->n++] = pid;
	}
	return pid;
}

void rmb_family_detach(struct rmb_family *f)
{
	close_fd(&f->go[0]);
	close_fd(&f->go[1]);
	close_fd(&f->res[0]);
	close_fd(&f->res[1]);
}

void rmb_family_wait_go(struct rmb_family *f)
{
	char c;

	while (read(f->go[0], &c, 1) < 0 && errno == EINTR)
		;
}

static int64_t tv_ns(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000000000LL + tv->tv_usec * 1000LL;
}

void rmb_family_send(struct rmb_family *f, int kind, int idx,
		     int64_t checked, int64_t bad, int64_t value)
{
	struct rmb_report r;
	struct rusage ru;

	memset(&r, 0, sizeof(r));
	getrusage(RUSAGE_SELF, &ru);
	r.kind = kind;
	r.idx = idx;
	r.checked_pages = checked;
	r.mismatch_pages = bad;
	r.majflt = ru.ru_majflt;
	r.minflt = ru.ru_minflt;
	r.utime_ns = tv_ns(&ru.ru_utime);
	r.stime_ns = tv_ns(&ru.ru_stime);
	r.value = value;
	rmb_write_all(f->res[1], (const char *)&r, sizeof(r));
}

void rmb_family_go(struct rmb_family *f)
{
	close_fd(&f->go[1]);
}

static void note_exit(struct rmb_family *f, int status)
{
	f->reaped++;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		f->abnormal++;
}

static void reap_nohang(struct rmb_family *f)
{
	int st;

	while (waitpid(-1, &st, WNOHANG) > 0)
		note_exit(f, st);
}

static void report_add(struct rmb_report *sum, const struct rmb_report *r)
{
	sum->checked_pages += r->checked_pages;
	sum->mismatch_pages += r->mismatch_pages;
	sum->majflt += r->majflt;
	sum->minflt += r->minflt;
	sum->utime_ns += r->utime_ns;
	sum->stime_ns += r->stime_ns;
	sum->value += r->value;
}

/* 1: a report was read, 0: EOF, -1: nothing yet (timeout) */
static int read_report(int fd, struct rmb_report *r)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t got = 0;

	if (poll(&pfd, 1, 500) <= 0)
		return -1;
	while (got < sizeof(*r)) {
		ssize_t n = read(fd, (char *)r + got, sizeof(*r) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		got += (size_t)n;
	}
	return 1;
}

int rmb_family_collect(struct rmb_family *f, int kind, int expect,
		       struct rmb_report *sum)
{
	struct rmb_report r;
	int got = 0, rc;

	close_fd(&f->res[1]);
	memset(sum, 0, sizeof(*sum));
	while (got < expect && !f->abnormal) {
		rc = read_report(f->res[0], &r);
		if (rc == 0)
			break;
		if (rc < 0) {
			reap_nohang(f);
			continue;
		}
		if (r.kind == kind) {
			report_add(sum, &r);
			got++;
		}
	}
	return got;
}

int rmb_family_finish(struct rmb_family *f)
{
	int st;
	pid_t pid;

	rmb_family_detach(f);
	while ((pid = waitpid(-1, &st, 0)) > 0 || (pid < 0 && errno == EINTR))
		if (pid > 0)
			note_exit(f, st);
	free(f->pids);
	f->pids = NULL;
	return f->abnormal;
}

void rmb_family_kill(struct rmb_family *f)
{
	if (f->pgid > 0)
		kill(-f->pgid, SIGKILL);
	for (int i = 0; i < f->n; i++)
		kill(f->pids[i], SIGKILL);
}

void rmb_vmaset_child(struct rmb_family *f, const struct rmb_vmaset *s,
		      int idx, int quick)
{
	size_t bad;

	rmb_family_wait_go(f);
	bad = rmb_vmaset_verify(s, quick);
	rmb_family_send(f, RMB_REP_DONE, idx, (int64_t)s->n, (int64_t)bad, 0);
	_exit(0);
}
