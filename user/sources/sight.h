/* SPDX-License-Identifier: MIT */
/*
 * Memory the sampler cannot see, found and said (issue 18).  The kernel's
 * NUMA scanner skips VMAs under a bind, preferred, interleave or local
 * memory policy (they lack MPOL_F_MOF; bind with MPOL_F_NUMA_BALANCING is
 * scanned) and hugetlb VMAs, so the hint source gets no faults from them;
 * the fault source sees first touches only, none of the pages a process had
 * before the agent watched it.  A target's census comes from
 * /proc/PID/numa_maps; what each source sees is the source table's sight
 * (user/sources/sources.c).  This is the one place that judges it: the log lines,
 * the status and the metrics all read struct unseen.
 */
#ifndef CXLT_SIGHT_H
#define CXLT_SIGHT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "sources.h"

/* A target's resident memory by what the NUMA scanner makes of it. */
struct mem_census {
	uint64_t resident;	/* pages (of the base page size) on any node */
	uint64_t policy;	/* of them under a policy the scanner skips */
	uint64_t hugetlb;	/* of them in hugetlb mappings (skipped too) */
	char policy_name[24];	/* the first such policy as numa_maps says it: "prefer:1" */
};

/* What the machine offers besides what is attached (for the suggestion). */
struct sight_env {
	bool pmu;		/* a memory-sampling PMU was found */
	bool damon;		/* the kernel has DAMON's sysfs interface */
	bool hint;		/* the kernel has NUMA balancing */
	bool scanner_on;	/* kernel.numa_balancing is on now (fault then sees hint faults) */
};

/* What the attached sources cannot see of one target, as of its last check. */
struct unseen {
	uint64_t pages;		/* resident pages no attached source sees */
	uint64_t resident;	/* resident pages at the check */
	uint64_t resident_at_add; /* resident when the agent adopted it (its first census) */
	bool judged;		/* its first census is in */
	uint64_t epoch;		/* the tracker epoch of the check */
	bool first_touch;	/* unseen for being there before a first-touch source watched */
	const char *source;	/* a source that would see them on this machine, or NULL */
	char reason[160];	/* why they are unseen; "" when none are */
	char suggestion[240];	/* what to do about it */
};

/* Re-checked every this many epochs (numa_maps walks the page tables). */
#define SIGHT_EPOCHS 10

/* Parses numa_maps text; page_kb is the base page size in KiB.  0 or -errno. */
int sight__census_file(FILE *f, unsigned page_kb, struct mem_census *c);
/* The census of a process; -errno (-ENOENT: it is gone). */
int sight__census(pid_t pid, struct mem_census *c);

/*
 * The same off the caller's thread (numa_maps costs about 100 ms for 16 GiB
 * of 4 KiB pages, so never in an epoch).  sight__ask() queues pid's census
 * (nothing if it is on its way): 0, -EAGAIN with 256 queued, or -errno when
 * the thread cannot start.  sight__take(): 1 with *c once done, 0 while on
 * its way, -ENOENT when not asked, -ESRCH for a process gone, or the
 * census's -errno.  sight__forget()
 * drops what is asked for a process gone; sight__stop() ends the thread.
 */
int sight__ask(pid_t pid);
int sight__take(pid_t pid, struct mem_census *c);
void sight__forget(pid_t pid);
void sight__stop(void);

/*
 * Judges what sources ATT[0..N) miss of a target with census C: fills u
 * (pages, reason, source, suggestion; u->resident_at_add must be set).
 */
void sight__judge(const struct mem_census *c, const struct source_def *const *att, int n,
		  const struct sight_env *env, struct unseen *u);

#endif
