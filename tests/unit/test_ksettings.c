// SPDX-License-Identifier: MIT
/*
 * The kernel settings the hint source changes, against /proc trees built in
 * a temporary directory: what is set, what comes back (at exit, and from
 * the state file after SIGKILL), and the CPU budget that switches the
 * scanner between marking both tiers (mode 3) and the slow tier only (2).
 * tests/live/kernel-settings.sh runs the same on the real /proc.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <unistd.h>

#include "ksettings.h"
#include "tree.h"

#define NB "/proc/sys/kernel/numa_balancing"
#define RL "/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps"

static void proc(const struct tree *t, const char *mode)
{
	put(t, NB, mode);
	put(t, RL, "65536\n");
	put(t, "/proc/vmstat", "numa_pte_updates 5\nnuma_hint_faults_local 999999\n");
}

/* /proc/vmstat as the kernel orders it, with the hint fault count at n. */
static void faults(const struct tree *t, unsigned long n)
{
	char text[160];

	snprintf(text, sizeof(text), "numa_pte_updates 5\nnuma_hint_faults %lu\nnuma_hint_faults_local 3\n", n);
	put(t, "/proc/vmstat", text);
}

static void take_sets_and_restore_puts_back(void **state)
{
	struct tree *t = *state;
	struct ksettings k;

	proc(t, "0\n");
	assert_int_equal(ksettings__take(&k, t->root, t->state, 1000, false), 0);
	assert_string_equal(get(t, NB), "3");
	assert_string_equal(get(t, RL), "0");
	assert_int_equal(access(t->state, F_OK), 0);
	ksettings__restore(&k);
	assert_string_equal(get(t, NB), "0");
	assert_string_equal(get(t, RL), "65536");
	assert_int_equal(access(t->state, F_OK), -1);
}

static void take_refuses_tiering_someone_else_runs(void **state)
{
	struct tree *t = *state;
	struct ksettings k;

	proc(t, "2\n");
	assert_int_equal(ksettings__take(&k, t->root, t->state, 1000, false), -EBUSY);
	assert_string_equal(get(t, NB), "2");
	assert_string_equal(get(t, RL), "65536");
	assert_int_equal(ksettings__take(&k, t->root, t->state, 1000, true), 0);
	assert_string_equal(get(t, NB), "3");
	ksettings__restore(&k);
	assert_string_equal(get(t, NB), "2");
}

/* An agent killed while over budget (mode 2) left the state file: the original comes back. */
static void over_budget_then_killed_recovers_the_original(void **state)
{
	struct tree *t = *state;
	struct ksettings k;

	proc(t, "0\n");
	faults(t, 1000);
	assert_int_equal(ksettings__take(&k, t->root, t->state, 1000, false), 0);
	assert_int_equal(ksettings__meter_start(&k, 1, 100, false), 0);
	faults(t, 61000);
	ksettings__meter(&k, 101, 101, true);
	assert_string_equal(get(t, NB), "2");
	/* SIGKILL here: no restore; the next start reads the state file. */
	assert_int_equal(ksettings__recover(t->root, t->state), 2);
	assert_string_equal(get(t, NB), "0");
	assert_string_equal(get(t, RL), "65536");
}

static void meter_closes_over_budget_and_reopens_on_credit(void **state)
{
	struct tree *t = *state;
	struct ksettings k;

	proc(t, "0\n");
	faults(t, 1000);
	assert_int_equal(ksettings__take(&k, t->root, t->state, 1000, false), 0);
	/* 1% of a core at 2 us a fault: 5000 faults/s. */
	assert_int_equal(ksettings__meter_start(&k, 1, 100, false), 0);
	assert_true(k.gate.open);
	faults(t, 4000);
	ksettings__meter(&k, 101, 101, true);	/* 3000 of 5000: stays open */
	assert_string_equal(get(t, NB), "3");
	faults(t, 64000);
	ksettings__meter(&k, 102, 102, true);	/* a scan pass: 60000 faults, credit 2000 - 55000 */
	assert_string_equal(get(t, NB), "2");
	assert_false(k.gate.open);
	assert_true(k.gate.rate > 59999 && k.gate.rate < 60001);
	ksettings__meter(&k, 112, 112, true);	/* -53000 + 50000: still in debt */
	assert_string_equal(get(t, NB), "2");
	ksettings__meter(&k, 113, 113, true);	/* +2000: open again */
	assert_string_equal(get(t, NB), "3");
	assert_int_equal(k.gate.flips, 2);
	assert_int_equal(k.gate.looks, 4);
	assert_int_equal(k.gate.open_looks, 2);
	ksettings__restore(&k);
	assert_string_equal(get(t, NB), "0");
}

/* In debt, the gate stays open until every target's scanner has made a pass through it. */
static void meter_closes_only_after_the_targets_passes(void **state)
{
	struct tree *t = *state;
	struct ksettings k;

	proc(t, "0\n");
	faults(t, 0);
	assert_int_equal(ksettings__take(&k, t->root, t->state, 1000, false), 0);
	assert_int_equal(ksettings__meter_start(&k, 1, 100, false), 0);
	faults(t, 60000);
	ksettings__meter(&k, 101, 1, false);	/* a pass under way: keep marking */
	assert_string_equal(get(t, NB), "3");
	assert_true(k.gate.credit < 0);
	ksettings__meter(&k, 102, 2, true);	/* it ended: pay the debt closed */
	assert_string_equal(get(t, NB), "2");
	ksettings__meter(&k, 114, 14, false);	/* credit again: open, whatever the passes */
	assert_string_equal(get(t, NB), "3");
	assert_int_equal(k.gate.opened_epoch, 14);
	faults(t, 600000);	/* a big process: debt for longer than the wait */
	ksettings__meter(&k, 115, 15, false);
	assert_string_equal(get(t, NB), "3");
	/* A target that never runs cannot hold it open for more than HINT_PASS_WAIT_SEC. */
	ksettings__meter(&k, 114 + HINT_PASS_WAIT_SEC, 74, false);
	assert_string_equal(get(t, NB), "2");
	ksettings__restore(&k);
	assert_string_equal(get(t, NB), "0");
}

/* Idle time saves at most HINT_BURST_SEC of budget. */
static void meter_caps_saved_credit(void **state)
{
	struct tree *t = *state;
	struct ksettings k;

	proc(t, "0\n");
	faults(t, 0);
	assert_int_equal(ksettings__take(&k, t->root, t->state, 1000, false), 0);
	assert_int_equal(ksettings__meter_start(&k, 1, 0, false), 0);
	ksettings__meter(&k, 1000, 1000, true);
	assert_true(k.gate.credit <= 5000 * HINT_BURST_SEC);
	faults(t, 60000);
	ksettings__meter(&k, 1001, 1001, true);	/* 50000 saved + 5000 - 60000 */
	assert_string_equal(get(t, NB), "2");
	ksettings__restore(&k);
}

/* Cost follows need: quiet epochs shrink the budget to a floor, a move brings it back; a roomy fast tier needs the floor. */
static void quiet_epochs_shrink_the_budget_a_move_restores_it(void **state)
{
	struct tree *t = *state;
	struct ksettings k;

	proc(t, "0\n");
	faults(t, 0);
	assert_int_equal(ksettings__take(&k, t->root, t->state, 1000, false), 0);
	assert_int_equal(ksettings__meter_start(&k, 1, 0, false), 0);
	for (int e = 0; e < HINT_QUIET_EPOCHS - 1; e++)
		ksettings__need(&k, false, false, false);
	assert_true(k.gate.need == 1);
	ksettings__need(&k, false, false, false);
	assert_true(k.gate.need == 0.5);
	for (int e = 0; e < 100 * HINT_QUIET_EPOCHS; e++)
		ksettings__need(&k, false, false, false);
	assert_true(k.gate.need == HINT_NEED_MIN);
	/* At the floor, 5000 / 32 faults a second: 3000 in a second close the gate. */
	ksettings__meter(&k, 10, 10, true);
	faults(t, 3000);
	ksettings__meter(&k, 11, 11, true);
	assert_string_equal(get(t, NB), "2");
	ksettings__need(&k, true, false, false);
	assert_true(k.gate.need == 1);
	ksettings__meter(&k, 12, 12, true);	/* 5000 of credit in a second: open again */
	assert_string_equal(get(t, NB), "3");
	/*
	 * Fast memory to spare: nothing has to leave it, the floor at once, and
	 * the gate closes at the next look whatever the credit or the pass.
	 */
	ksettings__need(&k, true, true, false);
	assert_true(k.gate.need == HINT_NEED_MIN);
	k.gate.credit = 1e6;
	ksettings__meter(&k, 13, 13, false);
	assert_string_equal(get(t, NB), "2");
	ksettings__meter(&k, 14, 14, false);
	assert_string_equal(get(t, NB), "2");
	/* Short of room again: open on the credit. */
	ksettings__need(&k, true, false, false);
	ksettings__meter(&k, 15, 15, true);
	assert_string_equal(get(t, NB), "3");
	ksettings__restore(&k);
}

/*
 * A start with fast memory to spare marks no fast-tier page at all: mode 2
 * from the start, through the first pass, whatever the credit; the gate
 * opens once room runs short.
 */
static void a_roomy_start_marks_slow_pages_only_until_room_runs_short(void **state)
{
	struct tree *t = *state;
	struct ksettings k;

	proc(t, "0\n");
	faults(t, 0);
	assert_int_equal(ksettings__take(&k, t->root, t->state, 1000, false), 0);
	assert_int_equal(ksettings__meter_start(&k, 1, 100, true), 0);
	assert_string_equal(get(t, NB), "2");
	assert_false(k.gate.open);
	ksettings__need(&k, false, true, false);
	ksettings__meter(&k, 101, 1, false);	/* 5000 of credit, a pass under way */
	assert_string_equal(get(t, NB), "2");
	/* Short of room, and in debt from the slow tier's faults: open for a pass all the same. */
	faults(t, 50000);
	ksettings__need(&k, true, false, false);
	ksettings__meter(&k, 102, 2, false);
	assert_true(k.gate.credit < 0);
	assert_string_equal(get(t, NB), "3");
	ksettings__meter(&k, 103, 3, false);	/* the pass under way */
	assert_string_equal(get(t, NB), "3");
	ksettings__meter(&k, 104, 4, true);	/* it ended: pay the debt closed */
	assert_string_equal(get(t, NB), "2");
	ksettings__restore(&k);
	assert_string_equal(get(t, NB), "0");
}

/*
 * The first epoch waits for the scanner's first pass to be answered: the
 * pass seen, then the targets' samples tapering off.
 */
static void the_first_epoch_waits_for_the_pass_and_its_faults(void **state)
{
	struct pass_wait w = { 0 };

	(void)state;
	assert_false(pass_wait__due(&w, 500, false, 10.00));	/* the first look */
	/* First touches before the pass, then quiet: no pass, no epoch. */
	assert_false(pass_wait__due(&w, 510, false, 10.05));
	assert_false(pass_wait__due(&w, 510, false, 11.00));
	/* The pass, and its faults coming in fast. */
	assert_false(pass_wait__due(&w, 1500, true, 11.05));
	assert_false(pass_wait__due(&w, 2500, true, 11.05 + PASS_WAIT_ANSWER_SEC));
	assert_false(pass_wait__due(&w, 3500, true, 11.20 + PASS_WAIT_ANSWER_SEC));
	/* Tapering: 20 in a look against 3,020 since the start. */
	assert_true(pass_wait__due(&w, 3520, true, 11.25 + PASS_WAIT_ANSWER_SEC));

	/* A pass that finds nothing on the slow tier to fault on: due after the least wait. */
	w = (struct pass_wait){ 0 };
	assert_false(pass_wait__due(&w, 0, false, 0));
	assert_false(pass_wait__due(&w, 0, true, 0.05));
	assert_false(pass_wait__due(&w, 0, false, 0.05 + PASS_WAIT_ANSWER_SEC / 2));
	assert_true(pass_wait__due(&w, 0, false, 0.05 + PASS_WAIT_ANSWER_SEC));
}

/*
 * One epoch of a target that keeps 6,000 slow pages hot in a second (over
 * the 5,000 budget): the need, then the look; returns the mode set.
 */
struct run {
	struct tree *t;
	struct ksettings k;
	unsigned long faults;
	int epoch;
};

static const char *epoch_of(struct run *r, bool moved, bool starved, bool passed)
{
	ksettings__need(&r->k, moved, false, starved);
	faults(r->t, r->faults += 6000);
	ksettings__meter(&r->k, r->epoch + 1, r->epoch + 1, passed);
	r->epoch++;
	return get(r->t, NB);
}

/*
 * Starved: hot pages wait on the slow tier and the fast tier's pages went
 * unseen in debt.  The gate opens for a pass whatever the debt (up to a
 * burst's worth), no sooner than HINT_WAKE_GAP epochs after the last such
 * wake; a wake that moved nothing doubles the gap, a move resets it.
 */
static void starved_wakes_for_a_pass_and_backs_off_when_nothing_moves(void **state)
{
	struct run r = { .t = *state };
	struct ksettings *k = &r.k;

	proc(r.t, "0\n");
	faults(r.t, 0);
	assert_int_equal(ksettings__take(k, r.t->root, r.t->state, 1000, false), 0);
	assert_int_equal(ksettings__meter_start(k, 1, 0, false), 0);
	/* The first pass: 20,000 faults in a second, in debt, closed. */
	faults(r.t, r.faults = 20000);
	ksettings__meter(k, r.epoch = 1, 1, true);
	assert_string_equal(get(r.t, NB), "2");
	/* Not starved: closed while in debt. */
	for (int i = 0; i < HINT_WAKE_GAP; i++)
		assert_string_equal(epoch_of(&r, false, false, true), "2");
	/* Starved: open for a pass in debt, then closed once it is seen. */
	assert_string_equal(epoch_of(&r, false, true, false), "3");
	assert_true(k->gate.credit < 0);
	assert_string_equal(epoch_of(&r, true, true, true), "2");	/* too soon for another */
	/* The wake moved pages: the next may come HINT_WAKE_GAP epochs after it. */
	for (int i = 0; i < HINT_WAKE_GAP - 2; i++)
		assert_string_equal(epoch_of(&r, false, true, true), "2");
	assert_string_equal(epoch_of(&r, false, true, false), "3");
	assert_int_equal(k->gate.starved_wakes, 2);
	/* Nothing moved after it: twice the gap. */
	for (int i = 0; i < 2 * HINT_WAKE_GAP - 1; i++)
		assert_string_equal(epoch_of(&r, false, true, true), "2");
	assert_string_equal(epoch_of(&r, false, true, false), "3");
	assert_int_equal(k->gate.starved_wakes, 3);
	/* Deeper in debt than a burst: no wake, starved or not. */
	k->gate.credit = -k->gate.budget * HINT_BURST_SEC - 1e5;
	for (int i = 0; i < 4 * HINT_WAKE_GAP_MAX; i++)
		assert_string_equal(epoch_of(&r, false, true, true), "2");
	assert_int_equal(k->gate.starved_wakes, 3);
	/* Fast memory to spare: nothing has to leave it, no wake. */
	k->gate.credit = 0;
	for (int i = 0; i < 8 * HINT_WAKE_GAP_MAX; i++)
		ksettings__need(k, false, true, true);
	assert_int_equal(k->gate.starved_wakes, 3);
	ksettings__restore(k);
}

static void meter_without_a_count_leaves_the_mode(void **state)
{
	struct tree *t = *state;
	struct ksettings k;

	proc(t, "0\n");	/* a vmstat without numa_hint_faults */
	assert_int_equal(ksettings__take(&k, t->root, t->state, 1000, false), 0);
	assert_int_equal(ksettings__meter_start(&k, 1, 0, false), -ENODATA);
	ksettings__meter(&k, 100, 100, true);
	assert_string_equal(get(t, NB), "3");
	ksettings__restore(&k);
	assert_string_equal(get(t, NB), "0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(take_sets_and_restore_puts_back, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(take_refuses_tiering_someone_else_runs, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(over_budget_then_killed_recovers_the_original, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(meter_closes_over_budget_and_reopens_on_credit, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(meter_closes_only_after_the_targets_passes, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(meter_caps_saved_credit, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(quiet_epochs_shrink_the_budget_a_move_restores_it, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(a_roomy_start_marks_slow_pages_only_until_room_runs_short, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(starved_wakes_for_a_pass_and_backs_off_when_nothing_moves, tree_setup, tree_teardown),
		cmocka_unit_test(the_first_epoch_waits_for_the_pass_and_its_faults),
		cmocka_unit_test_setup_teardown(meter_without_a_count_leaves_the_mode, tree_setup, tree_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
