// SPDX-License-Identifier: MIT
/*
 * The shipped policies hotset, age and tpp ($BUILD/policies/NAME.so):
 * defaults, refused values, and decide() on hand-built views; hotset on a
 * million pages; and the example policy in tiering-policies/README.md,
 * compiled from the README's text at run time so it cannot rot.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy_host.h"
#include "policy_test.h"
#include "util.h"

static struct policy_host host;

static void load(const char *name, char **kv, int nr)
{
	assert_int_equal(policy_host__load(&host, name, policies, kv, nr), 0);
	assert_string_equal(host.ops->name, name);
}

/* hotset as the scenes assume it: headroom 0.02 of 10000 fast pages (policy_test.h). */
static void load_hotset(void)
{
	char *kv[] = { "headroom=0.02" };

	load("hotset", kv, 1);
}

static int decide(struct scene *s)
{
	s->plan.nr = 0;
	return host.ops->decide(host.state, &s->view, &s->plan);
}


/* Checks what every plan must be: known pages, real moves, demotions first. */
static void assert_plan_sane(const struct scene *s)
{
	bool promoting = false;

	assert_true(s->plan.nr <= s->plan.cap);
	for (uint32_t i = 0; i < s->plan.nr; i++) {
		const struct cxlt_move *mv = &s->plan.moves[i];
		const struct cxlt_page *p = &s->pages[mv->page];

		assert_true(mv->page < s->target.nr_pages);
		assert_int_not_equal(p->node, CXLT_NODE_UNKNOWN);
		assert_int_not_equal(p->node, mv->node);
		assert_true(mv->node == 0 || mv->node == 1);
		if (mv->node == 0)
			promoting = true;
		else
			assert_false(promoting);	/* no demotion after a promotion */
		for (uint32_t j = 0; j < i; j++)
			assert_int_not_equal(s->plan.moves[j].page, mv->page);
	}
}

/* Calls the loaded policy's init() directly with one bad value. */
static void assert_init_refuses(const char *key, const char *value)
{
	struct cxlt_param params[CXLT_MAX_PARAMS];
	char err[256] = "";
	void *st = NULL;

	memcpy(params, host.params, host.nr_params * sizeof(params[0]));
	for (uint32_t i = 0; i < host.nr_params; i++)
		if (!strcmp(params[i].key, key))
			params[i].value = value;
	assert_int_equal(host.ops->init(&st, params, host.nr_params, err, sizeof(err)), -EINVAL);
	assert_null(st);
	/* The message names the key and the value. */
	assert_non_null(strstr(err, key));
	assert_non_null(strstr(err, value));
}

/* ---- loading ---- */

static void hotset_loads_with_defaults_and_refuses_bad_values(void **state)
{
	char *neg[] = { "headroom=-0.1" };
	char *nan[] = { "min_gain=lots" };

	(void)state;
	load("hotset", NULL, 0);
	assert_int_equal(host.ops->abi, CXLT_POLICY_ABI);
	assert_non_null(host.state);
	assert_int_equal(host.nr_params, 3);
	assert_string_equal(param(&host, "headroom"), "0");
	assert_string_equal(param(&host, "min_gain"), "1");
	assert_string_equal(param(&host, "settle_epochs"), "10");
	assert_init_refuses("headroom", "0.9");
	assert_init_refuses("headroom", "5%");
	assert_init_refuses("min_gain", "-1");
	assert_init_refuses("settle_epochs", "70000");
	assert_init_refuses("settle_epochs", "1.5");
	policy_host__unload(&host);

	assert_int_equal(policy_host__load(&host, "hotset", policies, neg, 1), -EINVAL);
	assert_null(host.dl);
	assert_int_equal(policy_host__load(&host, "hotset", policies, nan, 1), -EINVAL);
}

static void age_loads_with_defaults_and_refuses_bad_values(void **state)
{
	char *zero[] = { "active_epochs=0" };

	(void)state;
	load("age", NULL, 0);
	assert_int_equal(host.nr_params, 3);
	assert_string_equal(param(&host, "idle_demote"), "30");
	assert_string_equal(param(&host, "active_epochs"), "2");
	assert_string_equal(param(&host, "settle_epochs"), "10");
	assert_init_refuses("idle_demote", "-3");
	assert_init_refuses("idle_demote", "abc");
	assert_init_refuses("active_epochs", "0");
	policy_host__unload(&host);
	assert_int_equal(policy_host__load(&host, "age", policies, zero, 1), -EINVAL);
}

static void tpp_loads_with_defaults_and_refuses_bad_values(void **state)
{
	char *two[] = { "promo_reclaim=2" };

	(void)state;
	load("tpp", NULL, 0);
	assert_int_equal(host.nr_params, 2);
	assert_string_equal(param(&host, "promo_reclaim"), "1");
	assert_string_equal(param(&host, "settle_epochs"), "10");
	assert_init_refuses("promo_reclaim", "yes");
	assert_init_refuses("settle_epochs", "");
	policy_host__unload(&host);
	assert_int_equal(policy_host__load(&host, "tpp", policies, two, 1), -EINVAL);
}

/* ---- hotset ---- */

static void hotset_promotes_the_hottest_slow_pages_first_and_no_more_than_fit(void **state)
{
	static struct scene s;
	uint32_t h9, h5, got[MAXP];

	(void)state;
	load_hotset();
	scene_init(&s, 32);
	set_fast_free(&s, 702);			/* room for 2 promotions */
	add_page(&s, 0, 20, 0, true);		/* hot and fast already */
	add_page(&s, 1, 3, 0, true);
	h9 = add_page(&s, 1, 9, 0, true);
	add_page(&s, 1, 1, 0, true);
	h5 = add_page(&s, 1, 5, 0, true);
	add_page(&s, CXLT_NODE_UNKNOWN, 50, 0, true);	/* hottest, but where? */
	add_page(&s, 1, 0, 40, false);

	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(s.plan.nr, 2);
	assert_int_equal(moves_to(&s, 0, got), 2);
	assert_int_equal(got[0], h9);
	assert_int_equal(got[1], h5);

	/* Room for all: every sampled slow page, hottest first; never the never-sampled. */
	set_fast_free(&s, 5000);
	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(moves_to(&s, 0, got), 4);
	assert_int_equal(s.plan.nr, 4);
	assert_int_equal(got[0], h9);
	assert_int_equal(got[1], h5);

	/* And the plan's cap. */
	s.plan.cap = 3;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 3);
	assert_int_equal(s.plan.moves[0].page, h9);
	policy_host__unload(&host);
}

static void hotset_promotes_everything_sampled_when_all_fits(void **state)
{
	static struct scene s;
	uint32_t got[MAXP];

	(void)state;
	load_hotset();
	scene_init(&s, 32);
	add_page(&s, 1, 0.001f, 12, true);	/* sampled long ago: still promoted */
	add_page(&s, 1, 0, 300, true);		/* heat decayed to nothing: too */
	add_page(&s, 1, 2, 0, true);
	add_page(&s, 1, 0, 3, false);		/* never sampled: stays */
	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(moves_to(&s, 0, got), 3);
	assert_int_equal(got[0], 2);
	policy_host__unload(&host);
}

static void hotset_swaps_cold_fast_pages_for_hotter_slow_pages_when_full(void **state)
{
	static struct scene s;
	uint32_t never, cool, s60, s40, got[MAXP];

	(void)state;
	load_hotset();
	scene_init(&s, 32);
	set_fast_free(&s, 700);			/* full: free == high + headroom */
	add_page(&s, 0, 80, 0, true);		/* in the hot set: stays */
	cool = add_page(&s, 0, 2, 3, true);
	never = add_page(&s, 0, 0, 5, false);
	s60 = add_page(&s, 1, 60, 0, true);
	s40 = add_page(&s, 1, 40, 0, true);
	add_page(&s, 1, 3, 2, true);		/* no fast page left colder enough */

	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(s.plan.nr, 4);
	/* Demotions first, coldest first; then the promotions they make room for. */
	assert_int_equal(s.plan.moves[0].page, never);
	assert_int_equal(s.plan.moves[0].node, 1);
	assert_int_equal(s.plan.moves[1].page, cool);
	assert_int_equal(s.plan.moves[1].node, 1);
	assert_int_equal(moves_to(&s, 0, got), 2);
	assert_int_equal(got[0], s60);
	assert_int_equal(got[1], s40);

	/* A cap of 3 fits one swap only: never half of one. */
	s.plan.cap = 3;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 2);
	assert_int_equal(s.plan.moves[0].page, never);
	assert_int_equal(s.plan.moves[1].page, s60);
	policy_host__unload(&host);
}

/*
 * Free fast memory between the low and the high watermark: not short, but
 * the mover promotes nothing until it is over high again.  A swap then
 * demotes enough to get there first, or its promotion would be cut.
 */
static void hotset_swaps_under_the_high_watermark_demote_enough(void **state)
{
	static struct scene s;
	uint32_t hot, got[MAXP];

	(void)state;
	load_hotset();
	scene_init(&s, 32);
	s.nodes[0].total_pages = 1000;		/* headroom 20 pages */
	s.view.fast_low_pages = 20;
	s.view.fast_high_pages = 50;
	set_fast_free(&s, 47);			/* 3 under high */
	for (int i = 0; i < 30; i++)
		add_page(&s, 0, 0.5f, 4, true);	/* cool fast pages */
	add_page(&s, 0, 300, 0, true);
	hot = add_page(&s, 1, 200, 0, true);
	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	/* 3 to get to high, 20 to get the headroom back, 1 for the page. */
	assert_int_equal(moves_to(&s, 1, got), 24);
	assert_int_equal(moves_to(&s, 0, got), 1);
	assert_int_equal(got[0], hot);

	/* Without a headroom: 3 and 1. */
	policy_host__unload(&host);
	load("hotset", NULL, 0);
	assert_int_equal(decide(&s), 0);
	assert_int_equal(moves_to(&s, 1, got), 4);
	assert_int_equal(moves_to(&s, 0, got), 1);

	/* Not enough cap for the 4 demotions and the promotion: nothing at all. */
	s.plan.cap = 4;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 0);
	policy_host__unload(&host);
}

/*
 * Fast memory held by other processes leaves the tracked pages no room:
 * without a headroom, only the hottest swap in.  With one the tracked pages
 * cannot make (its 200 pages against 5 fast pages), nothing does: a swap
 * would keep fast memory under it.
 */
static void hotset_with_no_room_swaps_in_only_the_hottest(void **state)
{
	static struct scene s;
	uint32_t hot, got[MAXP];

	(void)state;
	load("hotset", NULL, 0);
	scene_init(&s, 32);
	set_fast_free(&s, 490);			/* room -10 */
	for (int i = 0; i < 11; i++)
		add_page(&s, 0, 0.5f, 4, true);
	hot = add_page(&s, 1, 200, 0, true);
	add_page(&s, 1, 100, 0, true);		/* clearly hotter than 0.5, but not the hottest */
	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(moves_to(&s, 1, got), 11);	/* 10 to get to high, 1 for the page */
	assert_int_equal(moves_to(&s, 0, got), 1);
	assert_int_equal(got[0], hot);
	policy_host__unload(&host);

	load_hotset();
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 0);
	policy_host__unload(&host);
}

static void hotset_swaps_only_for_a_clear_gain(void **state)
{
	static struct scene s;
	char *kv[] = { "min_gain=0.2", "headroom=0.02" };
	uint32_t warm, s150, got[MAXP];

	(void)state;
	load_hotset();		/* min_gain 1: twice as hot */
	scene_init(&s, 32);
	set_fast_free(&s, 700);
	add_page(&s, 0, 900, 0, true);
	warm = add_page(&s, 0, 100, 0, true);
	s150 = add_page(&s, 1, 150, 0, true);	/* hotter, but not twice */
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 0);
	policy_host__unload(&host);

	load("hotset", kv, 2);
	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(s.plan.nr, 2);
	assert_int_equal(s.plan.moves[0].page, warm);
	assert_int_equal(s.plan.moves[1].page, s150);

	/*
	 * Small counts are mostly sampling noise: 5 samples against 1 is five
	 * times as hot, but well within 3 standard deviations.  25 against 1 is not.
	 */
	s.pages[warm].heat = 1;
	s.pages[s150].heat = 5;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 0);
	s.pages[s150].heat = 25;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(moves_to(&s, 0, got), 1);
	assert_int_equal(got[0], s150);

	/*
	 * Against a page where first touch put it, 2 standard deviations: 9
	 * against 1 is enough.  Once the agent has moved that page, 3 again.
	 */
	s.pages[s150].heat = 9;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(moves_to(&s, 0, got), 1);
	assert_int_equal(got[0], s150);
	s.pages[warm].since_move = 20;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 0);

	/*
	 * A fast page not sampled for settle_epochs is dormant: a clear ratio
	 * is enough, or sparse sampling could never displace it.
	 */
	s.pages[s150].heat = 5;
	s.pages[warm].heat = 0.001f;
	s.pages[warm].idle_epochs = 9;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 0);
	s.pages[warm].idle_epochs = 10;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(moves_to(&s, 0, got), 1);
	assert_int_equal(got[0], s150);

	/*
	 * Unless its source has not looked since its last sample (the hint
	 * source's budget held the scanner off fast-tier pages): then it is not
	 * dormant, and 5 against 0.001 samples is still noise.
	 */
	s.pages[warm].flags |= CXLT_PAGE_UNSEEN;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 0);
	s.pages[warm].flags &= ~CXLT_PAGE_UNSEEN;
	policy_host__unload(&host);
}

/*
 * Sparse samples (hint faults, one a page and scanner pass: no page scores
 * 5): a fast page idle for 3 epochs is dormant, not settle_epochs, or a
 * page used every pass (heat 2) could never displace it.  With one page
 * scoring high (counts, not sparse), the same page keeps its place.
 */
static void hotset_with_sparse_samples_takes_three_idle_epochs_as_dormant(void **state)
{
	static struct scene s;
	uint32_t idle, used, got[MAXP];

	(void)state;
	load_hotset();
	scene_init(&s, 32);
	set_fast_free(&s, 700);			/* no room: a promotion needs a swap */
	add_page(&s, 0, 2, 0, true);
	idle = add_page(&s, 0, 0.25f, 2, true);
	used = add_page(&s, 1, 2, 0, true);
	s.pages[used].samples = 1;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 0);
	s.pages[idle].idle_epochs = 3;
	s.pages[idle].heat = 0.125f;
	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(moves_to(&s, 0, got), 1);
	assert_int_equal(got[0], used);
	assert_int_equal(moves_to(&s, 1, got), 1);
	assert_int_equal(got[0], idle);

	add_page(&s, 0, 50, 0, true);		/* counts: the noise test holds */
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 0);
	policy_host__unload(&host);
}

/*
 * The coldest fast page is one the source has not looked at (unseen): its
 * silence proves nothing, so a hot slow page takes the place of a page seen
 * idle instead of giving up (tierbench-full in the emulated machine: one
 * unseen remnant of a region at the head of the list held 24,000 hot pages
 * on CXL for 30 s).
 */
static void hotset_swaps_past_an_unseen_fast_page(void **state)
{
	static struct scene s;
	uint32_t unseen, seen, hot, got[MAXP];

	(void)state;
	load("hotset", NULL, 0);
	scene_init(&s, 32);
	set_fast_free(&s, 500);			/* no room: free == high, no headroom */
	unseen = add_page(&s, 0, 0, 40, false);	/* idle longer: first by idle time alone */
	s.pages[unseen].flags |= CXLT_PAGE_UNSEEN;
	seen = add_page(&s, 0, 0, 10, false);
	hot = add_page(&s, 1, 1.5f, 0, true);
	s.pages[hot].samples = 1;
	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(moves_to(&s, 1, got), 1);
	assert_int_equal(got[0], seen);
	assert_int_equal(moves_to(&s, 0, got), 1);
	assert_int_equal(got[0], hot);
	policy_host__unload(&host);
}

/*
 * Epoch 7: a hot fast page, a cool slow page.  The next epoch (decay 0.5):
 * the fast page got no sample, the slow page 100; by heat they are even (100
 * and 101), but against the history the policy kept in its words, the hot
 * set moved.
 */
static void hotset_follows_a_moving_hot_set_within_an_epoch(void **state)
{
	static struct scene s;
	uint32_t was_hot, now_hot, words[2];

	(void)state;
	load_hotset();
	scene_init(&s, 32);
	set_fast_free(&s, 700);			/* full */
	was_hot = add_page(&s, 0, 200, 0, true);
	s.pages[was_hot].samples = 100;
	now_hot = add_page(&s, 1, 2, 0, true);
	s.pages[now_hot].samples = 1;
	s.view.epoch = 7;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 0);
	assert_int_not_equal(s.words[was_hot], 0);	/* the heat, kept */

	words[0] = s.words[was_hot];
	words[1] = s.words[now_hot];

	/* Epoch 9 comes, epoch 8 was missed: the history is stale, heat alone decides. */
	s.view.epoch = 9;
	s.pages[was_hot] = (struct cxlt_page){ .addr = s.pages[was_hot].addr, .heat = 100,
					       .npages = 1, .idle_epochs = 1,
					       .since_move = CXLT_NEVER_MOVED, .node = 0,
					       .flags = CXLT_PAGE_SAMPLED };
	s.pages[now_hot].heat = 101;
	s.pages[now_hot].samples = 100;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 0);

	/* The same, with the history of the epoch before. */
	s.view.epoch = 10;
	s.words[was_hot] = words[0];
	s.words[now_hot] = words[1];
	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(s.plan.nr, 2);
	assert_int_equal(s.plan.moves[0].page, was_hot);
	assert_int_equal(s.plan.moves[1].page, now_hot);
	policy_host__unload(&host);
}

/* Sets a page's heat and samples of this epoch (decay 0.5: heat = heat / 2 + samples). */
static void epoch_of(struct scene *s, uint32_t i, float heat, uint16_t samples)
{
	s->pages[i].heat = heat;
	s->pages[i].samples = samples;
	s->pages[i].idle_epochs = samples ? 0 : (uint16_t)(s->pages[i].idle_epochs + 1);
}

/* The next epoch for two groups of 4 pages, and decides on it. */
static void next_epoch(struct scene *s, const uint32_t *a, float a_heat, uint16_t a_samples,
		       const uint32_t *b, float b_heat, uint16_t b_samples)
{
	s->view.epoch++;
	for (int i = 0; i < 4; i++) {
		epoch_of(s, a[i], a_heat, a_samples);
		epoch_of(s, b[i], b_heat, b_samples);
	}
	assert_int_equal(decide(s), 0);
	assert_plan_sane(s);
}

/*
 * A hot set in a full fast tier, and a one-off scan of cold memory: the
 * scanned pages get far more samples in their one epoch than the hot
 * pages do.  They may take the place of a fast page no longer in use, but
 * not of a hot page in use: one epoch of evidence against a long history.
 * Scanned pages that come back the next epoch have two, and get in.
 */
static void hotset_does_not_displace_the_hot_set_for_a_one_off_scan(void **state)
{
	static struct scene s;
	uint32_t hot[4], scan[4], idle, got[MAXP];

	(void)state;
	scene_init(&s, 32);
	s.view.heat_decay = 0.5f;
	set_fast_free(&s, 700);			/* full */
	for (int i = 0; i < 4; i++)
		hot[i] = add_page(&s, 0, 274, 0, true);	/* steady: 137 an epoch */
	idle = add_page(&s, 0, 2, 3, true);	/* a fast page no longer used */
	for (int i = 0; i < 4; i++)
		scan[i] = add_page(&s, 1, 2, 0, true);	/* cold: 1 an epoch */
	for (int comes_back = 0; comes_back < 2; comes_back++) {
		load_hotset();
		s.view.epoch = 6;
		next_epoch(&s, hot, 274, 137, scan, 2, 1);
		assert_int_equal(s.plan.nr, 0);		/* stable */

		/* The scan, 1024 samples a page: only the page not in use makes room. */
		next_epoch(&s, hot, 274, 137, scan, 1025, 1024);
		assert_int_equal(moves_to(&s, 1, got), 1);
		assert_int_equal(got[0], idle);
		assert_int_equal(moves_to(&s, 0, got), 1);
		assert_true(got[0] >= scan[0] && got[0] <= scan[3]);

		if (!comes_back) {
			/* The scan is over: nothing moves for it. */
			next_epoch(&s, hot, 274, 137, scan, 512.5f, 0);
			assert_int_equal(s.plan.nr, 0);
		} else {
			/* Two epochs of evidence: twice as hot as the hot set, they get in. */
			next_epoch(&s, hot, 274, 137, scan, 1536.5f, 1024);
			assert_int_equal(moves_to(&s, 0, got), 4);
			assert_int_equal(moves_to(&s, 1, got), 4);
		}
		policy_host__unload(&host);
		s.pages[idle] = (struct cxlt_page){ .addr = s.pages[idle].addr, .heat = 2, .npages = 1,
						    .idle_epochs = 3, .since_move = CXLT_NEVER_MOVED,
						    .flags = CXLT_PAGE_SAMPLED };
	}

	/* One epoch against a page in use: in only if 10 times its rate. */
	load_hotset();
	s.pages[idle].node = 1;			/* out of the way */
	s.view.epoch = 6;
	next_epoch(&s, hot, 20, 10, scan, 2, 1);	/* in use, 10 an epoch */
	assert_int_equal(s.plan.nr, 0);
	next_epoch(&s, hot, 20, 10, scan, 100, 99);
	epoch_of(&s, scan[0], 102, 101);		/* 101: over 10 x 10 */
	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(moves_to(&s, 0, got), 1);
	assert_int_equal(got[0], scan[0]);
	policy_host__unload(&host);
}

/*
 * A full fast tier: four hot pages (137 samples an epoch), four lukewarm
 * ones (1), and four cool slow pages (1); hotset loaded, epoch 7 decided
 * (nothing to move).
 */
static void hot_warm_cold_scene(struct scene *s, uint32_t *old, uint32_t *warm, uint32_t *neu)
{
	load_hotset();
	scene_init(s, 32);
	s->view.heat_decay = 0.5f;
	set_fast_free(s, 700);
	for (int i = 0; i < 4; i++) {
		old[i] = add_page(s, 0, 274, 0, true);
		s->pages[old[i]].samples = 137;
		warm[i] = add_page(s, 0, 2, 0, true);
		s->pages[warm[i]].samples = 1;
		neu[i] = add_page(s, 1, 2, 0, true);
		s->pages[neu[i]].samples = 1;
	}
	s->view.epoch = 7;
	assert_int_equal(decide(s), 0);
	assert_int_equal(s->plan.nr, 0);
}

/* The plan moves four pages to node, and they are the four of `four`. */
static void assert_moves_four(const struct scene *s, int node, const uint32_t *four)
{
	uint32_t got[MAXP];

	assert_int_equal(moves_to(s, node, got), 4);
	for (int i = 0; i < 4; i++)
		assert_true(got[i] == four[0] || got[i] == four[1] || got[i] == four[2] ||
			    got[i] == four[3]);
}

/*
 * A hot set moves in a full fast tier: the old hot pages fall to a sample
 * an epoch, the new ones jump from one to many.  The new ones come in at
 * once, in place of the old ones -- not of the lukewarm pages still in use
 * at their rate of a sample an epoch, as warm as the old ones by this
 * epoch's count.
 */
static void hotset_follows_a_moved_hot_set_in_a_full_fast_tier(void **state)
{
	static struct scene s;
	uint32_t old[4], warm[4], neu[4];

	(void)state;
	hot_warm_cold_scene(&s, old, warm, neu);

	for (int i = 0; i < 4; i++)
		epoch_of(&s, warm[i], 2, 1);
	next_epoch(&s, old, 138, 1, neu, 138, 137);
	assert_moves_four(&s, 1, old);
	assert_moves_four(&s, 0, neu);
	policy_host__unload(&host);
}

/*
 * The same, but the old hot pages have fallen off and come back once before
 * (a program working through its data in phases): when they fall again they
 * keep their decaying heat, and the new hot pages take the places of the
 * lukewarm ones instead.
 */
static void hotset_keeps_fast_pages_that_came_back_before(void **state)
{
	static struct scene s;
	uint32_t old[4], warm[4], neu[4];

	(void)state;
	hot_warm_cold_scene(&s, old, warm, neu);

	/* They fall off (nothing wants their places), come back, and stay. */
	for (int i = 0; i < 4; i++)
		epoch_of(&s, warm[i], 2, 1);
	next_epoch(&s, old, 138, 1, neu, 2, 1);
	assert_int_equal(s.plan.nr, 0);
	next_epoch(&s, old, 206, 137, neu, 2, 1);
	assert_int_equal(s.plan.nr, 0);
	next_epoch(&s, old, 240, 137, neu, 2, 1);
	assert_int_equal(s.plan.nr, 0);

	/* They fall again as the new hot pages come: the lukewarm pages go. */
	for (int i = 0; i < 4; i++)
		epoch_of(&s, warm[i], 2, 1);
	next_epoch(&s, old, 121, 1, neu, 138, 137);
	assert_moves_four(&s, 1, warm);
	assert_moves_four(&s, 0, neu);
	policy_host__unload(&host);
}

static void hotset_plans_nothing_in_a_stable_state(void **state)
{
	static struct scene s;

	(void)state;
	load_hotset();
	scene_init(&s, 32);
	for (int i = 0; i < 8; i++)
		add_page(&s, 0, 4 + i, 0, true);	/* the hot set, fast */
	add_page(&s, 0, 0.5f, 1, true);		/* one lukewarm fast page */
	for (int i = 0; i < 20; i++)
		add_page(&s, 1, 0.25f * (float)(i % 3), 2 + i, true);	/* cool, slow */
	for (int i = 0; i < 10; i++)
		add_page(&s, 1, 0, 50, false);		/* never sampled, slow */
	add_page(&s, CXLT_NODE_UNKNOWN, 30, 0, true);
	/* Full: at high + headroom, or between high and that; never short. */
	for (uint64_t free_pages = 550; free_pages <= 700; free_pages += 50) {
		set_fast_free(&s, free_pages);
		assert_int_equal(decide(&s), 0);
		assert_int_equal(s.plan.nr, 0);
	}
	policy_host__unload(&host);
}

static void hotset_meets_the_demote_goal_coldest_first(void **state)
{
	static struct scene s;
	uint32_t never, idle20, got[MAXP];

	(void)state;
	load_hotset();
	scene_init(&s, 32);
	set_fast_free(&s, 100);			/* under low */
	s.view.demote_goal_pages = 2;
	add_page(&s, 0, 9, 0, true);
	add_page(&s, 0, 3, 0, true);
	idle20 = add_page(&s, 0, 0.001f, 20, true);
	never = add_page(&s, 0, 0, 2, false);
	add_page(&s, 1, 5, 0, true);		/* hot, but no room: no swap with a 9 or a 3 */

	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(moves_to(&s, 0, got), 0);
	assert_int_equal(moves_to(&s, 1, got), 2);
	assert_int_equal(got[0], never);
	assert_int_equal(got[1], idle20);

	/* A goal larger than the cold pages takes hot ones too, up to the cap. */
	s.view.demote_goal_pages = 3;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(moves_to(&s, 1, got), 3);
	assert_int_equal(got[2], 1);		/* the 3 before the 9 */
	s.plan.cap = 1;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 1);
	assert_int_equal(s.plan.moves[0].page, never);
	policy_host__unload(&host);
}

/*
 * The goal is met from outside the hot set first; when that is not enough
 * (here: the pages outside it were just promoted and must settle), from the
 * coldest pages of the hot set.
 */
static void hotset_meets_the_demote_goal_from_the_hot_set_if_it_must(void **state)
{
	static struct scene s;
	uint32_t got[MAXP];

	(void)state;
	load_hotset();
	scene_init(&s, 32);
	s.nodes[0].total_pages = 1000;		/* headroom 20 pages */
	s.view.fast_low_pages = 20;
	s.view.fast_high_pages = 50;
	set_fast_free(&s, 40);
	s.view.demote_goal_pages = 10;		/* hot set: 50 - 10 - 20 = 20 pages */
	for (int i = 0; i < 15; i++)
		add_page(&s, 0, 400 + (float)i, 0, true);
	for (int i = 0; i < 35; i++)
		s.pages[add_page(&s, 0, 100, 0, true)].since_move = 5;
	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(moves_to(&s, 1, got), 10);
	assert_int_equal(s.plan.nr, 10);
	for (int i = 0; i < 10; i++)
		assert_true(got[i] < 10);	/* the 10 least hot of the 400s */
	policy_host__unload(&host);
}

static void hotset_leaves_recently_moved_and_unknown_pages_alone(void **state)
{
	static struct scene s;
	uint32_t moved, got[MAXP];

	(void)state;
	load_hotset();
	scene_init(&s, 32);
	moved = add_page(&s, 1, 9, 0, true);
	s.pages[moved].since_move = 9;		/* the mover would refuse it */
	add_page(&s, CXLT_NODE_UNKNOWN, 9, 0, true);
	add_page(&s, 5, 9, 0, true);		/* a node the view does not manage */
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 0);
	s.pages[moved].since_move = 10;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(moves_to(&s, 0, got), 1);
	assert_int_equal(got[0], moved);
	policy_host__unload(&host);
}

/* A million pages over 4 targets, a hot set twice the fast tier's size. */
static void hotset_at_scale_keeps_the_plan_within_the_cap(void **state)
{
	enum { TARGETS = 4, PER = 250000, CAP = 4096 };
	static struct scene s;
	struct cxlt_target_view targets[TARGETS];
	uint64_t promoted = 0, demoted = 0;
	float min_promoted = 1e30f;

	(void)state;
	load("hotset", NULL, 0);
	scene_init(&s, CAP);
	s.moves = calloc(CAP, sizeof(*s.moves));
	assert_non_null(s.moves);
	s.plan.moves = s.moves;
	s.nodes[0].total_pages = 200000;
	s.nodes[1].total_pages = 1000000;
	set_fast_free(&s, 10000);		/* high watermark 5% */
	s.view.fast_high_pages = 10000;
	s.view.fast_low_pages = 4000;
	s.view.nr_targets = TARGETS;
	s.view.targets = targets;
	srand(42);
	for (int t = 0; t < TARGETS; t++) {
		struct cxlt_page *pages = calloc(PER, sizeof(*pages));
		uint32_t *words = calloc(PER, sizeof(*words));

		assert_non_null(pages);
		assert_non_null(words);
		for (uint32_t i = 0; i < PER; i++) {
			uint32_t r = (uint32_t)rand();

			pages[i] = (struct cxlt_page){
				.addr = 0x7f0000000000ULL + i * 4096ULL,
				.heat = r % 4 ? (float)(r % 1000) / 100 : 0,
				.idle_epochs = (uint16_t)(r % 4 ? r % 7 : 40),
				.since_move = r % 13 ? CXLT_NEVER_MOVED : 3, .npages = 1,
				.node = (int8_t)(i % 5 == 0 ? 0 : r % 97 ? 1 : CXLT_NODE_UNKNOWN),
				.flags = r % 4 ? CXLT_PAGE_SAMPLED : 0,
			};
		}
		targets[t] = (struct cxlt_target_view){ .pid = 100 + t, .comm = "big",
							.pages = pages, .nr_pages = PER,
							.policy_words = words };
	}

	assert_int_equal(host.ops->decide(host.state, &s.view, &s.plan), 0);
	assert_true(s.plan.nr > 0);
	assert_true(s.plan.nr <= CAP);
	for (uint32_t i = 0; i < s.plan.nr; i++) {
		const struct cxlt_move *mv = &s.plan.moves[i];
		const struct cxlt_page *p;

		assert_true(mv->target < TARGETS && mv->page < PER);
		p = &targets[mv->target].pages[mv->page];
		assert_int_not_equal(p->node, CXLT_NODE_UNKNOWN);
		assert_true(p->since_move >= 10);
		if (mv->node == 0) {
			assert_int_equal(p->node, 1);
			promoted++;
			if (p->heat < min_promoted)
				min_promoted = p->heat;
		} else {
			assert_int_equal(p->node, 0);
			assert_int_equal(promoted, 0);	/* demotions first */
			demoted++;
		}
	}
	/* The fast tier is full: each promotion has its demotion; the hottest go. */
	assert_int_equal(promoted, demoted);
	assert_true(min_promoted >= 9.9f);
	for (int t = 0; t < TARGETS; t++) {
		free((void *)targets[t].pages);
		free(targets[t].policy_words);
	}
	free(s.moves);
	policy_host__unload(&host);
}

/* ---- age ---- */

static void age_demotes_only_pages_idle_past_idle_demote(void **state)
{
	static struct scene s;
	char *kv[] = { "idle_demote=5" };
	uint32_t i6, i40, never, got[MAXP];

	(void)state;
	load("age", kv, 1);
	scene_init(&s, 32);
	add_page(&s, 0, 0.1f, 5, true);		/* idle 5: not past 5 */
	i6 = add_page(&s, 0, 0.05f, 6, true);
	i40 = add_page(&s, 0, 0, 40, true);
	never = add_page(&s, 0, 0, 9, false);	/* tracked 9 epochs, never sampled */
	add_page(&s, 0, 7, 0, true);
	add_page(&s, 1, 0, 90, true);		/* idle, already slow */
	add_page(&s, CXLT_NODE_UNKNOWN, 0, 90, true);

	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(s.plan.nr, 3);
	assert_int_equal(moves_to(&s, 1, got), 3);
	assert_int_equal(got[0], i40);		/* the longest idle first */
	assert_int_equal(got[1], never);
	assert_int_equal(got[2], i6);
	policy_host__unload(&host);

	/* Default idle_demote 30: only the page idle for 40. */
	load("age", NULL, 0);
	assert_int_equal(decide(&s), 0);
	assert_int_equal(moves_to(&s, 1, got), 1);
	assert_int_equal(got[0], i40);

	/* Idle while its source was not looking: not idle at all. */
	s.pages[i40].flags |= CXLT_PAGE_UNSEEN;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 0);
	s.pages[i40].flags &= ~CXLT_PAGE_UNSEEN;

	/* A source that sees first touches only: idleness proves nothing, nothing moves. */
	s.view.source_flags = 0;
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 0);
	policy_host__unload(&host);
}

static void age_promotes_recently_sampled_slow_pages(void **state)
{
	static struct scene s;
	uint32_t now, now_hot, last, got[MAXP];

	(void)state;
	load("age", NULL, 0);			/* active_epochs 2: idle 0 or 1 */
	scene_init(&s, 32);
	now = add_page(&s, 1, 1, 0, true);
	add_page(&s, 1, 0.75f, 2, true);	/* sampled 2 epochs ago: not active */
	last = add_page(&s, 1, 4, 1, true);
	now_hot = add_page(&s, 1, 3, 0, true);
	add_page(&s, 1, 0, 1, false);		/* never sampled */
	add_page(&s, 0, 5, 0, true);		/* active, fast already */

	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(moves_to(&s, 0, got), 3);
	assert_int_equal(s.plan.nr, 3);
	/* The most recent first, then the hottest. */
	assert_int_equal(got[0], now_hot);
	assert_int_equal(got[1], now);
	assert_int_equal(got[2], last);

	/* Only what fits over the high watermark. */
	set_fast_free(&s, 501);
	assert_int_equal(decide(&s), 0);
	assert_int_equal(moves_to(&s, 0, got), 1);
	assert_int_equal(got[0], now_hot);
	policy_host__unload(&host);
}

static void age_under_demote_goal_demotes_the_longest_idle(void **state)
{
	static struct scene s;
	uint32_t i12, i25, got[MAXP];

	(void)state;
	load("age", NULL, 0);
	scene_init(&s, 32);
	set_fast_free(&s, 100);
	s.view.demote_goal_pages = 2;
	add_page(&s, 0, 3, 0, true);
	i12 = add_page(&s, 0, 0.1f, 12, true);
	add_page(&s, 0, 0.5f, 1, true);
	i25 = add_page(&s, 0, 0.01f, 25, true);
	add_page(&s, 1, 2, 0, true);		/* active, but no room */

	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(s.plan.nr, 2);
	assert_int_equal(moves_to(&s, 1, got), 2);
	assert_int_equal(got[0], i25);
	assert_int_equal(got[1], i12);
	policy_host__unload(&host);
}

/* ---- tpp ---- */

static void tpp_promotes_hinted_or_sampled_slow_pages(void **state)
{
	char *pure[] = { "promo_reclaim=0" };	/* demote only for the goal */
	static struct scene s;
	uint32_t hinted, sampled2, got[MAXP];

	(void)state;
	load("tpp", pure, 1);
	scene_init(&s, 32);
	hinted = add_page(&s, 1, 0, 0, true);
	s.pages[hinted].flags |= CXLT_PAGE_HINTED;
	sampled2 = add_page(&s, 1, 2, 0, true);
	s.pages[sampled2].samples = 2;
	add_page(&s, 1, 9, 1, true);		/* hot, but not touched this epoch */
	add_page(&s, 0, 0, 500, false);		/* cold fast page: no pressure, stays */
	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(s.plan.nr, 2);
	assert_int_equal(moves_to(&s, 0, got), 2);
	assert_int_equal(got[0], sampled2);
	assert_int_equal(got[1], hinted);

	/* A full fast tier takes nothing, and nothing is demoted for it. */
	set_fast_free(&s, 500);
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 0);
	policy_host__unload(&host);
}

static void tpp_demotes_only_for_the_demote_goal(void **state)
{
	char *pure[] = { "promo_reclaim=0" };	/* demote only for the goal */
	static struct scene s;
	uint32_t never, i30, got[MAXP];

	(void)state;
	load("tpp", pure, 1);
	scene_init(&s, 32);
	set_fast_free(&s, 100);
	add_page(&s, 0, 3, 0, true);
	i30 = add_page(&s, 0, 0.1f, 30, true);
	never = add_page(&s, 0, 0, 3, false);
	add_page(&s, 0, 0.2f, 10, true);
	s.pages[add_page(&s, 1, 1, 0, true)].samples = 1;

	s.view.demote_goal_pages = 0;		/* e.g. just over low, not short */
	assert_int_equal(decide(&s), 0);
	assert_int_equal(s.plan.nr, 0);

	s.view.demote_goal_pages = 2;
	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(s.plan.nr, 2);		/* 100 + 2 free is still under high */
	assert_int_equal(moves_to(&s, 1, got), 2);
	assert_int_equal(got[0], never);
	assert_int_equal(got[1], i30);
	policy_host__unload(&host);
}

static void tpp_promo_reclaim_demotes_for_promotions(void **state)
{
	static struct scene s;
	char *kv[] = { "promo_reclaim=1" };
	uint32_t never, got[MAXP];

	(void)state;
	load("tpp", kv, 1);
	scene_init(&s, 32);
	set_fast_free(&s, 500);			/* at high: no room */
	add_page(&s, 0, 3, 0, true);
	never = add_page(&s, 0, 0, 3, false);
	s.pages[add_page(&s, 1, 1, 0, true)].samples = 1;
	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(s.plan.nr, 2);
	assert_int_equal(moves_to(&s, 1, got), 1);
	assert_int_equal(got[0], never);
	assert_int_equal(moves_to(&s, 0, got), 1);
	policy_host__unload(&host);
}

/* ---- every shipped policy ---- */

/*
 * A source that reports first touches only (page faults: no
 * CXLT_SOURCE_REPEATS) says nothing of a page's use after it: no shipped
 * policy demotes a fast page to make room for a slow one then (on a
 * replay of xz under --sampler fault, the four of them fell from none's
 * 0.85 of the oracle to 0.10-0.20 doing it).  With repeats, each does.
 */
static void no_policy_swaps_on_first_touches_alone(void **state)
{
	static const char *const names[] = { "hotset", "hotcold", "age", "tpp" };
	static struct scene s;
	uint32_t idle, hot, got[MAXP];

	(void)state;
	for (size_t n = 0; n < ARRAY_SIZE(names); n++) {
		load(names[n], NULL, 0);
		for (int repeats = 1; repeats >= 0; repeats--) {
			scene_init(&s, 32);
			s.view.source_flags = repeats ? CXLT_SOURCE_REPEATS : 0;
			set_fast_free(&s, 500);		/* at high: no room */
			idle = add_page(&s, 0, 0.001f, 50, true);
			hot = add_page(&s, 1, 100, 0, true);
			s.pages[hot].samples = 60;
			s.words[hot] = 0;
			assert_int_equal(decide(&s), 0);
			assert_plan_sane(&s);
			if (repeats) {
				assert_int_equal(moves_to(&s, 1, got), 1);
				assert_int_equal(got[0], idle);
			} else {
				assert_int_equal(moves_to(&s, 1, got), 0);
			}
		}
		policy_host__unload(&host);
	}
}

/* ---- the README's example policy ---- */

#define BEGIN_MARK "<!-- example-policy:begin -->\n```c\n"
#define END_MARK "```\n<!-- example-policy:end -->"

/* The C text between the README's markers, malloc'ed. */
static char *readme_example(void)
{
	FILE *f = fopen("tiering-policies/README.md", "r");
	char *text, *begin, *end;
	long len;

	assert_non_null(f);	/* run from the top of the tree */
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)len + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	begin = strstr(text, BEGIN_MARK);
	assert_non_null(begin);
	begin += strlen(BEGIN_MARK);
	end = strstr(begin, END_MARK);
	assert_non_null(end);
	memmove(text, begin, (size_t)(end - begin));
	text[end - begin] = '\0';
	return text;
}

static void readme_example_policy_compiles_loads_and_decides(void **state)
{
	char src[PATH_MAX], so[PATH_MAX], cmd[3 * PATH_MAX];
	const char *cc = getenv("CC");
	static struct scene s;
	uint32_t twice, once, idle, got[MAXP];
	char *text = readme_example();
	FILE *f;

	(void)state;
	snprintf(src, sizeof(src), "%s/promote_twice.c", tmpdir);
	snprintf(so, sizeof(so), "%s/promote_twice.so", tmpdir);
	f = fopen(src, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	fclose(f);
	free(text);
	snprintf(cmd, sizeof(cmd),
		 "%s -std=gnu11 -O2 -Wall -Wextra -Werror -shared -fPIC -I include -o %s %s",
		 cc && *cc ? cc : "cc", so, src);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(policy_host__load(&host, so, NULL, NULL, 0), 0);
	assert_string_equal(host.ops->name, "promote_twice");

	scene_init(&s, 32);
	twice = add_page(&s, 1, 1, 0, true);
	s.pages[twice].samples = 1;
	s.words[twice] = 1;		/* sampled in the last epoch too */
	once = add_page(&s, 1, 1, 0, true);
	s.pages[once].samples = 1;
	add_page(&s, 1, 0.5f, 1, true);		/* not this epoch */
	idle = add_page(&s, 0, 0, 12, true);
	add_page(&s, 0, 2, 0, true);
	add_page(&s, CXLT_NODE_UNKNOWN, 1, 0, true);
	s.pages[s.target.nr_pages - 1].samples = 1;
	s.words[s.target.nr_pages - 1] = 1;

	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(s.plan.nr, 1);
	assert_int_equal(moves_to(&s, 0, got), 1);
	assert_int_equal(got[0], twice);
	assert_int_equal(s.words[once], 1);	/* remembered */

	/* Next epoch: `once` is sampled again; fast memory is short. */
	s.pages[twice].node = 0;
	s.view.demote_goal_pages = 1;
	assert_int_equal(decide(&s), 0);
	assert_plan_sane(&s);
	assert_int_equal(s.plan.nr, 2);
	assert_int_equal(s.plan.moves[0].page, idle);
	assert_int_equal(s.plan.moves[0].node, 1);
	assert_int_equal(s.plan.moves[1].page, once);
	assert_int_equal(s.plan.moves[1].node, 0);
	policy_host__unload(&host);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hotset_loads_with_defaults_and_refuses_bad_values),
		cmocka_unit_test(age_loads_with_defaults_and_refuses_bad_values),
		cmocka_unit_test(tpp_loads_with_defaults_and_refuses_bad_values),
		cmocka_unit_test(hotset_promotes_the_hottest_slow_pages_first_and_no_more_than_fit),
		cmocka_unit_test(hotset_promotes_everything_sampled_when_all_fits),
		cmocka_unit_test(hotset_swaps_cold_fast_pages_for_hotter_slow_pages_when_full),
		cmocka_unit_test(hotset_swaps_under_the_high_watermark_demote_enough),
		cmocka_unit_test(hotset_with_no_room_swaps_in_only_the_hottest),
		cmocka_unit_test(hotset_swaps_only_for_a_clear_gain),
		cmocka_unit_test(hotset_with_sparse_samples_takes_three_idle_epochs_as_dormant),
		cmocka_unit_test(no_policy_swaps_on_first_touches_alone),
		cmocka_unit_test(hotset_swaps_past_an_unseen_fast_page),
		cmocka_unit_test(hotset_follows_a_moving_hot_set_within_an_epoch),
		cmocka_unit_test(hotset_does_not_displace_the_hot_set_for_a_one_off_scan),
		cmocka_unit_test(hotset_follows_a_moved_hot_set_in_a_full_fast_tier),
		cmocka_unit_test(hotset_keeps_fast_pages_that_came_back_before),
		cmocka_unit_test(hotset_plans_nothing_in_a_stable_state),
		cmocka_unit_test(hotset_meets_the_demote_goal_coldest_first),
		cmocka_unit_test(hotset_meets_the_demote_goal_from_the_hot_set_if_it_must),
		cmocka_unit_test(hotset_leaves_recently_moved_and_unknown_pages_alone),
		cmocka_unit_test(hotset_at_scale_keeps_the_plan_within_the_cap),
		cmocka_unit_test(age_demotes_only_pages_idle_past_idle_demote),
		cmocka_unit_test(age_promotes_recently_sampled_slow_pages),
		cmocka_unit_test(age_under_demote_goal_demotes_the_longest_idle),
		cmocka_unit_test(tpp_promotes_hinted_or_sampled_slow_pages),
		cmocka_unit_test(tpp_demotes_only_for_the_demote_goal),
		cmocka_unit_test(tpp_promo_reclaim_demotes_for_promotions),
		cmocka_unit_test(readme_example_policy_compiles_loads_and_decides),
	};

	log_verbosity = LOG_ERR - 1;	/* refusals print on purpose */
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
