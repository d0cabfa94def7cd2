/* rmb.c - start-up, the output lines (JSON writer, errors) and time (see rmb.h) */
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

size_t rmb_page = 4096;

const char *rmbi_workload = "unknown";
struct rmb_param *rmbi_params;
char rmbi_scheme[32] = "unknown";
long long rmbi_low_total_kb;
/* /proc files are read into one static buffer: no malloc, no new VMA
 * while a measurement runs. */
char rmbi_buf[1 << 20];

/* ====================================================================
 * output
 */

int rmb_write_all(int fd, const void *buf, size_t n)
{
	const char *s = buf;

	while (n > 0) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

void rmbi_emit_line(const char *prefix, const struct rmb_json *j)
{
	static char line[RMB_JSON_MAX + 64];
	size_t p = strlen(prefix);

	memcpy(line, prefix, p);
	memcpy(line + p, j->buf, j->len);
	line[p + j->len] = '\n';
	fflush(NULL);
	rmb_write_all(1, line, p + j->len + 1);
}

void rmbi_j_raw(struct rmb_json *j, const char *s, size_t n)
{
	if (j->len + n + 2 >= sizeof(j->buf)) {
		j->overflow = 1;
		return;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
}

static void j_fmt(struct rmb_json *j, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void j_fmt(struct rmb_json *j, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		rmbi_j_raw(j, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void j_quoted(struct rmb_json *j, const char *s)
{
	rmbi_j_raw(j, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			char esc[2] = { '\\', (char)c };
			rmbi_j_raw(j, esc, 2);
		} else if (c < 0x20) {
			j_fmt(j, "\\u%04x", c);
		} else {
			rmbi_j_raw(j, s, 1);
		}
	}
	rmbi_j_raw(j, "\"", 1);
}

static void j_key(struct rmb_json *j, const char *key)
{
	if (j->len && j->buf[j->len - 1] != '{')
		rmbi_j_raw(j, ",", 1);
	j_quoted(j, key);
	rmbi_j_raw(j, ":", 1);
}

void rmb_json_begin(struct rmb_json *j)
{
	j->len = 0;
	j->overflow = 0;
	j->depth = 0;
	rmbi_j_raw(j, "{", 1);
}

void rmb_json_open(struct rmb_json *j, const char *key)
{
	j_key(j, key);
	rmbi_j_raw(j, "{", 1);
	j->depth++;
}

void rmb_json_close(struct rmb_json *j)
{
	if (j->depth <= 0)
		return;
	rmbi_j_raw(j, "}", 1);
	j->depth--;
}

void rmb_json_str(struct rmb_json *j, const char *key, const char *val)
{
	j_key(j, key);
	j_quoted(j, val);
}

void rmb_json_int(struct rmb_json *j, const char *key, long long val)
{
	j_key(j, key);
	j_fmt(j, "%lld", val);
}

void rmb_json_dbl(struct rmb_json *j, const char *key, double val)
{
	double a = fabs(val);

	j_key(j, key);
	if (!isfinite(val))
		rmbi_j_raw(j, "null", 4);
	else if (val != 0 && (a < 1e-3 || a >= 1e15))
		j_fmt(j, "%.6e", val);
	else
		j_fmt(j, "%.3f", val);
}

void rmb_json_end(struct rmb_json *j)
{
	int over;

	while (j->depth > 0)
		rmb_json_close(j);
	over = j->overflow;
	j->overflow = 0;
	rmbi_j_raw(j, "}", 1);
	if (over || j->overflow) {
		rmb_error("result line longer than %d bytes", RMB_JSON_MAX);
		return;
	}
	rmbi_emit_line("RMB-RESULT ", j);
}

static const char *mode_or_null(void)
{
	struct rmb_param *p = rmbi_params ? rmbi_find_param("mode", 4) : NULL;

	return p ? p->sval : NULL;
}

void rmbi_verror(const char *fmt, va_list ap)
{
	char msg[1024];
	struct rmb_json j;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	rmb_json_begin(&j);
	rmb_json_str(&j, "workload", rmbi_workload);
	if (mode_or_null())
		rmb_json_str(&j, "mode", mode_or_null());
	rmb_json_str(&j, "message", msg);
	rmbi_j_raw(&j, "}", 1);
	rmbi_emit_line("RMB-ERROR ", &j);
}

void rmb_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rmbi_verror(fmt, ap);
	va_end(ap);
}

void rmb_die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rmbi_verror(fmt, ap);
	va_end(ap);
	_exit(code);
}

int rmb_check_mismatch(long long bad, long long checked, const char *what)
{
	if (bad <= 0)
		return 0;
	rmb_error("verify: %lld of %lld pages of %s hold the wrong data",
		  bad, checked, what);
	return 1;
}

uint64_t rmb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

pid_t rmb_fork(void)
{
	fflush(NULL);
	return fork();
}

int rmb_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -1;
	rc = rmb_write_all(fd, text, strlen(text));
	close(fd);
	return rc;
}

/*
 * The peer is this program again, exec'd: a process no fork relates to
 * the caller (another anonmm bundle, another anon_vma root).  Its stdin
 * carries the caller's command bytes, its fd 3 its answers; it says it
 * is ready with one answer before the caller goes on.
 */
void rmb_peer_start(struct rmb_peer *pr, char *const argv[])
{
	int cmd[2], rep[2];
	long long ready;

	if (pipe(cmd) != 0 || pipe(rep) != 0)
		rmb_die(RMB_EXIT_FAIL, "pipe: %s", strerror(errno));
	pr->pid = rmb_fork();
	if (pr->pid < 0)
		rmb_die(RMB_EXIT_FAIL, "fork: %s", strerror(errno));
	if (pr->pid == 0) {
		if (dup2(cmd[0], 0) < 0 || dup2(rep[1], 3) < 0)
			_exit(RMB_EXIT_FAIL);
		execv("/proc/self/exe", argv);
		_exit(RMB_EXIT_FAIL);
	}
	close(cmd[0]);
	close(rep[1]);
	pr->cmd = cmd[1];
	pr->rep = rep[0];
	if (read(pr->rep, &ready, sizeof(ready)) != sizeof(ready))
		rmb_die(RMB_EXIT_FAIL, "the peer %s (pid %d) did not start",
			argv[1] ? argv[1] : argv[0], (int)pr->pid);
}

void rmb_peer_send(const struct rmb_peer *pr, char cmd)
{
	if (rmb_write_all(pr->cmd, &cmd, 1) != 0)
		rmb_die(RMB_EXIT_FAIL, "the peer (pid %d) went away",
			(int)pr->pid);
}

long long rmb_peer_answer(const struct rmb_peer *pr)
{
	long long answer;

	if (read(pr->rep, &answer, sizeof(answer)) != sizeof(answer))
		rmb_die(RMB_EXIT_FAIL, "the peer (pid %d) went away",
			(int)pr->pid);
	return answer;
}

int rmb_peer_reap(const struct rmb_peer *pr)
{
	int status;

	close(pr->cmd);
	close(pr->rep);
	if (waitpid(pr->pid, &status, 0) != pr->pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	return 0;
}

int rmb_peer_say(long long answer)
{
	return rmb_write_all(3, &answer, sizeof(answer));
}

/* ====================================================================
 * start-up
 */

void rmb_init(const char *workload)
{
	struct rmb_snap warm;
	long sz = sysconf(_SC_PAGESIZE);

	rmbi_workload = workload;
	if (sz > 0)
		rmb_page = (size_t)sz;
	signal(SIGPIPE, SIG_IGN);
	rmbi_load_scheme();
	rmbi_low_total_kb = rmbi_nonneg(rmb_meminfo_kb("LowTotal"));
	rmb_snap_take(&warm);	/* touch the buffers before measuring */
	(void)warm;
}

void rmb_balloon(long long kb, size_t chunk, long long swapfree_floor_kb)
{
	for (long long done = 0; done < kb; done += (long long)(chunk >> 10)) {
		char *p = rmb_map_anon(NULL, chunk);

		if (!p)
			break;
		for (size_t i = 0; i < chunk; i += rmb_page)
			p[i] = 1;
		if (swapfree_floor_kb > 0 && (done & 4095) == 0 &&
		    rmb_meminfo_kb("SwapFree") < swapfree_floor_kb)
			break;
	}
	_exit(0);
}
