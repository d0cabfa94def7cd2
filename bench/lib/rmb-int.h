/*
 * rmb-int.h - what the parts of the library share and the programs do
 * not see: its state and the helpers of one part that another uses.
 */
#ifndef RMB_INT_H
#define RMB_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

#include "rmb.h"

/* rmb.c: state set by rmb_init() and rmb_parse_args() */
extern const char *rmbi_workload;
extern struct rmb_param *rmbi_params;
extern char rmbi_scheme[32];
extern long long rmbi_low_total_kb;
/* /proc files are read into this one buffer: no malloc, no new VMA
 * while a measurement runs. */
extern char rmbi_buf[1 << 20];

/* rmb.c: output */
void rmbi_emit_line(const char *prefix, const struct rmb_json *j);
void rmbi_j_raw(struct rmb_json *j, const char *s, size_t n);
void rmbi_verror(const char *fmt, va_list ap);

/* rmb-params.c */
struct rmb_param *rmbi_find_param(const char *key, size_t len);
int rmbi_applies(const struct rmb_param *p, const char *mode);

/* rmb-proc.c */
ssize_t rmbi_read_file(const char *path, char *buf, size_t size);
long long rmbi_kv_int(const char *buf, const char *name);
int rmbi_slab_parse(const char *buf, const char *cache, struct rmb_slab *o);
void rmbi_load_scheme(void);
long long rmbi_nonneg(long long v);

#endif
