/* Exit codes of bench/inject-probe.c, the image rmb-inject's exec sweep
 * runs: whether the n-th allocation came before the probe could look. */
#ifndef RMB_INJECT_PROBE_H
#define RMB_INJECT_PROBE_H

#define INJECT_PROBE "inject-probe"
enum { PROBE_CAME = 10, PROBE_NOT_REACHED = 11 };

#endif
