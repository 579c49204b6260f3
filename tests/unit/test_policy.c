// SPDX-License-Identifier: MIT
/*
 * Policy host: loading $BUILD/policies/hotcold.so with its parameters,
 * refusing broken policies (tests/fixtures/policies/, compiled here at
 * run time) and untrusted files; then hotcold's decide() on hand-built views.
 */
#include <errno.h>
#include <limits.h>
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

#include "policy_host.h"
#include "policy_test.h"
#include "util.h"

/* Compiles tests/fixtures/policies/<name>.c into tmpdir/<name>.so; returns its path. */
static const char *build_fixture(const char *name)
{
	static char so[PATH_MAX];
	char cmd[3 * PATH_MAX];
	const char *cc = getenv("CC");

	snprintf(so, sizeof(so), "%s/%s.so", tmpdir, name);
	snprintf(cmd, sizeof(cmd),
		 "%s -std=gnu11 -Wall -Wextra -Werror -shared -fPIC -I include -o %s tests/fixtures/policies/%s.c",
		 cc && *cc ? cc : "cc", so, name);
	assert_int_equal(system(cmd), 0);
	return so;
}

/* ---- loading ---- */

static void hotcold_loads_with_defaults(void **state)
{
	struct policy_host h;

	(void)state;
	assert_int_equal(policy_host__load(&h, "hotcold", policies, NULL, 0), 0);
	assert_non_null(h.ops);
	assert_non_null(h.dl);
	assert_string_equal(h.ops->name, "hotcold");
	assert_int_equal(h.ops->abi, CXLT_POLICY_ABI);
	assert_non_null(h.state);
	assert_int_equal(h.nr_params, 2);
	assert_string_equal(param(&h, "promote_heat"), "1");
	assert_string_equal(param(&h, "demote_idle"), "60");
	policy_host__unload(&h);
	assert_null(h.dl);
	assert_null(h.ops);
}

static void hotcold_loads_by_path(void **state)
{
	char path[PATH_MAX + 16];
	struct policy_host h;

	(void)state;
	snprintf(path, sizeof(path), "%s/hotcold.so", policies);
	assert_int_equal(policy_host__load(&h, path, "/nonexistent", NULL, 0), 0);
	assert_string_equal(h.ops->name, "hotcold");
	policy_host__unload(&h);
}

static void parameter_overrides_default(void **state)
{
	char *kv[] = { "promote_heat=2" };
	struct policy_host h;

	(void)state;
	assert_int_equal(policy_host__load(&h, "hotcold", policies, kv, 1), 0);
	assert_string_equal(param(&h, "promote_heat"), "2");
	assert_string_equal(param(&h, "demote_idle"), "60");
	policy_host__unload(&h);
}

static void bad_parameters_are_refused(void **state)
{
	char *unknown[] = { "promote_heat=2", "threshold=5" };
	char *novalue[] = { "novalue" };
	char *nokey[] = { "=5" };
	char *notnum[] = { "promote_heat=abc" };
	char *negative[] = { "demote_idle=-3" };
	struct policy_host h;

	(void)state;
	assert_int_equal(policy_host__load(&h, "hotcold", policies, unknown, 2), -EINVAL);
	assert_null(h.dl);
	assert_int_equal(policy_host__load(&h, "hotcold", policies, novalue, 1), -EINVAL);
	assert_int_equal(policy_host__load(&h, "hotcold", policies, nokey, 1), -EINVAL);
	/* A value the policy cannot use fails its init(). */
	assert_int_equal(policy_host__load(&h, "hotcold", policies, notnum, 1), -EINVAL);
	assert_null(h.dl);
	assert_int_equal(policy_host__load(&h, "hotcold", policies, negative, 1), -EINVAL);
	/* Found by reading what the fuzzer reached: each of these used to load. */
	{
		static char *const loose[] = { "promote_heat=nan", "promote_heat=inf", "promote_heat=1e400",
					       "promote_heat= 2", "demote_idle= -1",
					       "demote_idle=99999999999999999999999", "demote_idle=70000" };

		for (size_t i = 0; i < sizeof(loose) / sizeof(loose[0]); i++)
			if (policy_host__load(&h, "hotcold", policies, &loose[i], 1) != -EINVAL)
				fail_msg("hotcold accepted %s", loose[i]);
	}
}

static void missing_policy_is_enoent(void **state)
{
	struct policy_host h;

	(void)state;
	assert_int_equal(policy_host__load(&h, "no-such-policy", policies, NULL, 0), -ENOENT);
}

static void wrong_abi_is_eproto(void **state)
{
	struct policy_host h;

	(void)state;
	assert_int_equal(policy_host__load(&h, build_fixture("bad_abi"), NULL, NULL, 0), -EPROTO);
	assert_null(h.dl);
	assert_int_equal(policy_host__load(&h, build_fixture("short_ops"), NULL, NULL, 0), -EPROTO);
}

static void missing_symbol_is_enoexec(void **state)
{
	struct policy_host h;

	(void)state;
	assert_int_equal(policy_host__load(&h, build_fixture("no_symbol"), NULL, NULL, 0), -ENOEXEC);
}

static void not_a_shared_object_is_enoexec(void **state)
{
	char path[PATH_MAX + 16];
	struct policy_host h;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/text.so", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("not an ELF file\n", f);
	fclose(f);
	assert_int_equal(policy_host__load(&h, path, NULL, NULL, 0), -ENOEXEC);
}

static void missing_decide_is_einval(void **state)
{
	struct policy_host h;

	(void)state;
	assert_int_equal(policy_host__load(&h, build_fixture("no_decide"), NULL, NULL, 0), -EINVAL);
}

static void failing_init_fails_the_load_without_fini(void **state)
{
	char mark[PATH_MAX + 16];
	struct policy_host h;

	(void)state;
	snprintf(mark, sizeof(mark), "%s/fini-ran", tmpdir);
	setenv("CXLT_TEST_FINI_MARK", mark, 1);
	assert_int_equal(policy_host__load(&h, build_fixture("init_fails"), NULL, NULL, 0), -ENOTSUP);
	unsetenv("CXLT_TEST_FINI_MARK");
	assert_null(h.dl);
	assert_null(h.state);
	assert_int_equal(access(mark, F_OK), -1);
}

static void untrusted_files_are_eperm(void **state)
{
	char sub[PATH_MAX], dst[PATH_MAX + 32], cmd[3 * PATH_MAX];
	struct policy_host h;

	(void)state;
	snprintf(dst, sizeof(dst), "%s/ww.so", tmpdir);
	snprintf(cmd, sizeof(cmd), "cp %s/hotcold.so %s", policies, dst);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(chmod(dst, 0644), 0);
	assert_int_equal(policy_host__load(&h, dst, NULL, NULL, 0), 0);	/* the control */
	policy_host__unload(&h);

	assert_int_equal(chmod(dst, 0666), 0);
	assert_int_equal(policy_host__load(&h, dst, NULL, NULL, 0), -EPERM);
	assert_null(h.dl);
	assert_int_equal(chmod(dst, 0664), 0);
	assert_int_equal(policy_host__load(&h, dst, NULL, NULL, 0), -EPERM);

	/* A trusted file in a directory anyone may write to. */
	snprintf(sub, sizeof(sub), "%s/open", tmpdir);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(dst, sizeof(dst), "%s/open/hotcold.so", tmpdir);
	snprintf(cmd, sizeof(cmd), "cp %s/hotcold.so %s", policies, dst);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(chmod(dst, 0644), 0);
	assert_int_equal(chmod(sub, 0777), 0);
	assert_int_equal(policy_host__load(&h, "hotcold", sub, NULL, 0), -EPERM);
	assert_int_equal(chmod(sub, 0755), 0);
	assert_int_equal(policy_host__load(&h, "hotcold", sub, NULL, 0), 0);
	policy_host__unload(&h);

	/* Root's file in a directory of another user's, who could swap it for a link. */
	if (geteuid() == 0) {
		assert_int_equal(chown(sub, 65534, 65534), 0);
		assert_int_equal(policy_host__load(&h, "hotcold", sub, NULL, 0), -EPERM);
		assert_null(h.dl);
		assert_int_equal(chown(sub, 0, 0), 0);
	}
	/* Sticky and world-writable, as /tmp: anyone can link a root file in under the name. */
	assert_int_equal(chmod(sub, 01777), 0);
	assert_int_equal(policy_host__load(&h, "hotcold", sub, NULL, 0), -EPERM);
	assert_int_equal(chmod(sub, 0755), 0);
}

/* ---- hotcold decide() on a hand-built view ---- */

static struct policy_host hc;

static void load_hotcold(char **kv, int nr)
{
	assert_int_equal(policy_host__load(&hc, "hotcold", policies, kv, nr), 0);
}

static int decide(struct scene *s)
{
	return hc.ops->decide(hc.state, &s->view, &s->plan);
}


static void hotcold_promotes_hottest_slow_pages_within_cap(void **state)
{
	static struct scene s;
	uint32_t h9, h5, h3, got[MAXP];

	(void)state;
	load_hotcold(NULL, 0);
	scene_init(&s, 3);
	add_page(&s, 1, 0.5f, 2, true);		/* slow, lukewarm: under promote_heat */
	h5 = add_page(&s, 1, 5, 0, true);
	add_page(&s, 1, 1, 0, true);		/* at the threshold, but cap is 3 */
	h9 = add_page(&s, 1, 9, 0, true);
	add_page(&s, 0, 20, 0, true);		/* hot, already fast */
	h3 = add_page(&s, 1, 3, 0, true);
	add_page(&s, 1, 0, 30, false);		/* never sampled on slow */
	add_page(&s, CXLT_NODE_UNKNOWN, 50, 0, true);	/* node not known yet */
	add_page(&s, 1, 2, 0, true);

	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 3);
	assert_int_equal(moves_to(&s, 0, got), 3);
	assert_int_equal(got[0], h9);
	assert_int_equal(got[1], h5);
	assert_int_equal(got[2], h3);
	policy_host__unload(&hc);
}

static void hotcold_promotes_all_hot_pages_hottest_first_when_they_fit(void **state)
{
	static struct scene s;
	uint32_t h1, h2, h3, h9, got[MAXP];

	(void)state;
	load_hotcold(NULL, 0);
	scene_init(&s, 32);
	h2 = add_page(&s, 1, 2, 0, true);
	h9 = add_page(&s, 1, 9, 0, true);
	add_page(&s, 1, 0.5f, 1, true);
	h1 = add_page(&s, 1, 1, 0, true);	/* heat == promote_heat promotes */
	h3 = add_page(&s, 1, 3, 0, true);

	assert_int_equal(decide(&s), 0);
	assert_int_equal(moves_to(&s, 0, got), 4);
	assert_int_equal(s.plan.nr, 4);
	/*
	 * The order matters to the mover: when the watermark leaves room for only
	 * some promotions, it keeps the plan's first ones.
	 */
	assert_int_equal(got[0], h9);
	assert_int_equal(got[1], h3);
	assert_int_equal(got[2], h2);
	assert_int_equal(got[3], h1);
	policy_host__unload(&hc);
}

static void hotcold_promote_heat_parameter_is_used(void **state)
{
	static struct scene s;
	char *kv[] = { "promote_heat=2" };
	uint32_t h3, got[MAXP];

	(void)state;
	load_hotcold(kv, 1);
	scene_init(&s, 32);
	add_page(&s, 1, 1.5f, 0, true);
	h3 = add_page(&s, 1, 3, 0, true);
	assert_int_equal(decide(&s), 0);
	assert_int_equal(moves_to(&s, 0, got), 1);
	assert_int_equal(got[0], h3);
	policy_host__unload(&hc);
}

static void hotcold_demotes_pages_idle_for_demote_idle(void **state)
{
	static struct scene s;
	char *kv[] = { "demote_idle=5" };
	uint32_t i5, i10, hot, got[MAXP];

	(void)state;
	load_hotcold(kv, 1);
	scene_init(&s, 32);
	add_page(&s, 0, 0.2f, 4, true);		/* idle 4 < 5: stays */
	i10 = add_page(&s, 0, 0.01f, 10, true);
	i5 = add_page(&s, 0, 0.1f, 5, true);
	add_page(&s, 1, 0, 100, true);		/* cold, already slow */
	hot = add_page(&s, 1, 4, 0, true);	/* to promote */

	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 3);
	/* demotions first in the plan */
	assert_int_equal(s.plan.moves[0].node, 1);
	assert_int_equal(s.plan.moves[1].node, 1);
	assert_int_equal(s.plan.moves[2].node, 0);
	assert_int_equal(moves_to(&s, 1, got), 2);
	assert_true((got[0] == i5 && got[1] == i10) || (got[0] == i10 && got[1] == i5));
	assert_int_equal(moves_to(&s, 0, got), 1);
	assert_int_equal(got[0], hot);
	policy_host__unload(&hc);

	/* With the default demote_idle=60 nothing of the above is cold enough. */
	load_hotcold(NULL, 0);
	s.plan.nr = 0;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(moves_to(&s, 1, got), 0);
	policy_host__unload(&hc);

	/* A source that sees first touches only: no demotion on idleness alone. */
	load_hotcold(kv, 1);
	s.view.source_flags = 0;
	s.plan.nr = 0;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(moves_to(&s, 1, got), 0);
	s.view.source_flags = CXLT_SOURCE_REPEATS;
	policy_host__unload(&hc);
}

static void hotcold_under_demote_goal_demotes_never_sampled_first(void **state)
{
	static struct scene s;
	uint32_t ns1, ns2, idle100, got[MAXP];

	(void)state;
	load_hotcold(NULL, 0);	/* demote_idle 60: nothing is idle enough by itself */
	scene_init(&s, 32);
	add_page(&s, 0, 3, 0, true);		/* hot fast page */
	add_page(&s, 0, 0.1f, 3, true);
	ns1 = add_page(&s, 0, 0, 1, false);
	idle100 = add_page(&s, 0, 0, 59, true);
	ns2 = add_page(&s, 0, 0, 2, false);
	add_page(&s, 1, 0, 9, false);		/* never sampled but already slow */

	s.view.fast_free_pages = 100;		/* under low (200) */
	s.view.demote_goal_pages = 2;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(moves_to(&s, 1, got), 2);
	assert_true((got[0] == ns1 && got[1] == ns2) || (got[0] == ns2 && got[1] == ns1));

	/* A goal of 3: then the longest idle sampled page. */
	s.plan.nr = 0;
	s.view.demote_goal_pages = 3;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(moves_to(&s, 1, got), 3);
	assert_int_equal(got[2], idle100);

	/* The goal is cut to the plan's cap. */
	s.plan.nr = 0;
	s.plan.cap = 1;
	s.view.demote_goal_pages = 3;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 1);
	assert_true(s.plan.moves[0].page == ns1 || s.plan.moves[0].page == ns2);
	policy_host__unload(&hc);
}

static void hotcold_demotes_to_the_roomiest_slow_node(void **state)
{
	static struct scene s;
	char *kv[] = { "demote_idle=1" };

	(void)state;
	load_hotcold(kv, 1);
	scene_init(&s, 32);
	s.nodes[2] = (struct cxlt_node){ .id = 3, .role = CXLT_NODE_SLOW, .tier = 22,
					 .total_pages = 100000, .free_pages = 90000 };
	s.view.nr_nodes = 3;
	add_page(&s, 0, 0, 10, true);
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 1);
	assert_int_equal(s.plan.moves[0].node, 3);
	policy_host__unload(&hc);
}

static void hotcold_without_slow_node_plans_nothing(void **state)
{
	static struct scene s;
	char *kv[] = { "demote_idle=1" };

	(void)state;
	load_hotcold(kv, 1);
	scene_init(&s, 32);
	s.view.nr_nodes = 1;
	add_page(&s, 0, 0, 10, true);
	add_page(&s, 0, 9, 0, true);
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 0);
	policy_host__unload(&hc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hotcold_loads_with_defaults),
		cmocka_unit_test(hotcold_loads_by_path),
		cmocka_unit_test(parameter_overrides_default),
		cmocka_unit_test(bad_parameters_are_refused),
		cmocka_unit_test(missing_policy_is_enoent),
		cmocka_unit_test(wrong_abi_is_eproto),
		cmocka_unit_test(missing_symbol_is_enoexec),
		cmocka_unit_test(not_a_shared_object_is_enoexec),
		cmocka_unit_test(missing_decide_is_einval),
		cmocka_unit_test(failing_init_fails_the_load_without_fini),
		cmocka_unit_test(untrusted_files_are_eperm),
		cmocka_unit_test(hotcold_promotes_hottest_slow_pages_within_cap),
		cmocka_unit_test(hotcold_promotes_all_hot_pages_hottest_first_when_they_fit),
		cmocka_unit_test(hotcold_promote_heat_parameter_is_used),
		cmocka_unit_test(hotcold_demotes_pages_idle_for_demote_idle),
		cmocka_unit_test(hotcold_under_demote_goal_demotes_never_sampled_first),
		cmocka_unit_test(hotcold_demotes_to_the_roomiest_slow_node),
		cmocka_unit_test(hotcold_without_slow_node_plans_nothing),
	};

	log_verbosity = LOG_ERR - 1;	/* refusals print on purpose */
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
