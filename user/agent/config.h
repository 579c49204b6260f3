/* SPDX-License-Identifier: MIT */
/*
 * The agent's configuration: every setting cxltierd has, its defaults, and
 * the INI file (/etc/cxltier/cxltier.conf, parsed with inih) that sets them.
 *
 * One key per flag, in six sections:
 *   [topology] fast_nodes slow_nodes sysfs_root
 *   [targets]  pid (repeatable, or a comma list) comm cgroup (repeatable) target_user
 *              fast_share
 *   [sampler]  source epoch_ms decay scan_epochs tracker_mb heat_entries hint_period_ms
 *              hint_cpu_pct ring_kb record
 *   [policy]   name dir decide_limit_ms, and any other key is a policy parameter (key=value)
 *   [mover]    rate_mbps batch low_wmark_pct high_wmark_pct pingpong_epochs keep_huge
 *              observe
 *   [output]   pin_dir run_dir keep_pins metrics_port metrics_addr metrics_textfile take_over
 *              duration log_level
 *
 * One table in config.c holds every key with its flag: cxltierd builds its
 * getopt table from it (config__options) and a flag sets its key exactly as
 * the file does (config__set_option), so the two cannot drift apart; a test
 * walks the table against --help, the man page and the sample config.
 * Precedence: config__defaults(), then the file, then the flags;
 * config__check() does the cross-checks afterwards.
 * packaging/cxltier.conf is the commented sample.
 */
#ifndef CXLT_CONFIG_H
#define CXLT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "mover.h"
#include "policy_host.h"

#define CXLT_CONFIG_PATH "/etc/cxltier/cxltier.conf"

/* Each of pid, comm and cgroup; the target specs hold as many (MAX_SPECS). */
#define CONFIG_MAX_TARGETS 64
#define CONFIG_MAX_PARAMS  CXLT_MAX_PARAMS

/* log_level beyond LOG_DEBUG: debug plus libbpf's own messages (-vv). */
#define CONFIG_LOG_TRACE (LOG_DEBUG + 1)

/*
 * Every string is owned by the config (malloc'd) and freed by config__free();
 * NULL means "not set: the agent picks" (node lists, policy dir, record, sysfs root).
 */
struct agent_config {
	/* [targets] */
	pid_t pids[CONFIG_MAX_TARGETS];
	int nr_pids;
	char *comms[CONFIG_MAX_TARGETS];
	int nr_comms;
	char *cgroups[CONFIG_MAX_TARGETS];
	int nr_cgroups;
	char *target_user; /* users whose processes comm and cgroup may adopt; NULL: any */
	char *fast_share;  /* COMM:PCT%,... (shares.h); NULL: none */
	/* [policy] */
	char *policy;	  /* NAME or PATH; default "hotset" */
	char *policy_dir; /* NULL: policies/ beside the binary, else the installed path */
	char *params[CONFIG_MAX_PARAMS]; /* "key=value", as -o takes them */
	int nr_params;
	uint32_t decide_limit_ms; /* longest decision; 0: one epoch */
	/* [sampler] */
	char *source; /* auto, pmu, hint, fault, fault-perf */
	uint32_t epoch_ms;
	double decay;
	uint32_t scan_epochs;
	uint32_t tracker_mb;	/* the tracker's memory budget */
	uint32_t heat_entries; /* 0: sized to the machine's RAM */
	uint32_t hint_period_ms;
	double hint_cpu_pct; /* of one core */
	uint32_t ring_kb;    /* the recording ring buffer */
	char *record; /* trace file, NULL: none */
	/* [topology] */
	char *fast_nodes, *slow_nodes; /* numactl syntax; NULL: from the kernel's tiers */
	char *sysfs_root;	       /* NULL: the real / */
	/* [mover] */
	struct mover_opts mover;
	bool observe;
	/* [output] */
	char *pin_dir;
	char *run_dir;
	bool keep_pins;
	bool take_over;
	uint32_t metrics_port; /* 0: no HTTP endpoint */
	char *metrics_addr;    /* NULL: 127.0.0.1 */
	char *metrics_textfile; /* node_exporter textfile directory; NULL: none */
	double duration; /* seconds; 0: until SIGTERM */
	int log_level;	 /* enum log_level, or CONFIG_LOG_TRACE */
};

/* Fills c with the defaults cxltierd --help names; 0 or -ENOMEM. */
int config__defaults(struct agent_config *c);
void config__free(struct agent_config *c);
/* Deep copy into dst (which is overwritten, not freed); 0 or -ENOMEM. */
int config__copy(struct agent_config *dst, const struct agent_config *src);

/*
 * Reads the INI file at path on top of c (start from config__defaults()).
 * The file must be a regular file owned by root or the effective user and
 * not writable by group or others, in directories that are the same (sticky
 * ones such as /tmp excepted); a symlink is followed and both its directory
 * and its target are checked.  On error err holds one line naming the file,
 * line, section, key and what is accepted, and c is left untouched.
 * Returns 0, -ENOENT (no such file: the caller may run on defaults), -EPERM
 * (unsafe file), -EINVAL (bad content) or another -errno.
 */
int config__load(struct agent_config *c, const char *path, char *err, size_t errlen);

/*
 * Sets one key as "[section] key = value" in a file would: pid, comm and
 * cgroup append (pid takes a comma list), an unknown key in [policy] adds or
 * replaces that policy parameter, anything else replaces.  Booleans take
 * yes/no/true/false/on/off/1/0.  On error err holds what is accepted
 * ("expected a number of MiB/s above 0"), for the caller to prefix with
 * the file line or the flag.  0, -EINVAL, -ERANGE, -ENOENT (no such
 * section or key: err lists the accepted ones), -E2BIG (too many) or -ENOMEM.
 */
int config__set(struct agent_config *c, const char *section, const char *key, const char *value,
		char *err, size_t errlen);

/* getopt values of flags without a letter: CONFIG_OPT_BASE + the key's index. */
#define CONFIG_OPT_BASE 0x200

struct option;
/*
 * Appends a getopt_long entry for every key that has a flag to opts (at most
 * max) and their letters to letters (a NUL-terminated optstring of len
 * bytes).  Returns the number of entries or -E2BIG.
 */
int config__options(struct option *opts, int max, char *letters, size_t len);
/*
 * Sets the key behind the option getopt_long returned (val, with its
 * argument): as config__set, with err "--FLAG 'ARG': expected ...".
 * -ENOENT if val is not a key's option.
 */
int config__set_option(struct agent_config *c, int val, const char *arg, char *err, size_t errlen);
/* The i-th key of the table (flag NULL: the file only); 0, or -ENOENT past the last. */
int config__key(size_t i, const char **section, const char **name, const char **flag);

/* Cross-checks between keys (watermarks, fast/slow overlap); 0 or -EINVAL with err. */
int config__check(const struct agent_config *c, char *err, size_t errlen);

/*
 * Writes c as an INI file config__load() reads back to the same config
 * (cxltierd --check-config).  Unset optional keys are written commented out.
 * 0, -EINVAL if a value cannot be written as INI (leading or trailing
 * blanks, " ;", a newline, or a line over inih's limit: it is written
 * commented out with the reason), or -EIO.
 */
int config__describe(const struct agent_config *c, FILE *f);

#endif
