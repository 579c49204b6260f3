// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "util.h"

/* ---- the tier model behind move_pages ---- */

static uint32_t tgid_hash(uint32_t tgid)
{
	return tgid * 0x9E3779B1u;
}

/* The index of tgid's target, or -1. */
static int model_find_target(const struct model *md, uint32_t tgid)
{
	if (!md->tgid_slots)
		return -1;
	for (uint32_t i = tgid_hash(tgid) & md->tgid_mask;; i = (i + 1) & md->tgid_mask) {
		uint32_t slot = md->tgid_slots[i];

		if (!slot)
			return -1;
		if ((uint32_t)md->tr.targets[slot - 1].pid == tgid)
			return slot - 1;
	}
}

static void tgid_insert(struct model *md, uint32_t ti)
{
	uint32_t i = tgid_hash((uint32_t)md->tr.targets[ti].pid) & md->tgid_mask;

	while (md->tgid_slots[i])
		i = (i + 1) & md->tgid_mask;
	md->tgid_slots[i] = ti + 1;
}

/* The index of tgid's target, added on its first sample; -ENOMEM. */
int model_target(struct model *md, uint32_t tgid)
{
	int ti = model_find_target(md, tgid);
	char comm[16];

	if (ti >= 0)
		return ti;
	/* At most half full, so probes stay short. */
	if (2 * (md->tr.nr_targets + 1) > (md->tgid_slots ? md->tgid_mask + 1 : 0)) {
		uint32_t size = md->tgid_slots ? 2 * (md->tgid_mask + 1) : 1024;

		free(md->tgid_slots);
		md->tgid_slots = calloc(size, sizeof(*md->tgid_slots));
		if (!md->tgid_slots)
			return -ENOMEM;
		md->tgid_mask = size - 1;
		for (uint32_t i = 0; i < md->tr.nr_targets; i++)
			tgid_insert(md, i);
	}
	snprintf(comm, sizeof(comm), "tgid%u", tgid);
	ti = tracker__add_target(&md->tr, (pid_t)tgid, 0, comm, ORIGIN_PID);
	if (ti < 0)
		return ti;
	if (md->nr_pages < md->tr.cap_targets) {
		struct model_page **pages = realloc(md->pages, md->tr.cap_targets * sizeof(*pages));
		uint32_t *cap;

		if (!pages)
			return -ENOMEM;
		md->pages = pages;
		cap = realloc(md->pages_cap, md->tr.cap_targets * sizeof(*cap));
		if (!cap)
			return -ENOMEM;
		md->pages_cap = cap;
		for (uint32_t i = md->nr_pages; i < md->tr.cap_targets; i++) {
			md->pages[i] = NULL;
			md->pages_cap[i] = 0;
		}
		md->nr_pages = md->tr.cap_targets;
	}
	tgid_insert(md, ti);
	return ti;
}

static struct cxlt_page *model_page(struct model *cur, int pid, void *addr, uint32_t *ti,
				    int64_t *idx)
{
	int t = model_find_target(cur, (uint32_t)pid);

	if (t < 0)
		return NULL;
	*ti = t;
	*idx = page_table__find(&cur->tr.targets[t].pt, (uintptr_t)addr);
	if (*idx < 0) {
		/* A huge page's record is its region's (run.c, page_record()). */
		const struct region *r = tracker__region(&cur->tr.targets[t], (uintptr_t)addr);

		if (r && (cur->tr.targets[t].pt.pages[r->rec].flags & PAGE_HUGE))
			*idx = r->rec;
	}
	return *idx < 0 ? NULL : &cur->tr.targets[t].pt.pages[*idx];
}

/* The model behind move_pages: two nodes with capacities, ping-pong counted. */
long model_move_pages(void *ctx, int pid, unsigned long count, void **pages,
		      const int *nodes, int *status, int flags)
{
	struct model *cur = ctx;

	(void)flags;
	for (unsigned long i = 0; i < count; i++) {
		struct model_page *h;
		struct cxlt_page *p;
		uint32_t ti, n;
		int64_t idx;
		int to;

		p = model_page(cur, pid, pages[i], &ti, &idx);
		if (!p || p->node < 0) {
			status[i] = -ENOENT;
			continue;
		}
		if (!nodes) {
			status[i] = p->node;
			continue;
		}
		to = nodes[i];
		if (to == p->node) {
			status[i] = to;
			continue;
		}
		/* A huge page moves whole, as the kernel moves a folio. */
		n = tracker__record_pages(&cur->tr.targets[ti], p);
		if (to < 0 || to > 1 || cur->used[to] + n > cur->cap[to]) {
			status[i] = to < 0 || to > 1 ? -EINVAL : -ENOMEM;
			continue;
		}
		cur->used[p->node] -= n;
		cur->used[to] += n;
		status[i] = to;
		h = &cur->pages[ti][idx];
		h->marked = false;	/* hint: the page comes back mapped, the scanner's mark gone */
		/*
		 * Epochs since the last move, as the mover counts since_move: a
		 * page moved in epoch E may move again in E + pingpong_epochs, so
		 * a window of the same N counts only what the mover let through.
		 */
		if (h->last_epoch && h->last_to != to &&
		    cur->tr.epoch + 1 - h->last_epoch < cur->o->pingpong_window)
			cur->res->pingpong++;
		h->last_epoch = (uint32_t)cur->tr.epoch + 1;
		h->last_to = (int8_t)to;
	}
	return 0;
}

void model_touch_pages(void *ctx, int pid, void **pages, uint32_t n)
{
	(void)ctx;
	(void)pid;
	(void)pages;
	(void)n;
}

void model_topology(struct model *md, long page_size)
{
	struct topology *t = &md->topo;

	memset(t, 0, sizeof(*t));
	t->page_size = page_size;
	t->nr_nodes = 2;
	t->nodes[0] = (struct topo_node){ .id = 0, .has_cpus = true, .tier = 4, .role = ROLE_FAST };
	t->nodes[1] = (struct topo_node){ .id = 1, .tier = 22, .role = ROLE_SLOW };
	t->fast_mask = 1;
	t->slow_mask = 2;
	t->tiers_known = true;
	for (int n = 0; n < 2; n++) {
		t->nodes[n].total_pages = md->cap[n];
		t->nodes[n].free_pages = md->cap[n] - md->used[n];
	}
}

int model_pages_grow(struct model *md, uint32_t ti, uint32_t n)
{
	struct model_page *h;
	uint32_t cap = md->pages_cap[ti];

	if (n <= cap)
		return 0;
	/* From 16: a trace may name 100k processes of a page or two each. */
	while (cap < n)
		cap = cap ? cap * 2 : 16;
	h = realloc(md->pages[ti], cap * sizeof(*h));
	if (!h)
		return -ENOMEM;
	memset(h + md->pages_cap[ti], 0, (cap - md->pages_cap[ti]) * sizeof(*h));
	md->pages[ti] = h;
	md->pages_cap[ti] = cap;
	return 0;
}

/* The budget's clock: the end of the epoch in flight. */
double model_now(void *ctx)
{
	const struct model *md = ctx;

	return (md->e + 1) * (md->o->epoch_ms / 1000.0);
}
