/* SPDX-License-Identifier: MIT */
/* Logging, number parsing and small file helpers shared by the agent and tools. */
#ifndef CXLT_UTIL_H
#define CXLT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
/*
 * A list "NAME[:VALUE],NAME[:VALUE],...": item() is called for each entry
 * with its value or NULL, and the first non-zero return ends the walk and
 * is returned; -EINVAL with why when the list is too long (over 255);
 * else how many entries it has (0: it names nothing).
 */
int parse_named_list(const char *value, int (*item)(void *ctx, const char *name, const char *val),
		     void *ctx, char *why, size_t len);
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
/* Whether process pid has exited or is on its way out (no mm: move_pages says EINVAL). */
bool proc_vanished(int pid);
/*
 * The number after `key` in a /proc file of "key value" or "key : value"
 * lines (/proc/vmstat, /proc/PID/sched); -ENODATA when no line has it.
 */
int read_keyed_u64(const char *root, const char *path, const char *key, uint64_t *val);
/* Writes val to root+path (sysfs, procfs); -errno, the kernel's refusal included. */
int write_text(const char *root, const char *path, const char *val);

double now_sec(void);

/*
 * The trust rule for every path the agent (root) reads or writes: see the
 * comment above trust_dir() in util.c.  Each writes a message that names
 * the path, what is wrong and what to do into why, and returns -errno
 * (-EPERM for a broken rule).
 */
/* dir and every directory above it, the way the path reaches them included. */
int trust_dir(const char *dir, char *why, size_t len);
/*
 * Opens path read-only after trust_dir() of the directory holding it; the
 * file itself is checked on the descriptor (regular, root's, not writable by
 * group or others).  risk ends "writable by others, who could ...".
 * Returns the fd or -errno.
 */
int open_trusted(const char *path, const char *risk, char *why, size_t len);
/* The same as a stream; NULL with *err = 0 when nothing is at path. */
FILE *fopen_trusted(const char *path, const char *risk, char *why, size_t len, int *err);
/*
 * A new private file (0600) at path in a directory the caller trusts: what
 * is there already is unlinked (never followed), then O_CREAT|O_EXCL|
 * O_NOFOLLOW.  Returns the fd or -errno.
 */
int create_private_file(const char *path, char *why, size_t len);
/*
 * An output file named by the user (--record): created 0600 if absent;
 * if present, it must be a regular file of root's, not writable by group or
 * others, with one link, and is truncated.  A FIFO, device or symlink is
 * refused without being opened.  Returns the fd or -errno.
 */
int open_output_file(const char *path, char *why, size_t len);

/*
 * Text a process controls (its command name, a path it chose) made safe to
 * print on a terminal, in a log line or a Prometheus label: every byte
 * outside printable ASCII becomes \xHH and a backslash becomes \\, so a
 * name cannot move the cursor, forge a log line or break a label, and the
 * escaped form still tells names apart.  out is always NUL-terminated; a
 * name too long for it is cut at a whole escape.  Returns out.
 */
char *str_escape(const char *in, char *out, size_t outlen);
/* Room str_escape needs for a string of len bytes. */
#define STR_ESCAPED_SIZE(len) (4 * (len) + 1)

/* <the running program's directory>/name into buf: 0, or -errno. */
int exe_dir_entry(const char *name, char *buf, size_t len);
/* Where bare policy names are looked up: policies/ beside the running binary, else the installed path. */
void default_policy_dir(char *buf, size_t len);

#endif
