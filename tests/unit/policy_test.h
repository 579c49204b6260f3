/* SPDX-License-Identifier: MIT */
/*
 * What the policy tests share: the built policies' directory ($BUILD/policies),
 * a temporary directory for the group, a loaded policy's parameter by key, and
 * one hand-built view (the scene) that every policy test decides on.
 */
#ifndef CXLT_POLICY_TEST_H
#define CXLT_POLICY_TEST_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cxltier/policy.h>

#include "policy_host.h"

static char policies[PATH_MAX];		/* $BUILD/policies */
static char tmpdir[] = "/tmp/cxlt-policy-XXXXXX";

static int group_setup(void **state)
{
	const char *build = getenv("BUILD");

	(void)state;
	snprintf(policies, sizeof(policies), "%s/policies", build && *build ? build : "build");
	if (!mkdtemp(tmpdir))
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) ? -1 : 0;
}

static const char *param(const struct policy_host *h, const char *key)
{
	for (uint32_t i = 0; i < h->nr_params; i++)
		if (!strcmp(h->params[i].key, key))
			return h->params[i].value;
	return NULL;
}

/* ---- the scene: a hand-built view, fast node 0, slow node 1 ---- */

#define MAXP 128

struct scene {
	struct cxlt_node nodes[3];
	struct cxlt_page *pages;
	struct cxlt_page small[MAXP];
	uint32_t *words;	/* the policy's words, as the target view gives them */
	uint32_t small_words[MAXP];
	struct cxlt_target_view target;
	struct cxlt_view view;
	struct cxlt_move *moves;
	struct cxlt_move small_moves[MAXP];
	struct cxlt_plan plan;
};

/*
 * 10000 fast pages, 5000 free; watermarks low 200, high 500.  With hotset's
 * headroom at 0.02 (of 10000 = 200; the tests load it so) the room for
 * promotions is free - 700 pages.
 */
static inline void scene_init(struct scene *s, uint32_t cap)
{
	memset(s, 0, sizeof(*s));
	s->nodes[0] = (struct cxlt_node){ .id = 0, .role = CXLT_NODE_FAST, .tier = 4,
					  .total_pages = 10000, .free_pages = 5000 };
	s->nodes[1] = (struct cxlt_node){ .id = 1, .role = CXLT_NODE_SLOW, .tier = 22,
					  .total_pages = 40000, .free_pages = 30000 };
	s->pages = s->small;
	s->words = s->small_words;
	s->moves = s->small_moves;
	s->target = (struct cxlt_target_view){ .pid = 1234, .comm = "app", .pages = s->pages,
						    .policy_words = s->words };
	s->view = (struct cxlt_view){ .sz = sizeof(s->view), .page_size = 4096, .epoch = 7,
				      .epoch_ms = 1000, .nr_nodes = 2, .nodes = s->nodes,
				      .nr_targets = 1, .targets = &s->target,
				      .budget_pages = cap, .fast_free_pages = 5000,
				      .fast_low_pages = 200, .fast_high_pages = 500,
				      .source_flags = CXLT_SOURCE_REPEATS };
	s->plan = (struct cxlt_plan){ .moves = s->moves, .cap = cap };
}

/* Free fast memory (the view and node 0 agree). */
static inline void set_fast_free(struct scene *s, uint64_t free_pages)
{
	s->view.fast_free_pages = free_pages;
	s->nodes[0].free_pages = free_pages;
}

/* Adds a page; sampled pages get CXLT_PAGE_SAMPLED; returns its index. */
static inline uint32_t add_page(struct scene *s, int node, float heat, uint16_t idle, bool sampled)
{
	uint32_t i = (uint32_t)s->target.nr_pages++;

	s->pages[i] = (struct cxlt_page){ .addr = 0x7f0000000000ULL + i * 4096ULL, .heat = heat,
					  .idle_epochs = idle, .since_move = CXLT_NEVER_MOVED,
					  .npages = 1, .node = (int8_t)node,
					  .flags = sampled ? CXLT_PAGE_SAMPLED : 0 };
	s->words[i] = 0;
	return i;
}

/* The plan's moves to `node`, in plan order, as page indexes; returns how many. */
static inline uint32_t moves_to(const struct scene *s, int node, uint32_t *out)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->plan.nr; i++) {
		assert_int_equal(s->plan.moves[i].target, 0);
		if (s->plan.moves[i].node == node)
			out[n++] = s->plan.moves[i].page;
	}
	return n;
}

#endif
