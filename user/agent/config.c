// SPDX-License-Identifier: MIT
/*
 * The configuration file, /etc/cxltier/cxltier.conf.
 *
 * inih does the INI syntax; this file knows the keys.  A few choices:
 *
 * - Lines reach inih through ini_parse_stream() from a copy of the file in
 *   memory, one line per call.  That is how we know the line of each key
 *   (the distribution's libinih is built without INI_HANDLER_LINENO), and it
 *   lets us refuse a line longer than inih's line buffer: inih would split it
 *   and read the tail as a line of its own.
 * - inih reads an indented line as more of the previous key's value
 *   (INI_ALLOW_MULTILINE), so "  batch = 64" under "rate_mbps = 512" would
 *   quietly become part of the rate.  Such a line is refused with its reason.
 * - Only pid, comm and cgroup repeat.  Any other key given twice is an error
 *   naming both lines: "last one wins" hides the one the operator edited.
 * - Every value is checked with the ranges of the flags (parse_args in
 *   cxltierd.c, with the same parse_* helpers), and config__set() is what
 *   the flags call too, so the two cannot drift apart.
 * - Only the first error is reported: later ones are often its echoes.
 * - Comments after a value start with ';' (inih's inline comment prefix).
 *   '#' only starts a comment at the beginning of a line; a value holding
 *   " #" gets a hint saying so.
 *
 * The agent runs as root, and whoever can change the file can make it load
 * any policy .so: the file is opened under the trust rule every path the
 * agent touches follows (open_trusted() in util.c).  A symlinked config (as
 * /etc alternatives do) is followed when the link and its directory are
 * root's; the directories are checked by path, which is racy only for
 * someone who could already write to them.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <getopt.h>

#include <ini.h>

#include "config.h"
#include "ksettings.h"
#include "sampler.h"
#include "sources.h"
#include "shares.h"
#include "status.h"
#include "util.h"

#define CONFIG_MAX_BYTES (1 << 20)

enum key_kind {
	K_PID,	    /* pid_t[], repeatable, comma lists */
	K_COMM,	    /* char *[], repeatable */
	K_CGROUP,   /* char *[], repeatable */
	K_STR,	    /* char *, non-empty */
	K_SOURCE,   /* char *, one of the sampler sources */
	K_NODES,    /* char *, numactl node list */
	K_U32,	    /* uint32_t through parse_int (base 10), as the flags */
	K_HEAT,	    /* uint32_t through parse_u64, or "auto" (0) */
	K_DOUBLE,   /* double */
	K_DURATION, /* double, 0 = until stopped */
	K_BOOL,	    /* bool */
	K_LOGLEVEL, /* int */
	K_RING,	    /* uint32_t, a power of 2 */
	K_ADDR,	    /* char *, an IPv4 address */
	K_SHARES,   /* char *, COMM:PCT%[,...] (shares.h) */
};

struct key_def {
	const char *section;
	const char *name;
	const char *flag; /* cxltierd --FLAG, NULL: the file only */
	int letter;	  /* -L, 0: none */
	enum key_kind kind;
	size_t off;
	double min, max;
	const char *expect; /* completes "expected ..." */
};

#define OFF(field) offsetof(struct agent_config, field)

static const struct key_def keys[] = {
    {"topology", "fast_nodes", "fast-nodes", 0, K_NODES, OFF(fast_nodes), 0, 0,
     "a node list in numactl syntax, such as 0-1,4"},
    {"topology", "slow_nodes", "slow-nodes", 0, K_NODES, OFF(slow_nodes), 0, 0,
     "a node list in numactl syntax, such as 2-3"},
    {"topology", "sysfs_root", "sysfs-root", 0, K_STR, OFF(sysfs_root), 0, 0, "a directory"},
    {"targets", "pid", "pid", 'p', K_PID, OFF(pids), 1, 1 << 30,
     "process ids from 1 to 1073741824, one or a comma list"},
    {"targets", "comm", "comm", 'c', K_COMM, OFF(comms), 1, 15,
     "a command name of 1 to 15 characters, as in /proc/PID/comm"},
    {"targets", "cgroup", "cgroup", 'g', K_CGROUP, OFF(cgroups), 0, 0, "a cgroup v2 directory"},
    {"targets", "target_user", "target-user", 0, K_STR, OFF(target_user), 0, 0,
     "user names or ids, a comma list, such as redis,1001"},
    {"targets", "fast_share", "fast-share", 0, K_SHARES, OFF(fast_share), 0, 0,
     NULL /* shares__parse says what is wrong */},
    {"sampler", "source", "source", 's', K_SOURCE, OFF(source), 0, 0,
     NULL /* sources__parse says what is wrong */},
    {"sampler", "epoch_ms", "epoch-ms", 'e', K_U32, OFF(epoch_ms), 10, 3600000,
     "milliseconds from 10 to 3600000"},
    {"sampler", "decay", "decay", 0, K_DOUBLE, OFF(decay), 0, 1, "a number from 0 to 1"},
    {"sampler", "scan_epochs", "scan-epochs", 0, K_U32, OFF(scan_epochs), 1, 1000000,
     "a number of epochs from 1 to 1000000"},
    {"sampler", "tracker_mb", "tracker-mb", 0, K_U32, OFF(tracker_mb), 1, 1048576,
     "MiB from 1 to 1048576"},
    {"sampler", "heat_entries", "heat-entries", 0, K_HEAT, OFF(heat_entries), 1024, 1 << 28,
     "auto or a number of entries from 1024 to 268435456"},
    {"sampler", "hint_period_ms", "hint-period-ms", 0, K_U32, OFF(hint_period_ms), 100, 600000,
     "milliseconds from 100 to 600000"},
    {"sampler", "hint_cpu_pct", "hint-cpu", 0, K_DOUBLE, OFF(hint_cpu_pct), 0.01, 100,
     "a percentage of one core from 0.01 to 100"},
    {"sampler", "ring_kb", "ring-kb", 0, K_RING, OFF(ring_kb), 4, 1 << 20,
     "KiB, a power of 2 from 4 to 1048576"},
    {"sampler", "record", "record", 0, K_STR, OFF(record), 0, 0, "a file to write the trace to"},
    {"policy", "name", "policy", 'P', K_STR, OFF(policy), 0, 0,
     "a policy name (looked up in dir) or the path of a policy .so"},
    {"policy", "dir", "policy-dir", 0, K_STR, OFF(policy_dir), 0, 0, "a directory of policies"},
    {"policy", "decide_limit_ms", "decide-limit-ms", 0, K_U32, OFF(decide_limit_ms), 0, 3600000,
     "milliseconds from 1 to 3600000, or 0 for one epoch"},
    {"mover", "rate_mbps", "rate", 'r', K_DOUBLE, OFF(mover.rate_mbps), 0.001, 1e6,
     "a number of MiB/s above 0, at most 1000000"},
    {"mover", "batch", "batch", 0, K_U32, OFF(mover.batch), 1, 1 << 20,
     "a number of pages from 1 to 1048576"},
    {"mover", "low_wmark_pct", "low-wmark", 0, K_DOUBLE, OFF(mover.low_wmark_pct), 0, 50,
     "a percentage from 0 to 50"},
    {"mover", "high_wmark_pct", "high-wmark", 0, K_DOUBLE, OFF(mover.high_wmark_pct), 0, 90,
     "a percentage from 0 to 90"},
    {"mover", "pingpong_epochs", "pingpong-epochs", 0, K_U32, OFF(mover.pingpong_epochs), 0,
     60000, "a number of epochs from 0 to 60000"},
    {"mover", "keep_huge", "keep-huge", 0, K_BOOL, OFF(mover.keep_huge), 0, 0, NULL},
    {"mover", "observe", "observe", 0, K_BOOL, OFF(observe), 0, 0, NULL},
    {"output", "pin_dir", "pin-dir", 0, K_STR, OFF(pin_dir), 0, 0, "a directory under /sys/fs/bpf"},
    {"output", "run_dir", "run-dir", 0, K_STR, OFF(run_dir), 0, 0, "a directory"},
    {"output", "keep_pins", "keep-pins", 0, K_BOOL, OFF(keep_pins), 0, 0, NULL},
    {"output", "metrics_port", "metrics-port", 0, K_U32, OFF(metrics_port), 0, 65535,
     "a TCP port from 1 to 65535, or 0 for none"},
    {"output", "metrics_addr", "metrics-addr", 0, K_ADDR, OFF(metrics_addr), 0, 0,
     "an IPv4 address such as 127.0.0.1"},
    {"output", "metrics_textfile", "metrics-textfile", 0, K_STR, OFF(metrics_textfile), 0, 0,
     "a directory (node_exporter's textfile collector)"},
    {"output", "take_over", "take-over", 0, K_BOOL, OFF(take_over), 0, 0, NULL},
    {"output", "duration", "duration", 'd', K_DURATION, OFF(duration), 0.001, 1e9,
     "seconds: 0 (run until stopped) or from 0.001 to 1000000000"},
    {"output", "log_level", NULL, 0, K_LOGLEVEL, OFF(log_level), 0, 0,
     "error, warning, info, debug or trace"},
};

#define NR_KEYS ARRAY_SIZE(keys)

static const char *const sections[] = {"topology", "targets", "sampler",
				       "policy",   "mover",   "output"};

static const struct {
	const char *name;
	int level;
} log_levels[] = {
    {"error", LOG_ERR},	  {"warning", LOG_WARN},       {"info", LOG_INFO},
    {"debug", LOG_DEBUG}, {"trace", CONFIG_LOG_TRACE},
};

static const char bool_expect[] = "yes, no, true, false, on, off, 1 or 0";

static bool is_string(const struct key_def *k)
{
	return k->kind == K_STR || k->kind == K_SOURCE || k->kind == K_NODES || k->kind == K_ADDR ||
	       k->kind == K_SHARES;
}

#define FIELD(c, k, type)  ((type *)((char *)(c) + (k)->off))
#define CFIELD(c, k, type) ((const type *)((const char *)(c) + (k)->off))

static void say(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- defaults, copy, free ---- */

static char **str_field(struct agent_config *c, const struct key_def *k)
{
	return FIELD(c, k, char *);
}

void config__free(struct agent_config *c)
{
	for (size_t i = 0; i < NR_KEYS; i++)
		if (is_string(&keys[i]))
			free(*str_field(c, &keys[i]));
	for (int i = 0; i < c->nr_comms; i++)
		free(c->comms[i]);
	for (int i = 0; i < c->nr_cgroups; i++)
		free(c->cgroups[i]);
	for (int i = 0; i < c->nr_params; i++)
		free(c->params[i]);
	memset(c, 0, sizeof(*c));
}

int config__defaults(struct agent_config *c)
{
	memset(c, 0, sizeof(*c));
	c->policy = strdup("hotset");
	c->source = strdup("auto");
	c->pin_dir = strdup(CXLT_PIN_DIR);
	c->run_dir = strdup(CXLT_RUN_DIR);
	c->epoch_ms = 1000;
	c->decay = 0.5;
	c->scan_epochs = 5;
	c->tracker_mb = 128;
	c->heat_entries = 0; /* sized to the machine */
	c->hint_period_ms = 1000;
	c->hint_cpu_pct = HINT_CPU_PCT_DEFAULT;
	c->ring_kb = 4096;
	/* The values of mover__default_opts(), which this module does not link. */
	c->mover.rate_mbps = 256;
	c->mover.batch = 1024;
	c->mover.pingpong_epochs = 10;
	c->mover.low_wmark_pct = 2;
	c->mover.high_wmark_pct = 5;
	c->log_level = LOG_INFO;
	if (!c->policy || !c->source || !c->pin_dir || !c->run_dir) {
		config__free(c);
		return -ENOMEM;
	}
	return 0;
}

static int dup_str(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return src && !*dst ? -ENOMEM : 0;
}

int config__copy(struct agent_config *dst, const struct agent_config *src)
{
	int err = 0;

	*dst = *src;
	/* Clear every pointer first so that config__free() is safe midway. */
	for (size_t i = 0; i < NR_KEYS; i++)
		if (is_string(&keys[i]))
			*str_field(dst, &keys[i]) = NULL;
	memset(dst->comms, 0, sizeof(dst->comms));
	memset(dst->cgroups, 0, sizeof(dst->cgroups));
	memset(dst->params, 0, sizeof(dst->params));
	dst->nr_comms = dst->nr_cgroups = dst->nr_params = 0;

	for (size_t i = 0; i < NR_KEYS && !err; i++)
		if (is_string(&keys[i]))
			err = dup_str(str_field(dst, &keys[i]), *CFIELD(src, &keys[i], char *));
	for (int i = 0; i < src->nr_comms && !err; i++, dst->nr_comms++)
		err = dup_str(&dst->comms[i], src->comms[i]);
	for (int i = 0; i < src->nr_cgroups && !err; i++, dst->nr_cgroups++)
		err = dup_str(&dst->cgroups[i], src->cgroups[i]);
	for (int i = 0; i < src->nr_params && !err; i++, dst->nr_params++)
		err = dup_str(&dst->params[i], src->params[i]);
	if (err)
		config__free(dst);
	return err;
}

/* ---- one key ---- */

static const struct key_def *find_key(const char *section, const char *name)
{
	for (size_t i = 0; i < NR_KEYS; i++)
		if (!strcmp(keys[i].section, section) && !strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

static bool known_section(const char *section)
{
	for (size_t i = 0; i < ARRAY_SIZE(sections); i++)
		if (!strcmp(sections[i], section))
			return true;
	return false;
}

static void list_sections(char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(sections) && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? ", " : "", sections[i]);
}

static void list_keys(const char *section, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < NR_KEYS && off < len; i++)
		if (!strcmp(keys[i].section, section))
			off +=
			    snprintf(buf + off, len - off, "%s%s", off ? ", " : "", keys[i].name);
	if (!strcmp(section, "policy") && off < len)
		snprintf(buf + off, len - off, ", or any parameter of the policy");
}

static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"yes", "true", "on", "1"};
	static const char *const no[] = {"no", "false", "off", "0"};

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

static int set_string(char **field, const char *value)
{
	char *s = strdup(value);

	if (!s)
		return -ENOMEM;
	free(*field);
	*field = s;
	return 0;
}

static int append_string(char **arr, int *nr, const char *value, const char *name, char *err,
			 size_t errlen)
{
	for (int i = 0; i < *nr; i++)
		if (!strcmp(arr[i], value))
			return 0; /* the same target twice is one target */
	if (*nr == CONFIG_MAX_TARGETS) {
		say(err, errlen, "too many %s entries (at most %d)", name, CONFIG_MAX_TARGETS);
		return -E2BIG;
	}
	arr[*nr] = strdup(value);
	if (!arr[*nr])
		return -ENOMEM;
	(*nr)++;
	return 0;
}

/* "1234, 5678": all or nothing, so a bad entry leaves the list as it was. */
static int add_pids(struct agent_config *c, const struct key_def *k, const char *value, char *err,
		    size_t errlen)
{
	pid_t pids[CONFIG_MAX_TARGETS];
	int nr = c->nr_pids;
	char item[32];
	const char *p = value;

	memcpy(pids, c->pids, sizeof(pids));
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		int v, ret;
		bool seen = false;

		while (len && (*p == ' ' || *p == '\t'))
			p++, len--;
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (!len || len >= sizeof(item)) {
			say(err, errlen, "expected %s", k->expect);
			return -EINVAL;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		if ((ret = parse_int(item, (long)k->min, (long)k->max, &v))) {
			say(err, errlen, "%s'%s' is not a process id: expected %s",
			    ret == -ERANGE ? "out of range: " : "", item, k->expect);
			return ret;
		}
		for (int i = 0; i < nr; i++)
			seen |= pids[i] == v;
		if (!seen) {
			if (nr == CONFIG_MAX_TARGETS) {
				say(err, errlen, "too many pid entries (at most %d)",
				    CONFIG_MAX_TARGETS);
				return -E2BIG;
			}
			pids[nr++] = v;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	memcpy(c->pids, pids, sizeof(pids));
	c->nr_pids = nr;
	return 0;
}

static int set_param(struct agent_config *c, const char *key, const char *value, char *err,
		     size_t errlen)
{
	size_t klen = strlen(key);
	char *kv;

	if (!*key || !*value) {
		say(err, errlen, "expected a value for the policy parameter (key = value)");
		return -EINVAL;
	}
	if (key[strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")]) {
		say(err, errlen, "policy parameter '%s': a key is letters, digits, '_', '.' and '-'", key);
		return -EINVAL;
	}
	if (asprintf(&kv, "%s=%s", key, value) < 0)
		return -ENOMEM;
	for (int i = 0; i < c->nr_params; i++) {
		if (!strncmp(c->params[i], key, klen) && c->params[i][klen] == '=') {
			free(c->params[i]);
			c->params[i] = kv;
			return 0;
		}
	}
	if (c->nr_params == CONFIG_MAX_PARAMS) {
		free(kv);
		say(err, errlen, "too many policy parameters (at most %d)", CONFIG_MAX_PARAMS);
		return -E2BIG;
	}
	c->params[c->nr_params++] = kv;
	return 0;
}

static int set_value(struct agent_config *c, const struct key_def *k, const char *value, char *err,
		     size_t errlen)
{
	struct in_addr addr;
	char why[400];
	uint64_t mask, u;
	double d;
	bool b;
	int v, ret = 0;

	switch (k->kind) {
	case K_PID:
		return add_pids(c, k, value, err, errlen);
	case K_COMM:
		if (!*value || strlen(value) > 15)
			goto bad;
		return append_string(c->comms, &c->nr_comms, value, k->name, err, errlen);
	case K_CGROUP:
		if (!*value)
			goto bad;
		return append_string(c->cgroups, &c->nr_cgroups, value, k->name, err, errlen);
	case K_STR:
		if (!*value)
			goto bad;
		return set_string(str_field(c, k), value);
	case K_SOURCE: {
		struct source_list list;

		if (sources__parse(value, &list, why, sizeof(why))) {
			say(err, errlen, "%s", why);
			return -EINVAL;
		}
		return set_string(str_field(c, k), value);
	}
	case K_NODES:
		if (!*value || parse_nodelist(value, &mask) || !mask)
			goto bad;
		return set_string(str_field(c, k), value);
	case K_SHARES: {
		struct fast_shares sh;

		if (shares__parse(value, &sh, why, sizeof(why))) {
			say(err, errlen, "%s", why);
			return -EINVAL;
		}
		return set_string(str_field(c, k), value);
	}
	case K_ADDR:
		if (inet_pton(AF_INET, value, &addr) != 1)
			goto bad;
		return set_string(str_field(c, k), value);
	case K_U32:
		if ((ret = parse_int(value, (long)k->min, (long)k->max, &v)))
			goto bad;
		*FIELD(c, k, uint32_t) = v;
		return 0;
	case K_HEAT:
		if (!strcmp(value, "auto")) {
			*FIELD(c, k, uint32_t) = 0;
			return 0;
		}
		if ((ret = parse_u64(value, (uint64_t)k->min, (uint64_t)k->max, &u)))
			goto bad;
		*FIELD(c, k, uint32_t) = u;
		return 0;
	case K_RING:
		if ((ret = parse_int(value, (long)k->min, (long)k->max, &v)) || (v & (v - 1)))
			goto bad;
		*FIELD(c, k, uint32_t) = v;
		return 0;
	case K_DURATION:
		if (!parse_double(value, 0, 0, &d)) {
			*FIELD(c, k, double) = 0;
			return 0;
		}
		__attribute__((fallthrough));	/* any other duration is a number */
	case K_DOUBLE:
		if ((ret = parse_double(value, k->min, k->max, &d)))
			goto bad;
		*FIELD(c, k, double) = d;
		return 0;
	case K_BOOL:
		if (parse_bool(value, &b)) {
			say(err, errlen, "expected %s", bool_expect);
			return -EINVAL;
		}
		*FIELD(c, k, bool) = b;
		return 0;
	case K_LOGLEVEL:
		for (size_t i = 0; i < ARRAY_SIZE(log_levels); i++) {
			if (!strcmp(value, log_levels[i].name)) {
				*FIELD(c, k, int) = log_levels[i].level;
				return 0;
			}
		}
		goto bad;
	}
bad:
	say(err, errlen, "%sexpected %s%s", ret == -ERANGE ? "out of range: " : "", k->expect,
	    strstr(value, " #") || strstr(value, "\t#")
		? " (a comment after a value starts with ';', not '#')"
		: "");
	return ret == -ERANGE ? -ERANGE : -EINVAL;
}

int config__set(struct agent_config *c, const char *section, const char *key, const char *value,
		char *err, size_t errlen)
{
	const struct key_def *k = find_key(section, key);
	char list[256];

	if (k)
		return set_value(c, k, value, err, errlen);
	if (!known_section(section)) {
		list_sections(list, sizeof(list));
		say(err, errlen, "unknown section [%s] (accepted: %s)", section, list);
		return -ENOENT;
	}
	if (!strcmp(section, "policy"))
		return set_param(c, key, value, err, errlen);
	list_keys(section, list, sizeof(list));
	say(err, errlen, "unknown key '%s' in [%s] (accepted: %s)", key, section, list);
	return -ENOENT;
}

/* ---- the flags ---- */

int config__options(struct option *opts, int max, char *letters, size_t len)
{
	size_t off = strlen(letters);
	int n = 0;

	for (size_t i = 0; i < NR_KEYS; i++) {
		const struct key_def *k = &keys[i];
		bool arg = k->kind != K_BOOL;

		if (!k->flag)
			continue;
		if (n == max)
			return -E2BIG;
		opts[n++] = (struct option){k->flag, arg ? required_argument : no_argument, NULL,
					    k->letter ? k->letter : CONFIG_OPT_BASE + (int)i};
		if (k->letter && off + 3 <= len) {
			letters[off++] = (char)k->letter;
			if (arg)
				letters[off++] = ':';
			letters[off] = '\0';
		}
	}
	return n;
}

int config__set_option(struct agent_config *c, int val, const char *arg, char *err, size_t errlen)
{
	const struct key_def *k = NULL;
	char why[384];
	int ret;

	if (val >= CONFIG_OPT_BASE && val < CONFIG_OPT_BASE + (int)NR_KEYS)
		k = &keys[val - CONFIG_OPT_BASE];
	for (size_t i = 0; !k && i < NR_KEYS; i++)
		if (keys[i].letter && keys[i].letter == val)
			k = &keys[i];
	if (!k)
		return -ENOENT;
	if (k->kind == K_BOOL)
		arg = "yes";
	ret = set_value(c, k, arg, why, sizeof(why));
	if (ret)
		say(err, errlen, "--%s '%s': %s", k->flag, arg, why);
	return ret;
}

int config__key(size_t i, const char **section, const char **name, const char **flag)
{
	if (i >= NR_KEYS)
		return -ENOENT;
	*section = keys[i].section;
	*name = keys[i].name;
	*flag = keys[i].flag;
	return 0;
}

int config__check(const struct agent_config *c, char *err, size_t errlen)
{
	uint64_t fast, slow;

	if (c->mover.high_wmark_pct < c->mover.low_wmark_pct) {
		say(err, errlen,
		    "high_wmark_pct %g is below low_wmark_pct %g: the high watermark must be at "
		    "least the low one",
		    c->mover.high_wmark_pct, c->mover.low_wmark_pct);
		return -EINVAL;
	}
	if (c->fast_nodes && c->slow_nodes && !parse_nodelist(c->fast_nodes, &fast) &&
	    !parse_nodelist(c->slow_nodes, &slow) && (fast & slow)) {
		say(err, errlen,
		    "fast_nodes '%s' and slow_nodes '%s' overlap: a node is either fast or slow",
		    c->fast_nodes, c->slow_nodes);
		return -EINVAL;
	}
	return 0;
}

/* ---- the file ---- */

struct load_ctx {
	struct agent_config *c;
	const char *path;      /* as the operator gave it */
	const char *pos, *end; /* what is left of the file */
	int lineno;
	const char *line; /* the raw line inih is parsing */
	size_t line_len;
	int section_line; /* of the last [section] header */
	char last_section[64], last_name[64];
	int last_line;
	int key_line[NR_KEYS]; /* where each key was set, 0: not in this file */
	struct {
		char name[64];
		int line;
	} params[CONFIG_MAX_PARAMS];
	int nr_params;
	char *err;
	size_t errlen;
	int err_line; /* of the first error, 0: none */
	int err_code;
};

static void fail(struct load_ctx *x, int line, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void fail(struct load_ctx *x, int line, int code, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	if (x->err_line)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	say(x->err, x->errlen, "%s:%d: %s", x->path, line, msg);
	x->err_line = line;
	x->err_code = code;
}

static char *read_line(char *str, int num, void *stream)
{
	struct load_ctx *x = stream;
	const char *nl, *p;
	size_t len;

	if (x->pos >= x->end)
		return NULL;
	nl = memchr(x->pos, '\n', x->end - x->pos);
	len = nl ? (size_t)(nl - x->pos) : (size_t)(x->end - x->pos);
	x->line = x->pos;
	x->line_len = len;
	x->lineno++;
	x->pos += len + (nl ? 1 : 0);
	if (memchr(x->line, '\0', len) || len + 2 > (size_t)num) {
		if (memchr(x->line, '\0', len))
			fail(x, x->lineno, -EINVAL, "holds a NUL byte: not a text file");
		else
			fail(x, x->lineno, -EINVAL,
			     "line longer than %d characters, the most the INI reader takes",
			     num - 2);
		/* Hand inih a blank line rather than a piece of this one. */
		strcpy(str, "\n");
		return str;
	}
	memcpy(str, x->line, len);
	str[len] = '\n';
	str[len + 1] = '\0';
	for (p = x->line; p < x->line + len && (*p == ' ' || *p == '\t'); p++)
		;
	if (p < x->line + len && *p == '[') {
		const char *close = memchr(p, ']', x->line + len - p);
		char name[64], list[256];

		x->section_line = x->lineno;
		/* Checked here too, so that an empty misspelt section is not missed. */
		if (p == x->line && close && (size_t)(close - p - 1) < sizeof(name)) {
			snprintf(name, sizeof(name), "%.*s", (int)(close - p - 1), p + 1);
			if (!known_section(name)) {
				list_sections(list, sizeof(list));
				fail(x, x->lineno, -EINVAL, "unknown section [%s] (accepted: %s)",
				     name, list);
			}
		}
	}
	return str;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct load_ctx *x = user;
	const struct key_def *k = find_key(section, name);
	char reason[512], list[256];
	int ret;

	if (x->err_line)
		return 1; /* the first error is the one reported */
	if (x->line_len && (x->line[0] == ' ' || x->line[0] == '\t') && x->last_line &&
	    !strcmp(section, x->last_section) && !strcmp(name, x->last_name)) {
		fail(x, x->lineno, -EINVAL,
		     "indented line: the INI reader takes it as more of the value of '%s' (line "
		     "%d); remove the leading blanks",
		     name, x->last_line);
		return 0;
	}
	snprintf(x->last_section, sizeof(x->last_section), "%s", section);
	snprintf(x->last_name, sizeof(x->last_name), "%s", name);
	x->last_line = x->lineno;

	if (!*section) {
		list_sections(list, sizeof(list));
		fail(x, x->lineno, -EINVAL, "'%s' comes before any [section] (accepted: %s)", name,
		     list);
		return 0;
	}
	if (!known_section(section)) {
		list_sections(list, sizeof(list));
		fail(x, x->section_line ? x->section_line : x->lineno, -EINVAL,
		     "unknown section [%s] (accepted: %s)", section, list);
		return 0;
	}
	if (k && k->kind != K_PID && k->kind != K_COMM && k->kind != K_CGROUP) {
		int *seen = &x->key_line[k - keys];

		if (*seen) {
			fail(x, x->lineno, -EINVAL,
			     "[%s] %s is set twice, on line %d and here: keep one (only pid, comm "
			     "and cgroup repeat)",
			     section, name, *seen);
			return 0;
		}
		*seen = x->lineno;
	} else if (!k && !strcmp(section, "policy")) {
		for (int i = 0; i < x->nr_params; i++) {
			if (!strcmp(x->params[i].name, name)) {
				fail(x, x->lineno, -EINVAL,
				     "[policy] parameter %s is set twice, on line %d and here: "
				     "keep one",
				     name, x->params[i].line);
				return 0;
			}
		}
		if (x->nr_params < CONFIG_MAX_PARAMS) {
			snprintf(x->params[x->nr_params].name, sizeof(x->params[0].name), "%s",
				 name);
			x->params[x->nr_params++].line = x->lineno;
		}
	}

	ret = config__set(x->c, section, name, value, reason, sizeof(reason));
	if (ret == -ENOENT)
		fail(x, x->lineno, -EINVAL, "%s", reason);
	else if (ret == -ENOMEM)
		fail(x, x->lineno, ret, "out of memory");
	else if (ret && !*value)
		fail(x, x->lineno, -EINVAL, "[%s] %s is empty: %s", section, name, reason);
	else if (ret)
		fail(x, x->lineno, -EINVAL, "[%s] %s = %s: %s", section, name, value, reason);
	return !ret;
}

/* The line inih refused, to quote it. */
static void nth_line(const char *buf, const char *end, int n, const char **line, int *len)
{
	const char *p = buf, *nl;

	while (--n > 0 && p < end && (nl = memchr(p, '\n', end - p)))
		p = nl + 1;
	nl = memchr(p, '\n', end - p);
	*line = p;
	*len = (int)((nl ? nl : end) - p);
	while (*len && (p[*len - 1] == '\r' || p[*len - 1] == ' ' || p[*len - 1] == '\t'))
		(*len)--;
	while (*len && (**line == ' ' || **line == '\t'))
		(*line)++, (*len)--;
}

/* Checks after the whole file, naming the lines involved. */
static void cross_check(struct load_ctx *x)
{
	const struct agent_config *c = x->c;
	int low = x->key_line[find_key("mover", "low_wmark_pct") - keys];
	int high = x->key_line[find_key("mover", "high_wmark_pct") - keys];
	int fast = x->key_line[find_key("topology", "fast_nodes") - keys];
	int slow = x->key_line[find_key("topology", "slow_nodes") - keys];
	uint64_t fm, sm;
	char where[32];

	if (c->mover.high_wmark_pct < c->mover.low_wmark_pct) {
		if (high > low) {
			snprintf(where, sizeof(where), low ? "line %d" : "its default", low);
			fail(x, high, -EINVAL,
			     "[mover] high_wmark_pct = %g is below low_wmark_pct = %g (%s): the "
			     "high watermark must be at least the low one",
			     c->mover.high_wmark_pct, c->mover.low_wmark_pct, where);
		} else {
			snprintf(where, sizeof(where), high ? "line %d" : "its default", high);
			fail(x, low, -EINVAL,
			     "[mover] low_wmark_pct = %g is above high_wmark_pct = %g (%s): the "
			     "high watermark must be at least the low one",
			     c->mover.low_wmark_pct, c->mover.high_wmark_pct, where);
		}
	}
	if (c->fast_nodes && c->slow_nodes && !parse_nodelist(c->fast_nodes, &fm) &&
	    !parse_nodelist(c->slow_nodes, &sm) && (fm & sm)) {
		bool slow_later = slow > fast;

		fail(x, slow_later ? slow : fast, -EINVAL,
		     "[topology] %s = %s overlaps %s = %s (line %d): a node is either fast or slow",
		     slow_later ? "slow_nodes" : "fast_nodes",
		     slow_later ? c->slow_nodes : c->fast_nodes,
		     slow_later ? "fast_nodes" : "slow_nodes",
		     slow_later ? c->fast_nodes : c->slow_nodes, slow_later ? fast : slow);
	}
}

/* Opens the config under the trust rule (util.c); returns an fd or -errno. */
static int open_config(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd = open_trusted(path, "make the agent load any policy", err, errlen);

	if (fd < 0)
		return fd;
	if (!fstat(fd, &st) && st.st_size > CONFIG_MAX_BYTES) {
		say(err, errlen,
		    "refusing %s: %lld bytes, more than a config file has (at most %d)", path,
		    (long long)st.st_size, CONFIG_MAX_BYTES);
		close(fd);
		return -EFBIG;
	}
	return fd;
}

static int read_all(int fd, const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);

	if (!b)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *nb;

			if (cap > CONFIG_MAX_BYTES) {
				free(b);
				say(err, errlen, "refusing %s: more than %d bytes", path,
				    CONFIG_MAX_BYTES);
				return -EFBIG;
			}
			nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int ret = -errno;

			say(err, errlen, "cannot read %s: %s", path, strerror(errno));
			free(b);
			return ret;
		}
		if (!r)
			break;
		n += r;
	}
	*buf = b;
	*len = n;
	return 0;
}

int config__load(struct agent_config *c, const char *path, char *err, size_t errlen)
{
	struct load_ctx *x;
	struct agent_config tmp;
	char *buf = NULL;
	size_t len = 0;
	int fd, ret;

	fd = open_config(path, err, errlen);
	if (fd < 0)
		return fd;
	ret = read_all(fd, path, &buf, &len, err, errlen);
	close(fd);
	if (ret)
		return ret;
	x = calloc(1, sizeof(*x));
	if (!x || config__copy(&tmp, c)) {
		free(x);
		free(buf);
		say(err, errlen, "cannot read %s: out of memory", path);
		return -ENOMEM;
	}
	x->c = &tmp;
	x->path = path;
	x->pos = buf;
	x->end = buf + len;
	x->err = err;
	x->errlen = errlen;

	ret = ini_parse_stream(read_line, x, on_key, x);
	if (ret == -2) {
		fail(x, x->lineno, -ENOMEM, "out of memory");
	} else if (ret > 0 && (!x->err_line || ret < x->err_line)) {
		/* A line inih could not make sense of, and no earlier error of ours. */
		const char *line;
		int n;

		nth_line(buf, buf + len, ret, &line, &n);
		x->err_line = 0;
		if (n && *line == '[')
			fail(x, ret, -EINVAL, "'%.*s': a section header ends with ']'", n, line);
		else
			fail(x, ret, -EINVAL,
			     "cannot parse '%.*s': expected 'key = value', a [section] or a "
			     "comment starting with # or ;",
			     n > 80 ? 80 : n, line);
	}
	if (!x->err_line)
		cross_check(x);

	ret = x->err_line ? x->err_code : 0;
	if (ret) {
		config__free(&tmp);
	} else {
		config__free(c);
		*c = tmp;
	}
	free(x);
	free(buf);
	return ret;
}

/* ---- writing it back ---- */

/* The longest line inih's reader takes, as it asks for it (INI_MAX_LINE at its build). */
static char *probe_reader(char *str, int num, void *stream)
{
	(void)str;
	*(int *)stream = num;
	return NULL;
}

static int ini_line_limit(void)
{
	static int max;

	if (!max) {
		int num = 200;

		ini_parse_stream(probe_reader, &num, NULL, NULL);
		max = num - 2; /* room for '\n' and the terminating NUL */
	}
	return max;
}

/* Why value cannot be written as "key = value" so that inih reads it back, or NULL. */
static const char *unwritable(const char *key, const char *value)
{
	size_t len = strlen(value);

	if (!len)
		return "empty";
	if (strpbrk(value, "\n\r"))
		return "holds a line break";
	for (const char *p = value; *p; p++)
		if ((unsigned char)*p < 0x20 && *p != '\t')
			return "holds a control character";
	if (isspace((unsigned char)value[0]) || isspace((unsigned char)value[len - 1]))
		return "starts or ends with a blank";
	if (value[0] == ';' || strstr(value, " ;") || strstr(value, "\t;"))
		return "holds ';' after a blank, which starts a comment";
	if (strlen(key) + 3 + len > (size_t)ini_line_limit())
		return "too long for one line of the INI reader";
	return NULL;
}

static void put(FILE *f, const char *key, const char *value, int *bad)
{
	const char *why = unwritable(key, value);

	if (why) {
		/* A value with a line break or control character must not reach the file. */
		bool printable = !strpbrk(value, "\n\r") && !strstr(why, "control");

		fprintf(f, "; %s cannot be written (%s)%s%s\n", key, why, printable ? ": " : "",
			printable ? value : "");
		*bad = 1;
		return;
	}
	fprintf(f, "%s = %s\n", key, value);
}

/* The shortest text that reads back as exactly d. */
static void put_double(FILE *f, const char *key, double d)
{
	char buf[64];

	for (int prec = 6; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	fprintf(f, "%s = %s\n", key, buf);
}

static const char *unset_note(const struct key_def *k)
{
	if (!strcmp(k->name, "fast_nodes"))
		return "from the kernel's memory tiers: nodes with CPUs in the top tier";
	if (!strcmp(k->name, "slow_nodes"))
		return "from the kernel's memory tiers: CPU-less or lower-tier nodes";
	if (!strcmp(k->name, "sysfs_root"))
		return "the real /sys";
	if (!strcmp(k->name, "record"))
		return "no trace is recorded";
	if (!strcmp(k->name, "target_user"))
		return "any user's processes";
	if (!strcmp(k->name, "fast_share"))
		return "no shares: all targets' memory ranked on one scale";
	if (!strcmp(k->name, "dir"))
		return "policies/ beside cxltierd, else /usr/lib/cxltier/policies";
	if (!strcmp(k->name, "metrics_addr"))
		return "127.0.0.1";
	return "unset";
}

int config__describe(const struct agent_config *c, FILE *f)
{
	const char *section = NULL;
	char num[32];
	int bad = 0;

	fputs("# cxltier configuration: the effective settings, as cxltierd --check-config prints "
	      "them.\n",
	      f);
	for (size_t i = 0; i < NR_KEYS; i++) {
		const struct key_def *k = &keys[i];

		if (!section || strcmp(section, k->section)) {
			section = k->section;
			fprintf(f, "%s[%s]\n", i ? "\n" : "", section);
		}
		switch (k->kind) {
		case K_PID:
			if (!c->nr_pids)
				fputs("; pid = (none)\n", f);
			for (int p = 0; p < c->nr_pids; p++)
				fprintf(f, "pid = %d\n", (int)c->pids[p]);
			break;
		case K_COMM:
			if (!c->nr_comms)
				fputs("; comm = (none)\n", f);
			for (int p = 0; p < c->nr_comms; p++)
				put(f, "comm", c->comms[p], &bad);
			break;
		case K_CGROUP:
			if (!c->nr_cgroups)
				fputs("; cgroup = (none)\n", f);
			for (int p = 0; p < c->nr_cgroups; p++)
				put(f, "cgroup", c->cgroups[p], &bad);
			break;
		case K_STR:
		case K_SOURCE:
		case K_NODES:
		case K_ADDR:
		case K_SHARES: {
			const char *s = *CFIELD(c, k, char *);

			if (s)
				put(f, k->name, s, &bad);
			else
				fprintf(f, "; %s = (%s)\n", k->name, unset_note(k));
			break;
		}
		case K_U32:
			fprintf(f, "%s = %u\n", k->name, *CFIELD(c, k, uint32_t));
			break;
		case K_RING:
			fprintf(f, "%s = %u\n", k->name, *CFIELD(c, k, uint32_t));
			break;
		case K_HEAT:
			snprintf(num, sizeof(num), "%u", *CFIELD(c, k, uint32_t));
			fprintf(f, "%s = %s\n", k->name, *CFIELD(c, k, uint32_t) ? num : "auto");
			break;
		case K_DOUBLE:
		case K_DURATION:
			put_double(f, k->name, *CFIELD(c, k, double));
			break;
		case K_BOOL:
			fprintf(f, "%s = %s\n", k->name, *CFIELD(c, k, bool) ? "yes" : "no");
			break;
		case K_LOGLEVEL: {
			int level = *CFIELD(c, k, int);
			const char *name = level <= LOG_ERR ? "error" : "trace";

			for (size_t l = 0; l < ARRAY_SIZE(log_levels); l++)
				if (log_levels[l].level == level)
					name = log_levels[l].name;
			fprintf(f, "%s = %s\n", k->name, name);
			break;
		}
		}
		if (k->off == OFF(policy_dir)) {
			/* The policy's parameters follow name and dir in [policy]. */
			for (int p = 0; p < c->nr_params; p++) {
				const char *eq = strchr(c->params[p], '=');
				char key[128];

				snprintf(key, sizeof(key), "%.*s", (int)(eq - c->params[p]),
					 c->params[p]);
				put(f, key, eq + 1, &bad);
			}
		}
	}
	if (fflush(f) || ferror(f))
		return -EIO;
	return bad ? -EINVAL : 0;
}
