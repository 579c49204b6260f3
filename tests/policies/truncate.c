// SPDX-License-Identifier: MIT
/*
 * truncate: a test policy for cxltier-replay, never for real use.  On its
 * first decision it truncates the file named by $CXLT_TEST_TRUNCATE to 100
 * bytes: the trace shrinking under a replay that is still reading it, at a
 * known point and without a timing race (tests/cli/replay-hostile.sh).
 */
#include <stdlib.h>
#include <unistd.h>

#include "cxltier/policy.h"

static int truncate_decide(void *state, const struct cxlt_view *v, struct cxlt_plan *plan)
{
	static int done;
	const char *path = getenv("CXLT_TEST_TRUNCATE");

	(void)state;
	(void)v;
	(void)plan;
	if (!done && path && truncate(path, 100))
		return -1;
	done = 1;
	return 0;
}

const struct cxlt_policy cxlt_policy = {
	.sz = sizeof(struct cxlt_policy),
	.abi = CXLT_POLICY_ABI,
	.name = "truncate",
	.description = "test: truncate $CXLT_TEST_TRUNCATE on the first decision",
	.decide = truncate_decide,
};
