// SPDX-License-Identifier: MIT
/*
 * Which pages the kernel's NUMA scanner has marked since their last sample
 * (user/sources/marks.c, tracker__mark_pass), against /proc/PID/sched files in a
 * temporary tree and hand-fed skipped VMAs: the flag CXLT_PAGE_UNSEEN that
 * keeps a policy from calling a page idle while the hint source could not
 * see its use.  The tracepoint side runs live: tests/live/hint-budget.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "ksettings.h"
#include "marks.h"
#include "tracker.h"
#include "tree.h"

#define BASE 0x7f1200000000ULL
#define PG 4096ULL
#define FAST_MASK 0x1ULL	/* node 0 fast, node 1 slow */

static void seq(const struct tree *t, int pid, unsigned n)
{
	char path[64], text[256];

	snprintf(path, sizeof(path), "/proc/%d/sched", pid);
	snprintf(text, sizeof(text), "app (%d, #threads: 1)\n-------\nse.exec_start : 1.0\n"
		 "mm->numa_scan_seq                            :                   %u\n"
		 "numa_pages_migrated                          :                    0\n", pid, n);
	put(t, path, text);
}

/* A target of n pages from BASE, the first half on node 0 (fast), the rest on node 1. */
static struct target *target(struct tracker *tr, uint32_t n)
{
	struct target *t;
	bool created;

	assert_int_equal(tracker__init(tr, 0.5), 0);
	tr->sight = true;
	assert_int_equal(tracker__add_target(tr, 42, 1, "app", ORIGIN_PID), 0);
	t = &tr->targets[0];
	for (uint32_t i = 0; i < n; i++) {
		int idx = page_table__get(&t->pt, BASE + i * PG, &created);

		t->pt.pages[idx].node = i < n / 2 ? 0 : 1;
	}
	t->sweep_gen = 1;	/* swept whole: its spans are known */
	t->span.mapped = t->span.present = (uint64_t)n * PG;
	return t;
}

/* One epoch as the agent runs it: the scanner's passes, then the samples, then ageing. */
static bool epoch(struct marks *m, struct tracker *tr, bool open, uint64_t since,
		  const uint64_t *sampled, int nr_sampled)
{
	struct cxlt_page_key keys[8];
	struct cxlt_page_val vals[8];
	bool all = marks__follow(m, tr, open, FAST_MASK, since);

	for (int i = 0; i < nr_sampled; i++) {
		keys[i] = (struct cxlt_page_key){ .tgid = 42, .vpage = (BASE >> 12) + sampled[i] };
		vals[i] = (struct cxlt_page_val){ .samples = 1, .hint_faults = 1 };
	}
	tracker__ingest(tr, keys, vals, nr_sampled);
	tracker__age(tr);
	tracker__end_epoch(tr);
	return all;
}

static bool unseen(const struct target *t, uint32_t page)
{
	return t->pt.pages[page].flags & CXLT_PAGE_UNSEEN;
}

static void scan_seq_reads_proc_pid_sched(void **state)
{
	struct tree *t = *state;
	uint32_t n = 0;

	seq(t, 42, 17);
	assert_int_equal(marks__scan_seq(t->root, 42, &n), 0);
	assert_int_equal(n, 17);
	put(t, "/proc/43/sched", "app (43, #threads: 1)\n");	/* no NUMA balancing */
	assert_int_equal(marks__scan_seq(t->root, 43, &n), -ENODATA);
	assert_int_equal(marks__scan_seq(t->root, 44, &n), -ENOENT);
}

static void a_closed_pass_marks_only_the_slow_tier(void **state)
{
	struct tree *tt = *state;
	struct marks m = { .root = tt->root };
	struct tracker tr;
	struct target *t = target(&tr, 8);	/* pages 0-3 fast, 4-7 slow */

	seq(tt, 42, 5);
	assert_false(epoch(&m, &tr, false, 0, NULL, 0));	/* first look: a pass under way */
	for (uint32_t i = 0; i < 8; i++)
		assert_true(unseen(t, i));
	seq(tt, 42, 6);
	assert_false(epoch(&m, &tr, false, 0, NULL, 0));	/* ended with the gate closed */
	assert_true(unseen(t, 0) && unseen(t, 3));
	assert_false(unseen(t, 4) || unseen(t, 7));
	seq(tt, 42, 7);
	assert_true(epoch(&m, &tr, true, 0, NULL, 0));	/* ended open: both tiers */
	assert_false(unseen(t, 0) || unseen(t, 3));
	assert_int_equal(t->scan.fast_pass, tr.epoch - 1);
	/* The gate opened at this epoch: no pass since, yet. */
	assert_false(epoch(&m, &tr, true, tr.epoch, NULL, 0));
	tracker__free(&tr);
}

static void sampled_pages_wait_for_the_next_pass(void **state)
{
	struct tree *tt = *state;
	struct marks m = { .root = tt->root };
	struct tracker tr;
	struct target *t = target(&tr, 8);
	const uint64_t page1 = 1, page2 = 2;

	seq(tt, 42, 1);
	epoch(&m, &tr, true, 0, NULL, 0);
	seq(tt, 42, 2);
	epoch(&m, &tr, true, 0, &page1, 1);	/* marked and sampled in one epoch */
	assert_true(unseen(t, 1));
	assert_false(unseen(t, 0));
	epoch(&m, &tr, true, 0, &page2, 1);	/* used after its mark: the fault took it */
	assert_true(unseen(t, 2));
	assert_true(unseen(t, 1));		/* no pass since its sample */
	/*
	 * Both were sampled while the pass that ends next was under way (page 1
	 * in the epoch it began): maybe before their mark.  The pass after counts.
	 */
	seq(tt, 42, 3);
	epoch(&m, &tr, true, 0, NULL, 0);
	assert_true(unseen(t, 1) && unseen(t, 2));
	assert_false(unseen(t, 3));
	seq(tt, 42, 4);
	epoch(&m, &tr, true, 0, NULL, 0);
	assert_false(unseen(t, 1) || unseen(t, 2));
	/* A page the agent moved comes back mapped: unseen again. */
	t->pt.pages[0].since_move = 0;
	epoch(&m, &tr, true, 0, NULL, 0);
	assert_true(unseen(t, 0));
	tracker__free(&tr);
}

static void skipped_vmas_stay_unseen(void **state)
{
	struct tree *tt = *state;
	struct marks m = { .root = tt->root };
	struct tracker tr;
	struct target *t = target(&tr, 8);
	struct vrange skips[2] = { { BASE + 1 * PG, BASE + 3 * PG }, { BASE + 2 * PG, BASE + 3 * PG } };

	seq(tt, 42, 1);
	epoch(&m, &tr, true, 0, NULL, 0);
	t->scan.skips = malloc(sizeof(skips));
	memcpy(t->scan.skips, skips, sizeof(skips));
	t->scan.nr_skips = t->scan.cap_skips = 2;	/* as the ring brought them */
	seq(tt, 42, 2);
	epoch(&m, &tr, true, 0, NULL, 0);
	assert_false(unseen(t, 0));
	assert_true(unseen(t, 1) && unseen(t, 2));
	assert_false(unseen(t, 3));
	/* They were that pass's: the next one starts clean. */
	assert_int_equal(t->scan.nr_skips, 0);
	seq(tt, 42, 3);
	epoch(&m, &tr, true, 0, NULL, 0);
	assert_false(unseen(t, 1) || unseen(t, 2));
	/* A lost skip event: the pass under way cannot count. */
	t->scan.overflow = true;
	t->pt.pages[5].flags &= ~PAGE_MARKED;
	seq(tt, 42, 5);
	epoch(&m, &tr, true, 0, NULL, 0);
	assert_true(unseen(t, 5));
	tracker__free(&tr);
}

/* Bigger than one chunk: walked over several epochs, so the gate must stay open throughout. */
static void a_big_process_needs_the_whole_pass_open(void **state)
{
	struct tree *tt = *state;
	struct marks m = { .root = tt->root };
	struct tracker tr;
	uint32_t n = (uint32_t)(HINT_SCAN_CHUNK_BYTES / PG) + 1024;
	struct target *t = target(&tr, n);

	seq(tt, 42, 1);
	epoch(&m, &tr, true, 0, NULL, 0);
	seq(tt, 42, 2);
	epoch(&m, &tr, true, 0, NULL, 0);	/* began before our first look */
	assert_true(unseen(t, 0));
	assert_false(unseen(t, n - 1));		/* slow pages are marked in any mode */
	epoch(&m, &tr, false, 0, NULL, 0);	/* closed for a while mid-pass */
	seq(tt, 42, 3);
	assert_false(epoch(&m, &tr, true, 0, NULL, 0));
	assert_true(unseen(t, 0));
	seq(tt, 42, 4);
	assert_true(epoch(&m, &tr, true, 0, NULL, 0));	/* open from end to end */
	assert_false(unseen(t, 0));
	tracker__free(&tr);
}

/*
 * Before its first sweep is done the agent knows only part of a target: a
 * process that looks like one chunk then may be several (tierbench-full in
 * make compare: 25,555 of 114,550 pages swept at the first epoch), so a
 * pass under a gate that was not open from its start does not count.
 */
static void a_process_not_yet_swept_needs_the_whole_pass_open(void **state)
{
	struct tree *tt = *state;
	struct marks m = { .root = tt->root };
	struct tracker tr;
	struct target *t = target(&tr, 8);

	t->sweep_gen = 0;
	seq(tt, 42, 1);
	epoch(&m, &tr, true, 0, NULL, 0);	/* first look: a pass under way */
	seq(tt, 42, 2);
	assert_false(epoch(&m, &tr, true, 0, NULL, 0));
	assert_true(unseen(t, 0));
	assert_false(unseen(t, 7));		/* slow pages are marked in any mode */
	seq(tt, 42, 3);
	assert_true(epoch(&m, &tr, true, 0, NULL, 0));	/* open from end to end */
	assert_false(unseen(t, 0));
	tracker__free(&tr);
}

/*
 * A few pages spread wide take the kernel several calls of its scanner: it
 * counts the spans it walks, not the pages it finds.
 */
static void a_sparse_process_needs_the_whole_pass_open(void **state)
{
	struct tree *tt = *state;

	for (int wide = 0; wide < 2; wide++) {
		struct marks m = { .root = tt->root };
		struct tracker tr;
		struct target *t = target(&tr, 8);

		if (wide)
			t->span.mapped = 8 * HINT_SCAN_CHUNK_BYTES + PG;
		else
			t->span.present = t->span.mapped = HINT_SCAN_CHUNK_BYTES + PG;
		t->scan.known = false;
		seq(tt, 42, 1);
		epoch(&m, &tr, true, 0, NULL, 0);	/* first look: a pass under way */
		epoch(&m, &tr, false, 0, NULL, 0);	/* closed for a while */
		seq(tt, 42, 2);
		assert_false(epoch(&m, &tr, true, 0, NULL, 0));
		assert_true(unseen(t, 0));
		seq(tt, 42, 3);
		assert_true(epoch(&m, &tr, true, 0, NULL, 0));	/* open from end to end */
		assert_false(unseen(t, 0));
		tracker__free(&tr);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(scan_seq_reads_proc_pid_sched, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(a_closed_pass_marks_only_the_slow_tier, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(sampled_pages_wait_for_the_next_pass, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(skipped_vmas_stay_unseen, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(a_big_process_needs_the_whole_pass_open, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(a_process_not_yet_swept_needs_the_whole_pass_open, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(a_sparse_process_needs_the_whole_pass_open, tree_setup, tree_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
