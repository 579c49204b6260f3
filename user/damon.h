/* SPDX-License-Identifier: MIT */
/*
 * Userspace twin of bpf/damon.bpf.c: observes the regions a running kdamond
 * aggregates and turns the accesses in them into samples of the targets'
 * pages.  Observe only: a kdamond the agent did not start is never touched.
 */
#ifndef CXLT_DAMON_H
#define CXLT_DAMON_H

#include <stddef.h>

#include "cxltier.h"
#include "tracker.h"

struct damon_src {
	struct damon_bpf *skel;
	struct bpf_link *link;
	struct ring_buffer *rb;
	struct cxlt_damon_region *regions;	/* since the last drain */
	size_t nr, cap;
	char ops[16];		/* the observed context's operations: paddr, vaddr, fvaddr */
	char why[160];
	uint64_t regions_seen, pages_matched;
};

/* -ENOENT (with why) when no kdamond runs or the kernel has no DAMON. */
int damon__open(struct damon_src *d, const char *root);
void damon__close(struct damon_src *d);
/* Folds the regions received since the last call into the tracker; returns pages sampled. */
int damon__drain(struct damon_src *d, struct tracker *tr);

#endif
