/* SPDX-License-Identifier: MIT */
/*
 * Userspace twin of bpf/damon.bpf.c: DAMON's aggregated regions turned into
 * samples of the targets' pages.  A kdamond someone else runs is observed and
 * never touched; when no one owns DAMON the agent starts its own for the
 * targets, keeps its target list in step, and stops it on every exit path
 * (a state file lets the next start clean up after SIGKILL).
 */
#ifndef CXLT_DAMON_H
#define CXLT_DAMON_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cxltier.h"
#include "tracker.h"

enum damon_mode {
	DAMON_ANY,		/* observe a running kdamond, else start our own */
	DAMON_OWN_VADDR,	/* only our own vaddr kdamond (what `auto` wants) */
	DAMON_OWN_PADDR,	/* only our own paddr kdamond (cheaper on big memory) */
};

struct damon_src {
	struct damon_bpf *skel;
	struct bpf_link *link;
	struct ring_buffer *rb;
	struct cxlt_damon_region *regions;	/* since the last drain */
	size_t nr, cap;
	char ops[16];		/* the context's operations: paddr, vaddr, fvaddr */
	char why[200];
	const char *root;
	bool own;		/* the agent started kdamond 0 and stops it */
	char state_path[512];
	pid_t *pids;		/* our kdamond's targets, target_id = index */
	uint32_t nr_pids, cap_pids;
	uint32_t written_nr;	/* the target list last written to sysfs: our fingerprint */
	pid_t written_first;
	int kdamond_pid;
	uint64_t regions_seen, pages_matched, commits;
};

/* Sampling and aggregation intervals of a kdamond the agent starts. */
#define DAMON_SAMPLE_US 5000
#define DAMON_AGGR_US 100000

/* -ENOENT/-EBUSY/-ENOTSUP (with why) when there is nothing to observe or own. */
int damon__open(struct damon_src *d, const char *root, const char *state_path, enum damon_mode mode);
/* Our own kdamond follows the tracker's targets (started, committed or turned off); -errno. */
int damon__set_targets(struct damon_src *d, const struct tracker *tr);
/* Stops and removes our kdamond (if any), then detaches. */
void damon__close(struct damon_src *d);
/* Folds the regions received since the last call into the tracker; returns pages sampled. */
int damon__drain(struct damon_src *d, struct tracker *tr);
/*
 * At start, with the agent's lock held: stops and removes a kdamond that the
 * state file says a killed agent started.  1 when one was removed, 0 if none.
 */
int damon__recover(const char *root, const char *state_path);

#endif
