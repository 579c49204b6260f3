// SPDX-License-Identifier: MIT
/*
 * hang: a hostile test policy whose third decision never returns (a busy
 * loop: the time limit must stop running code, not only a sleeper).  The
 * replay must report its row as timed out and complete the others.
 */
#include "cxltier/policy.h"

static int hang_decide(void *state, const struct cxlt_view *v, struct cxlt_plan *plan)
{
	volatile unsigned long spins = 0;

	(void)state;
	(void)plan;
	while (v->epoch >= 3)
		spins++;
	return 0;
}

const struct cxlt_policy cxlt_policy = {
	.sz = sizeof(struct cxlt_policy),
	.abi = CXLT_POLICY_ABI,
	.name = "hang",
	.description = "test: decide() never returns from the third epoch",
	.decide = hang_decide,
};
