// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "util.h"

static void build_view(struct engine *e, struct cxlt_view *v, const struct wmarks *w,
		       uint64_t budget)
{
	uint32_t nn = 0;

	memset(v, 0, sizeof(*v));
	for (int i = 0; i < e->topo->nr_nodes; i++) {
		const struct topo_node *n = &e->topo->nodes[i];

		if (n->role == ROLE_NONE)
			continue;
		e->nodes[nn++] = (struct cxlt_node){
			.id = n->id, .role = n->role == ROLE_FAST ? CXLT_NODE_FAST : CXLT_NODE_SLOW,
			.tier = n->tier, .total_pages = n->total_pages, .free_pages = n->free_pages,
		};
	}
	for (uint32_t i = 0; i < e->tr->nr_targets; i++) {
		struct target *t = &e->tr->targets[i];

		e->views[i] = (struct cxlt_target_view){
			.pid = t->pid, .comm = t->comm, .pages = t->pt.pages, .nr_pages = t->pt.nr,
			.policy_words = t->pt.words, .fast_pages = t->place.fast,
			.fast_cap_pages = t->fast_cap,
		};
	}
	v->sz = sizeof(*v);
	v->page_size = e->topo->page_size;
	v->epoch = e->tr->epoch;
	v->epoch_ms = e->epoch_ms;
	v->nr_nodes = nn;
	v->nodes = e->nodes;
	v->nr_targets = e->tr->nr_targets;
	v->targets = e->views;
	v->budget_pages = budget;
	v->fast_free_pages = w->fast_free;
	v->fast_low_pages = w->low;
	v->fast_high_pages = w->high;
	v->demote_goal_pages = w->demote_goal;
	v->heat_decay = e->tr->decay;
	v->pingpong_epochs = e->m->opts.pingpong_epochs;
	v->source_flags = e->source_flags;
	v->last_plan = e->m->last_result;
}

static int grow(void **p, uint32_t *cap, uint64_t want, size_t elem)
{
	void *n;

	if (want <= *cap)
		return 0;
	n = realloc(*p, want * elem);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = (uint32_t)want;
	return 0;
}

int engine__decide_and_move(struct engine *e, double now)
{
	struct cxlt_plan plan = { 0 };
	struct cxlt_view view;
	struct wmarks w;
	uint64_t budget = mover__budget(e->m, now);
	double t0;
	int err;

	/* No plan can move more pages than are tracked: keeps the scratch small. */
	if (budget > tracker__pages(e->tr))
		budget = tracker__pages(e->tr);
	if (budget > UINT32_MAX - 1)
		budget = UINT32_MAX - 1;
	mover__wmarks(e->m, e->topo, &w);
	if ((err = grow((void **)&e->views, &e->views_cap, e->tr->nr_targets + 1, sizeof(*e->views))) ||
	    (err = grow((void **)&e->moves, &e->moves_cap, budget + 1, sizeof(*e->moves))))
		return err;
	build_view(e, &view, &w, budget);
	/* Slots a policy claims but never wrote must read as invalid, not as moves. */
	memset(e->moves, 0xff, (budget + 1) * sizeof(*e->moves));
	plan.moves = e->moves;
	plan.cap = (uint32_t)budget;
	t0 = now_sec();
	err = e->sandbox ? sandbox__decide(e->sandbox, &view, &plan) :
			   e->policy->ops->decide(e->policy->state, &view, &plan);
	e->last_decide_ms = (now_sec() - t0) * 1000;
	e->last_plan = plan.nr;
	if (err == -ECHILD) {
		if (!e->sandbox->reported)
			pr_err("policy %s failed: %s; no page moves until a reload or another policy (cxltierctl reload, cxltierctl policy NAME)",
			       e->policy->ops->name, e->sandbox->failed);
		e->sandbox->reported = true;
		e->last_plan = 0;
		return 0;
	}
	if (err) {
		pr_warn("policy %s: decide failed in epoch %llu: %s; nothing moved",
			e->policy->ops->name, (unsigned long long)e->tr->epoch, strerror(-err));
		return 0;
	}
	if (plan.nr > plan.cap) {
		pr_warn("policy %s: plan of %u moves exceeds the budget of %u: cut",
			e->policy->ops->name, plan.nr, plan.cap);
		plan.nr = plan.cap;
	}
	if (w.demote_goal && !e->quiet)
		pr_info("fast memory short: %llu MiB free (low watermark %llu MiB): demoting first, up to the high watermark",
			(unsigned long long)(w.fast_free * e->topo->page_size >> 20),
			(unsigned long long)(w.low * e->topo->page_size >> 20));
	return mover__execute(e->m, e->tr, e->topo, &plan, budget);
}

void engine__free(struct engine *e)
{
	free(e->views);
	free(e->moves);
	e->views = NULL;
	e->moves = NULL;
	e->views_cap = e->moves_cap = 0;
}
