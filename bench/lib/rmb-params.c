/* rmb-params.c - key=value parameters and the result lines they head (see rmb.h) */
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

struct rmb_param *rmbi_find_param(const char *key, size_t len)
{
	for (struct rmb_param *p = rmbi_params; p->key; p++)
		if (strlen(p->key) == len && !strncmp(p->key, key, len))
			return p;
	return NULL;
}

static const char *param_names(void)
{
	static char names[512];
	size_t n = 0;

	names[0] = '\0';
	for (struct rmb_param *p = rmbi_params; p->key; p++)
		n += (size_t)snprintf(names + n, n < sizeof(names) ?
				      sizeof(names) - n : 0, "%s%s",
				      n ? " " : "", p->key);
	return names;
}

static void usage_die(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));
static void usage_die(const char *fmt, ...)
{
	struct rmb_param *tab = rmbi_params;
	va_list ap;

	rmbi_params = NULL;	/* the mode may not be known yet */
	va_start(ap, fmt);
	rmbi_verror(fmt, ap);
	va_end(ap);
	rmbi_params = tab;
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
	p = rmbi_find_param(arg, (size_t)(eq - arg));
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

int rmbi_applies(const struct rmb_param *p, const char *mode)
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
	for (struct rmb_param *p = rmbi_params; p->key; p++) {
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
		rmbi_j_raw(&j, "}", 1);
		rmbi_emit_line("RMB-PARAM ", &j);
	}
}

static void print_help(void)
{
	char line[512];

	for (struct rmb_param *p = rmbi_params; p->key; p++) {
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
		rmb_write_all(1, line, strlen(line));
	}
}

void rmb_parse_args(struct rmb_param *tab, int argc, char **argv)
{
	const char *mode;

	rmbi_params = tab;
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
		if (p->given && !rmbi_applies(p, mode))
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
	struct rmb_param *p = rmbi_params ? rmbi_find_param(key, strlen(key)) : NULL;

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
	rmb_json_str(j, "workload", rmbi_workload);
	rmb_json_str(j, "mode", mode);
	rmb_json_str(j, "record", record);
	rmb_json_str(j, "scheme", rmbi_scheme);
	rmb_json_str(j, "arch", RMB_ARCH);
	rmb_json_open(j, "params");
	for (struct rmb_param *p = rmbi_params; p->key; p++) {
		if (!strcmp(p->key, "mode") || !rmbi_applies(p, mode))
			continue;
		if (p->choices)
			rmb_json_str(j, p->key, p->sval);
		else
			rmb_json_int(j, p->key, p->val);
	}
	rmb_json_close(j);
	rmb_json_open(j, "metrics");
	rmb_json_int(j, "page_size_bytes", (long long)rmb_page);
	rmb_json_int(j, "low_total_kb", rmbi_low_total_kb);
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
