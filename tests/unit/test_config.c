// SPDX-License-Identifier: MIT
/*
 * The config file: the shipped sample loads and documents the real
 * defaults, every key reaches its field, repeatable keys accumulate, the
 * policy's parameters are collected, config__describe() round-trips, and
 * each kind of mistake gets its exact message (tests/fixtures/config/, run
 * from the repository root).  Fixtures are copied into a private temporary
 * directory first: config__load() refuses files others could write, and a
 * checkout's modes depend on the umask.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "ksettings.h"
#include "util.h"

#define FIX    "tests/fixtures/config/"
#define SAMPLE "packaging/cxltier.conf"

static char tmpdir[64];
static char err[1024];

static int make_tmpdir(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cxlt-config-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) ? -1 : 0;
}

/* Writes text to tmpdir/name with mode; returns the path (static buffer). */
static const char *write_tmp(const char *name, const char *text, mode_t mode)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	unlink(path);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, n + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, n, f), (size_t)n);
	fclose(f);
	return text;
}

/* Copies src into tmpdir (mode 0644) under its base name; returns the copy's path. */
static const char *copy_in(const char *src)
{
	const char *path, *slash = strrchr(src, '/');
	char *text = slurp(src);

	path = write_tmp(slash ? slash + 1 : src, text, 0644);
	free(text);
	return path;
}

static const char *fixture(const char *name)
{
	char src[256];

	snprintf(src, sizeof(src), FIX "%s", name);
	return copy_in(src);
}

/* Defaults, then the file at path, into a config that holds nothing yet. */
static int load(struct agent_config *c, const char *path)
{
	assert_int_equal(config__defaults(c), 0);
	err[0] = '\0';
	return config__load(c, path, err, sizeof(err));
}

static char *describe(const struct agent_config *c, int expect_ret)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(config__describe(c, f), expect_ret);
	fclose(f);
	return text;
}

/* Loads fixture name, expects failure with code and "PATH:msg". */
static void expect_error(const char *name, int code, const char *msg)
{
	struct agent_config c;
	char expected[1024];
	const char *path = fixture(name);

	snprintf(expected, sizeof(expected), "%s:%s", path, msg);
	assert_int_equal(load(&c, path), code);
	assert_string_equal(err, expected);
	config__free(&c);
}

/* ---- what loads ---- */

static void sample_config_loads_as_the_defaults(void **state)
{
	struct agent_config c, d;
	char *a, *b;

	(void)state;
	assert_int_equal(load(&c, copy_in(SAMPLE)), 0);
	assert_int_equal(config__defaults(&d), 0);
	a = describe(&c, 0);
	b = describe(&d, 0);
	assert_string_equal(a, b);
	free(a);
	free(b);
	config__free(&c);
	config__free(&d);
}

/*
 * Uncomments every "# key = value" line of the sample for a key that has a
 * default value: the result must still be the defaults, so the sample's
 * comments cannot go stale.
 */
static void sample_config_shows_the_real_defaults(void **state)
{
	static const char *const keys[] = {
	    "source",	    "epoch_ms",	      "decay",		"scan_epochs",
	    "heat_entries", "hint_period_ms", "hint_cpu_pct", "name",		"rate_mbps",
	    "batch",	    "low_wmark_pct",  "high_wmark_pct", "pingpong_epochs",
	    "keep_huge",    "observe",	    "pin_dir",	      "run_dir",	"keep_pins",
	    "take_over",    "duration",	      "log_level",
	};
	char *text = slurp(SAMPLE), *out = calloc(1, strlen(text) + 1), *line, *save;
	struct agent_config c, d;
	unsigned found = 0;
	char *a, *b;

	(void)state;
	assert_non_null(out);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		bool take = false;

		for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
			size_t n = strlen(keys[i]);

			if (!strncmp(line, "# ", 2) && !strncmp(line + 2, keys[i], n) &&
			    !strncmp(line + 2 + n, " = ", 3)) {
				take = true;
				found |= 1u << i;
			}
		}
		strcat(out, take ? line + 2 : line);
		strcat(out, "\n");
	}
	assert_int_equal(found, (1u << ARRAY_SIZE(keys)) - 1);
	assert_int_equal(load(&c, write_tmp("sample-uncommented.conf", out, 0644)), 0);
	assert_int_equal(config__defaults(&d), 0);
	a = describe(&c, 0);
	b = describe(&d, 0);
	assert_string_equal(a, b);
	free(a);
	free(b);
	free(text);
	free(out);
	config__free(&c);
	config__free(&d);
}

static void defaults_match_the_help_text(void **state)
{
	struct agent_config c;

	(void)state;
	assert_int_equal(config__defaults(&c), 0);
	assert_string_equal(c.policy, "hotset");
	assert_null(c.policy_dir);
	assert_string_equal(c.source, "auto");
	assert_int_equal(c.epoch_ms, 1000);
	assert_true(c.decay == 0.5);
	assert_int_equal(c.scan_epochs, 5);
	assert_int_equal(c.heat_entries, 0);
	assert_int_equal(c.hint_period_ms, 1000);
	assert_true(c.hint_cpu_pct == HINT_CPU_PCT_DEFAULT);
	assert_int_equal(c.ring_kb, 4096);
	assert_true(c.mover.rate_mbps == 256);
	assert_int_equal(c.mover.batch, 1024);
	assert_true(c.mover.low_wmark_pct == 2);
	assert_true(c.mover.high_wmark_pct == 5);
	assert_int_equal(c.mover.pingpong_epochs, 10);
	assert_string_equal(c.pin_dir, "/sys/fs/bpf/cxltier");
	assert_string_equal(c.run_dir, "/run/cxltier");
	assert_int_equal(c.log_level, LOG_INFO);
	assert_false(c.observe || c.keep_pins || c.take_over || c.mover.keep_huge);
	assert_true(c.duration == 0);
	assert_int_equal(c.metrics_port, 0);
	assert_null(c.metrics_addr);
	config__free(&c);
}

/* Flags that set no key: what to do with the settings, and the log level. */
static const char *const run_flags[] = {"param", "policy-help", "config", "check-config",
					"verbose", "quiet", "help"};

static bool is_run_flag(const char *flag)
{
	for (size_t i = 0; i < sizeof(run_flags) / sizeof(run_flags[0]); i++)
		if (!strcmp(flag, run_flags[i]))
			return true;
	return false;
}

/* "--flag" as a whole word in text (not the start of a longer flag). */
static bool has_flag(const char *text, const char *dashes, const char *flag)
{
	size_t dl = strlen(dashes);

	for (const char *p = strstr(text, dashes); p; p = strstr(p + 1, dashes)) {
		const char *q = p + dl, *f = flag;

		/* The man page escapes each '-' of the name as "\-". */
		while (*f && *q) {
			if (*f == '-' && dl > 2 && q[0] == '\\' && q[1] == '-')
				q += 2, f++;
			else if (*f == *q)
				q++, f++;
			else
				break;
		}
		if (!*f && !(*q == '-' || *q == '\\' || (*q >= 'a' && *q <= 'z')))
			return true;
	}
	return false;
}

/*
 * One table holds every key with its flag: each flag is in --help and the
 * man page, each key in the sample config (commented, with its flag named)
 * and in the full fixture, and every flag --help names sets a key or is one
 * of the run flags.
 */
static void every_key_is_documented_with_its_flag(void **state)
{
	const char *section, *name, *flag, *build = getenv("BUILD");
	char cmd[256], line[256], *help, *man = slurp("man/cxltierd.8"), *sample = slurp(SAMPLE);
	char *full = slurp(FIX "full.conf");
	size_t len = 0, cap = 1 << 16;
	FILE *p;

	(void)state;
	snprintf(cmd, sizeof(cmd), "%s/cxltierd --help", build ? build : "build");
	assert_non_null(p = popen(cmd, "r"));
	help = calloc(1, cap);
	while (fgets(line, sizeof(line), p) && len + sizeof(line) < cap)
		len += strlen(strcpy(help + len, line));
	assert_int_equal(pclose(p), 0);
	assert_non_null(man);
	assert_non_null(sample);
	for (size_t i = 0; config__key(i, &section, &name, &flag) == 0; i++) {
		char key[96];

		snprintf(key, sizeof(key), "\n# %s = ", name);
		if (!strstr(sample, key))
			fail_msg("[%s] %s is not in the sample config", section, name);
		snprintf(key, sizeof(key), "\n%s = ", name);
		if (!strstr(full, key))
			fail_msg("[%s] %s is not in " FIX "full.conf", section, name);
		if (!flag)
			continue;
		if (!has_flag(help, "--", flag))
			fail_msg("--%s ([%s] %s) is not in cxltierd --help", flag, section, name);
		if (!has_flag(man, "\\-\\-", flag))
			fail_msg("--%s ([%s] %s) is not in man/cxltierd.8", flag, section, name);
		if (!has_flag(sample, "--", flag))
			fail_msg("--%s is not named in the sample config beside %s", flag, name);
	}
	for (const char *q = strstr(help, "\n  "); q; q = strstr(q + 1, "\n  ")) {
		char word[64];
		bool found = false;

		/* An option line: "  -x, --flag ..." or "      --flag ...". */
		if (sscanf(q, " -%*c, --%63[a-z-]", word) != 1 && sscanf(q, " --%63[a-z-]", word) != 1)
			continue;
		for (size_t i = 0; !found && config__key(i, &section, &name, &flag) == 0; i++)
			found = flag && !strcmp(flag, word);
		if (!found && !is_run_flag(word))
			fail_msg("cxltierd --help names --%s, which sets no key", word);
	}
	free(help);
	free(man);
	free(sample);
	free(full);
}

static void every_key_reaches_its_field(void **state)
{
	struct agent_config c;

	(void)state;
	assert_int_equal(load(&c, fixture("full.conf")), 0);
	assert_string_equal(c.fast_nodes, "0-1");
	assert_string_equal(c.slow_nodes, "2,3");
	assert_string_equal(c.sysfs_root, "/tmp/fake-sys");
	assert_int_equal(c.nr_pids, 1);
	assert_int_equal(c.pids[0], 4242);
	assert_int_equal(c.nr_comms, 1);
	assert_string_equal(c.comms[0], "redis-server");
	assert_int_equal(c.nr_cgroups, 1);
	assert_string_equal(c.cgroups[0], "/sys/fs/cgroup/app.slice");
	assert_string_equal(c.target_user, "redis,1001");
	assert_string_equal(c.source, "fault-perf");
	assert_int_equal(c.epoch_ms, 250);
	assert_true(c.decay == 0.125);
	assert_int_equal(c.scan_epochs, 7);
	assert_int_equal(c.tracker_mb, 64);
	assert_int_equal(c.heat_entries, 65536);
	assert_int_equal(c.hint_period_ms, 2000);
	assert_true(c.hint_cpu_pct == 0.5);
	assert_int_equal(c.ring_kb, 8192);
	assert_string_equal(c.record, "/var/tmp/cxltier.trace");
	assert_string_equal(c.policy, "hotcold");
	assert_string_equal(c.policy_dir, "/opt/cxltier/policies");
	assert_int_equal(c.decide_limit_ms, 250);
	assert_int_equal(c.nr_params, 2);
	assert_string_equal(c.params[0], "promote_heat=2");
	assert_string_equal(c.params[1], "demote_idle=120");
	assert_true(c.mover.rate_mbps == 512.5);
	assert_int_equal(c.mover.batch, 64);
	assert_true(c.mover.low_wmark_pct == 3);
	assert_true(c.mover.high_wmark_pct == 7.5);
	assert_int_equal(c.mover.pingpong_epochs, 20);
	assert_true(c.mover.keep_huge);
	assert_true(c.observe);
	assert_string_equal(c.pin_dir, "/sys/fs/bpf/cxltier-test");
	assert_string_equal(c.run_dir, "/run/cxltier-test");
	assert_true(c.keep_pins);
	assert_int_equal(c.metrics_port, 9464);
	assert_string_equal(c.metrics_addr, "10.0.0.1");
	assert_string_equal(c.metrics_textfile, "/var/lib/node-exporter");
	assert_true(c.take_over);
	assert_true(c.duration == 30);
	assert_int_equal(c.log_level, LOG_DEBUG);
	config__free(&c);
}

static void repeatable_keys_accumulate(void **state)
{
	struct agent_config c;

	(void)state;
	assert_int_equal(load(&c, fixture("repeat.conf")), 0);
	/* 200 twice is one target */
	assert_int_equal(c.nr_pids, 4);
	assert_int_equal(c.pids[0], 100);
	assert_int_equal(c.pids[1], 200);
	assert_int_equal(c.pids[2], 300);
	assert_int_equal(c.pids[3], 400);
	assert_int_equal(c.nr_comms, 3);
	assert_string_equal(c.comms[0], "redis-server");
	assert_string_equal(c.comms[1], "memcached");
	assert_string_equal(c.comms[2], "postgres");
	assert_int_equal(c.nr_cgroups, 2);
	assert_string_equal(c.cgroups[1], "/sys/fs/cgroup/b.slice");
	config__free(&c);
}

static void policy_parameters_are_collected(void **state)
{
	struct agent_config c;

	(void)state;
	assert_int_equal(load(&c, fixture("repeat.conf")), 0);
	assert_string_equal(c.policy, "hotset"); /* "; an inline comment" is gone */
	assert_int_equal(c.nr_params, 2);
	assert_string_equal(c.params[0], "headroom=0.05");
	assert_string_equal(c.params[1], "min_gain=1.5");
	config__free(&c);
}

static void round_trip(const char *name)
{
	struct agent_config c, again;
	char *first, *second;

	assert_int_equal(load(&c, name ? fixture(name) : copy_in(SAMPLE)), 0);
	first = describe(&c, 0);
	assert_int_equal(load(&again, write_tmp("described.conf", first, 0600)), 0);
	second = describe(&again, 0);
	assert_string_equal(first, second);
	assert_int_equal(again.nr_pids, c.nr_pids);
	assert_memory_equal(again.pids, c.pids, c.nr_pids * sizeof(c.pids[0]));
	assert_true(again.decay == c.decay && again.mover.rate_mbps == c.mover.rate_mbps);
	free(first);
	free(second);
	config__free(&c);
	config__free(&again);
}

static void describe_round_trips_every_key(void **state)
{
	(void)state;
	round_trip("full.conf");
	round_trip("repeat.conf");
	round_trip(NULL);
}

static void describe_round_trips_awkward_numbers(void **state)
{
	struct agent_config c, again;
	char *text;

	(void)state;
	assert_int_equal(config__defaults(&c), 0);
	c.decay = 0.1;
	c.mover.rate_mbps = 1.0 / 3;
	c.duration = 1e-3;
	c.log_level = CONFIG_LOG_TRACE;
	text = describe(&c, 0);
	assert_int_equal(load(&again, write_tmp("awkward.conf", text, 0600)), 0);
	assert_true(again.decay == c.decay);
	assert_true(again.mover.rate_mbps == c.mover.rate_mbps);
	assert_true(again.duration == c.duration);
	assert_int_equal(again.log_level, CONFIG_LOG_TRACE);
	assert_non_null(strstr(text, "decay = 0.1\n"));
	free(text);
	config__free(&c);
	config__free(&again);
}

/* A value inih cannot read back is written commented out, and said. */
static void describe_refuses_what_ini_cannot_hold(void **state)
{
	struct agent_config c;
	char *text;

	(void)state;
	assert_int_equal(config__defaults(&c), 0);
	assert_int_equal(
	    config__set(&c, "targets", "cgroup", "/sys/fs/cgroup/a ;b", err, sizeof(err)), 0);
	text = describe(&c, -EINVAL);
	assert_non_null(strstr(text, "; cgroup cannot be written (holds ';' after a blank, which "
				     "starts a comment): /sys/fs/cgroup/a ;b\n"));
	free(text);
	config__free(&c);
}

/* Found by the fuzzer: what config__set takes, config__describe must write back. */
static void set_refuses_what_ini_cannot_hold(void **state)
{
	struct agent_config c;
	char err[256];

	(void)state;
	config__defaults(&c);
	assert_int_equal(config__set(&c, "policy", "k:x", "v", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a key is letters, digits"));
	assert_int_equal(config__set(&c, "policy", "a b", "v", err, sizeof(err)), -EINVAL);
	assert_int_equal(config__set(&c, "policy", "ok_key-1.x", "v", err, sizeof(err)), 0);
	/* A control character in a value: refused on the way out, not written as clean. */
	assert_int_equal(config__set(&c, "policy", "p", "\v", err, sizeof(err)), 0);
	{
		char *out = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&out, &len);

		assert_int_equal(config__describe(&c, f), -EINVAL);
		fclose(f);
		assert_non_null(strstr(out, "control character"));
		free(out);
	}
	config__free(&c);
}

/* ---- flags through config__set ---- */

static void set_validates_as_the_file_does(void **state)
{
	struct agent_config c;

	(void)state;
	assert_int_equal(config__defaults(&c), 0);
	assert_int_equal(config__set(&c, "mover", "rate_mbps", "fast", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "expected a number of MiB/s above 0, at most 1000000");
	assert_int_equal(config__set(&c, "mover", "rate_mbps", "0", err, sizeof(err)), -ERANGE);
	assert_string_equal(err,
			    "out of range: expected a number of MiB/s above 0, at most 1000000");
	assert_true(c.mover.rate_mbps == 256);
	assert_int_equal(config__set(&c, "mover", "rate_mbps", "512", err, sizeof(err)), 0);
	assert_true(c.mover.rate_mbps == 512);
	assert_int_equal(config__set(&c, "mover", "speed", "1", err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "unknown key 'speed' in [mover] (accepted: rate_mbps, batch, "
				 "low_wmark_pct, high_wmark_pct, pingpong_epochs, keep_huge, observe)");
	assert_int_equal(config__set(&c, "sampler", "heat_entries", "auto", err, sizeof(err)), 0);
	assert_int_equal(config__set(&c, "output", "duration", "0", err, sizeof(err)), 0);
	assert_int_equal(config__set(&c, "output", "duration", "-1", err, sizeof(err)), -ERANGE);
	/* a flag's parameter replaces the file's */
	assert_int_equal(config__set(&c, "policy", "headroom", "0.05", err, sizeof(err)), 0);
	assert_int_equal(config__set(&c, "policy", "headroom", "0.1", err, sizeof(err)), 0);
	assert_int_equal(c.nr_params, 1);
	assert_string_equal(c.params[0], "headroom=0.1");
	/* the cross-checks run again once the flags are in */
	assert_int_equal(config__set(&c, "mover", "low_wmark_pct", "20", err, sizeof(err)), 0);
	assert_int_equal(config__check(&c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "high_wmark_pct 5 is below low_wmark_pct 20: the high watermark "
				 "must be at least the low one");
	config__free(&c);
}

static void too_many_pids_is_an_error(void **state)
{
	struct agent_config c;
	char text[1024] = "[targets]\npid = 1";
	char expected[1024];
	const char *path;

	(void)state;
	for (int i = 2; i <= CONFIG_MAX_TARGETS + 1; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 i % 8 ? ",%d" : "\npid = %d", i);
	strcat(text, "\n");
	path = write_tmp("many.conf", text, 0644);
	assert_int_equal(load(&c, path), -EINVAL);
	snprintf(expected, sizeof(expected),
		 "%s:10: [targets] pid = 64,65: too many pid entries (at most 64)", path);
	assert_string_equal(err, expected);
	config__free(&c);
}

/* ---- each kind of error, with its message ---- */

#define ERROR_TEST(test, file, code, msg)                                                          \
	static void test(void **state)                                                             \
	{                                                                                          \
		(void)state;                                                                       \
		expect_error(file, code, msg);                                                     \
	}

ERROR_TEST(
    unknown_section, "err-unknown-section.conf", -EINVAL,
    "4: unknown section [movr] (accepted: topology, targets, sampler, policy, mover, output)")
ERROR_TEST(
    unknown_empty_section, "err-empty-section.conf", -EINVAL,
    "4: unknown section [movr] (accepted: topology, targets, sampler, policy, mover, output)")
ERROR_TEST(empty_value, "err-empty-value.conf", -EINVAL,
	   "2: [mover] batch is empty: expected a number of pages from 1 to 1048576")
ERROR_TEST(unknown_key, "err-unknown-key.conf", -EINVAL,
	   "3: unknown key 'rate' in [mover] (accepted: rate_mbps, batch, low_wmark_pct, "
	   "high_wmark_pct, pingpong_epochs, keep_huge, observe)")
ERROR_TEST(bad_number, "err-bad-number.conf", -EINVAL,
	   "3: [mover] rate_mbps = fast: expected a number of MiB/s above 0, at most 1000000")
ERROR_TEST(out_of_range, "err-out-of-range.conf", -EINVAL,
	   "2: [sampler] epoch_ms = 5: out of range: expected milliseconds from 10 to 3600000")
ERROR_TEST(bad_boolean, "err-bad-bool.conf", -EINVAL,
	   "2: [mover] observe = maybe: expected yes, no, true, false, on, off, 1 or 0")
ERROR_TEST(bad_node_list, "err-bad-nodes.conf", -EINVAL,
	   "3: [topology] slow_nodes = 1-x: expected a node list in numactl syntax, such as 2-3")
ERROR_TEST(nodes_overlap, "err-nodes-overlap.conf", -EINVAL,
	   "3: [topology] slow_nodes = 1-2 overlaps fast_nodes = 0-1 (line 2): a node is either "
	   "fast or slow")
ERROR_TEST(low_above_high_watermark, "err-wmarks.conf", -EINVAL,
	   "3: [mover] high_wmark_pct = 4 is below low_wmark_pct = 10 (line 2): the high watermark "
	   "must be at least the low one")
ERROR_TEST(low_above_default_high_watermark, "err-wmark-default.conf", -EINVAL,
	   "2: [mover] low_wmark_pct = 10 is above high_wmark_pct = 5 (its default): the high "
	   "watermark must be at least the low one")
ERROR_TEST(duplicate_key, "err-duplicate.conf", -EINVAL,
	   "6: [mover] rate_mbps is set twice, on line 2 and here: keep one (only pid, comm and "
	   "cgroup repeat)")
ERROR_TEST(duplicate_policy_parameter, "err-duplicate-param.conf", -EINVAL,
	   "4: [policy] parameter headroom is set twice, on line 3 and here: keep one")
ERROR_TEST(line_ini_cannot_parse, "err-syntax.conf", -EINVAL,
	   "2: cannot parse 'rate_mbps 512': expected 'key = value', a [section] or a comment "
	   "starting with # or ;")
ERROR_TEST(unclosed_section_header, "err-section-header.conf", -EINVAL,
	   "1: '[mover': a section header ends with ']'")
ERROR_TEST(indented_line_continues_a_value, "err-indented.conf", -EINVAL,
	   "3: indented line: the INI reader takes it as more of the value of 'rate_mbps' (line "
	   "2); remove the leading blanks")
ERROR_TEST(key_before_any_section, "err-before-section.conf", -EINVAL,
	   "1: 'rate_mbps' comes before any [section] (accepted: topology, targets, sampler, "
	   "policy, mover, output)")
ERROR_TEST(hash_comment_after_value, "err-hash-comment.conf", -EINVAL,
	   "2: [mover] rate_mbps = 512  # MiB/s: expected a number of MiB/s above 0, at most "
	   "1000000 (a comment after a value starts with ';', not '#')")
ERROR_TEST(bad_pid_in_list, "err-bad-pid.conf", -EINVAL,
	   "2: [targets] pid = 12, abc: 'abc' is not a process id: expected process ids from 1 to "
	   "1073741824, one or a comma list")
ERROR_TEST(comm_too_long, "err-long-comm.conf", -EINVAL,
	   "2: [targets] comm = a-name-that-is-far-too-long: expected a command name of 1 to 15 "
	   "characters, as in /proc/PID/comm")
ERROR_TEST(bad_log_level, "err-log-level.conf", -EINVAL,
	   "2: [output] log_level = verbose: expected error, warning, info, debug or trace")

static void line_too_long(void **state)
{
	struct agent_config c;
	char text[600], expected[1024];
	const char *path;

	(void)state;
	snprintf(text, sizeof(text), "[output]\nrun_dir = /run/%0300d\n", 0);
	path = write_tmp("long.conf", text, 0644);
	assert_int_equal(load(&c, path), -EINVAL);
	snprintf(expected, sizeof(expected),
		 "%s:2: line longer than 198 characters, the most the INI reader takes", path);
	assert_string_equal(err, expected);
	config__free(&c);
}

static void first_error_is_the_one_reported(void **state)
{
	struct agent_config c;
	char expected[1024];
	const char *path;

	(void)state;
	path = write_tmp("two-errors.conf", "[mover]\nbatch = 0\nrate = 1\nrate_mbps 5\n", 0644);
	assert_int_equal(load(&c, path), -EINVAL);
	snprintf(
	    expected, sizeof(expected),
	    "%s:2: [mover] batch = 0: out of range: expected a number of pages from 1 to 1048576",
	    path);
	assert_string_equal(err, expected);
	config__free(&c);
}

/* A bad file leaves the running config as it was (SIGHUP reload). */
static void failed_load_leaves_config_untouched(void **state)
{
	struct agent_config c;
	const char *path;

	(void)state;
	path = write_tmp("half-good.conf", "[mover]\nrate_mbps = 999\nbatch = lots\n", 0644);
	assert_int_equal(load(&c, path), -EINVAL);
	assert_true(c.mover.rate_mbps == 256);
	assert_int_equal(c.mover.batch, 1024);
	config__free(&c);
}

/* ---- which files are trusted ---- */

static void missing_file(void **state)
{
	struct agent_config c;
	char path[128], expected[1024];

	(void)state;
	snprintf(path, sizeof(path), "%s/absent.conf", tmpdir);
	assert_int_equal(load(&c, path), -ENOENT);
	snprintf(expected, sizeof(expected), "cannot read %s: No such file or directory", path);
	assert_string_equal(err, expected);
	config__free(&c);
}

static void world_writable_file_is_refused(void **state)
{
	struct agent_config c;
	char expected[1024];
	const char *path;

	(void)state;
	path = write_tmp("open.conf", "[mover]\nbatch = 8\n", 0666);
	assert_int_equal(load(&c, path), -EPERM);
	snprintf(expected, sizeof(expected),
		 "refusing %s: writable by others (mode 0666), who could make the agent load any "
		 "policy; run chmod go-w %s",
		 path, path);
	assert_string_equal(err, expected);
	assert_int_equal(c.mover.batch, 1024);
	config__free(&c);
	path = write_tmp("group.conf", "[mover]\nbatch = 8\n", 0620);
	assert_int_equal(load(&c, path), -EPERM);
	assert_non_null(strstr(err, "writable by its group (mode 0620)"));
	config__free(&c);
}

static void writable_directory_is_refused(void **state)
{
	struct agent_config c;
	char dir[128], path[160], expected[1024];
	FILE *f;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/shared", tmpdir);
	snprintf(path, sizeof(path), "%s/cxltier.conf", dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(chmod(dir, 0777), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("[mover]\nbatch = 8\n", f);
	fclose(f);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(load(&c, path), -EPERM);
	snprintf(expected, sizeof(expected),
		 "refusing %s: directory %s is writable by others (mode 0777), who could replace "
		 "the file; run chmod go-w %s",
		 path, dir, dir);
	assert_string_equal(err, expected);
	/* Sticky, as /tmp: others cannot rename root's file, but can put a hard link
	 * to another root file under the name before it exists: refused too. */
	assert_int_equal(chmod(dir, 01777), 0);
	config__free(&c);
	assert_int_equal(load(&c, path), -EPERM);
	assert_non_null(strstr(err, "even with the sticky bit"));
	config__free(&c);
	/* Above the directory that holds the file, sticky is fine (as /tmp is, here). */
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(load(&c, path), 0);
	assert_int_equal(c.mover.batch, 8);
	config__free(&c);
}

static void file_of_another_user_is_refused(void **state)
{
	struct agent_config c;
	char expected[1024];
	const char *path;

	(void)state;
	if (geteuid() != 0)
		skip(); /* only root can give a file away */
	path = write_tmp("nobody.conf", "[mover]\nbatch = 8\n", 0644);
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(load(&c, path), -EPERM);
	snprintf(expected, sizeof(expected),
		 "refusing %s: it belongs to uid 65534; what a root daemon reads must be root's "
		 "(chown root %s)",
		 path, path);
	assert_string_equal(err, expected);
	config__free(&c);
}

static void directory_is_not_a_config(void **state)
{
	struct agent_config c;
	char expected[1024], dir[128];

	(void)state;
	/* In tmpdir: /tmp itself may not hold a config (sticky is not enough). */
	snprintf(dir, sizeof(dir), "%s/a-directory", tmpdir);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(load(&c, dir), -EISDIR);
	snprintf(expected, sizeof(expected), "refusing %s: not a regular file", dir);
	assert_string_equal(err, expected);
	config__free(&c);
}

static void symlink_is_followed_and_checked(void **state)
{
	struct agent_config c;
	char link[128], target[128];

	(void)state;
	snprintf(target, sizeof(target), "%s",
		 write_tmp("real.conf", "[mover]\nbatch = 16\n", 0644));
	snprintf(link, sizeof(link), "%s/link.conf", tmpdir);
	unlink(link);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(load(&c, link), 0);
	assert_int_equal(c.mover.batch, 16);
	/* the target's modes count, not the link's */
	assert_int_equal(chmod(target, 0666), 0);
	config__free(&c);
	assert_int_equal(load(&c, link), -EPERM);
	assert_non_null(strstr(err, " (-> "));
	assert_non_null(strstr(err, "writable by others (mode 0666)"));
	config__free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(set_refuses_what_ini_cannot_hold),
	    cmocka_unit_test(sample_config_loads_as_the_defaults),
	    cmocka_unit_test(sample_config_shows_the_real_defaults),
	    cmocka_unit_test(defaults_match_the_help_text),
	    cmocka_unit_test(every_key_reaches_its_field),
	    cmocka_unit_test(every_key_is_documented_with_its_flag),
	    cmocka_unit_test(repeatable_keys_accumulate),
	    cmocka_unit_test(policy_parameters_are_collected),
	    cmocka_unit_test(describe_round_trips_every_key),
	    cmocka_unit_test(describe_round_trips_awkward_numbers),
	    cmocka_unit_test(describe_refuses_what_ini_cannot_hold),
	    cmocka_unit_test(set_validates_as_the_file_does),
	    cmocka_unit_test(too_many_pids_is_an_error),
	    cmocka_unit_test(unknown_section),
	    cmocka_unit_test(unknown_empty_section),
	    cmocka_unit_test(empty_value),
	    cmocka_unit_test(unknown_key),
	    cmocka_unit_test(bad_number),
	    cmocka_unit_test(out_of_range),
	    cmocka_unit_test(bad_boolean),
	    cmocka_unit_test(bad_node_list),
	    cmocka_unit_test(nodes_overlap),
	    cmocka_unit_test(low_above_high_watermark),
	    cmocka_unit_test(low_above_default_high_watermark),
	    cmocka_unit_test(duplicate_key),
	    cmocka_unit_test(duplicate_policy_parameter),
	    cmocka_unit_test(line_ini_cannot_parse),
	    cmocka_unit_test(unclosed_section_header),
	    cmocka_unit_test(indented_line_continues_a_value),
	    cmocka_unit_test(key_before_any_section),
	    cmocka_unit_test(hash_comment_after_value),
	    cmocka_unit_test(bad_pid_in_list),
	    cmocka_unit_test(comm_too_long),
	    cmocka_unit_test(bad_log_level),
	    cmocka_unit_test(line_too_long),
	    cmocka_unit_test(first_error_is_the_one_reported),
	    cmocka_unit_test(failed_load_leaves_config_untouched),
	    cmocka_unit_test(missing_file),
	    cmocka_unit_test(world_writable_file_is_refused),
	    cmocka_unit_test(writable_directory_is_refused),
	    cmocka_unit_test(file_of_another_user_is_refused),
	    cmocka_unit_test(directory_is_not_a_config),
	    cmocka_unit_test(symlink_is_followed_and_checked),
	};

	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
