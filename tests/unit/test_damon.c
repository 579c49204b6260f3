// SPDX-License-Identifier: MIT
/*
 * Who owns a kdamond, against DAMON sysfs trees built in a temporary
 * directory: after SIGKILL the next start removes only the kdamond its state
 * file names, and a kdamond someone else set up is refused, never changed.
 * The real kernel path (our own kdamond started, committed, removed) runs in
 * the emulated machine: tests/vm/guest/damon.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "damon.h"
#include "tracker.h"
#include "util.h"
#include "tree.h"

#define KD "/sys/kernel/mm/damon/admin/kdamonds"

/* A running vaddr kdamond with one target, as the kernel shows it. */
static void kdamond(const struct tree *t, const char *state, const char *pid, const char *target)
{
	put(t, KD "/nr_kdamonds", "1\n");
	put(t, KD "/0/state", state);
	put(t, KD "/0/pid", pid);
	put(t, KD "/0/contexts/nr_contexts", "1\n");
	put(t, KD "/0/contexts/0/operations", "vaddr\n");
	put(t, KD "/0/contexts/0/targets/nr_targets", "1\n");
	put(t, KD "/0/contexts/0/targets/0/pid_target", target);
}

static void recover_removes_our_running_kdamond(void **state)
{
	struct tree *t = *state;

	kdamond(t, "on\n", "4242\n", "77\n");
	put(t, "/state", "pid 4242 ops vaddr nr_targets 1 first 77\n");
	assert_int_equal(damon__recover(t->root, t->state), 1);
	assert_string_equal(get(t, KD "/0/state"), "off");
	assert_string_equal(get(t, KD "/nr_kdamonds"), "0");
	assert_int_equal(access(t->state, F_OK), -1);
}

static void recover_removes_our_stopped_kdamond(void **state)
{
	struct tree *t = *state;

	/* Its targets exited, so it stopped by itself: the configuration is ours. */
	kdamond(t, "off\n", "-1\n", "77\n");
	put(t, "/state", "pid 4242 ops vaddr nr_targets 1 first 77\n");
	assert_int_equal(damon__recover(t->root, t->state), 1);
	assert_string_equal(get(t, KD "/nr_kdamonds"), "0");
}

static void recover_leaves_a_kdamond_someone_started_since(void **state)
{
	struct tree *t = *state;

	/* Same slot, another thread: someone set DAMON up after our agent died. */
	kdamond(t, "on\n", "5000\n", "77\n");
	put(t, "/state", "pid 4242 ops vaddr nr_targets 1 first 77\n");
	assert_int_equal(damon__recover(t->root, t->state), 0);
	assert_string_equal(get(t, KD "/0/state"), "on");
	assert_string_equal(get(t, KD "/nr_kdamonds"), "1");
	assert_int_equal(access(t->state, F_OK), -1);

	/* Stopped, but not the targets we left. */
	kdamond(t, "off\n", "-1\n", "99\n");
	put(t, "/state", "pid 4242 ops vaddr nr_targets 1 first 77\n");
	assert_int_equal(damon__recover(t->root, t->state), 0);
	assert_string_equal(get(t, KD "/nr_kdamonds"), "1");
}

static void recover_ignores_a_forged_state_file(void **state)
{
	struct tree *t = *state;

	kdamond(t, "on\n", "4242\n", "77\n");
	put(t, "/state", "nr_kdamonds 0\n");
	assert_int_equal(damon__recover(t->root, t->state), 0);
	assert_string_equal(get(t, KD "/0/state"), "on");
	assert_int_equal(access(t->state, F_OK), -1);
	/* No state file: nothing to do. */
	assert_int_equal(damon__recover(t->root, t->state), 0);
}

static void open_refuses_someone_elses_damon(void **state)
{
	struct tree *t = *state;
	struct damon_src d;

	/* Set up but stopped: neither observed nor replaced. */
	kdamond(t, "off\n", "-1\n", "77\n");
	assert_int_equal(damon__open(&d, t->root, t->state, DAMON_ANY), -EBUSY);
	assert_non_null(strstr(d.why, "someone else's"));
	assert_string_equal(get(t, KD "/nr_kdamonds"), "1");
	assert_string_equal(get(t, KD "/0/state"), "off");

	/* Running: auto never takes it; a vaddr context cannot be mapped when observing. */
	kdamond(t, "on\n", "4242\n", "77\n");
	assert_int_equal(damon__open(&d, t->root, t->state, DAMON_OWN_VADDR), -EBUSY);
	assert_int_equal(damon__open(&d, t->root, t->state, DAMON_ANY), -ENOTSUP);
	assert_non_null(strstr(d.why, "only a paddr context"));
	assert_string_equal(get(t, KD "/0/state"), "on");
	assert_string_equal(get(t, KD "/0/contexts/0/operations"), "vaddr");
	assert_int_equal(access(t->state, F_OK), -1);
}

/* Our vaddr kdamond as the agent left it: its targets (77) exited, so it stopped. */
static void ours_stopped(const struct tree *t, struct damon_src *d, struct tracker *tr)
{
	memset(d, 0, sizeof(*d));
	d->root = t->root;
	snprintf(d->state_path, sizeof(d->state_path), "%s", t->state);
	d->own = true;
	snprintf(d->ops, sizeof(d->ops), "vaddr");
	d->kdamond_pid = 4242;
	d->written_nr = 1;
	d->written_first = 77;
	assert_int_equal(tracker__init(tr, 0.5), 0);
	assert_true(tracker__add_target(tr, 88, 1, "app", ORIGIN_COMM) >= 0);
}

static void set_targets_restarts_our_stopped_kdamond(void **state)
{
	struct tree *t = *state;
	struct damon_src d;
	struct tracker tr;

	/* (the pid file stands for the thread the kernel starts on "on") */
	kdamond(t, "off\n", "5151\n", "77\n");
	ours_stopped(t, &d, &tr);
	assert_int_equal(damon__set_targets(&d, &tr), 0);
	assert_string_equal(get(t, KD "/0/contexts/0/targets/nr_targets"), "1");
	assert_string_equal(get(t, KD "/0/contexts/0/targets/0/pid_target"), "88");
	assert_string_equal(get(t, KD "/0/state"), "on");
	assert_int_equal(d.nr_pids, 1);
	/* The state file names the new list: what the next start will recognise. */
	assert_string_equal(get(t, "/state"), "pid 5151 ops vaddr nr_targets 1 first 88");
	assert_int_equal(d.kdamond_pid, 5151);
	damon__close(&d);
	tracker__free(&tr);
}

static void set_targets_lets_go_of_a_kdamond_someone_took(void **state)
{
	struct tree *t = *state;
	struct damon_src d;
	struct tracker tr;

	/* After ours stopped, another tool set DAMON up again (target 99), not started yet. */
	kdamond(t, "off\n", "-1\n", "99\n");
	ours_stopped(t, &d, &tr);
	assert_int_equal(damon__set_targets(&d, &tr), -EBUSY);
	assert_false(d.own);
	assert_string_equal(get(t, KD "/0/contexts/0/targets/0/pid_target"), "99");
	assert_string_equal(get(t, KD "/0/state"), "off");
	damon__close(&d);
	assert_string_equal(get(t, KD "/nr_kdamonds"), "1");
	assert_string_equal(get(t, KD "/0/contexts/0/targets/0/pid_target"), "99");
	tracker__free(&tr);
}

static void open_without_damon_says_so(void **state)
{
	struct tree *t = *state;
	struct damon_src d;

	assert_int_equal(damon__open(&d, t->root, t->state, DAMON_ANY), -ENOENT);
	assert_non_null(strstr(d.why, "no DAMON sysfs"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(recover_removes_our_running_kdamond, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(recover_removes_our_stopped_kdamond, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(recover_leaves_a_kdamond_someone_started_since, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(recover_ignores_a_forged_state_file, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(open_refuses_someone_elses_damon, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(open_without_damon_says_so, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(set_targets_restarts_our_stopped_kdamond, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(set_targets_lets_go_of_a_kdamond_someone_took, tree_setup, tree_teardown),
	};

	log_verbosity = LOG_ERR;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
