/* SPDX-License-Identifier: MIT */
/*
 * Optional helpers for policies, header-only so that a policy still builds
 * from include/ alone (cc -shared -fPIC -o my.so my.c -I include): ranking
 * candidate pages in time linear in their number, and picking nodes.
 */
#ifndef CXLTIER_POLICY_HELPERS_H
#define CXLTIER_POLICY_HELPERS_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cxltier/policy.h"

/* A candidate page for a move: view->targets[target].pages[page], ranked by key. */
struct cxlt_cand {
	float key;	/* larger ranks first */
	uint32_t target, page;
};

static inline int cxlt_cand_cmp(const void *a, const void *b)
{
	float x = ((const struct cxlt_cand *)a)->key, y = ((const struct cxlt_cand *)b)->key;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * Puts the k largest keys first, in order: a three-way quickselect, then a
 * sort of those k only, so the cost stays linear in the candidates when the
 * budget is small next to them.
 */
static inline void cxlt_top_k(struct cxlt_cand *c, uint64_t n, uint64_t k)
{
	uint64_t lo = 0, hi = n;	/* the k-th largest lies in [lo, hi) */

	while (k < n && hi - lo > 1) {
		float pivot = c[lo + (hi - lo) / 2].key;
		uint64_t lt = lo, i = lo, gt = hi;
		struct cxlt_cand t;

		/* [lo,lt) > pivot, [lt,gt) == pivot, [gt,hi) < pivot */
		while (i < gt) {
			if (c[i].key > pivot) {
				t = c[lt]; c[lt++] = c[i]; c[i++] = t;
			} else if (c[i].key < pivot) {
				t = c[--gt]; c[gt] = c[i]; c[i] = t;
			} else {
				i++;
			}
		}
		if (k < lt)
			hi = lt;
		else if (k < gt)
			break;
		else
			lo = gt;
	}
	/* No candidates may mean no array at all: qsort takes no NULL, even for 0. */
	if (k && n)
		qsort(c, k < n ? k : n, sizeof(*c), cxlt_cand_cmp);
}

/*
 * Whether a page's idle time says anything of its use: not when the source
 * reports first touches only (no CXLT_SOURCE_REPEATS), where every page
 * looks idle from its second epoch on.  A policy then neither demotes nor
 * displaces a page for being idle.
 */
static inline bool cxlt_idle_is_evidence(const struct cxlt_view *v)
{
	return v->source_flags & CXLT_SOURCE_REPEATS;
}

/*
 * Whether p has been idle at least min epochs while its source was looking:
 * the test for demoting a page because it is idle.
 */
static inline bool cxlt_idle_beyond(const struct cxlt_page *p, uint32_t min)
{
	return p->idle_epochs >= min && !(p->flags & CXLT_PAGE_UNSEEN);
}

/*
 * An extent's heat a page: how a region of npages pages compares with a
 * single page (a region's heat sums its pages').
 */
static inline float cxlt_heat_per_page(const struct cxlt_page *p)
{
	return p->npages > 1 ? p->heat / (float)p->npages : p->heat;
}

/* Extents in the view, all targets together: a bound for candidate arrays. */
static inline uint64_t cxlt_view_pages(const struct cxlt_view *v)
{
	uint64_t n = 0;

	for (uint32_t t = 0; t < v->nr_targets; t++)
		n += v->targets[t].nr_pages;
	return n;
}

/* Grows a candidate array to hold n; -ENOMEM leaves it as it was. */
static inline int cxlt_cands_reserve(struct cxlt_cand **cands, uint64_t *cap, uint64_t n)
{
	struct cxlt_cand *c;

	if (n <= *cap)
		return 0;
	c = (struct cxlt_cand *)realloc(*cands, n * sizeof(*c));
	if (!c)
		return -ENOMEM;
	*cands = c;
	*cap = n;
	return 0;
}

/* The node of the given role with the most free pages, or -1. */
static inline int cxlt_roomiest_node(const struct cxlt_view *v, int role)
{
	uint64_t best_free = 0;
	int best = -1;

	for (uint32_t i = 0; i < v->nr_nodes; i++)
		if (v->nodes[i].role == role && (best < 0 || v->nodes[i].free_pages > best_free)) {
			best = v->nodes[i].id;
			best_free = v->nodes[i].free_pages;
		}
	return best;
}

#define CXLT_MAX_NODE_ID 128

/* Role of each node id (-1: not managed), so a loop over pages does no search. */
static inline void cxlt_role_table(const struct cxlt_view *v, int8_t roles[CXLT_MAX_NODE_ID])
{
	memset(roles, -1, CXLT_MAX_NODE_ID);
	for (uint32_t i = 0; i < v->nr_nodes; i++)
		if (v->nodes[i].id >= 0 && v->nodes[i].id < CXLT_MAX_NODE_ID)
			roles[v->nodes[i].id] = (int8_t)v->nodes[i].role;
}

#endif
