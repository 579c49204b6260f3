// SPDX-License-Identifier: MIT
/*
 * overrun: a hostile test policy that writes past an array the host gave
 * it, from the third epoch: `what=plan` (the default) writes moves past the
 * plan's capacity without cxlt_plan_add(); `what=pages` writes past the
 * last target's policy_words.  On the host's own heap that is
 * a corruption found (if at all) later, far from its cause; the replay must
 * report the row as crashed and complete the others.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxltier/policy.h"

static int overrun_init(void **state, const struct cxlt_param *params, uint32_t nr, char *err,
			size_t errlen)
{
	static int pages = 1, plan = 0;

	for (uint32_t i = 0; i < nr; i++) {
		if (strcmp(params[i].key, "what"))
			continue;
		if (!strcmp(params[i].value, "pages")) {
			*state = &pages;
		} else if (!strcmp(params[i].value, "plan")) {
			*state = &plan;
		} else {
			snprintf(err, errlen, "what=%s: expected plan or pages", params[i].value);
			return -EINVAL;
		}
	}
	return 0;
}

static int overrun_decide(void *state, const struct cxlt_view *v, struct cxlt_plan *plan)
{
	if (v->epoch < 3 || !v->nr_targets)
		return 0;
	if (*(int *)state) {
		uint32_t *words = v->targets[v->nr_targets - 1].policy_words;
		uint64_t n = v->targets[v->nr_targets - 1].nr_pages;

		for (uint64_t i = n; i < n + 65536; i++)
			words[i] = 0xdead;
		return 0;
	}
	for (uint32_t i = 0; i < plan->cap + 65536; i++)
		plan->moves[i] = (struct cxlt_move){ .target = 0, .page = 0, .node = 0 };
	plan->nr = plan->cap;
	return 0;
}

static const struct cxlt_param_desc overrun_params[] = {
	{ "what", "plan", "plan: past the plan's capacity; pages: past the policy words" },
	{ NULL, NULL, NULL },
};

const struct cxlt_policy cxlt_policy = {
	.sz = sizeof(struct cxlt_policy),
	.abi = CXLT_POLICY_ABI,
	.name = "overrun",
	.description = "test: writes past the plan or the page records from the third epoch",
	.params = overrun_params,
	.init = overrun_init,
	.decide = overrun_decide,
};
