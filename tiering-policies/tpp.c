// SPDX-License-Identifier: MIT
/*
 * tpp: the kernel's TPP (transparent page placement) behaviour, as the
 * baseline the other policies have to beat.
 *
 * Idea: no heat and no history.  A slow page is promoted on its first NUMA
 * hint fault or sample of the epoch (CXLT_PAGE_HINTED or samples > 0), to
 * the fast node with the most free memory; the pages with the most samples
 * this epoch go first.  Fast pages are demoted only by watermark: when fast
 * memory is short (view->demote_goal_pages > 0), that many fast pages go to
 * the slow node with the most free memory, the longest idle first (never
 * sampled, then the longest since the last sample: what the kernel's LRU
 * approximates).  Promotions are limited to what fits over the high
 * watermark once the demotions are done; the rest waits for a later epoch,
 * as a kernel promotion fails when the fast node is short.
 *
 * With `promo_reclaim=1`, a promotion that does not fit also demotes one of
 * the longest-idle fast pages, as the kernel's kswapd does when a failed
 * promotion wakes it to reclaim up to the promotion watermark (WMARK_PROMO,
 * Linux 6.1+); this is the default, as in the kernel.  With 0 a full fast
 * tier takes promotions only as fast as other memory frees up.
 *
 * Pages moved less than `settle_epochs` ago are left alone (the mover would
 * refuse them), as are pages whose node is unknown.
 *
 * Parameters:
 *   promo_reclaim  1: demote for promotions that do not fit too (default 1);
 *                  0: demote only for the demote goal
 *   settle_epochs  epochs a moved page stays put; match the agent's
 *                  --pingpong-epochs (default 10)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxltier/policy.h"
#include "cxltier/policy-helpers.h"

struct tpp {
	unsigned long promo_reclaim;
	unsigned long settle_epochs;
	struct cxlt_cand *cands;	/* promotions from the front, demotions from the back */
	uint64_t cap;
};

static int parse_ulong(const char *s, unsigned long hi, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || end == s || *end || s[0] == '-' || *out > hi ? -EINVAL : 0;
}

static int tpp_init(void **state, const struct cxlt_param *params, uint32_t nr,
		    char *err, size_t errlen)
{
	struct tpp *tp = calloc(1, sizeof(*tp));

	if (!tp)
		return -ENOMEM;
	tp->settle_epochs = 10;
	for (uint32_t i = 0; i < nr; i++) {
		const char *k = params[i].key, *v = params[i].value;

		if (!strcmp(k, "promo_reclaim")) {
			if (parse_ulong(v, 1, &tp->promo_reclaim)) {
				snprintf(err, errlen, "%s=%s: expected 0 or 1", k, v);
				goto bad;
			}
		} else if (!strcmp(k, "settle_epochs")) {
			if (parse_ulong(v, CXLT_NEVER_MOVED - 1, &tp->settle_epochs)) {
				snprintf(err, errlen, "%s=%s: expected a whole number from 0 to %d",
					 k, v, CXLT_NEVER_MOVED - 1);
				goto bad;
			}
		}
	}
	*state = tp;
	return 0;
bad:
	free(tp);
	return -EINVAL;
}

static void tpp_fini(void *state)
{
	struct tpp *tp = state;

	free(tp->cands);
	free(tp);
}

static int tpp_decide(void *state, const struct cxlt_view *v, struct cxlt_plan *plan)
{
	struct tpp *tp = state;
	int fast = cxlt_roomiest_node(v, CXLT_NODE_FAST), slow = cxlt_roomiest_node(v, CXLT_NODE_SLOW);
	uint64_t left = plan->cap > plan->nr ? plan->cap - plan->nr : 0;
	uint64_t total = 0, ns = 0, nf = 0, nd, np, room;
	struct cxlt_cand *demote;
	int8_t roles[CXLT_MAX_NODE_ID];
	int err;

	if (fast < 0 || slow < 0 || !left)
		return 0;
	cxlt_role_table(v, roles);
	total = cxlt_view_pages(v);
	if ((err = cxlt_cands_reserve(&tp->cands, &tp->cap, total)))
		return err;

	/* Promotion candidates: slow pages touched this epoch; demotion: fast pages. */
	demote = tp->cands + total;
	for (uint32_t t = 0; t < v->nr_targets; t++) {
		const struct cxlt_page *pages = v->targets[t].pages;

		for (uint64_t i = 0; i < v->targets[t].nr_pages; i++) {
			const struct cxlt_page *p = &pages[i];
			struct cxlt_cand *c;

			if (p->node < 0 || roles[p->node] < 0 ||
			    p->since_move < tp->settle_epochs || !p->npages)
				continue;
			if (roles[p->node] == CXLT_NODE_SLOW) {
				if (!p->samples && !(p->flags & CXLT_PAGE_HINTED))
					continue;
				c = &tp->cands[ns++];
				c->key = p->npages > 1 ? (float)p->samples / p->npages : p->samples;
			} else {
				if (!v->demote_goal_pages && !tp->promo_reclaim)
					continue;
				c = &demote[-(int64_t)++nf];
				c->key = (p->flags & CXLT_PAGE_SAMPLED ? 0 : 1e6f) + p->idle_epochs;
			}
			c->target = t;
			c->page = (uint32_t)i;
		}
	}
	demote -= nf;

	/* By watermark: what fast memory needs. */
	nd = v->demote_goal_pages < nf ? v->demote_goal_pages : nf;
	if (nd > left)
		nd = left;
	/* The promotions that fit over the high watermark once those are done. */
	room = v->fast_free_pages + nd > v->fast_high_pages ?
	       v->fast_free_pages + nd - v->fast_high_pages : 0;
	np = ns < room ? ns : room;
	if (np > left - nd)
		np = left - nd;
	/* kswapd woken by a failed promotion: one demotion per promotion. */
	while (tp->promo_reclaim && cxlt_idle_is_evidence(v) && np < ns && nd < nf &&
	       nd + np + 2 <= left) {
		nd++;
		np++;
	}
	cxlt_top_k(demote, nf, nd);
	for (uint64_t i = 0; i < nd; i++)
		if (cxlt_plan_add(plan, demote[i].target, demote[i].page, slow))
			return 0;
	cxlt_top_k(tp->cands, ns, np);
	for (uint64_t i = 0; i < np; i++)
		if (cxlt_plan_add(plan, tp->cands[i].target, tp->cands[i].page, fast))
			break;
	return 0;
}

static const struct cxlt_param_desc tpp_params[] = {
	{ "promo_reclaim", "1", "1: demote the longest-idle fast pages for promotions that do not fit (0: only for the demote goal)" },
	{ "settle_epochs", "10", "epochs a moved page is left alone (match --pingpong-epochs)" },
	{ NULL, NULL, NULL },
};

const struct cxlt_policy cxlt_policy = {
	.sz = sizeof(struct cxlt_policy),
	.abi = CXLT_POLICY_ABI,
	.name = "tpp",
	.description = "TPP-like: promote on a hint fault or sample, demote by watermark",
	.params = tpp_params,
	.init = tpp_init,
	.decide = tpp_decide,
	.fini = tpp_fini,
};
