// SPDX-License-Identifier: MIT
/*
 * crash: a hostile test policy.  It plans nothing for two epochs, then
 * dereferences NULL in decide().  The replay must report its row as crashed,
 * by name, and complete every other row (tests/cli/replay-isolation.sh).
 */
#include <stddef.h>

#include "cxltier/policy.h"

static int crash_decide(void *state, const struct cxlt_view *v, struct cxlt_plan *plan)
{
	volatile int *nowhere = NULL;

	(void)state;
	(void)plan;
	if (v->epoch >= 3)
		*nowhere = 1;
	return 0;
}

const struct cxlt_policy cxlt_policy = {
	.sz = sizeof(struct cxlt_policy),
	.abi = CXLT_POLICY_ABI,
	.name = "crash",
	.description = "test: a NULL dereference in decide() from the third epoch",
	.decide = crash_decide,
};
