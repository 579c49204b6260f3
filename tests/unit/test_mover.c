// SPDX-License-Identifier: MIT
/*
 * Mover: token bucket, watermarks, plan validation, batching and the
 * accounting of every move_pages status, against a fake move_pages that
 * records its calls and answers from a script.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "mover.h"
#include "util.h"

#define BASE 0x7f3400000000ULL
#define PG 4096ULL
#define NPAGES 8192

/* Script entries for a move of page i (fake.script[i]): */
#define S_OK		0		/* moves: status = destination */
#define S_UNTOUCHED	1		/* leaves the status slot alone */
#define S_BUSY_MOVED	2		/* -EBUSY, but the page did move (6.1 THP quirk) */
#define S_PROTNONE	3		/* -ENOENT until touched (PROT_NONE before 6.5) */
/* anything negative: that status, the page stays */

struct call {
	int pid;
	unsigned long count;
	bool query;
	int dest;		/* nodes[0] of a move */
	bool one_dest;		/* every entry had nodes[0] */
	uint64_t first, last;	/* page numbers of the first and last entry */
};

static struct {
	int where[NPAGES];	/* node each page is on */
	int script[NPAGES];
	long fail_errno;	/* whole move calls fail with this errno when set */
	long query_errno;	/* node queries fail with this errno when set */
	int ncalls;
	struct call calls[64];
	int touched;		/* pages the mover touched */
} fake;

static void fake_touch_pages(void *ctx, int pid, void **pages, uint32_t count)
{
	(void)ctx;
	(void)pid;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t pn = ((uint64_t)(uintptr_t)pages[i] - BASE) / PG;

		if (fake.script[pn] == S_PROTNONE)
			fake.script[pn] = S_OK;	/* mapped again: movable */
		fake.touched++;
	}
}

static long fake_move_pages(void *ctx, int pid, unsigned long count, void **pages,
			    const int *nodes, int *status, int flags)
{
	struct call *c = &fake.calls[fake.ncalls < 64 ? fake.ncalls : 63];

	(void)ctx;
	(void)flags;
	fake.ncalls++;
	c->pid = pid;
	c->count = count;
	c->query = nodes == NULL;
	c->dest = nodes ? nodes[0] : -1;
	c->one_dest = true;
	c->first = ((uint64_t)(uintptr_t)pages[0] - BASE) / PG;
	c->last = ((uint64_t)(uintptr_t)pages[count - 1] - BASE) / PG;
	if (!nodes && fake.query_errno) {
		errno = (int)fake.query_errno;
		return -1;
	}
	if (!nodes) {
		for (unsigned long i = 0; i < count; i++)
			status[i] = fake.where[((uint64_t)(uintptr_t)pages[i] - BASE) / PG];
		return 0;
	}
	if (fake.fail_errno) {
		errno = (int)fake.fail_errno;
		return -1;
	}
	for (unsigned long i = 0; i < count; i++) {
		uint64_t pn = ((uint64_t)(uintptr_t)pages[i] - BASE) / PG;
		int s = fake.script[pn];

		if (nodes[i] != nodes[0])
			c->one_dest = false;
		/* The mover pre-fills status with a sentinel. */
		assert_int_equal(status[i], INT_MIN);
		if (s == S_OK) {
			fake.where[pn] = nodes[i];
			status[i] = nodes[i];
		} else if (s == S_PROTNONE) {
			status[i] = -ENOENT;
		} else if (s == S_BUSY_MOVED) {
			fake.where[pn] = nodes[i];
			status[i] = -EBUSY;
		} else if (s != S_UNTOUCHED) {
			status[i] = s;
		}
	}
	return 0;
}

/* Pagemap says: only page 0 is mapped (PROT_NONE or not). */
static int fake_pages_present(void *ctx, int pid, void **pages, uint32_t count, bool *present)
{
	(void)ctx;
	(void)pid;
	for (uint32_t i = 0; i < count; i++)
		present[i] = pages[i] == (void *)(uintptr_t)BASE;
	return 0;
}

static const struct platform fake_platform = { .move_pages = fake_move_pages,
						.touch_pages = fake_touch_pages,
						.pages_present = fake_pages_present };

static int nmove_calls(void)
{
	int n = 0;

	for (int i = 0; i < fake.ncalls && i < 64; i++)
		n += !fake.calls[i].query;
	return n;
}

/* ---- fixtures: a two-node machine, one or two targets ---- */

static struct topology topo;
static struct tracker tr;
static struct mover mv;
static struct cxlt_move moves[NPAGES];
static struct cxlt_plan plan;

/* Fast node 0 (total, free), slow node 1; node 2 exists but is not managed. */
static void machine(uint64_t fast_total, uint64_t fast_free)
{
	memset(&topo, 0, sizeof(topo));
	topo.page_size = PG;
	topo.nr_nodes = 3;
	topo.nodes[0] = (struct topo_node){ .id = 0, .has_cpus = true, .tier = 4,
					    .role = ROLE_FAST, .total_pages = fast_total,
					    .free_pages = fast_free };
	topo.nodes[1] = (struct topo_node){ .id = 1, .tier = 22, .role = ROLE_SLOW,
					    .total_pages = 1 << 20, .free_pages = 1 << 20 };
	topo.nodes[2] = (struct topo_node){ .id = 2, .tier = 22, .role = ROLE_NONE,
					    .total_pages = 1 << 20, .free_pages = 1 << 20 };
	topo.fast_mask = 0x1;
	topo.slow_mask = 0x2;
}

/* Target pid with n pages; page i is fake page (first + i), on node[i % 2 ? slow : fast]... */
static void add_target(pid_t pid, uint32_t first, uint32_t n, int node)
{
	int ti = tracker__add_target(&tr, pid, 1, "t", ORIGIN_PID);
	struct target *t;

	assert_true(ti >= 0);
	t = &tr.targets[ti];
	for (uint32_t i = 0; i < n; i++) {
		bool created;
		int idx = page_table__get(&t->pt, BASE + (first + i) * PG, &created);

		assert_int_equal(idx, i);
		t->pt.pages[idx].node = (int8_t)node;
		fake.where[first + i] = node;
	}
}

static void plan_reset(void)
{
	plan.moves = moves;
	plan.cap = NPAGES;
	plan.nr = 0;
}

static void setup_default(uint32_t batch)
{
	struct mover_opts o;

	memset(&fake, 0, sizeof(fake));
	tracker__init(&tr, 0.5);
	mover__default_opts(&o);
	o.batch = batch;
	assert_int_equal(mover__init(&mv, &o, PG), 0);
	machine(1 << 20, 1 << 19);	/* plenty of free fast memory */
	plan_reset();
	tr.pf = mv.pf = &fake_platform;
}

static int teardown(void **state)
{
	(void)state;
	mover__free(&mv);
	tracker__free(&tr);
	return 0;
}

/* ---- rate limiter ---- */

static void budget_is_a_token_bucket_of_one_second(void **state)
{
	struct mover_opts o;
	uint64_t b;

	(void)state;
	setup_default(1024);
	mover__free(&mv);
	mover__default_opts(&o);
	o.rate_mbps = 4;
	assert_int_equal(mover__init(&mv, &o, 4096), 0);
	mv.pf = &fake_platform;

	assert_int_equal(mover__budget(&mv, 100.0), 1024);	/* 4 MiB/s of 4 KiB pages */
	/* Saved up to one second's worth, never more. */
	assert_int_equal(mover__budget(&mv, 100.5), 1024);
	assert_int_equal(mover__budget(&mv, 110.0), 1024);

	/* Moving N pages spends N tokens. */
	add_target(100, 0, 800, 0);
	for (uint32_t i = 0; i < 800; i++)
		cxlt_plan_add(&plan, 0, i, 1);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1024), 0);
	assert_int_equal(mv.epoch.demoted, 800);
	assert_int_equal(mover__budget(&mv, 110.0), 1024 - 800);
	/* Half a second refills half a second's worth. */
	b = mover__budget(&mv, 110.5);
	assert_int_equal(b, 1024 - 800 + 512);
	/* And the refill stops at one second's worth. */
	assert_int_equal(mover__budget(&mv, 111.5), 1024);
	teardown(NULL);
}

static void budget_over_plan_rejects_the_rest(void **state)
{
	(void)state;
	setup_default(1024);
	add_target(100, 0, 10, 0);
	for (uint32_t i = 0; i < 10; i++)
		cxlt_plan_add(&plan, 0, i, 1);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 6), 0);
	assert_int_equal(mv.epoch.demoted, 6);
	assert_int_equal(mv.epoch.rejected_budget, 4);
	/* The plan's first moves are the ones kept. */
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(tr.targets[0].pt.pages[i].node, i < 6 ? 1 : 0);
	teardown(NULL);
}

/* ---- watermarks ---- */

static void wmarks_from_fast_capacity(void **state)
{
	struct wmarks w;

	(void)state;
	setup_default(1024);	/* low 2 %, high 5 % */
	machine(100000, 50000);
	mover__wmarks(&mv, &topo, &w);
	assert_int_equal(w.fast_free, 50000);
	assert_int_equal(w.low, 2000);
	assert_int_equal(w.high, 5000);
	assert_int_equal(w.demote_goal, 0);

	machine(100000, 1500);	/* under low: demote back up to high */
	mover__wmarks(&mv, &topo, &w);
	assert_int_equal(w.fast_free, 1500);
	assert_int_equal(w.demote_goal, 5000 - 1500);

	/* Back over low but not over high: still short, keep demoting. */
	machine(100000, 3000);
	mover__wmarks(&mv, &topo, &w);
	assert_int_equal(w.demote_goal, 5000 - 3000);
	/* Over high: done; between the marks again: not short any more. */
	machine(100000, 5000);
	mover__wmarks(&mv, &topo, &w);
	assert_int_equal(w.demote_goal, 0);
	machine(100000, 3000);
	mover__wmarks(&mv, &topo, &w);
	assert_int_equal(w.demote_goal, 0);
	machine(100000, 1500);
	mover__wmarks(&mv, &topo, &w);

	/* Two fast nodes add up; slow and unmanaged nodes do not count. */
	topo.nodes[2].role = ROLE_FAST;
	topo.nodes[2].total_pages = 100000;
	topo.nodes[2].free_pages = 2000;
	topo.fast_mask |= 0x4;
	mover__wmarks(&mv, &topo, &w);
	assert_int_equal(w.fast_free, 3500);
	assert_int_equal(w.low, 4000);
	assert_int_equal(w.high, 10000);
	assert_int_equal(w.demote_goal, 10000 - 3500);
	teardown(NULL);
}

/* The watermarks sit on top of the kernel's reserve (its zones' high watermarks). */
static void wmarks_sit_on_the_kernels_reserve(void **state)
{
	struct wmarks w;

	(void)state;
	setup_default(1024);	/* low 2 %, high 5 % */
	machine(100000, 9000);
	topo.nodes[0].kernel_high_pages = 8000;
	topo.nodes[1].kernel_high_pages = 3000;	/* a slow node's: not the fast tier's */
	mover__wmarks(&mv, &topo, &w);
	assert_int_equal(w.low, 8000 + 2000);
	assert_int_equal(w.high, 8000 + 5000);
	/* 9,000 free is over 5 % of the node but under the kernel's reserve + 2 %: demote. */
	assert_int_equal(w.demote_goal, 13000 - 9000);
	teardown(NULL);
}

static void under_low_wmark_demotions_first_promotions_held(void **state)
{
	(void)state;
	setup_default(1024);
	machine(100000, 1500);		/* low 2000, high 5000 */
	add_target(100, 0, 10, 1);	/* pages 0-9 on the slow node */
	add_target(200, 100, 10, 0);	/* pages 100-109 on the fast node */
	/* The plan lists the promotions first: the mover must still demote first. */
	for (uint32_t i = 0; i < 10; i++)
		cxlt_plan_add(&plan, 0, i, 0);
	for (uint32_t i = 0; i < 10; i++)
		cxlt_plan_add(&plan, 1, i, 1);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
	assert_true(fake.ncalls >= 1);
	assert_false(fake.calls[0].query);
	assert_int_equal(fake.calls[0].dest, 1);
	assert_int_equal(fake.calls[0].pid, 200);
	assert_int_equal(mv.epoch.demoted, 10);
	/* 1500 + 10 free is still under high: nothing is promoted. */
	assert_int_equal(mv.epoch.promoted, 0);
	assert_int_equal(mv.epoch.rejected_watermark, 10);
	assert_int_equal(nmove_calls(), 1);
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(tr.targets[0].pt.pages[i].node, 1);
	teardown(NULL);
}

static void promotions_may_only_use_room_over_high_wmark(void **state)
{
	(void)state;
	setup_default(1024);
	machine(100000, 4990);		/* high 5000 */
	add_target(100, 0, 10, 1);
	add_target(200, 100, 20, 0);
	for (uint32_t i = 0; i < 10; i++)	/* promotions in plan order 9..0 */
		cxlt_plan_add(&plan, 0, 9 - i, 0);
	for (uint32_t i = 0; i < 20; i++)
		cxlt_plan_add(&plan, 1, i, 1);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
	assert_int_equal(mv.epoch.demoted, 20);
	/* 4990 + 20 - 5000 = 10 pages of room */
	assert_int_equal(mv.epoch.promoted, 10);
	assert_int_equal(mv.epoch.rejected_watermark, 0);
	/* demotions ran before promotions */
	assert_int_equal(fake.calls[0].dest, 1);
	assert_int_equal(fake.calls[1].dest, 0);
	teardown(NULL);

	setup_default(1024);
	machine(100000, 4990);
	add_target(100, 0, 10, 1);
	add_target(200, 100, 15, 0);
	for (uint32_t i = 0; i < 10; i++)
		cxlt_plan_add(&plan, 0, 9 - i, 0);
	for (uint32_t i = 0; i < 15; i++)
		cxlt_plan_add(&plan, 1, i, 1);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
	/* 4990 + 15 - 5000 = 5 pages of room: the plan's first five (pages 9..5) */
	assert_int_equal(mv.epoch.promoted, 5);
	assert_int_equal(mv.epoch.rejected_watermark, 5);
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(tr.targets[0].pt.pages[i].node, i >= 5 ? 0 : 1);
	teardown(NULL);
}

/* ---- plan validation ---- */

static void invalid_plan_entries_are_rejected(void **state)
{
	struct target *t;

	(void)state;
	setup_default(1024);
	add_target(100, 0, 10, 1);
	t = &tr.targets[0];
	t->pt.pages[5].since_move = 3;		/* moved 3 epochs ago (< 10) */
	t->pt.pages[6].since_move = 10;		/* long enough ago */
	t->pt.pages[7].node = CXLT_NODE_UNKNOWN;
	t->pt.pages[8].flags |= PAGE_GONE;

	cxlt_plan_add(&plan, 1, 0, 0);		/* no such target */
	cxlt_plan_add(&plan, 0, 10, 0);		/* no such page */
	cxlt_plan_add(&plan, 0, 1, 2);		/* node 2 is not managed */
	cxlt_plan_add(&plan, 0, 2, 70);		/* no such node */
	cxlt_plan_add(&plan, 0, 3, -1);		/* negative node */
	cxlt_plan_add(&plan, 0, 4, 1);		/* already there */
	cxlt_plan_add(&plan, 0, 7, 0);		/* node unknown */
	cxlt_plan_add(&plan, 0, 8, 0);		/* gone */
	cxlt_plan_add(&plan, 0, 5, 0);		/* ping-pong */
	cxlt_plan_add(&plan, 0, 6, 0);		/* fine */
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
	assert_int_equal(mv.epoch.rejected_invalid, 8);
	assert_int_equal(mv.epoch.rejected_pingpong, 1);
	assert_int_equal(mv.epoch.promoted, 1);
	assert_int_equal(nmove_calls(), 1);
	assert_int_equal(fake.calls[0].count, 1);
	assert_int_equal(fake.calls[0].first, 6);
	assert_int_equal(t->pt.pages[6].node, 0);
	assert_int_equal(t->pt.pages[5].node, 1);
	/* Budget counts only valid moves. */
	assert_int_equal(mv.epoch.rejected_budget, 0);
	teardown(NULL);
}

/* A policy that names a page twice moves it once, counts it once, pays for it once. */
static void a_page_named_twice_moves_once(void **state)
{
	struct target *t;

	(void)state;
	setup_default(1024);
	add_target(100, 0, 10, 1);
	t = &tr.targets[0];
	cxlt_plan_add(&plan, 0, 3, 0);
	cxlt_plan_add(&plan, 0, 4, 0);
	cxlt_plan_add(&plan, 0, 3, 0);
	cxlt_plan_add(&plan, 0, 3, 1);		/* and back, in the same plan */
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 2), 0);
	assert_int_equal(mv.epoch.promoted, 2);
	assert_int_equal(mv.epoch.demoted, 0);
	assert_int_equal(mv.epoch.rejected_invalid, 2);
	assert_int_equal(mv.epoch.rejected_budget, 0);
	assert_int_equal(nmove_calls(), 1);
	assert_int_equal(fake.calls[0].count, 2);
	assert_int_equal(t->pt.pages[3].node, 0);
	assert_int_equal(t->pt.pages[3].outcome, CXLT_OUTCOME_MOVED);
	teardown(NULL);
}

static void moves_of_a_gone_target_are_rejected(void **state)
{
	(void)state;
	setup_default(1024);
	add_target(100, 0, 4, 1);
	tr.targets[0].gone = true;
	for (uint32_t i = 0; i < 4; i++)
		cxlt_plan_add(&plan, 0, i, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
	assert_int_equal(mv.epoch.rejected_invalid, 4);
	assert_int_equal(fake.ncalls, 0);
	teardown(NULL);
}

/* ---- batching ---- */

static void batches_of_at_most_batch_pages_per_target(void **state)
{
	uint32_t seen = 0;

	(void)state;
	setup_default(1024);
	add_target(100, 0, 3000, 0);
	for (uint32_t i = 0; i < 3000; i++)
		cxlt_plan_add(&plan, 0, i, 1);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 5000), 0);
	assert_int_equal(fake.ncalls, 3);
	for (int c = 0; c < 3; c++) {
		assert_false(fake.calls[c].query);
		assert_true(fake.calls[c].count <= 1024);
		assert_int_equal(fake.calls[c].pid, 100);
		assert_true(fake.calls[c].one_dest);
		seen += fake.calls[c].count;
	}
	assert_int_equal(seen, 3000);
	assert_int_equal(mv.epoch.calls, 3);
	assert_int_equal(mv.epoch.demoted, 3000);
	assert_int_equal(tr.targets[0].ctr.demoted, 3000);
	teardown(NULL);
}

static void batches_never_mix_targets(void **state)
{
	(void)state;
	setup_default(1024);
	add_target(100, 0, 5, 0);
	add_target(200, 100, 5, 0);
	/* Interleaved in the plan. */
	for (uint32_t i = 0; i < 5; i++) {
		cxlt_plan_add(&plan, 1, i, 1);
		cxlt_plan_add(&plan, 0, i, 1);
	}
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100), 0);
	assert_int_equal(fake.ncalls, 2);
	assert_int_equal(fake.calls[0].count, 5);
	assert_int_equal(fake.calls[1].count, 5);
	assert_true(fake.calls[0].pid != fake.calls[1].pid);
	for (int c = 0; c < 2; c++) {
		/* each call's pages are that pid's pages */
		uint64_t lo = fake.calls[c].pid == 100 ? 0 : 100;

		assert_true(fake.calls[c].first >= lo && fake.calls[c].last < lo + 5);
	}
	assert_int_equal(tr.targets[0].ctr.demoted, 5);
	assert_int_equal(tr.targets[1].ctr.demoted, 5);
	teardown(NULL);
}

/* ---- status accounting ---- */

/*
 * Target 100: a region of 4 KiB pages at BASE with its first 16 pages
 * resident, page 3 of them with a record of its own; and a huge page at
 * BASE + 2 MiB.  All on the slow node.  Returns the records' indexes.
 */
/* A page record of its own at addr, on the slow node, inside its region; its index. */
static uint32_t add_page_record(struct target *t, uint64_t addr)
{
	bool created;
	int idx = page_table__get(&t->pt, addr, &created);

	assert_true(idx >= 0 && created);
	t->pt.pages[idx].node = 1;
	tracker__region(t, addr)->detail++;
	return (uint32_t)idx;
}

static void add_regions(uint32_t *small, uint32_t *huge)
{
	const struct region_found a = { .base = BASE, .resident = 16, .resident_bits = 0x3,
					.node_id = { 1, -1 }, .on_node = { 16, 0 } };
	const struct region_found b = { .base = BASE + REGION_SIZE, .resident = REGION_PAGES,
					.resident_bits = ~0ULL, .huge = true,
					.node_id = { 1, -1 }, .on_node = { REGION_PAGES, 0 } };
	int ti = tracker__add_target(&tr, 100, 1, "t", ORIGIN_PID);
	struct target *t = &tr.targets[ti];

	*small = tracker__region_found(&tr, t, &a)->rec;
	*huge = tracker__region_found(&tr, t, &b)->rec;
	add_page_record(t, BASE + 3 * PG);
	for (uint32_t i = 0; i < 2 * REGION_PAGES; i++)
		fake.where[i] = 1;
}

static void a_huge_page_moves_as_one_and_counts_512(void **state)
{
	struct target *t;
	uint32_t small, huge;

	(void)state;
	setup_default(1024);
	add_regions(&small, &huge);
	t = &tr.targets[0];
	fake.where[7] = 0;	/* a page of the region already on the fast node */
	cxlt_plan_add(&plan, 0, small, 0);
	cxlt_plan_add(&plan, 0, huge, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
	/*
	 * A query, then one move: the region's pages without a record and not
	 * on node 0 already (14), and the huge page's first.
	 */
	assert_int_equal(nmove_calls(), 1);
	assert_true(fake.calls[0].query);
	assert_int_equal(fake.calls[1].count, 15);
	assert_int_equal(fake.where[3], 1);		/* the page with its own record stays */
	assert_int_equal(fake.where[0], 0);
	assert_int_equal(fake.where[15], 0);
	assert_int_equal(fake.where[16], 1);		/* not resident: not asked */
	/* What the kernel moved, not what was asked: the page already there is not counted. */
	assert_int_equal(mv.epoch.promoted, 14 + REGION_PAGES);
	assert_int_equal(t->ctr.promoted, 14 + REGION_PAGES);
	assert_int_equal(t->pt.pages[small].node, 0);
	assert_int_equal(t->pt.pages[huge].node, 0);
	assert_int_equal(t->pt.pages[huge].since_move, 0);
	/* The budget was charged the pages, not the plan entries. */
	assert_float_equal(mv.tokens, -(double)(14 + REGION_PAGES), 1e-9);
	teardown(NULL);
}

/*
 * The kernel's splits and collapses, as the fake sees them: page numbers
 * asked; and, for huge_at, whether the second region is a huge page now.
 */
static struct {
	int split_calls, collapse_calls, huge_at_calls;
	uint64_t split_page, collapse_page;
	int split_err;
	bool huge, split_fails;
} thp;

static int fake_split_huge(void *ctx, int pid, uint64_t page)
{
	(void)ctx;
	(void)pid;
	thp.split_calls++;
	thp.split_page = (page - BASE) / PG;
	if (!thp.split_fails)
		thp.huge = false;
	return thp.split_err;
}

static int fake_huge_at(void *ctx, int pid, uint64_t addr)
{
	(void)ctx;
	(void)pid;
	assert_int_equal(addr, BASE + REGION_SIZE);
	thp.huge_at_calls++;
	return thp.huge;
}

static int fake_collapse_huge(void *ctx, int pid, uint64_t addr, uint64_t len)
{
	(void)ctx;
	(void)pid;
	thp.collapse_calls++;
	thp.collapse_page = (addr - BASE) / PG;
	assert_int_equal(len, REGION_SIZE);
	return 0;
}

static const struct platform thp_platform = { .move_pages = fake_move_pages,
					       .touch_pages = fake_touch_pages,
					       .pages_present = fake_pages_present,
					       .split_huge = fake_split_huge,
					       .huge_at = fake_huge_at,
					       .collapse_huge = fake_collapse_huge };
/* A kernel that does not say which pages are huge (no CAP_SYS_ADMIN): the sweeps do. */
static const struct platform thp_platform_unasked = { .move_pages = fake_move_pages,
						       .touch_pages = fake_touch_pages,
						       .pages_present = fake_pages_present,
						       .split_huge = fake_split_huge,
						       .collapse_huge = fake_collapse_huge };

/* The two regions of add_regions, the second a huge page in the fake kernel too; returns target 100. */
static struct target *setup_thp(const struct platform *pf, uint32_t *small, uint32_t *huge)
{
	setup_default(1024);
	mv.pf = pf;
	memset(&thp, 0, sizeof(thp));
	thp.huge = true;
	add_regions(small, huge);
	return &tr.targets[0];
}

/*
 * A huge page on its way to fast memory is split, not moved: nothing
 * migrates, the page advised cold is in a chunk never sampled, and its
 * record is a region of 4 KiB pages with no heat, whose hot pages get
 * records of their own.  When all its pages reach fast memory it is
 * collapsed there, once.  A huge page the split left huge moves whole; one
 * found split by a sweep and huge again (khugepaged) is split again.
 */
static void a_huge_page_is_split_before_it_is_promoted(void **state)
{
	struct target *t;
	struct region *r;
	uint32_t small, huge;

	(void)state;
	t = setup_thp(&thp_platform, &small, &huge);
	r = tracker__region(t, BASE + REGION_SIZE);
	r->sampled_bits = 0x3;		/* its first 16 pages sampled: hot */
	t->pt.pages[huge].heat = 50;
	cxlt_plan_add(&plan, 0, huge, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
	assert_int_equal(thp.split_calls, 1);
	assert_int_equal(thp.split_page, REGION_PAGES + 2 * CHUNK_PAGES);
	assert_int_equal(nmove_calls(), 0);
	assert_int_equal(mv.epoch.promoted, 0);
	assert_int_equal(mv.epoch.split, 1);
	assert_int_equal(t->pt.pages[huge].outcome, CXLT_OUTCOME_BUSY);
	assert_false(t->pt.pages[huge].flags & PAGE_HUGE);
	assert_true(t->pt.pages[huge].heat == 0);
	assert_true(r->flags & REGION_SPLIT);
	assert_true(r->flags & REGION_MIXED);
	assert_int_equal(t->split_regions, 1);
	assert_float_equal(mv.tokens, 0, 1e-9);	/* a split moves nothing */

	/* Its region's pages promoted: all of it on node 0, so it is huge again there. */
	plan_reset();
	cxlt_plan_add(&plan, 0, huge, 0);
	mv.tokens = 4 * REGION_PAGES;
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
	assert_int_equal(thp.split_calls, 1);
	assert_int_equal(mv.epoch.promoted, REGION_PAGES);
	assert_int_equal(fake.where[REGION_PAGES + 100], 0);
	assert_int_equal(thp.collapse_calls, 1);
	assert_int_equal(thp.collapse_page, REGION_PAGES);
	assert_int_equal(mv.epoch.collapsed, 1);
	assert_true(t->pt.pages[huge].flags & PAGE_HUGE);
	assert_false(r->flags & REGION_SPLIT);
	assert_int_equal(t->split_regions, 0);	/* the next epochs skip the walk */
	plan_reset();
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
	assert_int_equal(thp.collapse_calls, 1);
	teardown(NULL);

	/*
	 * Split, then huge again on the slow node (khugepaged) before or after
	 * a sweep found it split: the kernel says so, split again.  A split
	 * that does not take (the kernel says huge still): it moves whole at
	 * once.  Where the kernel does not say, the sweeps do: huge again
	 * after a sweep found it split, split again; huge at the first sweep
	 * after the split (the split did nothing), whole.
	 */
	for (int asked = 1; asked >= 0; asked--) {
		for (int seen = 1; seen >= 0; seen--) {
			const struct region_found split = { .base = BASE + REGION_SIZE, .resident = REGION_PAGES,
							    .resident_bits = ~0ULL, .node_id = { 1, -1 },
							    .on_node = { REGION_PAGES, 0 } };
			struct region_found again = split;
			bool splits = asked || seen;

			again.huge = true;
			t = setup_thp(asked ? &thp_platform : &thp_platform_unasked, &small, &huge);
			cxlt_plan_add(&plan, 0, huge, 0);
			assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
			assert_int_equal(thp.split_calls, 1);
			if (seen) {
				tracker__region_found(&tr, t, &split);
				assert_true(tracker__region(t, BASE + REGION_SIZE)->flags & REGION_SPLIT_SEEN);
			}
			tracker__region_found(&tr, t, &again);
			thp.huge = true;
			assert_true(t->pt.pages[huge].flags & PAGE_HUGE);
			plan_reset();
			cxlt_plan_add(&plan, 0, huge, 0);
			assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
			assert_int_equal(thp.split_calls, 1 + splits);
			assert_int_equal(mv.epoch.split, splits);
			assert_int_equal(mv.epoch.promoted, splits ? 0 : REGION_PAGES);
			teardown(NULL);
		}
	}
	setup_thp(&thp_platform, &small, &huge);
	thp.split_fails = true;
	cxlt_plan_add(&plan, 0, huge, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
	assert_int_equal(thp.split_calls, 1);
	assert_int_equal(mv.epoch.split, 0);
	assert_int_equal(mv.epoch.promoted, REGION_PAGES);
	teardown(NULL);

	/* --keep-huge, or a kernel that refuses the split: whole. */
	for (int k = 0; k < 2; k++) {
		setup_thp(&thp_platform, &small, &huge);
		mv.opts.keep_huge = k == 0;
		thp.split_err = k == 1 ? -EPERM : 0;
		cxlt_plan_add(&plan, 0, huge, 0);
		assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
		assert_int_equal(thp.split_calls, k);
		assert_int_equal(mv.epoch.promoted, REGION_PAGES);
		assert_int_equal(mv.epoch.split, 0);
		teardown(NULL);
	}
}

/*
 * A region the mover split, collapsed again by khugepaged: its pages'
 * records are still 4 KiB ones (a sweep keeps them), and moving one would
 * move all 512.  The kernel is asked once a plan a region; a huge page is
 * split again and the pages move; one that will not split keeps them where
 * they are this epoch.  The next plan asks again.
 */
static void a_page_of_a_split_region_huge_again_is_split_first(void **state)
{
	for (int fails = 0; fails < 2; fails++) {
		struct target *t;
		uint32_t small, huge, hot[2];

		(void)state;
		t = setup_thp(&thp_platform, &small, &huge);
		cxlt_plan_add(&plan, 0, huge, 0);	/* split on its way */
		assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
		assert_int_equal(thp.split_calls, 1);
		assert_int_equal(thp.huge_at_calls, 2);	/* huge before, not after */
		for (int k = 0; k < 2; k++)
			hot[k] = add_page_record(t, BASE + REGION_SIZE + (uint64_t)(40 + k) * PG);
		thp.huge = true;			/* khugepaged, on the slow node */
		thp.split_fails = fails;
		thp.huge_at_calls = 0;
		if (fails) {
			/*
			 * A sweep that finds it huge keeps the page records
			 * (they are the hot pages to bring back), not a huge
			 * record; without a sweep the records are what they were.
			 */
			const struct region_found again = { .base = BASE + REGION_SIZE, .resident = REGION_PAGES,
							    .resident_bits = ~0ULL, .huge = true,
							    .node_id = { 1, -1 }, .on_node = { REGION_PAGES, 0 } };

			tracker__region_found(&tr, t, &again);
			assert_false(t->pt.pages[tracker__region(t, BASE + REGION_SIZE)->rec].flags & PAGE_HUGE);
			assert_int_equal(page_table__find(&t->pt, BASE + REGION_SIZE + 40 * PG), hot[0]);
		}
		plan_reset();
		cxlt_plan_add(&plan, 0, hot[0], 0);
		cxlt_plan_add(&plan, 0, hot[1], 0);
		mv.tokens = 4 * REGION_PAGES;
		assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
		assert_int_equal(thp.split_calls, 2);
		assert_int_equal(thp.huge_at_calls, 2);	/* asked, split, asked again: once a region */
		assert_int_equal(mv.epoch.split, !fails);
		assert_int_equal(mv.epoch.promoted, fails ? 0 : 2);
		assert_int_equal(fake.where[REGION_PAGES + 40], fails ? 1 : 0);
		assert_int_equal(fake.where[REGION_PAGES + 42], 1);	/* the rest stays */
		assert_int_equal(t->pt.pages[hot[1]].outcome, fails ? CXLT_OUTCOME_BUSY : CXLT_OUTCOME_MOVED);
		assert_false(tracker__region(t, BASE + REGION_SIZE)->flags & (REGION_ASKED | REGION_STILL_HUGE));

		plan_reset();
		cxlt_plan_add(&plan, 0, hot[0], 0);
		thp.huge_at_calls = 0;
		assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
		assert_int_equal(thp.huge_at_calls, fails ? 2 : 0);	/* moved: nothing to ask */
		teardown(NULL);
	}
}

/*
 * A page sampled in a huge page no sweep has reached (its region known
 * only from samples, its record not a huge one): the kernel is asked, and
 * the huge page split before the page moves alone.
 */
static void a_page_sampled_before_the_sweep_in_a_huge_page_is_split_first(void **state)
{
	struct target *t;
	struct region *r;
	uint32_t small, huge;

	(void)state;
	t = setup_thp(&thp_platform, &small, &huge);
	r = tracker__region(t, BASE + REGION_SIZE);
	r->flags &= (uint8_t)~REGION_SWEPT;
	t->pt.pages[huge].flags &= ~PAGE_HUGE;
	cxlt_plan_add(&plan, 0, add_page_record(t, BASE + REGION_SIZE + 40 * PG), 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
	assert_int_equal(thp.split_calls, 1);
	assert_int_equal(mv.epoch.split, 1);
	assert_int_equal(mv.epoch.promoted, 1);
	assert_int_equal(fake.where[REGION_PAGES + 40], 0);
	assert_int_equal(fake.where[REGION_PAGES + 41], 1);
	assert_true(r->flags & REGION_SPLIT);
	teardown(NULL);
}

/*
 * A region of 4 KiB pages never split, whose page 3 the mover placed on
 * the fast node, made a huge page on the slow node by khugepaged: the
 * record stays, and the region counts as split (so the mover splits it
 * before the page comes back).  A huge page found where its page records
 * already were folds them: it is one unit.
 */
static void khugepaged_over_placed_pages_keeps_their_records(void **state)
{
	for (int placed = 1; placed >= 0; placed--) {
		const struct region_found huge_now = { .base = BASE, .resident = REGION_PAGES,
						       .resident_bits = ~0ULL, .huge = true,
						       .node_id = { 1, -1 }, .on_node = { REGION_PAGES, 0 } };
		struct target *t;
		struct region *r;
		uint32_t small, huge;

		(void)state;
		setup_default(1024);
		add_regions(&small, &huge);
		t = &tr.targets[0];
		t->pt.pages[page_table__find(&t->pt, BASE + 3 * PG)].node = placed ? 0 : 1;
		r = tracker__region_found(&tr, t, &huge_now);
		assert_int_equal(!(t->pt.pages[page_table__find(&t->pt, BASE + 3 * PG)].flags & PAGE_GONE),
				 placed);
		assert_int_equal(!!(r->flags & REGION_SPLIT), placed);
		assert_int_equal(t->split_regions, placed);
		assert_int_equal(!!(t->pt.pages[r->rec].flags & PAGE_HUGE), !placed);
		teardown(NULL);
	}
}

/*
 * A region's -ENOENT pages: PROT_NONE ones (mapped, per pagemap) are touched
 * and retried; the others never (a read would map the zero page).  A region
 * none of whose pages moved keeps its node.
 */
static void a_region_retries_only_its_mapped_pages(void **state)
{
	struct target *t;
	uint32_t small, huge;

	(void)state;
	setup_default(1024);
	add_regions(&small, &huge);
	t = &tr.targets[0];
	fake.script[0] = fake.script[1] = S_PROTNONE;
	cxlt_plan_add(&plan, 0, small, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
	assert_int_equal(fake.touched, 1);
	assert_int_equal(fake.where[0], 0);
	assert_int_equal(fake.where[1], 1);
	assert_int_equal(mv.epoch.promoted, 14);
	assert_int_equal(t->pt.pages[small].node, 0);
	teardown(NULL);

	setup_default(1024);
	add_regions(&small, &huge);
	t = &tr.targets[0];
	for (int i = 0; i < 16; i++)
		fake.script[i] = -EACCES;	/* shared with another process: not ours */
	cxlt_plan_add(&plan, 0, small, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
	assert_int_equal(mv.epoch.promoted, 0);
	assert_int_equal(mv.epoch.access, 0);	/* a region's shared pages are no error */
	assert_int_equal(t->pt.pages[small].node, 1);
	teardown(NULL);
}

/*
 * A region whose resident pages are all on the destination but for some
 * not mapped (-ENOENT, pagemap agrees): nothing moves, and its record says
 * where its pages are, so the policy stops asking for it.
 */
static void a_region_in_place_but_unmapped_pages_takes_the_node(void **state)
{
	struct target *t;
	uint32_t small, huge;

	(void)state;
	setup_default(1024);
	add_regions(&small, &huge);
	t = &tr.targets[0];
	for (int i = 0; i < 16; i++)
		fake.where[i] = 0;
	fake.where[1] = fake.where[2] = -ENOENT;
	fake.script[1] = fake.script[2] = -ENOENT;
	cxlt_plan_add(&plan, 0, small, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 1000), 0);
	assert_int_equal(nmove_calls(), 1);
	assert_int_equal(fake.calls[1].count, 2);	/* the two unmapped pages, nothing else */
	assert_int_equal(fake.touched, 0);
	assert_int_equal(mv.epoch.promoted, 0);
	assert_int_equal(t->pt.pages[small].node, 0);
	teardown(NULL);
}

/* Fast memory short: regions demote until the goal is met, whatever the plan names. */
static void regions_demote_only_up_to_the_goal(void **state)
{
	uint32_t small, huge;

	(void)state;
	setup_default(1024);
	add_regions(&small, &huge);
	for (uint32_t i = 0; i < 2 * REGION_PAGES; i++)
		fake.where[i] = 0;
	tr.targets[0].pt.pages[small].node = tr.targets[0].pt.pages[huge].node = 0;
	machine(100000, 1000);		/* low 2000, high 5000: the goal is 4000 pages */
	cxlt_plan_add(&plan, 0, huge, 1);
	cxlt_plan_add(&plan, 0, small, 1);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100000), 0);
	assert_int_equal(mv.epoch.demoted, REGION_PAGES + 15);	/* 527 < 4000: both */
	teardown(NULL);

	setup_default(1024);
	add_regions(&small, &huge);
	for (uint32_t i = 0; i < 2 * REGION_PAGES; i++)
		fake.where[i] = 0;
	tr.targets[0].pt.pages[small].node = tr.targets[0].pt.pages[huge].node = 0;
	mv.opts.low_wmark_pct = 4.9;
	machine(100000, 4800);		/* low 4900, high 5000: the goal, 200 pages, the huge page meets */
	/* The plan names the warmer first: the colder (never sampled) goes. */
	tr.targets[0].pt.pages[small].heat = 5;
	tr.targets[0].pt.pages[small].flags |= CXLT_PAGE_SAMPLED;
	cxlt_plan_add(&plan, 0, small, 1);
	cxlt_plan_add(&plan, 0, huge, 1);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100000), 0);
	assert_int_equal(mv.epoch.demoted, REGION_PAGES);
	assert_int_equal(mv.epoch.rejected_budget, 1);
	teardown(NULL);
}

static void a_huge_page_over_the_budget_or_the_watermark_waits(void **state)
{
	uint32_t small, huge;

	(void)state;
	setup_default(1024);
	add_regions(&small, &huge);
	cxlt_plan_add(&plan, 0, huge, 0);
	cxlt_plan_add(&plan, 0, small, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100), 0);
	assert_int_equal(mv.epoch.rejected_budget, 1);
	assert_int_equal(mv.epoch.promoted, 15);	/* the region's 15: budget 100 */

	/* Room over the high watermark for 100 pages: the huge page does not fit. */
	teardown(NULL);
	setup_default(1024);
	add_regions(&small, &huge);
	machine(100000, 5000 + 100);	/* high watermark: 5% = 5000 pages */
	cxlt_plan_add(&plan, 0, huge, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 10000), 0);
	assert_int_equal(mv.epoch.rejected_watermark, 1);
	assert_int_equal(mv.epoch.promoted, 0);
	assert_int_equal(nmove_calls(), 0);
	teardown(NULL);
}

static void success_updates_node_since_move_and_counters(void **state)
{
	struct target *a, *b;

	(void)state;
	setup_default(1024);
	add_target(100, 0, 4, 1);
	add_target(200, 100, 4, 0);
	a = &tr.targets[0];
	b = &tr.targets[1];
	a->pt.pages[0].since_move = 50;
	for (uint32_t i = 0; i < 4; i++)
		cxlt_plan_add(&plan, 0, i, 0);
	cxlt_plan_add(&plan, 1, 0, 1);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100), 0);
	assert_int_equal(mv.epoch.promoted, 4);
	assert_int_equal(mv.epoch.demoted, 1);
	assert_int_equal(a->ctr.promoted, 4);
	assert_int_equal(a->ctr.demoted, 0);
	assert_int_equal(b->ctr.demoted, 1);
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(a->pt.pages[i].node, 0);
		assert_int_equal(a->pt.pages[i].since_move, 0);
	}
	assert_int_equal(b->pt.pages[0].node, 1);
	assert_int_equal(b->pt.pages[0].since_move, 0);
	assert_int_equal(b->pt.pages[1].since_move, CXLT_NEVER_MOVED);
	/* Totals add up over epochs. */
	plan_reset();
	cxlt_plan_add(&plan, 1, 1, 1);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100), 0);
	assert_int_equal(mv.epoch.demoted, 1);
	assert_int_equal(mv.epoch.promoted, 0);
	assert_int_equal(mv.total.demoted, 2);
	assert_int_equal(mv.total.promoted, 4);
	teardown(NULL);
}

/* Each plan entry's fate is in its record for the policy's next view, and in last_result. */
static void the_last_plans_outcome_is_in_each_record(void **state)
{
	const struct cxlt_page *p;

	(void)state;
	setup_default(1024);
	add_target(100, 0, 6, 1);
	p = tr.targets[0].pt.pages;
	tr.targets[0].pt.pages[1].since_move = 2;	/* moved too recently */
	fake.script[3] = -EBUSY;			/* the kernel cannot move page 3 now */
	cxlt_plan_add(&plan, 0, 0, 0);
	cxlt_plan_add(&plan, 0, 1, 0);
	cxlt_plan_add(&plan, 0, 2, 0);
	cxlt_plan_add(&plan, 0, 3, 0);
	cxlt_plan_add(&plan, 0, 4, 1);			/* already there */
	cxlt_plan_add(&plan, 0, 5, 0);			/* over the budget of 3 */
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 3), 0);
	assert_int_equal(p[0].outcome, CXLT_OUTCOME_MOVED);
	assert_int_equal(p[1].outcome, CXLT_OUTCOME_PINGPONG);
	assert_int_equal(p[2].outcome, CXLT_OUTCOME_MOVED);
	assert_int_equal(p[3].outcome, CXLT_OUTCOME_BUSY);
	assert_int_equal(p[4].outcome, CXLT_OUTCOME_INVALID);
	assert_int_equal(p[5].outcome, CXLT_OUTCOME_BUDGET);
	assert_int_equal(mv.last_result.planned, 6);
	assert_int_equal(mv.last_result.promoted, 2);
	assert_int_equal(mv.last_result.refused, 3);
	assert_int_equal(mv.last_result.failed, 1);
	/* The next plan's outcomes replace them. */
	plan_reset();
	cxlt_plan_add(&plan, 0, 5, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 3), 0);
	assert_int_equal(p[5].outcome, CXLT_OUTCOME_MOVED);
	for (int i = 0; i < 5; i++)
		assert_int_equal(p[i].outcome, CXLT_OUTCOME_NONE);
	teardown(NULL);
}

/* A target at its fast-tier share gets no promotion past it; another target's go on. */
static void a_share_caps_a_targets_promotions_not_the_others(void **state)
{
	(void)state;
	setup_default(1024);
	add_target(100, 0, 8, 1);
	add_target(200, 100, 8, 1);
	tr.targets[0].fast_cap = 10;
	tr.targets[0].place.fast = 7;		/* room for 3 more */
	for (uint32_t i = 0; i < 6; i++)
		cxlt_plan_add(&plan, 0, i, 0);
	for (uint32_t i = 0; i < 4; i++)
		cxlt_plan_add(&plan, 1, i, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100), 0);
	assert_int_equal(mv.epoch.rejected_share, 3);
	assert_int_equal(mv.epoch.promoted, 3 + 4);
	for (uint32_t i = 0; i < 6; i++)
		assert_int_equal(tr.targets[0].pt.pages[i].outcome,
				 i < 3 ? CXLT_OUTCOME_MOVED : CXLT_OUTCOME_SHARE);
	assert_int_equal(tr.targets[1].pt.pages[3].outcome, CXLT_OUTCOME_MOVED);
	assert_int_equal(mv.last_result.refused, 3);
	teardown(NULL);
}

static void ebusy_is_counted_busy_and_page_stays(void **state)
{
	(void)state;
	setup_default(1024);
	add_target(100, 0, 2, 1);
	fake.script[0] = -EBUSY;
	cxlt_plan_add(&plan, 0, 0, 0);
	cxlt_plan_add(&plan, 0, 1, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100), 0);
	assert_int_equal(mv.epoch.busy, 1);
	assert_int_equal(mv.epoch.promoted, 1);
	assert_int_equal(tr.targets[0].pt.pages[0].node, 1);
	assert_int_equal(tr.targets[0].pt.pages[0].since_move, CXLT_NEVER_MOVED);
	assert_false(tr.targets[0].pt.pages[0].flags & PAGE_GONE);
	teardown(NULL);
}

static void ebusy_but_moved_per_node_query_counts_as_moved(void **state)
{
	bool queried = false;

	(void)state;
	setup_default(1024);
	add_target(100, 0, 3, 1);
	fake.script[0] = S_BUSY_MOVED;
	fake.script[1] = S_BUSY_MOVED;
	for (uint32_t i = 0; i < 3; i++)
		cxlt_plan_add(&plan, 0, i, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100), 0);
	for (int c = 0; c < fake.ncalls; c++)
		queried |= fake.calls[c].query;
	assert_true(queried);
	assert_int_equal(mv.epoch.busy, 0);
	assert_int_equal(mv.epoch.promoted, 3);
	assert_int_equal(tr.targets[0].ctr.promoted, 3);
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(tr.targets[0].pt.pages[i].node, 0);
		assert_int_equal(tr.targets[0].pt.pages[i].since_move, 0);
	}
	teardown(NULL);
}

/* A PROT_NONE page (before 6.5) is touched on the owner's behalf and moved on retry. */
static void protnone_pages_are_touched_and_retried(void **state)
{
	struct target *t;

	(void)state;
	setup_default(1024);
	add_target(100, 0, 3, 1);
	t = &tr.targets[0];
	fake.script[0] = S_PROTNONE;
	fake.script[1] = -ENOENT;	/* really gone: still -ENOENT after the touch */
	for (uint32_t i = 0; i < 3; i++)
		cxlt_plan_add(&plan, 0, i, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100), 0);
	assert_int_equal(fake.touched, 2);	/* only the -ENOENT ones */
	assert_int_equal(mv.epoch.retried, 2);
	assert_int_equal(nmove_calls(), 2);	/* the batch, then the retry */
	assert_int_equal(mv.epoch.promoted, 2);
	assert_int_equal(mv.epoch.gone, 1);
	assert_int_equal(t->pt.pages[0].node, 0);
	assert_int_equal(t->pt.pages[0].since_move, 0);
	assert_int_equal(t->pt.pages[1].node, CXLT_NODE_UNKNOWN);
	teardown(NULL);
}

/*
 * A PROT_NONE page already on its destination (a stale record here; a
 * demoted region's slow pages in mode 2) reports -ENOENT, then, touched,
 * its node: it is placed, not counted as moved, and not moved again.
 */
static void a_protnone_page_already_there_is_placed_not_counted(void **state)
{
	struct target *t;

	(void)state;
	setup_default(1024);
	add_target(100, 0, 2, 1);
	t = &tr.targets[0];
	fake.where[0] = 0;		/* the record says node 1 */
	fake.script[0] = S_PROTNONE;
	cxlt_plan_add(&plan, 0, 0, 0);
	cxlt_plan_add(&plan, 0, 1, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100), 0);
	assert_int_equal(fake.touched, 1);
	assert_int_equal(nmove_calls(), 1);	/* the batch; no move on retry */
	assert_int_equal(mv.epoch.promoted, 1);
	assert_int_equal(mv.epoch.retried, 0);
	assert_int_equal(t->pt.pages[0].node, 0);
	assert_int_equal(t->pt.pages[0].outcome, CXLT_OUTCOME_MOVED);
	assert_int_equal(t->pt.pages[1].node, 0);
	teardown(NULL);
}

static void gone_pages_are_flagged(void **state)
{
	struct target *t;

	(void)state;
	setup_default(1024);
	add_target(100, 0, 3, 1);
	t = &tr.targets[0];
	fake.script[0] = -ENOENT;
	fake.script[1] = -EFAULT;
	for (uint32_t i = 0; i < 3; i++)
		cxlt_plan_add(&plan, 0, i, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100), 0);
	assert_int_equal(mv.epoch.gone, 2);
	assert_int_equal(mv.epoch.promoted, 1);
	/* -ENOENT may be a PROT_NONE page (pre-6.5): node unknown, record kept */
	assert_false(t->pt.pages[0].flags & PAGE_GONE);
	assert_int_equal(t->pt.pages[0].node, CXLT_NODE_UNKNOWN);
	assert_true(t->pt.pages[1].flags & PAGE_GONE);	/* -EFAULT: no mapping */
	assert_false(t->pt.pages[2].flags & PAGE_GONE);
	teardown(NULL);
}

static void enomem_on_promotion_stops_later_promotion_batches(void **state)
{
	(void)state;
	setup_default(2);		/* two pages a call */
	add_target(100, 0, 6, 1);
	add_target(200, 100, 2, 0);
	fake.script[1] = -ENOMEM;
	for (uint32_t i = 0; i < 6; i++)
		cxlt_plan_add(&plan, 0, i, 0);
	cxlt_plan_add(&plan, 1, 0, 1);	/* a demotion still runs */
	cxlt_plan_add(&plan, 1, 1, 1);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100), 0);
	assert_int_equal(mv.epoch.nomem, 1);
	assert_int_equal(mv.epoch.demoted, 2);
	assert_int_equal(mv.epoch.promoted, 1);	/* page 0 of the first batch */
	/* one demotion call, one promotion call; the other two never tried */
	assert_int_equal(nmove_calls(), 2);
	assert_int_equal(mv.epoch.rejected_watermark, 4);
	for (uint32_t i = 2; i < 6; i++)
		assert_int_equal(tr.targets[0].pt.pages[i].node, 1);
	teardown(NULL);
}

static void enomem_on_demotion_does_not_stop_demotions(void **state)
{
	(void)state;
	setup_default(2);
	add_target(100, 0, 6, 0);
	fake.script[0] = -ENOMEM;
	for (uint32_t i = 0; i < 6; i++)
		cxlt_plan_add(&plan, 0, i, 1);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100), 0);
	assert_int_equal(mv.epoch.nomem, 1);
	assert_int_equal(mv.epoch.demoted, 5);
	assert_int_equal(nmove_calls(), 3);
	teardown(NULL);
}

static void eacces_and_other_errors_are_counted(void **state)
{
	struct target *t;

	(void)state;
	setup_default(1024);
	add_target(100, 0, 4, 1);
	t = &tr.targets[0];
	fake.script[0] = -EACCES;
	fake.script[1] = -EINVAL;
	fake.script[2] = -EIO;
	for (uint32_t i = 0; i < 4; i++)
		cxlt_plan_add(&plan, 0, i, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100), 0);
	assert_int_equal(mv.epoch.access, 1);
	assert_int_equal(mv.epoch.other_error, 2);
	assert_int_equal(mv.epoch.promoted, 1);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(t->pt.pages[i].node, 1);
	/* A shared page's record goes (the sweeps track private memory); the others stay. */
	assert_true(t->pt.pages[0].flags & PAGE_GONE);
	assert_false(t->pt.pages[1].flags & PAGE_GONE);
	assert_false(t->pt.pages[2].flags & PAGE_GONE);
	teardown(NULL);
}

static void untouched_status_is_unreported(void **state)
{
	struct target *t;

	(void)state;
	setup_default(1024);
	add_target(100, 0, 3, 1);
	t = &tr.targets[0];
	fake.script[1] = S_UNTOUCHED;
	for (uint32_t i = 0; i < 3; i++)
		cxlt_plan_add(&plan, 0, i, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100), 0);
	assert_int_equal(mv.epoch.unreported, 1);
	assert_int_equal(mv.epoch.promoted, 2);
	/* not moved according to the node query: the record keeps the old node */
	assert_int_equal(t->pt.pages[1].node, 1);
	assert_int_equal(t->pt.pages[1].since_move, CXLT_NEVER_MOVED);
	teardown(NULL);
}

/* The process exits during the call: the untouched rest of the batch is gone with it. */
static void exit_mid_call_counts_untouched_pages_as_gone(void **state)
{
	(void)state;
	setup_default(1024);
	add_target(100, 0, 4, 1);
	fake.script[2] = S_UNTOUCHED;
	fake.script[3] = S_UNTOUCHED;
	fake.query_errno = ESRCH;
	for (uint32_t i = 0; i < 4; i++)
		cxlt_plan_add(&plan, 0, i, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100), 0);
	assert_int_equal(mv.epoch.promoted, 2);
	assert_int_equal(mv.epoch.unreported, 0);
	assert_int_equal(mv.epoch.gone, 2);
	assert_int_equal(mv.epoch.process_gone, 1);
	assert_true(tr.targets[0].gone);
	teardown(NULL);
}

/* Exiting, no mm left: the kernel says EINVAL, not ESRCH; the mover still knows. */
static void einval_from_a_vanished_process_is_process_gone(void **state)
{
	pid_t child = fork();

	(void)state;
	if (child == 0)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);	/* no such process now */
	setup_default(1024);
	add_target(child, 0, 4, 1);
	fake.fail_errno = EINVAL;
	for (uint32_t i = 0; i < 4; i++)
		cxlt_plan_add(&plan, 0, i, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100), 0);
	assert_int_equal(mv.epoch.process_gone, 1);
	assert_int_equal(mv.epoch.call_failed, 0);
	assert_true(tr.targets[0].gone);
	teardown(NULL);
}

static void whole_call_esrch_marks_process_gone(void **state)
{
	(void)state;
	setup_default(2);
	add_target(100, 0, 6, 1);
	fake.fail_errno = ESRCH;
	for (uint32_t i = 0; i < 6; i++)
		cxlt_plan_add(&plan, 0, i, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100), 0);
	assert_int_equal(mv.epoch.process_gone, 1);
	assert_true(tr.targets[0].gone);
	/* no more calls for a process that is gone */
	assert_int_equal(fake.ncalls, 1);
	assert_int_equal(mv.epoch.promoted, 0);
	assert_int_equal(mv.epoch.call_failed, 0);
	teardown(NULL);
}

static void whole_call_other_errno_is_call_failed(void **state)
{
	(void)state;
	setup_default(1024);
	add_target(100, 0, 3, 1);
	fake.fail_errno = EPERM;
	for (uint32_t i = 0; i < 3; i++)
		cxlt_plan_add(&plan, 0, i, 0);
	assert_int_equal(mover__execute(&mv, &tr, &topo, &plan, 100), 0);
	assert_int_equal(mv.epoch.call_failed, 1);
	assert_int_equal(mv.epoch.process_gone, 0);
	assert_false(tr.targets[0].gone);
	assert_int_equal(mv.epoch.promoted, 0);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(tr.targets[0].pt.pages[i].node, 1);
	teardown(NULL);
}

static void init_rejects_bad_options(void **state)
{
	struct mover_opts o;
	struct mover m;

	(void)state;
	mover__default_opts(&o);
	o.batch = 0;
	assert_int_equal(mover__init(&m, &o, 4096), -EINVAL);
	mover__default_opts(&o);
	o.low_wmark_pct = 10;
	o.high_wmark_pct = 5;
	assert_int_equal(mover__init(&m, &o, 4096), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(budget_is_a_token_bucket_of_one_second),
		cmocka_unit_test(budget_over_plan_rejects_the_rest),
		cmocka_unit_test(wmarks_from_fast_capacity),
		cmocka_unit_test(wmarks_sit_on_the_kernels_reserve),
		cmocka_unit_test(under_low_wmark_demotions_first_promotions_held),
		cmocka_unit_test(promotions_may_only_use_room_over_high_wmark),
		cmocka_unit_test(invalid_plan_entries_are_rejected),
		cmocka_unit_test(a_page_named_twice_moves_once),
		cmocka_unit_test(moves_of_a_gone_target_are_rejected),
		cmocka_unit_test(batches_of_at_most_batch_pages_per_target),
		cmocka_unit_test(batches_never_mix_targets),
		cmocka_unit_test(success_updates_node_since_move_and_counters),
		cmocka_unit_test(a_huge_page_moves_as_one_and_counts_512),
		cmocka_unit_test(a_huge_page_is_split_before_it_is_promoted),
		cmocka_unit_test(a_page_of_a_split_region_huge_again_is_split_first),
		cmocka_unit_test(khugepaged_over_placed_pages_keeps_their_records),
		cmocka_unit_test(a_page_sampled_before_the_sweep_in_a_huge_page_is_split_first),
		cmocka_unit_test(a_huge_page_over_the_budget_or_the_watermark_waits),
		cmocka_unit_test(a_region_retries_only_its_mapped_pages),
		cmocka_unit_test(a_region_in_place_but_unmapped_pages_takes_the_node),
		cmocka_unit_test(regions_demote_only_up_to_the_goal),
		cmocka_unit_test(the_last_plans_outcome_is_in_each_record),
		cmocka_unit_test(a_share_caps_a_targets_promotions_not_the_others),
		cmocka_unit_test(ebusy_is_counted_busy_and_page_stays),
		cmocka_unit_test(ebusy_but_moved_per_node_query_counts_as_moved),
		cmocka_unit_test(gone_pages_are_flagged),
		cmocka_unit_test(protnone_pages_are_touched_and_retried),
		cmocka_unit_test(a_protnone_page_already_there_is_placed_not_counted),
		cmocka_unit_test(enomem_on_promotion_stops_later_promotion_batches),
		cmocka_unit_test(enomem_on_demotion_does_not_stop_demotions),
		cmocka_unit_test(eacces_and_other_errors_are_counted),
		cmocka_unit_test(untouched_status_is_unreported),
		cmocka_unit_test(exit_mid_call_counts_untouched_pages_as_gone),
		cmocka_unit_test(einval_from_a_vanished_process_is_process_gone),
		cmocka_unit_test(whole_call_esrch_marks_process_gone),
		cmocka_unit_test(whole_call_other_errno_is_call_failed),
		cmocka_unit_test(init_rejects_bad_options),
	};

	log_verbosity = LOG_ERR;	/* call failures warn on purpose */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
