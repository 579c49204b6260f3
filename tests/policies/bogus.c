// SPDX-License-Identifier: MIT
/*
 * bogus: a deliberately broken policy for tests.  Its plan names a target,
 * a page and nodes that do not exist, a page on the node it already is on,
 * and then claims more moves than the budget allows.  The host must refuse
 * each entry and cut the plan, and move nothing it was not asked to.
 */
#include "cxltier/policy.h"

static int bogus_decide(void *state, const struct cxlt_view *v, struct cxlt_plan *plan)
{
	(void)state;
	cxlt_plan_add(plan, v->nr_targets + 5, 0, 0);		/* no such target */
	if (v->nr_targets) {
		cxlt_plan_add(plan, 0, (uint32_t)v->targets[0].nr_pages + 7, 0);	/* no such page */
		cxlt_plan_add(plan, 0, 0, 42);			/* no such node */
		cxlt_plan_add(plan, 0, 0, -3);			/* not a node */
		cxlt_plan_add(plan, 0, 0, v->targets[0].pages[0].node);	/* already there */
	}
	plan->nr = plan->cap + 100;	/* and a lie about the plan's size */
	return 0;
}

const struct cxlt_policy cxlt_policy = {
	.sz = sizeof(struct cxlt_policy),
	.abi = CXLT_POLICY_ABI,
	.name = "bogus",
	.description = "test: a plan full of invalid moves, over budget",
	.decide = bogus_decide,
};
