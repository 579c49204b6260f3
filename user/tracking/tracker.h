/* SPDX-License-Identifier: MIT */
/*
 * The tracker, two levels (docs/design.md, "The tracker"):
 *
 *  - regions: each naturally aligned 2 MiB of a target's resident memory is
 *    one region (struct region: resident pages, by node, whether a huge page
 *    backs it, which 32 KiB chunks were sampled) with one record
 *    (struct cxlt_page, flag PAGE_REGION) that stands for all of its pages
 *    that have no record of their own;
 *  - detail: a page record (struct cxlt_page, 24 bytes, in an open-
 *    addressing index of 4 bytes a slot) only for sampled pages of regions
 *    whose sampled chunks differ (REGION_MIXED), within the memory budget
 *    (budget_bytes); over it, the coldest detail folds back into its region.
 *
 * Both kinds of record live in one array per target, which the policy view
 * points at directly: nothing is copied per epoch.  The replay (detail_all)
 * keeps a page record for every sampled page and no regions: its model is
 * per page.
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
/* The record stands for a 2 MiB region's pages without records of their own. */
#define PAGE_REGION CXLT_PAGE_REGION
/* The region is one huge page: it moves as one, and counts as REGION_PAGES. */
#define PAGE_HUGE CXLT_PAGE_HUGE

#define REGION_SHIFT 21
#define REGION_SIZE (1ULL << REGION_SHIFT)
#define REGION_PAGES (1U << (REGION_SHIFT - CXLT_PAGE_SHIFT))
/*
 * The NUMA scanner walks at most this much of a process at a time (the
 * kernel's default scan_size_mb): a process no bigger is walked whole in the
 * instant its pass ends.
 */
#define HINT_SCAN_CHUNK_BYTES (256ULL << 20)
/* One bit of a region's chunk maps: 8 pages, 32 KiB. */
#define CHUNK_PAGES (REGION_PAGES / 64)

/* struct region.flags */
#define REGION_MIXED 0x1	/* its sampled chunks differ: sampled pages get detail */
#define REGION_SWEPT 0x2	/* resident and on_node come from a sweep */
#define REGION_SPLIT 0x4	/* the mover split its huge page, or placed pages khugepaged took in one */
#define REGION_SPLIT_SEEN 0x8	/* and a sweep found it split since */
/* The mover's, within one plan: asked whether it is huge again; and it is, still. */
#define REGION_ASKED 0x10
#define REGION_STILL_HUGE 0x20

struct region {
	uint64_t base;		/* 2 MiB aligned */
	uint64_t resident_bits;	/* chunks with a resident page, as of the last sweep */
	uint64_t sampled_bits;	/* chunks sampled in the current window */
	uint64_t sampled_prev;	/* and in the window before */
	uint32_t rec;		/* its record in the target's pt.pages */
	uint32_t sweep;		/* the sweep that last found it (or made it) */
	uint16_t resident;	/* resident pages at the last sweep, detail included */
	uint16_t detail;	/* page records inside it */
	uint16_t on_node[2];	/* of the resident pages, on node_id[i] (estimated) */
	int8_t node_id[2];
	uint16_t probe;		/* a page (index in the region) known resident */
	uint8_t flags;		/* REGION_* */
};

struct region_table {
	struct region *rg;
	uint32_t nr, cap;
	uint32_t *slots;	/* region index + 1; 0 = empty */
	uint32_t slot_mask;
};

struct page_table {
	struct cxlt_page *pages;
	uint32_t *words;	/* the policy's word per record (cxlt_target_view.policy_words) */
	uint32_t nr, cap;
	uint32_t *slots;	/* record index + 1; 0 = empty; page records only */
	uint32_t slot_mask;
	uint32_t hashed;	/* page records (region records are found through their region) */
};

enum target_origin { ORIGIN_PID, ORIGIN_COMM, ORIGIN_CGROUP };

struct vrange {
	uint64_t start, end;
};

/* Hint source: the kernel scanner's passes over one target (user/sources/marks.c). */
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
	uint64_t slow_sampled;	/* records on slow nodes sampled this epoch, after its moves */
};

struct target {
	pid_t pid;
	uint64_t start_time;	/* /proc/PID/stat field 22: tells PID reuse apart */
	char comm[16];
	enum target_origin origin;
	bool gone;
	uint32_t scanned_new;	/* regions that the last sweep found new */
	uint32_t split_regions;	/* REGION_SPLIT ones, at least: 0 spares the mover its walk */
	uint32_t recheck_next;	/* the split region whose look goes first next epoch (sweep.c) */
	uint32_t nodes_known;	/* records [0, nodes_known) have had their node queried */
	uint64_t last_scan_epoch;	/* the last completed sweep; 0: none yet */
	uint64_t sweep_cursor;	/* where the sweep under way goes on; 0: a new sweep */
	uint32_t sweep_gen;	/* counts completed sweeps */
	/* Bytes of the VMAs the last whole sweep read (mapped), and of their
	 * scanner pieces where it found pages (present): what a NUMA scanner
	 * pass walks.  The sweep under way's in span_acc, its present pieces
	 * counted up to span_counted. */
	struct vma_span { uint64_t mapped, present; } span, span_acc;
	uint64_t span_counted;
	struct page_table pt;
	struct region_table rt;
	struct target_counters ctr;
	struct placement place;	/* as of the last tracker__count_placement() */
	uint64_t fast_cap;	/* most fast pages it may hold (--fast-share); 0: no cap */
	uint64_t fast_allow;	/* the mover's: what it may still take this epoch */
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
	/* A page record for every sampled page, no regions (the replay's model is per page). */
	bool detail_all;
	uint64_t budget_bytes;	/* over it, the coldest detail folds; 0: no limit */
	uint32_t refused_budget;	/* processes the last target refresh left out: no room */
	/*
	 * The source reports a page once (first touch): a region turning mixed
	 * hands what its record gathered to its sampled chunks' pages rather
	 * than dropping it (a source that repeats samples them again).
	 */
	bool split_mixed;
	uint64_t folded;	/* page records folded into their regions, all time */
	uint64_t folded_compacted;	/* folded as of the last compaction */
	uint64_t bytes_used;	/* what the budget weighs: counted each epoch, grown by each new record */
	double sweep_ms;	/* time the sweeps may take per epoch, all targets */
	uint32_t sweep_next;	/* the target whose sweep goes first next epoch */
	uint32_t recheck_first;	/* the target whose split regions are looked at first next epoch */
	/*
	 * A target's first sweep is done whole, whatever it takes: a recording
	 * agent's, so the resident memory it records comes before any move.
	 */
	bool first_sweep_whole;
	bool no_pagemap_scan;	/* read pagemap even where PAGEMAP_SCAN exists (tests) */
};

int tracker__init(struct tracker *tr, double decay);
void tracker__free(struct tracker *tr);

/*
 * Returns the new target's index, or -errno: -ENOSPC when the tables are over
 * the budget though the detail has folded (the regions of the targets
 * the tracker has fill it), so a target set that grows without end cannot
 * grow the agent.
 */
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
/* The same for the record a sample of it goes to, found already (the replay knows it). */
void tracker__ingest_record(struct tracker *tr, struct target *t, struct cxlt_page *p,
			    const struct cxlt_page_val *val);
/*
 * A source that reports ranges (DAMON): every page of [start, end) of t was
 * accessed `samples` times.  A whole 2 MiB region goes to its record at once
 * (all its chunks sampled); the pages of a partial one one by one.  The cost
 * follows the regions the range covers, not its pages.
 */
void tracker__ingest_range(struct tracker *tr, struct target *t, uint64_t start, uint64_t end,
			   uint32_t samples);

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
 * Goes on with the sweep of a target's private memory (from /proc/PID/maps
 * and PAGEMAP_SCAN, or pagemap where the kernel lacks it) where the last call
 * stopped, region by region, until the sweep ends or the clock passes
 * deadline (seconds, now_sec(); 0: no limit): each region's resident pages,
 * their nodes, whether a huge page backs it; page records of pages gone are
 * dropped.  A sweep that ends drops the regions it did not find.  The zero
 * page is never counted.  Returns 1 when the sweep ended, 0 when it stopped
 * at the deadline, -ESRCH when the process is gone, or another -errno.
 */
int tracker__sweep(struct tracker *tr, struct target *t, double deadline);
/* A whole sweep at once: 0 or -errno. */
int tracker__scan(struct tracker *tr, struct target *t);
/*
 * One epoch's share of sweeping for every target, within tr->sweep_ms,
 * starting a target's next sweep only every min_epochs; targets whose
 * process is gone are flagged gone.
 */
void tracker__sweep_all(struct tracker *tr, uint32_t min_epochs);

/* What a sweep found of one region (the sweep's own way in; the bench's too). */
struct region_found {
	uint64_t base;
	uint64_t resident_bits;
	uint16_t resident;
	bool huge;
	uint16_t probe;
	int8_t node_id[2];
	uint16_t on_node[2];
};
struct region *tracker__region_found(struct tracker *tr, struct target *t,
				     const struct region_found *f);
/* The region of addr, or NULL. */
struct region *tracker__region(const struct target *t, uint64_t addr);
/* Pages a record stands for: 1 for a page, its pages without detail for a region. */
uint32_t tracker__record_pages(const struct target *t, const struct cxlt_page *p);
/* After a move of the record p to node: the region's counts follow. */
void tracker__record_moved(struct target *t, struct cxlt_page *p, int node);
/*
 * Region r's huge page was split: its record is a region's of 4 KiB pages,
 * with no heat yet (the huge page's was all its pages'), and the pages
 * sampled from now on get records of their own.
 */
void tracker__huge_split(struct target *t, struct region *r);
/* Queries the node of the records in [from, pt.nr) whose node is unknown. */
int tracker__query_nodes(struct tracker *tr, struct target *t, uint32_t from);

/* Heat decay, idle and move ages: once per epoch, after ingest, before the policy. */
void tracker__age(struct tracker *tr);
/* Clears this epoch's samples: once per epoch, after the policy. */
void tracker__end_epoch(struct tracker *tr);

/* Counts every target's pages by tier (fast_mask: the fast nodes); fills total. */
void tracker__count_placement(struct tracker *tr, uint64_t fast_mask, struct placement *total);

/* Pages managed (records stand for), records held, bytes allocated. */
uint64_t tracker__pages(const struct tracker *tr);
uint64_t tracker__target_pages(const struct target *t);
uint64_t tracker__records(const struct tracker *tr);
uint64_t tracker__bytes(const struct tracker *tr);

#endif
