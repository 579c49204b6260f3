/* SPDX-License-Identifier: MIT */
/*
 * The mover: turns a policy's plan into move_pages(2) calls.  It validates
 * every move, enforces the migration budget (an MB/s token bucket), the fast
 * tier's watermarks (demotions first when fast memory is short) and ping-pong
 * damping, batches per process, and accounts every status code.
 */
#ifndef CXLT_MOVER_H
#define CXLT_MOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "cxltier/policy.h"
#include "platform.h"
#include "topology.h"
#include "tracker.h"

#define MOVER_STATS(X) \
	X(promoted, "pages moved to a fast node") \
	X(demoted, "pages moved to a slow node") \
	X(moved_other, "pages moved between nodes of the same role") \
	X(busy, "-EBUSY: page busy or locked, retried in a later epoch") \
	X(gone, "-ENOENT/-EFAULT: page no longer mapped, dropped") \
	X(nomem, "-ENOMEM: destination node full, promotion stopped for the epoch") \
	X(access, "-EACCES: page shared with other processes, not moved") \
	X(other_error, "any other status code") \
	X(unreported, "not attempted: the kernel stopped the call early (after pages it could not migrate); retried later") \
	X(process_gone, "whole call failed: the process exited (ESRCH)") \
	X(call_failed, "whole call failed for another reason") \
	X(rejected_invalid, "plan entries naming a page or node that does not exist or is not managed") \
	X(rejected_pingpong, "plan entries for pages moved too recently") \
	X(rejected_budget, "plan entries over the epoch's migration budget") \
	X(rejected_watermark, "promotions held back to keep free fast memory over the high watermark") \
	X(rejected_share, "promotions that would take a target past its fast-tier share") \
	X(retried, "-ENOENT pages touched and tried again (PROT_NONE before Linux 6.5)") \
	X(split, "huge pages split on their way to a fast node: their hot pages follow alone") \
	X(collapsed, "split huge pages made huge again, all their pages on a fast node") \
	X(calls, "move_pages calls")

struct mover_stats {
#define X(name, desc) uint64_t name;
	MOVER_STATS(X)
#undef X
};

struct mover_opts {
	double rate_mbps;		/* migration bandwidth budget, MiB/s */
	uint32_t batch;			/* pages per move_pages call */
	uint32_t pingpong_epochs;	/* a moved page stays put this long */
	double low_wmark_pct;		/* of fast capacity: under it, demote first */
	double high_wmark_pct;		/* demote until free fast memory is over it */
	bool keep_huge;			/* promote huge pages whole, never split them */
};

struct mover {
	struct mover_opts opts;
	const struct platform *pf;	/* platform_kernel after init */
	long page_size;
	double tokens;		/* pages that may still move */
	double last_refill;	/* seconds, monotonic */
	uint64_t attempted;	/* pages handed to move_pages this epoch */
	bool fast_short;	/* went under the low watermark, not yet over the high one */
	struct mover_stats total;	/* since start */
	struct mover_stats epoch;	/* the last epoch */
	struct cxlt_plan_result last_result;	/* the last plan, for the policy's view */
	bool outcomes;		/* records carry the last plan's outcomes: clear before the next */
	/* scratch, grown on demand */
	struct cxlt_move *sorted;
	void **addrs;
	int *nodes, *status, *query;
	uint32_t *rec;
	uint16_t *weight;	/* pages an address stands for: 1, or a huge page's */
	void **addrs2;		/* the -ENOENT retry */
	int *nodes2;
	uint32_t *idx2;
	uint32_t *asked;	/* target and region index of each REGION_ASKED region */
	uint32_t nr_asked;
	uint32_t scratch_cap;
};

void mover__default_opts(struct mover_opts *o);
int mover__init(struct mover *m, const struct mover_opts *o, long page_size);
void mover__free(struct mover *m);

/* Refills the token bucket and returns the pages this epoch may move. */
uint64_t mover__budget(struct mover *m, double now);

struct wmarks {
	uint64_t fast_free, low, high, demote_goal;
};
/* Reads free fast memory against the watermarks; remembers being short. */
void mover__wmarks(struct mover *m, const struct topology *topo,
		   struct wmarks *w);
/* Room to spare: nothing has to leave the fast tier soon. */
static inline bool wmarks__roomy(const struct wmarks *w)
{
	return w->fast_free > 2 * w->high;
}

/*
 * Executes a plan against the tracker's records: updates each moved page's
 * node and since_move, marks gone pages, and fills m->epoch.  A region's
 * record moves the region's pages without records of their own; a huge
 * page moves as one and counts as all its pages, in the budget, the
 * watermarks and the counters alike.
 */
int mover__execute(struct mover *m, struct tracker *tr,
		   const struct topology *topo, const struct cxlt_plan *plan,
		   uint64_t budget);

#endif
