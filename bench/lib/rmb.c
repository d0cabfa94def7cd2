/* rmb.c - see rmb.h */
#define _GNU_SOURCE
#include "rmb.h"

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

static const char *g_workload = "unknown";
static struct rmb_param *g_params;
static char g_scheme[32] = "unknown";
static long long g_low_total_kb;
/* /proc files are read into one static buffer: no malloc, no new VMA
 * while a measurement runs. */
static char g_buf[1 << 20];

/* ====================================================================
 * output
 */

static void write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void emit_line(const char *prefix, const struct rmb_json *j)
{
	static char line[RMB_JSON_MAX + 64];
	size_t p = strlen(prefix);

	memcpy(line, prefix, p);
	memcpy(line + p, j->buf, j->len);
	line[p + j->len] = '\n';
	fflush(NULL);
	write_all(1, line, p + j->len + 1);
}

static void j_raw(struct rmb_json *j, const char *s, size_t n)
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
		j_raw(j, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void j_quoted(struct rmb_json *j, const char *s)
{
	j_raw(j, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			char esc[2] = { '\\', (char)c };
			j_raw(j, esc, 2);
		} else if (c < 0x20) {
			j_fmt(j, "\\u%04x", c);
		} else {
			j_raw(j, s, 1);
		}
	}
	j_raw(j, "\"", 1);
}

static void j_key(struct rmb_json *j, const char *key)
{
	if (j->len && j->buf[j->len - 1] != '{')
		j_raw(j, ",", 1);
	j_quoted(j, key);
	j_raw(j, ":", 1);
}

void rmb_json_begin(struct rmb_json *j)
{
	j->len = 0;
	j->overflow = 0;
	j->depth = 0;
	j_raw(j, "{", 1);
}

void rmb_json_open(struct rmb_json *j, const char *key)
{
	j_key(j, key);
	j_raw(j, "{", 1);
	j->depth++;
}

void rmb_json_close(struct rmb_json *j)
{
	if (j->depth <= 0)
		return;
	j_raw(j, "}", 1);
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
		j_raw(j, "null", 4);
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
	j_raw(j, "}", 1);
	if (over || j->overflow) {
		rmb_error("result line longer than %d bytes", RMB_JSON_MAX);
		return;
	}
	emit_line("RMB-RESULT ", j);
}

static struct rmb_param *find_param(const char *key, size_t len);

static const char *mode_or_null(void)
{
	struct rmb_param *p = g_params ? find_param("mode", 4) : NULL;

	return p ? p->sval : NULL;
}

static void verror(const char *fmt, va_list ap)
{
	char msg[1024];
	struct rmb_json j;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	rmb_json_begin(&j);
	rmb_json_str(&j, "workload", g_workload);
	if (mode_or_null())
		rmb_json_str(&j, "mode", mode_or_null());
	rmb_json_str(&j, "message", msg);
	j_raw(&j, "}", 1);
	emit_line("RMB-ERROR ", &j);
}

void rmb_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(fmt, ap);
	va_end(ap);
}

void rmb_die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(fmt, ap);
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

/* ====================================================================
 * /proc readers
 */

static ssize_t read_file(const char *path, char *buf, size_t size)
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

static long long kv_int(const char *buf, const char *name)
{
	const char *v = kv_line(buf, name);

	return v ? strtoll(v, NULL, 10) : -1;
}

static long long file_int(const char *path, const char *name)
{
	if (read_file(path, g_buf, sizeof(g_buf)) < 0)
		return -1;
	return kv_int(g_buf, name);
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

static int slab_parse(const char *buf, const char *cache, struct rmb_slab *o)
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
	if (read_file("/proc/slabinfo", g_buf, sizeof(g_buf)) < 0) {
		memset(out, 0, sizeof(*out));
		return -1;
	}
	return slab_parse(g_buf, cache, out);
}

const char *rmb_scheme(void)
{
	return g_scheme;
}

static void load_scheme(void)
{
	const char *v;
	size_t n = 0;

	if (read_file("/proc/rmapbench", g_buf, sizeof(g_buf)) < 0)
		return;
	v = kv_line(g_buf, "scheme");
	if (!v)
		return;
	while (*v == ' ' || *v == '\t')
		v++;
	while (n + 1 < sizeof(g_scheme) && (isalnum((unsigned char)v[n]) ||
					     v[n] == '_' || v[n] == '-'))
		n++;
	if (n > 0) {
		memcpy(g_scheme, v, n);
		g_scheme[n] = '\0';
	}
}

/* utime + stime in clock ticks of /proc/<pid>/stat (fields 14, 15) */
static long long stat_ticks(const char *pid)
{
	char path[300];
	const char *p;
	long long ut = 0, st = 0;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	if (read_file(path, g_buf, sizeof(g_buf)) < 0)
		return 0;
	p = strrchr(g_buf, ')');
	for (int i = 0; p && i < 12; i++)	/* to the space before field 14 */
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %lld %lld", &ut, &st) != 2)
		return 0;
	return ut + st;
}

long long rmb_kswapd_cpu_ns(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	long long ticks = 0, hz = sysconf(_SC_CLK_TCK);
	char path[300];

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (read_file(path, g_buf, sizeof(g_buf)) > 0 &&
		    !strncmp(g_buf, "kswapd", 6))
			ticks += stat_ticks(e->d_name);
	}
	closedir(d);
	return hz > 0 ? ticks * (1000000000LL / hz) : 0;
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

long long rmb_swapped_pages(const void *base, size_t npages)
{
	struct rmb_pagemap pm;

	return rmb_pagemap_scan(base, npages, &pm) < 0 ? -1 : pm.swapped;
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
 * parameters
 */

static int list_has(const char *list, const char *tok, size_t len)
{
	const char *p = list;

	while (p && *p) {
		const char *end = strchr(p, '|');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n == len && !strncmp(p, tok, len))
			return 1;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

static struct rmb_param *find_param(const char *key, size_t len)
{
	for (struct rmb_param *p = g_params; p->key; p++)
		if (strlen(p->key) == len && !strncmp(p->key, key, len))
			return p;
	return NULL;
}

static const char *param_names(void)
{
	static char names[512];
	size_t n = 0;

	names[0] = '\0';
	for (struct rmb_param *p = g_params; p->key; p++)
		n += (size_t)snprintf(names + n, n < sizeof(names) ?
				      sizeof(names) - n : 0, "%s%s",
				      n ? " " : "", p->key);
	return names;
}

static void usage_die(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));
static void usage_die(const char *fmt, ...)
{
	struct rmb_param *tab = g_params;
	va_list ap;

	g_params = NULL;	/* the mode may not be known yet */
	va_start(ap, fmt);
	verror(fmt, ap);
	va_end(ap);
	g_params = tab;
	_exit(RMB_EXIT_USAGE);
}

static void parse_int(struct rmb_param *p, const char *v)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(v, &end, 10);
	if (!*v || *end || errno || isspace((unsigned char)*v))
		usage_die("%s=%s: not an integer", p->key, v);
	if (x < p->min || x > p->max)
		usage_die("%s=%lld out of range [%lld, %lld]", p->key, x,
			  p->min, p->max);
	p->val = x;
}

static void parse_one(const char *arg)
{
	const char *eq = strchr(arg, '=');
	struct rmb_param *p;

	if (!eq || eq == arg)
		usage_die("argument '%s' is not key=value (parameters: %s)",
			  arg, param_names());
	p = find_param(arg, (size_t)(eq - arg));
	if (!p)
		usage_die("unknown parameter '%.*s' (parameters: %s)",
			  (int)(eq - arg), arg, param_names());
	if (p->given)
		usage_die("parameter %s given twice", p->key);
	p->given = 1;
	if (!p->choices) {
		parse_int(p, eq + 1);
		return;
	}
	if (!list_has(p->choices, eq + 1, strlen(eq + 1)))
		usage_die("%s=%s: must be one of %s", p->key, eq + 1,
			  p->choices);
	p->sval = eq + 1;
}

static int applies(const struct rmb_param *p, const char *mode)
{
	return !p->modes || list_has(p->modes, mode, strlen(mode));
}

/* The max of p in mode: its mode_max entry "mode:N" if any, else max. */
static long long max_in(const struct rmb_param *p, const char *mode)
{
	const char *e = p->mode_max;
	size_t n = strlen(mode);

	while (e && *e) {
		if (!strncmp(e, mode, n) && e[n] == ':')
			return strtoll(e + n + 1, NULL, 10);
		e = strchr(e, '|');
		e = e ? e + 1 : NULL;
	}
	return p->max;
}

/* One RMB-PARAM line per parameter: the table as data. */
static void print_params(void)
{
	for (struct rmb_param *p = g_params; p->key; p++) {
		struct rmb_json j;

		rmb_json_begin(&j);
		rmb_json_str(&j, "key", p->key);
		if (p->choices) {
			rmb_json_str(&j, "choices", p->choices);
			rmb_json_str(&j, "default", p->sdef);
		} else {
			rmb_json_int(&j, "default", p->def);
			rmb_json_int(&j, "min", p->min);
			rmb_json_int(&j, "max", p->max);
			if (p->mode_max)
				rmb_json_str(&j, "mode_max", p->mode_max);
		}
		if (p->modes)
			rmb_json_str(&j, "modes", p->modes);
		rmb_json_str(&j, "help", p->help);
		j_raw(&j, "}", 1);
		emit_line("RMB-PARAM ", &j);
	}
}

static void print_help(void)
{
	char line[512];

	for (struct rmb_param *p = g_params; p->key; p++) {
		int n = p->choices ?
			snprintf(line, sizeof(line), "%s=%s (one of %s)",
				 p->key, p->sdef, p->choices) :
			snprintf(line, sizeof(line), "%s=%lld [%lld..%lld]",
				 p->key, p->def, p->min, p->max);
		n += snprintf(line + n, sizeof(line) - (size_t)n,
			      "%s%s%s%s: %s\n", p->modes ? " modes " : "",
			      p->modes ? p->modes : "",
			      p->mode_max ? " max " : "",
			      p->mode_max ? p->mode_max : "", p->help);
		write_all(1, line, strlen(line));
	}
}

void rmb_parse_args(struct rmb_param *tab, int argc, char **argv)
{
	const char *mode;

	g_params = tab;
	for (struct rmb_param *p = tab; p->key; p++) {
		p->val = p->def;
		p->sval = p->sdef;
	}
	if (argc == 2 && (!strcmp(argv[1], "help") ||
			  !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		print_help();
		exit(0);
	}
	if (argc == 2 && !strcmp(argv[1], "params")) {
		print_params();
		exit(0);
	}
	for (int i = 1; i < argc; i++)
		parse_one(argv[i]);
	mode = rmb_arg_str("mode");
	for (struct rmb_param *p = tab; p->key; p++) {
		if (p->given && !applies(p, mode))
			rmb_die(RMB_EXIT_USAGE, "parameter %s does not apply to "
				"mode=%s (only to %s)", p->key, mode, p->modes);
		if (!p->choices && p->val > max_in(p, mode))
			rmb_die(RMB_EXIT_USAGE, "%s=%lld out of range [%lld, "
				"%lld] in mode=%s", p->key, p->val, p->min,
				max_in(p, mode), mode);
	}
}

static struct rmb_param *must_find(const char *key)
{
	struct rmb_param *p = g_params ? find_param(key, strlen(key)) : NULL;

	if (!p)
		rmb_die(RMB_EXIT_FAIL, "internal: no parameter %s", key);
	return p;
}

long long rmb_arg(const char *key)
{
	return must_find(key)->val;
}

const char *rmb_arg_str(const char *key)
{
	return must_find(key)->sval;
}

int rmb_mode_is(const char *mode)
{
	return !strcmp(rmb_arg_str("mode"), mode);
}

/* ====================================================================
 * result lines, statistics
 */

void rmb_result_begin(struct rmb_json *j, const char *record)
{
	const char *mode = rmb_arg_str("mode");

	rmb_json_begin(j);
	rmb_json_str(j, "workload", g_workload);
	rmb_json_str(j, "mode", mode);
	rmb_json_str(j, "record", record);
	rmb_json_str(j, "scheme", g_scheme);
	rmb_json_str(j, "arch", RMB_ARCH);
	rmb_json_open(j, "params");
	for (struct rmb_param *p = g_params; p->key; p++) {
		if (!strcmp(p->key, "mode") || !applies(p, mode))
			continue;
		if (p->choices)
			rmb_json_str(j, p->key, p->sval);
		else
			rmb_json_int(j, p->key, p->val);
	}
	rmb_json_close(j);
	rmb_json_open(j, "metrics");
	rmb_json_int(j, "page_size_bytes", (long long)rmb_page);
	rmb_json_int(j, "low_total_kb", g_low_total_kb);
}

void rmb_result_since(struct rmb_json *j, const char *record,
		      const struct rmb_snap *base, struct rmb_snap *now,
		      struct rmb_snap *d)
{
	rmb_snap_take(now);
	rmb_snap_delta(d, base, now);
	rmb_result_begin(j, record);
}

void rmb_json_sizes(struct rmb_json *j)
{
#define SIZE_NAME(name) #name,
	static const char *const names[] = { RMB_SIZES(SIZE_NAME) };
#undef SIZE_NAME
	char key[64], field[64];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		long long v;

		snprintf(field, sizeof(field), "sizeof_%s", names[i]);
		snprintf(key, sizeof(key), "sizeof_%s_bytes", names[i]);
		v = rmb_rmapbench(field);
		rmb_json_int(j, key, v < 0 ? 0 : v);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void rmb_stats(uint64_t *v, size_t n, struct rmb_stats *s)
{
	double sum = 0;

	memset(s, 0, sizeof(*s));
	if (n == 0)
		return;
	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < n; i++)
		sum += (double)v[i];
	s->min = v[0];
	s->max = v[n - 1];
	s->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	s->p90 = v[(n * 9 + 9) / 10 - 1];	/* nearest rank */
	s->mean = sum / (double)n;
}

void rmb_json_stats(struct rmb_json *j, const char *prefix,
		    const struct rmb_stats *s)
{
	char key[96];

	snprintf(key, sizeof(key), "%s_min_ns", prefix);
	rmb_json_int(j, key, (long long)s->min);
	snprintf(key, sizeof(key), "%s_median_ns", prefix);
	rmb_json_int(j, key, (long long)s->median);
	snprintf(key, sizeof(key), "%s_p90_ns", prefix);
	rmb_json_int(j, key, (long long)s->p90);
	snprintf(key, sizeof(key), "%s_max_ns", prefix);
	rmb_json_int(j, key, (long long)s->max);
	snprintf(key, sizeof(key), "%s_mean_ns", prefix);
	rmb_json_dbl(j, key, s->mean);
}

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

static void page_fill(uint32_t *w, uint64_t seed, uint64_t idx)
{
	size_t nw = rmb_page / 4;
	uint32_t h = page_hash(seed, idx);

	w[0] = h;
	w[1] = (uint32_t)idx;
	w[2] = (uint32_t)seed;
	for (size_t k = 3; k < nw; k++)
		w[k] = h + (uint32_t)k * GOLD32;
}

static int page_ok(const uint32_t *w, uint64_t seed, uint64_t idx, int quick)
{
	size_t nw = rmb_page / 4;
	uint32_t h = page_hash(seed, idx);

	if (w[0] != h || w[1] != (uint32_t)idx || w[2] != (uint32_t)seed)
		return 0;
	if (quick)
		return w[nw - 1] == h + (uint32_t)(nw - 1) * GOLD32;
	for (size_t k = 3; k < nw; k++)
		if (w[k] != h + (uint32_t)k * GOLD32)
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

/* ====================================================================
 * snapshots
 */

#define SLAB_NAME(id, name, flags) #name,
static const char *const slab_names[RMB_NSLAB] = { RMB_SLABS(SLAB_NAME) };
#undef SLAB_NAME

/* { vmstat line, result field } */
#define CTR_NAMES(id, name, unit, flags) { #name, #name "_" #unit },
static const char *const ctr_names[RMB_NCTR][2] = {
	RMB_COUNTERS(CTR_NAMES)
};
#undef CTR_NAMES

static long long nonneg(long long v)
{
	return v < 0 ? 0 : v;
}

static void snap_slabs(struct rmb_snap *s)
{
	int ok = read_file("/proc/slabinfo", g_buf, sizeof(g_buf)) >= 0;

	for (int i = 0; i < RMB_NSLAB; i++) {
		struct rmb_slab sl = { 0, 0, 0 };

		if (ok)
			slab_parse(g_buf, slab_names[i], &sl);
		s->slab_objs[i] = sl.active_objs;
		s->slab_bytes[i] = sl.active_objs * sl.objsize;
	}
}

static void snap_meminfo(struct rmb_snap *s)
{
	if (read_file("/proc/meminfo", g_buf, sizeof(g_buf)) < 0)
		g_buf[0] = '\0';
	s->mem_free_kb = nonneg(kv_int(g_buf, "MemFree"));
	s->low_free_kb = nonneg(kv_int(g_buf, "LowFree"));
	s->high_free_kb = nonneg(kv_int(g_buf, "HighFree"));
	s->page_tables_kb = nonneg(kv_int(g_buf, "PageTables"));
	s->swap_free_kb = nonneg(kv_int(g_buf, "SwapFree"));
}

static void snap_vmstat(struct rmb_snap *s)
{
	if (read_file("/proc/vmstat", g_buf, sizeof(g_buf)) < 0)
		g_buf[0] = '\0';
	for (int i = 0; i < RMB_NCTR; i++)
		s->ctr[i] = nonneg(kv_int(g_buf, ctr_names[i][0]));
}

void rmb_snap_take(struct rmb_snap *s)
{
	snap_slabs(s);
	snap_meminfo(s);
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
	return g_low_total_kb > 0 ? s->low_free_kb : s->mem_free_kb;
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

/* ====================================================================
 * memory and address space
 */

long long rmb_avail_kb(int with_swap)
{
	long long avail, swap;

	if (read_file("/proc/meminfo", g_buf, sizeof(g_buf)) < 0)
		return -1;
	avail = kv_int(g_buf, "MemAvailable");
	if (avail < 0)
		avail = nonneg(kv_int(g_buf, "MemFree"));
	swap = nonneg(kv_int(g_buf, "SwapFree"));
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
	write_all(f->res[1], (const char *)&r, sizeof(r));
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

/* ====================================================================
 * start-up
 */

void rmb_init(const char *workload)
{
	struct rmb_snap warm;
	long sz = sysconf(_SC_PAGESIZE);

	g_workload = workload;
	if (sz > 0)
		rmb_page = (size_t)sz;
	signal(SIGPIPE, SIG_IGN);
	load_scheme();
	g_low_total_kb = nonneg(rmb_meminfo_kb("LowTotal"));
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
