/* SPDX-License-Identifier: MIT */
/*
 * cxltier policy ABI, version 2 (what changed from 1: docs/design.md,
 * "The policy ABI").
 *
 * A policy is a shared object that exports one constant ops table named
 * `cxlt_policy`.  Each epoch the host (the live agent cxltierd, or the offline
 * replay tool) hands the policy a read-only view of the machine and of the
 * tracked memory as extents (a page, or a 2 MiB region's pages that have no
 * record of their own), and the policy answers with a plan: a list of
 * (extent, target node) moves.  A policy never calls move_pages(2) and never touches libbpf,
 * which is what lets the very same file run live and in replay.
 *
 * This header is all a policy needs:
 *
 *	cc -shared -fPIC -O2 -o my.so my.c -I include
 *
 * Rules of the road:
 *  - `sz` and `abi` let the structs grow.  The host refuses an object whose
 *    `abi` differs from CXLT_POLICY_ABI, naming the file and both versions.
 *  - Parameters arrive as key=value strings.  Declare the keys in `params`
 *    (NULL-terminated); the host rejects unknown keys before init() runs and
 *    passes every declared key, with its default when the user gave none.
 *  - The view is read-only: a policy keeps per-extent state in the target's
 *    `policy_words` (one word per extent, kept across epochs, starting 0),
 *    the one thing it may write.  The host runs each policy where it cannot
 *    reach the host's memory (a process of its own), so a write elsewhere
 *    changes nothing but the policy's own copy.
 *  - An extent counts `npages` pages: the budget, the watermarks and the
 *    demotion goal are in pages, so a policy adds up `npages`, not records.
 *  - A policy's work per epoch should be linear in the extents it looks at;
 *    the plan is bounded by the migration budget.
 *  - Callbacks return 0 or a negative errno.  Messages go into `err`.
 */
#ifndef CXLTIER_POLICY_H
#define CXLTIER_POLICY_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#define CXLT_POLICY_ABI 2

enum cxlt_node_role {
	CXLT_NODE_FAST = 0,	/* DRAM: where hot pages belong */
	CXLT_NODE_SLOW = 1,	/* CXL (or other far memory): cold pages */
};

struct cxlt_node {
	int32_t id;		/* NUMA node id */
	int32_t role;		/* enum cxlt_node_role */
	int32_t tier;		/* memory tier id (smaller is faster), -1 if unknown */
	uint32_t reserved;
	uint64_t total_pages;
	uint64_t free_pages;
};

/* Never-moved marker for cxlt_page.since_move. */
#define CXLT_NEVER_MOVED 0xffff
/* Node not known yet (page just seen, not yet queried). */
#define CXLT_NODE_UNKNOWN (-1)

/*
 * One extent, 24 bytes: a page (npages 1), or the pages of a 2 MiB region
 * that have no record of their own (CXLT_PAGE_REGION; npages up to 512).
 * Kept compact because a big server has millions of them.
 */
struct cxlt_page {
	uint64_t addr;		/* page-aligned virtual address in the owner (a region's base) */
	float heat;		/* decayed sample weight: heat = heat * decay + samples */
	uint16_t samples;	/* sample weight this epoch, its pages' summed (saturating) */
	uint16_t npages;	/* pages it stands for: what moving it costs */
	uint16_t idle_epochs;	/* epochs since the last sample (saturating) */
	uint16_t since_move;	/* epochs since the agent moved it, or CXLT_NEVER_MOVED (also: khugepaged moved it since) */
	int8_t node;		/* NUMA node now (a region's: most of its pages'), or CXLT_NODE_UNKNOWN */
	uint8_t flags;		/* CXLT_PAGE_* */
	uint8_t outcome;	/* CXLT_OUTCOME_*: what became of the last plan's move of it */
	uint8_t reserved;
};

/*
 * Sampled this epoch by a sample marked as a NUMA hint fault (traces whose
 * source is hint).  The live fault tracepoint cannot tell a hint fault from
 * a first touch on x86 (both are not-present faults), so live it marks
 * only faults on present pages: use `samples`, not this flag, to decide.
 */
#define CXLT_PAGE_HINTED 0x1
#define CXLT_PAGE_SAMPLED 0x2	/* sampled at least once since tracked */
/*
 * The source has not looked at the page since its last sample (or since it
 * was tracked): a use since then may have gone unseen, so its idle time
 * proves nothing.  Only the hint source sets it: while its CPU budget holds
 * the kernel's scanner off fast-tier pages, they report nothing.  See
 * cxlt_idle_beyond() in policy-helpers.h.
 */
#define CXLT_PAGE_UNSEEN 0x4
/*
 * A huge page backs the extent: it moves whole (the kernel moves a huge page
 * only as one; userspace cannot split it), costing its 512 pages.
 */
#define CXLT_PAGE_HUGE 0x08
/* A 2 MiB region's pages without records of their own; addr is its base. */
#define CXLT_PAGE_REGION 0x10
/*
 * The region's sampled parts differ: its hot pages have extents of their own
 * (or, in a huge page, they share it with cold ones: moving it moves all).
 */
#define CXLT_PAGE_MIXED 0x40
/* 0x20 and 0x80 are the host's. */

/* cxlt_page.outcome: the last plan's move of the extent. */
enum cxlt_outcome {
	CXLT_OUTCOME_NONE = 0,		/* not in the last plan */
	CXLT_OUTCOME_MOVED,		/* moved (a region: at least some of its pages) */
	CXLT_OUTCOME_BUDGET,		/* refused: over the migration budget */
	CXLT_OUTCOME_PINGPONG,		/* refused: moved too recently (pingpong_epochs) */
	CXLT_OUTCOME_WATERMARK,		/* refused: fast memory at its high watermark */
	CXLT_OUTCOME_INVALID,		/* refused: no such extent or node, or already there */
	CXLT_OUTCOME_BUSY,		/* the kernel could not move it now: try again */
	CXLT_OUTCOME_FULL,		/* the destination node is full */
	CXLT_OUTCOME_FAILED,		/* gone, shared with other processes, or another error */
	CXLT_OUTCOME_SHARE,		/* refused: its target would pass its fast-tier share */
};

struct cxlt_target_view {
	int32_t pid;		/* tgid of the owning process */
	uint32_t reserved;
	const char *comm;
	const struct cxlt_page *pages;	/* its extents */
	uint64_t nr_pages;		/* extents in pages[] (their pages: sum of npages) */
	uint32_t *policy_words;		/* the policy's own word per extent, kept across epochs */
	uint64_t fast_pages;		/* its pages on the fast tier, as of the last epoch */
	uint64_t fast_cap_pages;	/* most it may hold there (its share); 0: no cap */
};

/* The last plan, as the host carried it out (pages, not plan entries). */
struct cxlt_plan_result {
	uint64_t planned;	/* plan entries */
	uint64_t promoted, demoted;	/* pages moved */
	uint64_t refused;	/* entries refused: budget, ping-pong, watermark, invalid */
	uint64_t failed;	/* pages the kernel did not move (busy, full, gone, ...) */
};

struct cxlt_view {
	uint32_t sz;		/* sizeof(struct cxlt_view) as the host built it */
	uint32_t page_size;
	uint64_t epoch;		/* counts from 1 */
	uint32_t epoch_ms;
	uint32_t nr_nodes;
	const struct cxlt_node *nodes;
	uint32_t nr_targets;
	uint32_t reserved;
	struct cxlt_target_view *targets;
	/* Most pages the plan may move this epoch (the mover cuts the rest). */
	uint64_t budget_pages;
	/*
	 * Fast-tier watermarks, in pages summed over the fast nodes.  When free
	 * fast memory is under `fast_low_pages`, the host executes demotions first
	 * and promotes nothing until it is back over `fast_high_pages`;
	 * `demote_goal_pages` is how many pages must leave the fast tier for that.
	 */
	uint64_t fast_free_pages;
	uint64_t fast_low_pages;
	uint64_t fast_high_pages;
	uint64_t demote_goal_pages;
	/* The host's settings a policy should agree with. */
	float heat_decay;		/* heat = heat * heat_decay + samples */
	uint32_t pingpong_epochs;	/* the mover refuses pages with since_move below this */
	/*
	 * CXLT_SOURCE_REPEATS: the sampler reports a page each time it is used
	 * (PMU samples, NUMA hint faults).  Without it (page faults alone: first
	 * touch only) a page's idle time says nothing about its use, and a
	 * policy must not demote a page only because it looks idle.
	 */
	uint32_t source_flags;
	uint32_t reserved2;
	struct cxlt_plan_result last_plan;
};

#define CXLT_SOURCE_REPEATS 0x1

struct cxlt_move {
	uint32_t target;	/* index into view->targets */
	uint32_t page;		/* index into that target's pages (an extent) */
	int32_t node;		/* destination node */
};

struct cxlt_plan {
	struct cxlt_move *moves;
	uint32_t cap;		/* == view->budget_pages, or less */
	uint32_t nr;
};

/* Adds a move; -ENOSPC once the plan holds the whole budget. */
static inline int cxlt_plan_add(struct cxlt_plan *plan, uint32_t target,
				uint32_t page, int32_t node)
{
	if (plan->nr >= plan->cap)
		return -ENOSPC;
	plan->moves[plan->nr].target = target;
	plan->moves[plan->nr].page = page;
	plan->moves[plan->nr].node = node;
	plan->nr++;
	return 0;
}

struct cxlt_param_desc {
	const char *key;
	const char *def;	/* default value as a string */
	const char *help;
};

struct cxlt_param {
	const char *key;
	const char *value;
};

struct cxlt_policy {
	uint32_t sz;		/* sizeof(struct cxlt_policy) */
	uint32_t abi;		/* CXLT_POLICY_ABI */
	const char *name;
	const char *description;
	const struct cxlt_param_desc *params;	/* NULL-terminated by key */
	/*
	 * Optional.  Gets every declared parameter, defaults filled in, and may
	 * allocate its state into *state.  Returns 0 or -errno with a message
	 * in err (e.g. "threshold=abc: not a number").
	 */
	int (*init)(void **state, const struct cxlt_param *params,
		    uint32_t nr_params, char *err, size_t errlen);
	/* Required.  Fills plan; returns 0 or -errno. */
	int (*decide)(void *state, const struct cxlt_view *view,
		      struct cxlt_plan *plan);
	/* Optional. */
	void (*fini)(void *state);
};

#endif /* CXLTIER_POLICY_H */
