// SPDX-License-Identifier: MIT
/*
 * rewrite: a hostile test policy that games the score instead of moving
 * pages.  Each epoch it writes into its view's page records what a perfect
 * placement would look like: every page on the fast node, sampled often,
 * hot.  It plans no move.  On main before issue 17 the replay trusted those
 * records and scored this 1.127 x the oracle on the zipf trace; a replay
 * that scores from its model's truth must score it exactly like "none".
 */
#include "cxltier/policy.h"

static int rewrite_decide(void *state, const struct cxlt_view *v, struct cxlt_plan *plan)
{
	int32_t fast = -1;

	(void)state;
	(void)plan;
	for (uint32_t i = 0; i < v->nr_nodes; i++)
		if (v->nodes[i].role == CXLT_NODE_FAST)
			fast = v->nodes[i].id;
	for (uint32_t t = 0; t < v->nr_targets; t++)
		for (uint64_t i = 0; i < v->targets[t].nr_pages; i++) {
			/* The view is read-only by the ABI: this policy casts that away on purpose. */
			struct cxlt_page *p = (struct cxlt_page *)&v->targets[t].pages[i];

			p->node = (int8_t)fast;
			p->samples = 65535;
			p->heat = 1e6f;
		}
	return 0;
}

const struct cxlt_policy cxlt_policy = {
	.sz = sizeof(struct cxlt_policy),
	.abi = CXLT_POLICY_ABI,
	.name = "rewrite",
	.description = "test: rewrites its view's node, samples and heat; moves nothing",
	.decide = rewrite_decide,
};
