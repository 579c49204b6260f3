/* SPDX-License-Identifier: MIT */
/*
 * The tracker: per target process, one compact record per page that is
 * resident or was sampled (struct cxlt_page, 24 bytes), plus an open-
 * addressing index (4 bytes a slot, load <= 3/4).  The policy view points at
 * these records directly: nothing is copied per epoch.
 */
#ifndef CXLT_TRACKER_H
#define CXLT_TRACKER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cxltier/policy.h"
#include "cxltier.h"
#include "pfn_nodes.h"
#include "sight.h"

/* Internal flag: the page is gone (unmapped, process exited); dropped at the next compaction. */
#define PAGE_GONE 0x80
/* The kernel's scanner marked the page after its last sample (tracker__mark_pass). */
#define PAGE_MARKED 0x20

struct page_table {
	struct cxlt_page *pages;
	uint32_t nr, cap;
	uint32_t *slots;	/* record index + 1; 0 = empty */
	uint32_t slot_mask;
};

enum target_origin { ORIGIN_PID, ORIGIN_COMM, ORIGIN_CGROUP };

struct vrange {
	uint64_t start, end;
};

/* Hint source: the kernel scanner's passes over one target (user/marks.c). */
struct scan_follow {
	uint32_t seq;		/* mm->numa_scan_seq at the last look */
	bool known;
	bool pass_open;		/* the gate has been open since the pass under way began */
	uint64_t pass_start;	/* epoch it began */
	uint64_t fast_pass;	/* epoch the last pass that marked both tiers ended; 0: none */
	struct vrange *skips;	/* VMAs the pass under way skipped (sched_skip_vma_numa) */
	uint32_t nr_skips, cap_skips, nr_old;
	bool overflow;		/* more skips than kept: nothing of the pass counts */
};

struct target_counters {
	uint64_t samples;
	uint64_t promoted, demoted;
};

/* Where a target's tracked pages are, counted once an epoch. */
struct placement {
	uint64_t fast, slow, unknown, sampled;
	uint64_t fast_unseen;	/* fast pages the source has not looked at since their last sample */
};

struct target {
	pid_t pid;
	uint64_t start_time;	/* /proc/PID/stat field 22: tells PID reuse apart */
	char comm[16];
	enum target_origin origin;
	bool gone;
	uint32_t scanned_new;	/* pages that the last scan found never sampled */
	uint32_t nodes_known;	/* records [0, nodes_known) have had their node queried */
	uint64_t last_scan_epoch;	/* 0: never scanned */
	struct page_table pt;
	struct target_counters ctr;
	struct placement place;	/* as of the last tracker__count_placement() */
	struct scan_follow scan;
	struct unseen unseen;	/* what the sources miss of it (sight.h), set by targets.c */
};

struct platform;

struct tracker {
	const struct platform *pf;	/* where page nodes are asked: platform_kernel after init */
	struct target *targets;
	uint32_t nr_targets, cap_targets;
	float decay;		/* heat = heat * decay + samples */
	uint64_t epoch;
	long page_size;
	uint64_t ingested;	/* heat map entries folded in, all time */
	uint64_t dropped;	/* entries of processes that are no longer targets */
	/*
	 * The source sees a page only when something marks it (hint): pages not
	 * marked since their last sample are flagged CXLT_PAGE_UNSEEN.
	 */
	bool sight;
	struct pfn_nodes pfn;	/* optional; empty = ask move_pages only */
};

int tracker__init(struct tracker *tr, double decay);
void tracker__free(struct tracker *tr);

/* Returns the new target's index, or -errno. */
int tracker__add_target(struct tracker *tr, pid_t pid, uint64_t start_time,
			const char *comm, enum target_origin origin);
void tracker__remove_target(struct tracker *tr, uint32_t idx);
int tracker__find_target(const struct tracker *tr, pid_t pid);

/* Folds n heat-map entries into the records; new pages start with node unknown. */
void tracker__ingest(struct tracker *tr, const struct cxlt_page_key *keys,
		     const struct cxlt_page_val *vals, uint32_t n);
/* One entry of target t, for a caller that finds t by its own index (the replay). */
void tracker__ingest_page(struct tracker *tr, struct target *t, const struct cxlt_page_key *key,
			  const struct cxlt_page_val *val);

/*
 * A pass of the kernel's scanner over t ended: it marked every page outside
 * the VMAs it skipped (t->scan.skips), on every tier when fast, else only on
 * the nodes outside fast_mask.  A use of such a page from then on faults, so
 * until its next sample its idle time counts.  Pages sampled since the pass
 * began may have been marked before their sample: left unmarked.  Once an
 * epoch, before the ingest.
 */
void tracker__mark_pass(struct tracker *tr, struct target *t, bool fast, uint64_t fast_mask);

/* Finds or adds a page record; returns its index or -ENOMEM. */
int page_table__get(struct page_table *pt, uint64_t addr, bool *created);
/* Index of the record for addr, or -1. */
int64_t page_table__find(const struct page_table *pt, uint64_t addr);
uint64_t page_table__bytes(const struct page_table *pt);

/*
 * Enumerates the resident pages of a target's private memory (from
 * /proc/PID/maps and PAGEMAP_SCAN, or pagemap where the kernel lacks it),
 * adds the never-sampled ones, drops records of pages that are gone, and
 * refreshes every page's node.  Returns 0, -ESRCH when the process is gone,
 * or another -errno.
 */
int tracker__scan(struct tracker *tr, struct target *t);
/* Queries the node of the records in [from, pt.nr) whose node is unknown. */
int tracker__query_nodes(struct tracker *tr, struct target *t, uint32_t from);

/* Heat decay, idle and move ages: once per epoch, after ingest, before the policy. */
void tracker__age(struct tracker *tr);
/* Clears this epoch's samples: once per epoch, after the policy. */
void tracker__end_epoch(struct tracker *tr);

/* Counts every target's pages by tier (fast_mask: the fast nodes); fills total. */
void tracker__count_placement(struct tracker *tr, uint64_t fast_mask, struct placement *total);

uint64_t tracker__pages(const struct tracker *tr);
uint64_t tracker__bytes(const struct tracker *tr);

#endif
