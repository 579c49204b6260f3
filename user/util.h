/* SPDX-License-Identifier: MIT */
/* Logging, number parsing and small file helpers shared by the agent and tools. */
#ifndef CXLT_UTIL_H
#define CXLT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum log_level { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG };

extern int log_verbosity;	/* messages above this level are dropped */

void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pr_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define pr_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define pr_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Each returns 0 or -EINVAL/-ERANGE; *out is untouched on error. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int parse_int(const char *s, long min, long max, int *out);
int parse_double(const char *s, double min, double max, double *out);
/* "64M", "2G", "4096", "1.5G"; suffixes K M G T are powers of 1024. */
int parse_size(const char *s, uint64_t *out);

/*
 * Node lists in the kernel's and numactl's syntax ("0-2,4").  The result is
 * a bitmask of node ids < 64.  Returns -EINVAL naming nothing: callers say
 * which option held the bad list.
 */
int parse_nodelist(const char *s, uint64_t *mask);
/* Formats a mask back as "0-2,4" into buf. */
char *format_nodelist(uint64_t mask, char *buf, size_t len);

/* Reads a whole small file under root (NULL or "" = the real "/"). */
int read_text(const char *root, const char *path, char *buf, size_t len);
/*
 * The number after `key` in a /proc file of "key value" or "key : value"
 * lines (/proc/vmstat, /proc/PID/sched); -ENODATA when no line has it.
 */
int read_keyed_u64(const char *root, const char *path, const char *key, uint64_t *val);
/* Writes val to root+path (sysfs, procfs); -errno, the kernel's refusal included. */
int write_text(const char *root, const char *path, const char *val);

double now_sec(void);

/* Where bare policy names are looked up: policies/ beside the running binary, else the installed path. */
void default_policy_dir(char *buf, size_t len);

#endif
