// SPDX-License-Identifier: MIT
/*
 * --cgroup works wherever cgroup v2 is mounted (pure v2 at /sys/fs/cgroup,
 * the hybrid layout's /sys/fs/cgroup/unified, anywhere else) and is refused,
 * with what would work, on a v1 directory or a machine without v2: the BPF
 * filter sees only v2 ids, so a v1 directory would silently match nothing.
 * Mount tables are fixtures (tests/fixtures/cgroup/); run from the top.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "targets.h"
#include "tracker.h"

#define FIX "tests/fixtures/cgroup/"

static char why[8192];

static int check(const char *mounts, const char *dir)
{
	why[0] = '\0';
	return cgroup_v2_check(mounts, dir, why, sizeof(why));
}

static void pure_v2_accepts_its_directories(void **state)
{
	(void)state;
	assert_int_equal(check(FIX "v2.mounts", "/sys/fs/cgroup/app.slice"), 0);
	assert_int_equal(check(FIX "v2.mounts", "/sys/fs/cgroup/a/b/c"), 0);
	assert_int_equal(check(FIX "v2.mounts", "/sys/fs/cgroup"), 0);
	/* A name that merely starts like the mount point is not under it. */
	assert_int_equal(check(FIX "v2.mounts", "/sys/fs/cgroupx/app"), -EINVAL);
	assert_non_null(strstr(why, "not in a cgroup file system"));
}

static void hybrid_accepts_unified_and_refuses_v1(void **state)
{
	(void)state;
	assert_int_equal(check(FIX "hybrid.mounts", "/sys/fs/cgroup/unified/cxltier-test-1"), 0);
	assert_int_equal(check(FIX "hybrid.mounts", "/sys/fs/cgroup/memory/app"), -EINVAL);
	assert_non_null(strstr(why, "cgroup v1 hierarchy (mounted at /sys/fs/cgroup/memory)"));
	assert_non_null(strstr(why, "cgroup v2 hierarchy is mounted at /sys/fs/cgroup/unified"));
	/* The tmpfs that holds the v1 mounts is no cgroup at all. */
	assert_int_equal(check(FIX "hybrid.mounts", "/sys/fs/cgroup/app.slice"), -EINVAL);
	assert_non_null(strstr(why, "on tmpfs, mounted at /sys/fs/cgroup"));
}

static void v1_only_is_refused_with_what_to_use(void **state)
{
	(void)state;
	assert_int_equal(check(FIX "v1.mounts", "/sys/fs/cgroup/memory/app"), -EINVAL);
	assert_non_null(strstr(why, "no cgroup v2 hierarchy mounted"));
	assert_non_null(strstr(why, "--comm or --pid"));
}

static void v2_mounted_anywhere_with_escaped_names(void **state)
{
	(void)state;
	assert_int_equal(check(FIX "elsewhere.mounts", "/mnt/my cgroups/db"), 0);
	assert_int_equal(check(FIX "elsewhere.mounts", "/home/app"), -EINVAL);
	assert_non_null(strstr(why, "mounted at /mnt/my cgroups"));
}

static void unreadable_mount_table_says_so(void **state)
{
	(void)state;
	assert_int_equal(check(FIX "missing.mounts", "/sys/fs/cgroup/x"), -ENOENT);
	assert_non_null(strstr(why, "cannot read " FIX "missing.mounts"));
}

/* A process that is not our child (the agent leaves its own children alone). */
static pid_t start_orphan(void)
{
	int fd[2];
	pid_t child, orphan = 0;

	assert_int_equal(pipe(fd), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		pid_t p = fork();

		if (!p) {
			close(fd[1]);
			pause();
			_exit(0);
		}
		(void)!write(fd[1], &p, sizeof(p));
		_exit(0);
	}
	assert_int_equal(read(fd[0], &orphan, sizeof(orphan)), sizeof(orphan));
	waitpid(child, NULL, 0);
	close(fd[0]);
	close(fd[1]);
	return orphan;
}

/* A full tracker takes no new target, counts it, and takes it once there is room. */
static void a_full_tracker_leaves_new_targets_out(void **state)
{
	struct target_specs ts = { .nr_pids = 1 };
	struct tracker tr;
	pid_t orphan = start_orphan();

	(void)state;
	ts.pids[0] = orphan;
	tracker__init(&tr, 0.5);
	tr.budget_bytes = 1 << 20;
	tr.bytes_used = (1 << 20) + 1;	/* regions alone over it */
	assert_int_equal(targets__refresh(&ts, &tr, NULL), 0);
	assert_int_equal(tr.nr_targets, 0);
	assert_int_equal(tr.refused_budget, 1);
	tr.bytes_used = 0;
	assert_int_equal(targets__refresh(&ts, &tr, NULL), 1);
	assert_int_equal(tr.nr_targets, 1);
	assert_int_equal(tr.targets[0].pid, orphan);
	assert_int_equal(tr.refused_budget, 0);
	tracker__free(&tr);
	kill(orphan, SIGKILL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pure_v2_accepts_its_directories),
		cmocka_unit_test(hybrid_accepts_unified_and_refuses_v1),
		cmocka_unit_test(v1_only_is_refused_with_what_to_use),
		cmocka_unit_test(v2_mounted_anywhere_with_escaped_names),
		cmocka_unit_test(unreadable_mount_table_says_so),
		cmocka_unit_test(a_full_tracker_leaves_new_targets_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
