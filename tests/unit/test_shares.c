// SPDX-License-Identifier: MIT
/* Fast-tier shares: what --fast-share accepts, and the caps it gives targets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "shares.h"
#include "tracker.h"

static void parses_names_and_percentages(void **state)
{
	struct fast_shares sh;
	char why[256];

	(void)state;
	assert_int_equal(shares__parse("redis-server:60%,memcached:30", &sh, why, sizeof(why)), 0);
	assert_int_equal(sh.n, 2);
	assert_string_equal(sh.e[0].comm, "redis-server");
	assert_true(sh.e[0].pct == 60);
	assert_string_equal(sh.e[1].comm, "memcached");
	assert_true(sh.e[1].pct == 30);
	assert_int_equal(shares__parse("a:100", &sh, why, sizeof(why)), 0);
	assert_int_equal(sh.n, 1);
}

static void refuses_what_is_wrong_and_says_why(void **state)
{
	static const struct {
		const char *in, *why;
	} bad[] = {
		{ "redis", "expected COMM:PERCENT" },
		{ ":50", "1 to 15 characters" },
		{ "a-name-longer-than-15:5", "1 to 15 characters" },
		{ "redis:0", "above 0, at most 100" },
		{ "redis:101%", "above 0, at most 100" },
		{ "redis:5%%", "above 0, at most 100" },
		{ "redis:abc", "above 0, at most 100" },
		{ "redis:60,redis:10", "two shares" },
		{ "a:60,b:50", "more than the fast tier" },
	};
	struct fast_shares sh;
	char why[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = 0;
		if (shares__parse(bad[i].in, &sh, why, sizeof(why)) != -EINVAL || !strstr(why, bad[i].why))
			fail_msg("'%s': got '%s', expected '%s'", bad[i].in, why, bad[i].why);
	}
}

static void caps_follow_command_names(void **state)
{
	struct fast_shares sh;
	struct tracker tr;
	char why[256];

	(void)state;
	assert_int_equal(shares__parse("redis-server:60%", &sh, why, sizeof(why)), 0);
	tracker__init(&tr, 0.5);
	tracker__add_target(&tr, 100, 1, "redis-server", ORIGIN_COMM);
	tracker__add_target(&tr, 200, 1, "other", ORIGIN_COMM);
	shares__apply(&sh, &tr, 1000);
	assert_int_equal(tr.targets[0].fast_cap, 600);
	assert_int_equal(tr.targets[1].fast_cap, 0);
	/* A process renamed by exec gets the cap of its new name. */
	strcpy(tr.targets[1].comm, "redis-server");
	shares__apply(&sh, &tr, 1000);
	assert_int_equal(tr.targets[1].fast_cap, 600);
	tracker__free(&tr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_names_and_percentages),
		cmocka_unit_test(refuses_what_is_wrong_and_says_why),
		cmocka_unit_test(caps_follow_command_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
