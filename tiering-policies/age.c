// SPDX-License-Identifier: MIT
/*
 * age: idle time only, after memtierd's age policy.
 *
 * Idea: a fast page not sampled for more than `idle_demote` epochs is cold
 * and moves to the slow node with the most free memory; a slow page sampled
 * within the last `active_epochs` epochs is active and moves to the fast node
 * with the most free memory.  Heat is not looked at except to break ties, so
 * the policy needs no notion of "how hot", only of "how recently".
 *
 * When fast memory is short (view->demote_goal_pages > 0), at least that many
 * fast pages go, the longest idle first (never-sampled pages count as idle
 * since they were first tracked) whatever their idle time.  Demotions come
 * first in the plan; promotions follow, the most recently sampled first, and
 * only as many as fit over the high watermark once the demotions are done.
 * Those that do not fit displace fast pages used less recently (or as
 * recently and less than half as hot: heat breaks the tie), the longest
 * idle first: after first touch the fast tier is full down to the low
 * watermark, and while no fast page is idle for idle_demote epochs nothing
 * else would make room (the policy then scored exactly like no migration
 * on every synthetic trace).
 * Pages moved less than `settle_epochs` ago are left alone (the mover would
 * refuse them), as are pages whose node is unknown.
 *
 * Parameters:
 *   idle_demote    a fast page idle for more epochs than this is demoted
 *                  (default 30)
 *   active_epochs  a slow page sampled in the last N epochs (idle_epochs < N)
 *                  is promoted (default 2)
 *   settle_epochs  epochs a moved page stays put; match the agent's
 *                  --pingpong-epochs (default 10)
 *
 * Simple and robust when the hot set is stable; slow to react when a large
 * hot set shifts, since pages leave only after idle_demote epochs.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxltier/policy.h"
#include "cxltier/policy-helpers.h"

struct age {
	unsigned long idle_demote;
	unsigned long active_epochs;
	unsigned long settle_epochs;
	struct cxlt_cand *cands;	/* promotions from the front, demotions from the back */
	uint64_t cap;
};

static int parse_ulong(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || end == s || *end || s[0] == '-' || *out < lo || *out > hi ? -EINVAL : 0;
}

static int age_init(void **state, const struct cxlt_param *params, uint32_t nr,
		    char *err, size_t errlen)
{
	struct age *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->idle_demote = 30;
	a->active_epochs = 2;
	a->settle_epochs = 10;
	for (uint32_t i = 0; i < nr; i++) {
		const char *k = params[i].key, *v = params[i].value;
		unsigned long *dst = NULL, lo = 0;

		if (!strcmp(k, "idle_demote"))
			dst = &a->idle_demote;
		else if (!strcmp(k, "active_epochs"))
			dst = &a->active_epochs, lo = 1;
		else if (!strcmp(k, "settle_epochs"))
			dst = &a->settle_epochs;
		if (dst && parse_ulong(v, lo, CXLT_NEVER_MOVED - 1, dst)) {
			snprintf(err, errlen, "%s=%s: expected a whole number from %lu to %d", k, v,
				 lo, CXLT_NEVER_MOVED - 1);
			free(a);
			return -EINVAL;
		}
	}
	*state = a;
	return 0;
}

static void age_fini(void *state)
{
	struct age *a = state;

	free(a->cands);
	free(a);
}

/* The page a candidate names. */
static const struct cxlt_page *cand_page(const struct cxlt_view *v, const struct cxlt_cand *c)
{
	return &v->targets[c->target].pages[c->page];
}

/*
 * After first touch a full fast tier keeps its free memory between the
 * watermarks, and nothing would ever make room for an active slow page
 * while no fast page is idle for idle_demote epochs.  So the promotions
 * that do not fit (a->cands[room..np), the most recent first) displace
 * fast pages, each one only for a slow page used more recently than it,
 * or as recently and at least twice as hot (heat breaks the tie); the
 * longest idle, then the coldest, go first.  Called only when no
 * demotion is planned yet, so no page is planned twice.  Plans the
 * demotions; returns how many.
 */
static uint64_t displace(struct age *a, const struct cxlt_view *v, const int8_t *roles, uint64_t ns,
			 uint64_t np, uint64_t room, uint64_t left, int slow, struct cxlt_plan *plan)
{
	struct cxlt_cand *victims = a->cands + ns;
	uint64_t nv = 0, k = 0;

	for (uint32_t t = 0; t < v->nr_targets; t++)
		for (uint64_t i = 0; i < v->targets[t].nr_pages; i++) {
			const struct cxlt_page *p = &v->targets[t].pages[i];

			if (p->node < 0 || roles[p->node] != CXLT_NODE_FAST ||
			    p->since_move < a->settle_epochs || !p->npages)
				continue;
			victims[nv++] = (struct cxlt_cand){ .key = 1e6f * p->idle_epochs - cxlt_heat_per_page(p),
							    .target = t, .page = (uint32_t)i };
		}
	cxlt_top_k(victims, nv, np - room < nv ? np - room : nv);
	while (k < nv && room + k < np && room + 2 * (k + 1) <= left) {
		const struct cxlt_page *in = cand_page(v, &a->cands[room + k]);
		const struct cxlt_page *out = cand_page(v, &victims[k]);

		if (!(out->idle_epochs > in->idle_epochs ||
		      (out->idle_epochs == in->idle_epochs && in->heat > 2 * out->heat)))
			break;
		k++;
	}
	for (uint64_t i = 0; i < k; i++)
		cxlt_plan_add(plan, victims[i].target, victims[i].page, slow);
	return k;
}

static int age_decide(void *state, const struct cxlt_view *v, struct cxlt_plan *plan)
{
	struct age *a = state;
	int fast = cxlt_roomiest_node(v, CXLT_NODE_FAST), slow = cxlt_roomiest_node(v, CXLT_NODE_SLOW);
	uint64_t left = plan->cap > plan->nr ? plan->cap - plan->nr : 0;
	uint64_t total = 0, ns = 0, nf = 0, nidle = 0, nd, np, room;
	uint64_t goal = v->demote_goal_pages;
	struct cxlt_cand *demote;
	int8_t roles[CXLT_MAX_NODE_ID];
	int err;

	if (fast < 0 || slow < 0 || !left)
		return 0;
	cxlt_role_table(v, roles);
	total = cxlt_view_pages(v);
	if ((err = cxlt_cands_reserve(&a->cands, &a->cap, total)))
		return err;

	/*
	 * One pass.  Demotion candidates: idle fast pages, or every fast page
	 * when fast memory is short; key: idle time, never-sampled pages first
	 * on a tie.  Promotion candidates: active slow pages; key: the most
	 * recent first, then the hottest.
	 */
	demote = a->cands + total;
	for (uint32_t t = 0; t < v->nr_targets; t++) {
		const struct cxlt_page *pages = v->targets[t].pages;

		for (uint64_t i = 0; i < v->targets[t].nr_pages; i++) {
			const struct cxlt_page *p = &pages[i];
			struct cxlt_cand *c;

			if (p->node < 0 || roles[p->node] < 0 ||
			    p->since_move < a->settle_epochs || !p->npages)
				continue;
			if (roles[p->node] == CXLT_NODE_FAST) {
				/* Idle time means something only when the source sees repeated use. */
				bool idle = cxlt_idle_is_evidence(v) &&
					    cxlt_idle_beyond(p, a->idle_demote + 1);

				if (!idle && !goal)
					continue;
				nidle += idle;
				c = &demote[-(int64_t)++nf];
				c->key = 2.0f * p->idle_epochs + !(p->flags & CXLT_PAGE_SAMPLED);
			} else {
				if (!(p->flags & CXLT_PAGE_SAMPLED) ||
				    p->idle_epochs >= a->active_epochs)
					continue;
				c = &a->cands[ns++];
				c->key = -1e6f * p->idle_epochs + cxlt_heat_per_page(p);
			}
			c->target = t;
			c->page = (uint32_t)i;
		}
	}
	demote -= nf;

	nd = nidle > goal ? nidle : goal;
	if (nd > nf)
		nd = nf;
	if (nd > left)
		nd = left;
	cxlt_top_k(demote, nf, nd);
	for (uint64_t i = 0; i < nd; i++)
		if (cxlt_plan_add(plan, demote[i].target, demote[i].page, slow))
			return 0;

	/* What the mover will let in: free fast memory over high, after demotions. */
	room = v->fast_free_pages + nd > v->fast_high_pages ?
	       v->fast_free_pages + nd - v->fast_high_pages : 0;
	np = ns < left - nd ? ns : left - nd;
	cxlt_top_k(a->cands, ns, np);
	if (!nd && np > room && cxlt_idle_is_evidence(v))
		room += displace(a, v, roles, ns, np, room, left, slow, plan);
	if (np > room)
		np = room;
	for (uint64_t i = 0; i < np; i++)
		if (cxlt_plan_add(plan, a->cands[i].target, a->cands[i].page, fast))
			break;
	return 0;
}

static const struct cxlt_param_desc age_params[] = {
	{ "idle_demote", "30", "a fast page idle for more epochs than this is demoted" },
	{ "active_epochs", "2", "a slow page sampled within this many epochs is promoted" },
	{ "settle_epochs", "10", "epochs a moved page is left alone (match --pingpong-epochs)" },
	{ NULL, NULL, NULL },
};

const struct cxlt_policy cxlt_policy = {
	.sz = sizeof(struct cxlt_policy),
	.abi = CXLT_POLICY_ABI,
	.name = "age",
	.description = "demote pages idle for N epochs, promote pages sampled in the last M epochs",
	.params = age_params,
	.init = age_init,
	.decide = age_decide,
	.fini = age_fini,
};
