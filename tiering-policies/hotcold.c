// SPDX-License-Identifier: MIT
/*
 * hotcold: fixed thresholds.
 *
 * Idea: a page on a slow node whose decayed heat reaches `promote_heat` is
 * hot and moves to the fast node with the most free memory; a page on a fast
 * node that has not been sampled for `demote_idle` epochs is cold and moves
 * to the slow node with the most free memory.  When fast memory is short
 * (view->demote_goal_pages > 0), the coldest fast pages go first whatever
 * their idle time: never-sampled pages, then the longest idle, then the least
 * heat.  Within the budget, demotions come first and promotions are taken
 * hottest first.  Promotions that do not fit over the high watermark
 * displace the coldest fast pages, each for a slow page at least twice as
 * hot: after first touch the fast tier is full down to the low watermark,
 * and without this nothing would ever make room for a hot page (the policy
 * then scored exactly like no migration on every synthetic trace).  Pages
 * moved less than the mover's ping-pong window ago are left alone.
 *
 * Parameters:
 *   promote_heat  heat at which a slow page is promoted (default 1: sampled
 *                 in the current epoch, or often enough recently)
 *   demote_idle   idle epochs after which a fast page is demoted (default 60;
 *                 0 = demote only when fast memory is short)
 *
 * Simple and predictable, but the thresholds need tuning per workload: see
 * the hotset policy for the goal-based alternative.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxltier/policy.h"
#include "cxltier/policy-helpers.h"

struct hotcold {
	double promote_heat;
	unsigned long demote_idle;
	struct cxlt_cand *cands;
	uint64_t cap;
};

static int hotcold_init(void **state, const struct cxlt_param *params,
			uint32_t nr, char *err, size_t errlen)
{
	struct hotcold *hc = calloc(1, sizeof(*hc));

	if (!hc)
		return -ENOMEM;
	for (uint32_t i = 0; i < nr; i++) {
		const char *v = params[i].value;
		char *end;

		/* Digits only, no sign or blank; finite; no overflow. */
		errno = 0;
		if (!strcmp(params[i].key, "promote_heat")) {
			hc->promote_heat = strtod(v, &end);
			if (*end || end == v || errno || !isfinite(hc->promote_heat) ||
			    hc->promote_heat <= 0 || (*v < '0' || *v > '9'))
				goto bad;
		} else if (!strcmp(params[i].key, "demote_idle")) {
			hc->demote_idle = strtoul(v, &end, 10);
			if (*end || end == v || errno || *v < '0' || *v > '9' || hc->demote_idle > 65535)
				goto bad;
		}
		continue;
bad:
		snprintf(err, errlen, "%s=%s: expected %s", params[i].key, v,
			 !strcmp(params[i].key, "demote_idle") ? "whole epochs, 0 to 65535" :
			 "a positive number");
		free(hc);
		return -EINVAL;
	}
	*state = hc;
	return 0;
}

static void hotcold_fini(void *state)
{
	struct hotcold *hc = state;

	free(hc->cands);
	free(hc);
}

/* Collects pages of one role; cold=1 ranks coldest first, else hottest first. */
static uint64_t collect(struct hotcold *hc, const struct cxlt_view *v, int role,
			int cold, uint64_t idle_min, double heat_min)
{
	int8_t roles[CXLT_MAX_NODE_ID];
	uint64_t n = 0;

	cxlt_role_table(v, roles);
	for (uint32_t t = 0; t < v->nr_targets; t++) {
		const struct cxlt_page *pages = v->targets[t].pages;

		for (uint64_t i = 0; i < v->targets[t].nr_pages; i++) {
			const struct cxlt_page *p = &pages[i];

			/* The mover refuses a page moved too recently: no slot for it. */
			if (p->node < 0 || roles[p->node] != role || p->since_move < v->pingpong_epochs || !p->npages)
				continue;
			if (cold ? idle_min && !cxlt_idle_beyond(p, idle_min) : cxlt_heat_per_page(p) < heat_min)
				continue;
			hc->cands[n].target = t;
			hc->cands[n].page = (uint32_t)i;
			/* Never-sampled pages are the coldest of all. */
			hc->cands[n].key = cold ? (p->flags & CXLT_PAGE_SAMPLED ? 0 : 1e9f) +
						  p->idle_epochs - cxlt_heat_per_page(p) : cxlt_heat_per_page(p);
			n++;
		}
	}
	return n;
}

/* Every fast page the mover would let go, keyed -heat (the coldest ranks first). */
static uint64_t collect_victims(struct hotcold *hc, const struct cxlt_view *v, struct cxlt_cand *out)
{
	int8_t roles[CXLT_MAX_NODE_ID];
	uint64_t n = 0;

	(void)hc;
	cxlt_role_table(v, roles);
	for (uint32_t t = 0; t < v->nr_targets; t++)
		for (uint64_t i = 0; i < v->targets[t].nr_pages; i++) {
			const struct cxlt_page *p = &v->targets[t].pages[i];

			if (p->node < 0 || roles[p->node] != CXLT_NODE_FAST ||
			    p->since_move < v->pingpong_epochs || !p->npages)
				continue;
			out[n++] = (struct cxlt_cand){ .key = -cxlt_heat_per_page(p), .target = t, .page = (uint32_t)i };
		}
	return n;
}

static int hotcold_decide(void *state, const struct cxlt_view *v, struct cxlt_plan *plan)
{
	struct hotcold *hc = state;
	int fast = cxlt_roomiest_node(v, CXLT_NODE_FAST), slow = cxlt_roomiest_node(v, CXLT_NODE_SLOW);
	uint64_t total = 0, n, want, nd, left, room;
	int err;

	if (fast < 0 || slow < 0)
		return 0;	/* nothing to move between */
	total = cxlt_view_pages(v);
	/* Two lists: slow candidates, then fast victims. */
	if ((err = cxlt_cands_reserve(&hc->cands, &hc->cap, 2 * total)))
		return err;

	/* Demotions: to make room when short, else the pages idle for long. */
	/* Idle time means something only when the source sees repeated use. */
	if (v->demote_goal_pages || (hc->demote_idle && cxlt_idle_is_evidence(v))) {
		n = collect(hc, v, CXLT_NODE_FAST, 1,
			    v->demote_goal_pages ? 0 : hc->demote_idle, 0);
		want = v->demote_goal_pages ? v->demote_goal_pages : n;
		if (want > plan->cap - plan->nr)
			want = plan->cap - plan->nr;
		cxlt_top_k(hc->cands, n, want);
		for (uint64_t i = 0; i < n && i < want; i++)
			if (cxlt_plan_add(plan, hc->cands[i].target, hc->cands[i].page, slow))
				return 0;
	}

	/*
	 * Promotions, hottest first even when all fit (the mover may cut them
	 * short), into free fast memory over the high watermark.  What does
	 * not fit displaces the coldest fast pages, each for a slow page at
	 * least twice as hot: after first touch a full fast tier keeps free
	 * memory between the watermarks, where nothing else would ever make
	 * room for a hot page.  Only when no demotion is planned yet, so no
	 * page is planned twice.
	 */
	nd = plan->nr;
	n = collect(hc, v, CXLT_NODE_SLOW, 0, 0, hc->promote_heat);
	left = plan->cap - plan->nr;
	cxlt_top_k(hc->cands, n, n < left ? n : left);
	if (n > left)
		n = left;
	room = v->fast_free_pages + nd > v->fast_high_pages ? v->fast_free_pages + nd - v->fast_high_pages : 0;
	if (!nd && n > room && cxlt_idle_is_evidence(v)) {
		struct cxlt_cand *victims = hc->cands + total;
		uint64_t nv = collect_victims(hc, v, victims), k = 0;

		cxlt_top_k(victims, nv, n - room < nv ? n - room : nv);
		/* Victims' keys are -heat: coldest first. */
		while (k < nv && room + k < n && room + 2 * (k + 1) <= left &&
		       hc->cands[room + k].key > -2 * victims[k].key)
			k++;
		for (uint64_t i = 0; i < k; i++)
			cxlt_plan_add(plan, victims[i].target, victims[i].page, slow);
		room += k;
	}
	for (uint64_t i = 0; i < n && i < room; i++)
		if (cxlt_plan_add(plan, hc->cands[i].target, hc->cands[i].page, fast))
			break;
	return 0;
}

static const struct cxlt_param_desc hotcold_params[] = {
	{ "promote_heat", "1", "decayed heat at which a slow-tier page is promoted" },
	{ "demote_idle", "60", "idle epochs after which a fast-tier page is demoted (0: only under pressure)" },
	{ NULL, NULL, NULL },
};

const struct cxlt_policy cxlt_policy = {
	.sz = sizeof(struct cxlt_policy),
	.abi = CXLT_POLICY_ABI,
	.name = "hotcold",
	.description = "promote pages over a heat threshold, demote pages idle for N epochs",
	.params = hotcold_params,
	.init = hotcold_init,
	.decide = hotcold_decide,
	.fini = hotcold_fini,
};
