/* SPDX-License-Identifier: MIT */
/*
 * Which processes the agent manages: explicit PIDs, processes by command
 * name, members of cgroups.  Follows exit and PID reuse (start time), and
 * keeps the tracker's targets and the BPF target maps in step.
 */
#ifndef CXLT_TARGETS_H
#define CXLT_TARGETS_H

#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "sampler.h"
#include "tracker.h"

#define MAX_SPECS CONFIG_MAX_TARGETS

struct target_specs {
	pid_t pids[MAX_SPECS];
	int nr_pids;
	const char *comms[MAX_SPECS];
	int nr_comms;
	const char *cgroups[MAX_SPECS];
	uint64_t cgroup_ids[MAX_SPECS];
	int nr_cgroups;
	/* --target-user: whose processes comm and cgroup may adopt; none listed: any. */
	uid_t users[MAX_SPECS];
	int nr_users;
	/* Processes refused for their owner, each logged once: pid and start time. */
	struct { pid_t pid; uint64_t start; } refused[64];
	unsigned nr_refused;
};

/* Reads /proc/PID/stat: start time (clock ticks since boot), comm, kernel-thread flag. */
int proc_stat(pid_t pid, uint64_t *start_time, char comm[16], int *is_kthread, pid_t *ppid);

/*
 * Whether DIR (an absolute path without symlinks) lies in a cgroup v2
 * hierarchy, judged by the longest mount point of MOUNTS (a /proc/self/mounts
 * file) that holds it: 0, or -EINVAL with the reason and what would work in WHY.
 * BPF sees only cgroup v2 ids, mounted at /sys/fs/cgroup (pure v2) or elsewhere
 * (/sys/fs/cgroup/unified in the hybrid layout).
 */
int cgroup_v2_check(const char *mounts, const char *dir, char *why, size_t whylen);

/*
 * Parses --target-user LIST (user names or numeric ids, comma separated) into
 * ts->users; -EINVAL with the reason logged.
 */
int targets__parse_users(struct target_specs *ts, const char *list);

/*
 * The census (sight.h) of the processes the specs name now, summed, and who
 * they are ("pid 12 (redis-server)", "3 target processes"): for source auto.
 */
void targets__census(const struct target_specs *ts, struct mem_census *c, char *who, size_t len);

/* Validates the specs (PIDs exist and are user processes, cgroups exist); -errno. */
int targets__init(struct target_specs *ts, struct sampler *s);
/*
 * Drops targets that exited or whose PID was reused, adds new matches.
 * Returns the number of changes; logs each one.
 */
int targets__refresh(struct target_specs *ts, struct tracker *tr, struct sampler *s);

#endif
