// SPDX-License-Identifier: MIT
/*
 * Memory the sources cannot see (user/sources/sight.c, issue 18): the census from
 * numa_maps text, the judgement per attached source, and auto's order in
 * the source table.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sight.h"
#include "sources.h"

static struct mem_census census(const char *text)
{
	struct mem_census c;
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	assert_non_null(f);
	assert_int_equal(sight__census_file(f, 4, &c), 0);
	fclose(f);
	return c;
}

static void census_counts_policies_the_scanner_skips(void **state)
{
	struct mem_census c = census(
		"55d0c0000000 default file=/usr/bin/redis-server mapped=300 mapmax=2 N0=300 kernelpagesize_kB=4\n"
		"7f0000000000 prefer:1 anon=40000 dirty=40000 N0=100 N1=39900 kernelpagesize_kB=4\n"
		"7f1000000000 prefer:1 heap\n"	/* nothing resident */
		"7f2000000000 bind=balancing:1 anon=10 dirty=10 N1=10 kernelpagesize_kB=4\n"
		"7f3000000000 interleave:0-1 anon=6 dirty=6 N0=3 N1=3 kernelpagesize_kB=4\n"
		"7f4000000000 default anon=1024 dirty=1024 N0=1024 kernelpagesize_kB=4\n"
		"7f5000000000 default file=/anon_hugepage\\040(deleted) huge dirty=2 N1=2 kernelpagesize_kB=2048\n"
		"7f6000000000 bind=static:1 anon=4 dirty=4 N1=4 kernelpagesize_kB=4\n");

	(void)state;
	assert_int_equal(c.resident, 300 + 40000 + 10 + 6 + 1024 + 1024 + 4);
	assert_int_equal(c.policy, 40000 + 6 + 4);	/* bind with MPOL_F_NUMA_BALANCING is scanned */
	assert_int_equal(c.hugetlb, 1024);		/* two 2 MiB pages */
	assert_string_equal(c.policy_name, "prefer:1");
}

static void census_of_this_process_sees_its_own_policy(void **state)
{
	struct mem_census c;

	(void)state;
	assert_int_equal(sight__census(getpid(), &c), 0);
	assert_true(c.resident > 0);
	assert_int_equal(c.policy, 0);	/* tests run under the default policy */
	assert_true(sight__census(-1, &c) < 0);
}

/* Waits for the worker's census of pid: its sight__take() once not 0 (10 s at most). */
static int taken(pid_t pid, struct mem_census *c)
{
	int ret = 0;

	for (int i = 0; i < 10000 && !(ret = sight__take(pid, c)); i++)
		usleep(1000);
	return ret;
}

/* The census off the caller's thread: asked, taken once, forgotten, stopped. */
static void census_comes_from_the_worker(void **state)
{
	struct mem_census c;
	pid_t gone;

	(void)state;
	assert_int_equal(sight__take(getpid(), &c), -ENOENT);
	assert_int_equal(sight__ask(getpid()), 0);
	assert_int_equal(sight__ask(getpid()), 0);	/* on its way already: one census */
	assert_int_equal(taken(getpid(), &c), 1);
	assert_true(c.resident > 0);
	assert_int_equal(sight__take(getpid(), &c), -ENOENT);

	/* A process that has exited: its census says so. */
	if (!(gone = fork()))
		_exit(0);
	assert_true(gone > 0);
	assert_int_equal(waitpid(gone, NULL, 0), gone);
	assert_int_equal(sight__ask(gone), 0);
	assert_int_equal(taken(gone, &c), -ESRCH);

	assert_int_equal(sight__ask(getpid()), 0);
	sight__forget(getpid());
	assert_int_equal(sight__take(getpid(), &c), -ENOENT);
	sight__stop();
	assert_int_equal(sight__ask(getpid()), 0);	/* starts again */
	assert_int_equal(taken(getpid(), &c), 1);
	sight__stop();
}

static const struct source_def *src(const char *name)
{
	const struct source_def *d = sources__find(name);

	assert_non_null(d);
	return d;
}

static void hint_misses_the_preferred_pages_and_names_what_sees_them(void **state)
{
	struct mem_census c = { .resident = 50000, .policy = 40000, .policy_name = "prefer:1" };
	const struct source_def *att[1] = { src("hint") };
	struct sight_env env = { .damon = true, .hint = true };
	struct unseen u = { .resident_at_add = 50000 };

	(void)state;
	sight__judge(&c, att, 1, &env, &u);
	assert_int_equal(u.pages, 40000);
	assert_int_equal(u.resident, 50000);
	assert_false(u.first_touch);
	assert_string_equal(u.source, "damon");
	assert_non_null(strstr(u.reason, "prefer:1"));
	assert_non_null(strstr(u.suggestion, "--source damon"));
	/* No DAMON, no PMU: nothing here would see them, and it says what would. */
	env.damon = false;
	sight__judge(&c, att, 1, &env, &u);
	assert_int_equal(u.pages, 40000);
	assert_null(u.source);
	assert_non_null(strstr(u.suggestion, "no source on this machine"));
	/* A PMU comes first, as in auto. */
	env.pmu = env.damon = true;
	sight__judge(&c, att, 1, &env, &u);
	assert_string_equal(u.source, "pmu");
}

static void sources_that_see_everything_leave_nothing_unseen(void **state)
{
	struct mem_census c = { .resident = 50000, .policy = 40000, .hugetlb = 512 };
	const struct source_def *damon[1] = { src("damon-vaddr") };
	const struct source_def *list[2] = { src("hint"), src("pmu") };
	struct sight_env env = { .hint = true };
	struct unseen u = { .resident_at_add = 50000 };

	(void)state;
	sight__judge(&c, damon, 1, &env, &u);
	assert_int_equal(u.pages, 0);
	assert_string_equal(u.reason, "");
	sight__judge(&c, list, 2, &env, &u);	/* pmu:1,hint:1: pmu sees them */
	assert_int_equal(u.pages, 0);
	c.policy = 0;
	c.hugetlb = 0;
	list[1] = src("hint");
	sight__judge(&c, list, 1, &env, &u);	/* hint, default policy: all seen */
	assert_int_equal(u.pages, 0);
}

static void fault_misses_what_was_there_before(void **state)
{
	struct mem_census c = { .resident = 5000 };
	const struct source_def *att[1] = { src("fault") };
	struct sight_env env = { .hint = true };
	struct unseen u = { .resident_at_add = 3000 };

	(void)state;
	sight__judge(&c, att, 1, &env, &u);
	assert_int_equal(u.pages, 3000);
	assert_true(u.first_touch);
	assert_string_equal(u.source, "hint");
	assert_non_null(strstr(u.reason, "first touches only"));
	u.resident_at_add = 8000;	/* it freed some since: no more than it has */
	sight__judge(&c, att, 1, &env, &u);
	assert_int_equal(u.pages, 5000);
	/* With the scanner on, the fault hook sees hint faults: only policy pages stay unseen. */
	env.scanner_on = true;
	sight__judge(&c, att, 1, &env, &u);
	assert_int_equal(u.pages, 0);
	c.policy = 700;
	c.resident = 5000;
	sight__judge(&c, att, 1, &env, &u);
	assert_int_equal(u.pages, 700);
	assert_false(u.first_touch);
	/* Policy pages: hint would not see them either, so it is not suggested. */
	assert_null(u.source);
}

/* auto's order lives in the table; the sight of each row decides what it passes over. */
static void auto_order_and_sight_come_from_the_table(void **state)
{
	const struct source_def *order[8];
	size_t n = sources__auto_order(order, 8);
	const char *want[] = { "pmu", "damon-vaddr", "hint", "damon", "fault" };

	(void)state;
	assert_int_equal(n, 5);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(order[i]->name, want[i]);
	assert_true(sources__sees_all(src("hint")->sight, 0, 9999));
	assert_false(sources__sees_all(src("hint")->sight, 1, 9999));
	assert_true(sources__sees_all(src("damon")->sight, 1, 9999));
	assert_true(sources__sees_all(src("pmu")->sight, 1, 9999));
	assert_false(sources__sees_all(src("fault")->sight, 0, 1));
	assert_true(sources__sees_all(src("fault")->sight, 0, 0));
	/* Each auto row is one auto can take; every other row is named only. */
	for (size_t i = 0; i < nr_sources; i++)
		if (sources[i]->auto_rank)
			assert_true(sources[i]->hook != HOOK_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(census_counts_policies_the_scanner_skips),
		cmocka_unit_test(census_of_this_process_sees_its_own_policy),
		cmocka_unit_test(census_comes_from_the_worker),
		cmocka_unit_test(hint_misses_the_preferred_pages_and_names_what_sees_them),
		cmocka_unit_test(sources_that_see_everything_leave_nothing_unseen),
		cmocka_unit_test(fault_misses_what_was_there_before),
		cmocka_unit_test(auto_order_and_sight_come_from_the_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
