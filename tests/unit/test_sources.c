// SPDX-License-Identifier: MIT
/*
 * The source table (user/sources/sources.c): what --source and the config accept,
 * the messages for what they refuse, the repeat rule by trace kind, and
 * every source documented in cxltierd --help, the man page and the sample
 * config.  Run from the top of the tree (tests/run does).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sources.h"

static char why[512];
static struct source_list list;

static void refused(const char *value, const char *words)
{
	why[0] = '\0';
	assert_int_equal(sources__parse(value, &list, why, sizeof(why)), -EINVAL);
	if (!strstr(why, words))
		fail_msg("'%s': message '%s' lacks '%s'", value, why, words);
}

static void each_source_parses_alone(void **state)
{
	(void)state;
	for (size_t i = 0; i < nr_sources; i++) {
		assert_int_equal(sources__parse(sources[i]->name, &list, why, sizeof(why)), 0);
		assert_int_equal(list.n, 1);
		assert_ptr_equal(list.def[0], sources[i]);
		assert_int_equal(list.weight[0], 1);
	}
}

static void lists_take_weights_one_per_hook(void **state)
{
	(void)state;
	assert_int_equal(sources__parse("pmu:4,hint:1", &list, why, sizeof(why)), 0);
	assert_int_equal(list.n, 2);
	assert_string_equal(list.def[0]->name, "pmu");
	assert_int_equal(list.weight[0], 4);
	assert_string_equal(list.def[1]->name, "hint");
	assert_int_equal(list.weight[1], 1);
	assert_int_equal(sources__parse("fault-perf,fault", &list, why, sizeof(why)), 0);
	refused("fault,fault", "fault shares its hook with fault");
	refused("pmu,fault-perf", "fault-perf shares its hook with pmu");
	refused("hint,fault", "fault shares its hook with hint");
	refused("fault:99999999999", "weight '99999999999' of fault");
	refused("fault:0", "weight '0' of fault");
	refused("auto,hint", "auto only alone");
	refused("damon:2", "damon only alone");
	refused("bogus", "unknown source 'bogus' (auto, pmu, hint");
	refused("", "no source named");
	refused(",", "no source named");
}

static void repeats_follow_the_kind_a_trace_records(void **state)
{
	(void)state;
	assert_false(sources__kind_repeats(CXLT_SRC_FAULT));
	assert_true(sources__kind_repeats(CXLT_SRC_HINT));
	assert_true(sources__kind_repeats(CXLT_SRC_PMU));
	assert_false(sources__kind_repeats(0));
	assert_false(sources__kind_repeats(CXLT_NR_SOURCES));
	assert_string_equal(sources__by_kind(CXLT_SRC_FAULT)->name, "fault");
}

static char *slurp_cmd(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	char *buf = calloc(1, 1 << 17);
	size_t n;

	assert_non_null(p);
	n = fread(buf, 1, (1 << 17) - 1, p);
	buf[n] = '\0';
	pclose(p);
	return buf;
}

/* Each source is named in --help, the man page (its troff escapes '-') and the sample config. */
static void every_source_is_documented(void **state)
{
	const char *build = getenv("BUILD");
	char cmd[256], *help, *man, *sample;

	(void)state;
	snprintf(cmd, sizeof(cmd), "%s/cxltierd --help", build ? build : "build");
	help = slurp_cmd(cmd);
	man = slurp_cmd("sed 's/\\\\-/-/g' man/cxltierd.8");
	sample = slurp_cmd("cat packaging/cxltier.conf");
	assert_non_null(strstr(help, "--source"));
	for (size_t i = 0; i < nr_sources; i++) {
		const char *n = sources[i]->name;

		if (!strstr(help, n))
			fail_msg("source %s is not in cxltierd --help", n);
		if (!strstr(man, n))
			fail_msg("source %s is not in man/cxltierd.8", n);
		if (!strstr(sample, n))
			fail_msg("source %s is not in packaging/cxltier.conf", n);
	}
	free(help);
	free(man);
	free(sample);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(each_source_parses_alone),
		cmocka_unit_test(lists_take_weights_one_per_hook),
		cmocka_unit_test(repeats_follow_the_kind_a_trace_records),
		cmocka_unit_test(every_source_is_documented),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
