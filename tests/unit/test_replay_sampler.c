// SPDX-License-Identifier: MIT
/*
 * The replay's hint sampler against the tracker: what the emulated kernel
 * marks, what the agent's mirror of the marks (tracker__mark_pass, one
 * epoch late, as marks.c follows the scanner live) makes of it in
 * CXLT_PAGE_UNSEEN, and a migration dropping a mark.  The samplers' output
 * sample by sample is tests/cli/replay-sampler.sh's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* The replay's parts are not in libcxlt.a: the ones the sampler needs, compiled in. */
#include "../../user/replay/damon.c"
#include "../../user/replay/model.c"
#include "../../user/replay/output.c"
#include "../../user/replay/sampler.c"
#include "../../user/replay/synth.c"

#define MS 1000000ULL
#define PAGE_A 0x100
#define PAGE_B 0x200

struct scene {
	struct model_opts o;
	struct trace_scan scan;
	struct result res;
	struct model md;
	struct sampler_spec spec;
	struct sampler_run s;
};

/* res_ns: the trace's resolution, the least gap between two samples' times. */
static struct scene *scene_res(enum sampler_kind kind, const char *label, uint64_t res_ns)
{
	struct scene *sc = calloc(1, sizeof(*sc));

	assert_non_null(sc);
	sc->o = (struct model_opts){ .epoch_ms = 10, .hint_period_ms = 10, .pingpong_window = 10,
				     .sampler_seed = 1 };
	sc->md = (struct model){ .o = &sc->o, .res = &sc->res, .cap = { 100, 100 } };
	assert_int_equal(tracker__init(&sc->md.tr, 0.5), 0);
	sc->spec = (struct sampler_spec){ .kind = kind };
	snprintf(sc->spec.label, sizeof(sc->spec.label), "%s", label);
	sc->scan.res_ns = res_ns;
	assert_int_equal(sampler_run__init(&sc->s, &sc->spec, &sc->md, &sc->scan, &sc->o, 4096, NULL), 0);
	return sc;
}

static struct scene *scene_of(enum sampler_kind kind, const char *label)
{
	return scene_res(kind, label, 0);
}

static struct scene *scene_new(void)
{
	struct scene *sc = scene_of(SAMPLER_HINT, "hint");

	assert_true(sc->md.tr.sight);
	return sc;
}

static void scene_free(struct scene *sc)
{
	sampler_run__free(&sc->s);
	for (uint32_t i = 0; i < sc->md.nr_pages; i++)
		free(sc->md.pages[i]);
	free(sc->md.pages);
	free(sc->md.pages_cap);
	free(sc->md.tgid_slots);
	tracker__free(&sc->md.tr);
	free(sc);
}

/* w accesses of the stream, as run.c's ingest hands them on; the page's record. */
static struct cxlt_page *touch_w(struct scene *sc, uint64_t t_ns, uint64_t vpage, uint16_t w)
{
	struct cxlt_sample x = { .time_ns = t_ns, .tgid = 42, .source = CXLT_SRC_PMU, .weight = w,
				 .vpage = vpage };
	int ti = model_target(&sc->md, x.tgid), idx;
	struct target *t;
	bool created;

	assert_true(ti >= 0);
	assert_int_equal(sampler_run__clock(&sc->s, t_ns), 0);
	t = &sc->md.tr.targets[ti];
	idx = page_table__get(&t->pt, vpage << CXLT_PAGE_SHIFT, &created);
	assert_true(idx >= 0);
	assert_int_equal(model_pages_grow(&sc->md, ti, t->pt.nr), 0);
	assert_int_equal(sampler_run__access(&sc->s, &x, ti, idx, created), 0);
	model_page_at(&sc->md.pages[ti][idx], t_ns, x.weight);
	return &t->pt.pages[idx];
}

static struct cxlt_page *touch(struct scene *sc, uint64_t t_ns, uint64_t vpage)
{
	return touch_w(sc, t_ns, vpage, 7);
}

static struct cxlt_page *page(struct scene *sc, uint64_t vpage)
{
	struct page_table *pt = &sc->md.tr.targets[0].pt;

	return &pt->pages[page_table__find(pt, vpage << CXLT_PAGE_SHIFT)];
}

static void epoch_start(struct scene *sc)
{
	assert_int_equal(sampler_run__epoch(&sc->s, sc->md.tr.epoch * sc->o.epoch_ms * MS), 0);
}

/* The tracker's end of an epoch; the samples it held. */
static void epoch_end(struct scene *sc)
{
	tracker__age(&sc->md.tr);
	tracker__end_epoch(&sc->md.tr);
}

static bool unseen(struct scene *sc, uint64_t vpage)
{
	return page(sc, vpage)->flags & CXLT_PAGE_UNSEEN;
}

static void hint_faults_once_a_pass_and_unseen_follows_the_passes(void **state)
{
	struct scene *sc = scene_new();
	struct cxlt_page *a;

	(void)state;
	/* Epoch 0: first touches fault (not hint faults); no pass yet, so both unseen. */
	epoch_start(sc);
	a = touch(sc, 1 * MS, PAGE_A);
	assert_int_equal(a->samples, 1);
	assert_false(a->flags & CXLT_PAGE_HINTED);
	assert_int_equal(touch(sc, 2 * MS, PAGE_A)->samples, 1);	/* no mark: no fault */
	assert_int_equal(touch(sc, 3 * MS, PAGE_B)->samples, 1);
	epoch_end(sc);
	assert_true(unseen(sc, PAGE_A) && unseen(sc, PAGE_B));

	/*
	 * Epoch 1: the pass at 10 ms marked both in the kernel; the agent, told
	 * at the epoch's start, leaves pages sampled in the epoch the pass
	 * began unmarked (it cannot order the two).  A's use faults once.
	 */
	epoch_start(sc);
	a = touch(sc, 11 * MS, PAGE_A);
	assert_int_equal(a->samples, 1);
	assert_true(a->flags & CXLT_PAGE_HINTED);
	assert_int_equal(touch(sc, 12 * MS, PAGE_A)->samples, 1);
	epoch_end(sc);
	assert_true(unseen(sc, PAGE_A) && unseen(sc, PAGE_B));

	/* Epoch 2: the pass at 20 ms counts for B, idle since before it; A was sampled after. */
	epoch_start(sc);
	epoch_end(sc);
	assert_true(unseen(sc, PAGE_A));
	assert_false(unseen(sc, PAGE_B));

	/* Epoch 3: the pass at 30 ms counts for both. */
	epoch_start(sc);
	epoch_end(sc);
	assert_false(unseen(sc, PAGE_A));
	assert_false(unseen(sc, PAGE_B));
	scene_free(sc);
}

static void a_migration_drops_the_scanners_mark(void **state)
{
	struct scene *sc = scene_new();
	void *addr = (void *)(uintptr_t)(PAGE_A << CXLT_PAGE_SHIFT);
	int to = 1, status = -1;

	(void)state;
	epoch_start(sc);
	touch(sc, 1 * MS, PAGE_A)->node = 0;
	touch(sc, 2 * MS, PAGE_B)->node = 0;
	sc->md.used[0] = 2;
	epoch_end(sc);
	/* The pass at 10 ms marks both; A moves before its next use, and comes back unmarked. */
	epoch_start(sc);
	assert_true(sc->md.pages[0][0].marked);
	assert_int_equal(model_move_pages(&sc->md, 42, 1, &addr, &to, &status, 0), 0);
	assert_int_equal(status, 1);
	assert_int_equal(touch(sc, 11 * MS, PAGE_A)->samples, 0);
	assert_int_equal(touch(sc, 12 * MS, PAGE_B)->samples, 1);
	scene_free(sc);
}

/*
 * DAMON's regions adapt: 10 hot pages in the middle of 1,000 touched once
 * end up in regions of their own, so their counts (an access every check,
 * 20 an aggregation) reach them and hardly any cold page's (seeds 1 to 12:
 * at most one).  Fixed regions of 512 pages handed the hot pages' count to
 * 502 cold ones.
 */
static void damon_regions_close_in_on_a_hot_range(void **state)
{
	struct scene *sc = scene_of(SAMPLER_DAMON, "damon");
	const uint64_t base = 0x1000, hot = base + 500;
	uint32_t cold_counted = 0, nr = 0, hot_sum = 0;

	(void)state;
	for (uint64_t p = 0; p < 1000; p++)
		touch(sc, 0, base + p);
	for (uint64_t ms = 1; ms < 2000; ms++) {
		if (ms == 1901)	/* the samples of the last aggregation only: the one at 1.9 s was */
			epoch_end(sc);
		for (uint64_t p = hot; p < hot + 10; p++)
			touch(sc, ms * MS, p);
	}
	assert_int_equal(sampler_run__clock(&sc->s, 2000 * MS), 0);	/* the aggregation at 2 s */
	/* A region at the hot range's edge may hold a cold page too: its check finds half. */
	for (uint64_t p = hot; p < hot + 10; p++) {
		assert_in_range(page(sc, p)->samples, 5, 20);
		hot_sum += page(sc, p)->samples;
	}
	assert_in_range(hot_sum, 180, 200);
	for (uint64_t p = 0; p < 1000; p++)
		if ((p < 500 || p >= 510) && page(sc, base + p)->samples)
			cold_counted++;
	assert_in_range(cold_counted, 0, 5);
	for (uint32_t ti = 0; ti < sc->s.dm.nr_t; ti++)
		nr += sc->s.dm.t[ti].nr;
	assert_in_range(nr, DAMON_MIN_REGIONS, DAMON_MAX_REGIONS);
	scene_free(sc);
}

/* The first regions leave out the gap between two clusters of pages. */
static void damon_regions_start_without_the_gap(void **state)
{
	struct scene *sc = scene_of(SAMPLER_DAMON, "damon");
	const struct dtarget *dt;

	(void)state;
	for (uint64_t p = 0; p < 256; p++) {
		touch(sc, 0, 0x1000 + p);
		touch(sc, 0, 0x90000 + p);
	}
	touch(sc, 6 * MS, 0x1000);	/* after the first check, which made the regions */
	assert_int_equal(sc->s.dm.nr_t, 1);
	dt = &sc->s.dm.t[0];
	assert_int_equal(dt->nr, DAMON_MIN_REGIONS);
	assert_int_equal(dt->r[0].start, 0x1000);
	assert_int_equal(dt->r[dt->nr - 1].end, 0x90100);
	for (uint32_t i = 0; i < dt->nr; i++) {
		assert_true(dt->r[i].start < dt->r[i].end);
		assert_true(dt->r[i].end <= 0x1100 || dt->r[i].start >= 0x90000);
		assert_true(dt->r[i].check >= dt->r[i].start && dt->r[i].check < dt->r[i].end);
	}
	scene_free(sc);
}

/* Checks over [T + 5k ms, T + 5(k+1) ms) for the window's 200 checks: how many found the page. */
static uint32_t window_hits(struct scene *sc, const struct model_page *m, uint64_t t)
{
	uint32_t hits = 0;

	for (uint64_t k = 0; k < 200; k++)
		hits += accessed(&sc->s, m, t + k * 5 * MS, t + (k + 1) * 5 * MS);
	return hits;
}

/*
 * A capture puts a window's accesses at its end: on a trace that coarse,
 * a page's last sample stands for its accesses spread over the next
 * window, so DAMON's checks find a page touched once in about one check
 * of the window's 200, one touched 2,000 times in nearly all, and none
 * outside the window; on a fine trace a check finds what came in it.
 */
static void damon_spreads_a_coarse_window_over_its_checks(void **state)
{
	struct scene *sc = scene_res(SAMPLER_DAMON, "damon", 1000 * MS);
	const uint64_t t = 3000 * MS;
	struct model_page once = { 0 }, hot = { 0 };
	uint32_t hits = 0;

	(void)state;
	model_page_at(&once, t, 1);
	model_page_at(&hot, t, 1000);
	model_page_at(&hot, t, 1000);	/* two samples at one time: the weights add */
	assert_int_equal(hot.last_w, 2000);
	assert_int_equal(sc->s.spread_ns, 1000 * MS);
	for (int i = 0; i < 50; i++)
		hits += window_hits(sc, &once, t);
	assert_in_range(hits, 25, 80);	/* 50 expected */
	assert_in_range(window_hits(sc, &hot, t), 199, 200);
	assert_false(accessed(&sc->s, &hot, t - 5 * MS, t));
	assert_false(accessed(&sc->s, &hot, t + 1000 * MS, t + 1005 * MS));
	scene_free(sc);

	/* As fine as the checks: no spreading, a check finds the accesses in it. */
	sc = scene_res(SAMPLER_DAMON, "damon", 5 * MS);
	assert_int_equal(sc->s.spread_ns, 0);
	assert_true(accessed(&sc->s, &once, t, t + 5 * MS));
	assert_false(accessed(&sc->s, &once, t + 5 * MS, t + 10 * MS));
	scene_free(sc);
}

/*
 * hint on a trace coarser than the passes (windows of 1 s, a pass every
 * 10 ms): a window's accesses spread over it, so a page faults once a pass
 * it is used after, up to its accesses, not once a window.
 */
static void hint_spreads_a_coarse_window_over_its_passes(void **state)
{
	struct scene *sc = scene_res(SAMPLER_HINT, "hint", 1000 * MS);
	struct cxlt_page *hot, *cool;

	(void)state;
	assert_int_equal(sc->s.spread_ns, 1000 * MS);
	/* First touch: a page fault, then a hint after each pass the rest fall behind. */
	hot = touch_w(sc, 1000 * MS, PAGE_A, 500);
	assert_int_equal(hot->samples, 100);		/* 1 + the 99 passes in (0, 1 s) */
	cool = touch_w(sc, 1000 * MS, PAGE_B, 3);
	assert_int_equal(cool->samples, 3);		/* 1 + 2: three accesses */
	/* The next window: marked by the pass at 1 s, and after each of its 99. */
	assert_int_equal(touch_w(sc, 2000 * MS, PAGE_A, 500)->samples, 200);
	assert_int_equal(touch_w(sc, 2000 * MS, PAGE_B, 1)->samples, 4);
	/* A second record of A at 2 s (a weight split) adds nothing: its passes are spent. */
	assert_int_equal(touch_w(sc, 2000 * MS, PAGE_A, 500)->samples, 200);
	/* A page idle a window is marked before the next window, once. */
	assert_int_equal(touch_w(sc, 4000 * MS, PAGE_B, 1)->samples, 5);
	/* A record from before any access (--start trace): marked by the passes since the start. */
	{
		struct target *t = &sc->md.tr.targets[0];
		bool created;
		int idx = page_table__get(&t->pt, 0x300ULL << CXLT_PAGE_SHIFT, &created);

		assert_true(idx >= 0 && created);
		assert_int_equal(model_pages_grow(&sc->md, 0, t->pt.nr), 0);
		assert_int_equal(touch_w(sc, 6000 * MS, 0x300, 500)->samples, 100);
	}
	scene_free(sc);

	/* Passes every 300 ms, windows of 1 s: none between the windows at 2 and 3 s. */
	sc = scene_res(SAMPLER_HINT, "hint", 1000 * MS);
	sampler_run__free(&sc->s);
	sc->o.hint_period_ms = 300;
	assert_int_equal(sampler_run__init(&sc->s, &sc->spec, &sc->md, &sc->scan, &sc->o, 4096, NULL), 0);
	assert_int_equal(touch_w(sc, 2000 * MS, PAGE_A, 1)->samples, 1);
	assert_int_equal(touch_w(sc, 3000 * MS, PAGE_A, 2)->samples, 3);	/* 2 of 2,100 2,400 2,700 */
	assert_int_equal(touch_w(sc, 3000 * MS, PAGE_A, 5)->samples, 4);	/* and the third */
	scene_free(sc);

	/* As fine as the passes: one fault a pass at most, as before. */
	sc = scene_res(SAMPLER_HINT, "hint", 10 * MS);
	assert_int_equal(sc->s.spread_ns, 0);
	assert_int_equal(touch_w(sc, 5 * MS, PAGE_A, 500)->samples, 1);
	assert_int_equal(touch_w(sc, 8 * MS, PAGE_A, 500)->samples, 1);
	assert_int_equal(touch_w(sc, 15 * MS, PAGE_A, 500)->samples, 2);
	scene_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hint_faults_once_a_pass_and_unseen_follows_the_passes),
		cmocka_unit_test(a_migration_drops_the_scanners_mark),
		cmocka_unit_test(damon_regions_close_in_on_a_hot_range),
		cmocka_unit_test(damon_regions_start_without_the_gap),
		cmocka_unit_test(damon_spreads_a_coarse_window_over_its_checks),
		cmocka_unit_test(hint_spreads_a_coarse_window_over_its_passes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
