// SPDX-License-Identifier: MIT
/*
 * flip: a stress policy for tests, never for real use.  Every epoch it moves
 * every tracked page whose node is known to the other tier (fast -> slowest-
 * free slow node, slow -> fast), as far as the budget goes.  With the
 * agent's ping-pong damping off it makes the mover migrate the same pages
 * back and forth while the workload writes them: the data-safety test.
 */
#include "cxltier/policy.h"

static int pick(const struct cxlt_view *v, int role)
{
	for (uint32_t i = 0; i < v->nr_nodes; i++)
		if (v->nodes[i].role == role)
			return v->nodes[i].id;
	return -1;
}

static int flip_decide(void *state, const struct cxlt_view *v, struct cxlt_plan *plan)
{
	int fast = pick(v, CXLT_NODE_FAST), slow = pick(v, CXLT_NODE_SLOW);

	(void)state;
	if (fast < 0 || slow < 0)
		return 0;
	for (uint32_t t = 0; t < v->nr_targets; t++)
		for (uint64_t i = 0; i < v->targets[t].nr_pages; i++) {
			int node = v->targets[t].pages[i].node;

			if (node < 0)
				continue;
			if (cxlt_plan_add(plan, t, (uint32_t)i, node == fast ? slow : fast))
				return 0;
		}
	return 0;
}

const struct cxlt_policy cxlt_policy = {
	.sz = sizeof(struct cxlt_policy),
	.abi = CXLT_POLICY_ABI,
	.name = "flip",
	.description = "test stress: move every page to the other tier every epoch",
	.decide = flip_decide,
};
