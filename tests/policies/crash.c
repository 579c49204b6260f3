// SPDX-License-Identifier: MIT
/*
 * crash: a hostile test policy.  It plans nothing for two epochs, then
 * dereferences NULL in decide() (`how=null`, the default) or frees a block
 * twice (`how=abort`: the C library finds its heap corrupt and aborts).  The
 * replay must report its row as crashed or aborted, by name, and complete
 * every other row (tests/cli/replay-isolation.sh).  `when=init` crashes in
 * init() instead: the live agent runs init in the policy's own process too
 * (tests/live/policy-sandbox.sh).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxltier/policy.h"

static int crash_init(void **state, const struct cxlt_param *params, uint32_t nr, char *err,
		      size_t errlen)
{
	static int do_abort;

	for (uint32_t i = 0; i < nr; i++) {
		if (!strcmp(params[i].key, "when") && !strcmp(params[i].value, "init"))
			*(volatile int *)NULL = 1;
		if (strcmp(params[i].key, "how"))
			continue;
		if (strcmp(params[i].value, "null") && strcmp(params[i].value, "abort")) {
			snprintf(err, errlen, "how=%s: expected null or abort", params[i].value);
			return -EINVAL;
		}
		do_abort = !strcmp(params[i].value, "abort");
	}
	*state = &do_abort;
	return 0;
}

static int crash_decide(void *state, const struct cxlt_view *v, struct cxlt_plan *plan)
{
	volatile int *nowhere = NULL;
	char *volatile block;

	(void)plan;
	if (v->epoch < 3)
		return 0;
	if (*(int *)state) {
		block = malloc(64);
		free(block);
		free(block);
	}
	*nowhere = 1;
	return 0;
}

static const struct cxlt_param_desc crash_params[] = {
	{ "how", "null", "null: a NULL dereference; abort: a double free" },
	{ "when", "decide", "decide: from the third epoch; init: in init()" },
	{ NULL, NULL, NULL },
};

const struct cxlt_policy cxlt_policy = {
	.sz = sizeof(struct cxlt_policy),
	.abi = CXLT_POLICY_ABI,
	.name = "crash",
	.description = "test: a NULL dereference or a double free in decide() from the third epoch",
	.params = crash_params,
	.init = crash_init,
	.decide = crash_decide,
};
