// SPDX-License-Identifier: MIT
/*
 * The engine between policy and mover: a broken policy's plan (bogus.so:
 * pages, targets and nodes that do not exist, more moves than the budget)
 * is validated entry by entry and cut, and nothing invalid reaches
 * move_pages; a good policy's plan (flip.so) is carried out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "util.h"

#define BASE 0x7f1200000000ULL

static int moves_asked;

static long fake_move_pages(void *ctx, int pid, unsigned long count, void **pages,
			    const int *nodes, int *status, int flags)
{
	(void)ctx;
	(void)pid;
	(void)pages;
	(void)flags;
	for (unsigned long i = 0; i < count; i++) {
		if (nodes) {
			assert_true(nodes[i] == 0 || nodes[i] == 1);
			moves_asked++;
		}
		status[i] = nodes ? nodes[i] : 0;
	}
	return 0;
}

static const struct platform fake_platform = { .move_pages = fake_move_pages };

struct rig {
	struct topology topo;
	struct tracker tr;
	struct mover m;
	struct policy_host ph;
	struct engine e;
};

static void rig_up(struct rig *r, const char *policy, uint32_t pages)
{
	struct mover_opts o;
	bool created;
	char path[256];

	memset(r, 0, sizeof(*r));
	r->topo.page_size = 4096;
	r->topo.nr_nodes = 2;
	r->topo.nodes[0] = (struct topo_node){ .id = 0, .role = ROLE_FAST, .tier = 4,
					       .total_pages = 100000, .free_pages = 50000 };
	r->topo.nodes[1] = (struct topo_node){ .id = 1, .role = ROLE_SLOW, .tier = 22,
					       .total_pages = 100000, .free_pages = 100000 };
	r->topo.fast_mask = 1;
	r->topo.slow_mask = 2;
	tracker__init(&r->tr, 0.5);
	tracker__add_target(&r->tr, 4321, 1, "t", ORIGIN_PID);
	for (uint32_t i = 0; i < pages; i++) {
		int idx = page_table__get(&r->tr.targets[0].pt, BASE + i * 4096ULL, &created);

		r->tr.targets[0].pt.pages[idx].node = 0;
	}
	mover__default_opts(&o);
	o.rate_mbps = 4;	/* 1024 pages a second */
	assert_int_equal(mover__init(&r->m, &o, 4096), 0);
	snprintf(path, sizeof(path), "%s/tests/policies/%s.so", getenv("BUILD") ?: "build", policy);
	assert_int_equal(policy_host__load(&r->ph, path, ".", NULL, 0), 0);
	r->e = (struct engine){ .topo = &r->topo, .tr = &r->tr, .m = &r->m, .policy = &r->ph,
				.epoch_ms = 1000, .quiet = true };
	r->m.pf = r->tr.pf = &fake_platform;
	moves_asked = 0;
}

static void rig_down(struct rig *r)
{
	engine__free(&r->e);
	policy_host__unload(&r->ph);
	mover__free(&r->m);
	tracker__free(&r->tr);
}

static void bogus_plan_is_refused_entry_by_entry_and_cut(void **state)
{
	struct rig r;

	(void)state;
	rig_up(&r, "bogus", 10);
	assert_int_equal(engine__decide_and_move(&r.e, 1.0), 0);
	/* The budget is 1024 pages, but no plan can exceed the 10 tracked pages. */
	assert_int_equal(r.e.last_plan, 10 + 100);	/* what the policy claimed */
	/* 5 invalid entries written, the other 5 slots of the cut plan never written: all refused. */
	assert_int_equal(r.m.epoch.rejected_invalid, 10);
	assert_int_equal(r.m.epoch.promoted + r.m.epoch.demoted + r.m.epoch.moved_other, 0);
	assert_int_equal(moves_asked, 0);
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(r.tr.targets[0].pt.pages[i].node, 0);
	rig_down(&r);
}

static void good_plan_is_carried_out_within_budget(void **state)
{
	struct rig r;

	(void)state;
	rig_up(&r, "flip", 3000);	/* flip asks to move all 3000; the budget is 1024 */
	assert_int_equal(engine__decide_and_move(&r.e, 1.0), 0);
	assert_int_equal(r.e.last_plan, 1024);
	assert_int_equal(r.m.epoch.demoted, 1024);
	assert_int_equal(moves_asked, 1024);
	rig_down(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bogus_plan_is_refused_entry_by_entry_and_cut),
		cmocka_unit_test(good_plan_is_carried_out_within_budget),
	};

	log_verbosity = LOG_ERR;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
