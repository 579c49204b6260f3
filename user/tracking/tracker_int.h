/* SPDX-License-Identifier: MIT */
/* The tracker's own tables, shared by tracker.c and sweep.c only. */
#ifndef CXLT_TRACKER_INT_H
#define CXLT_TRACKER_INT_H

#include "tracker.h"

/*
 * Time the sweeps may take an epoch: with PAGEMAP_SCAN about 4 GiB of
 * address space (5 ms a GiB, plus the node probes); reading pagemap, 1 GiB.
 */
#define SWEEP_MS 20

struct region *region_table__find(const struct region_table *rt, uint64_t base);
/* Finds or adds the region at base (2 MiB aligned) with its record; NULL: no memory. */
struct region *region_get(struct target *t, uint64_t base, bool *created);
/* Drops the records and regions flagged gone; -errno. */
int target__compact(struct target *t);
/* Bytes t's tables hold, allocated: what the budget weighs. */
uint64_t target_bytes(const struct target *t);
/* The same, all targets. */
uint64_t tracker__bytes_used(const struct tracker *tr);
/* Folds every page record of region r into r's record. */
void fold_region(struct tracker *tr, struct target *t, struct region *r);

/*
 * The next page record inside r from its page *k on (*k moved to it), or -1:
 *	for (uint32_t k = 0; (i = region_record(t, r, &k)) >= 0; k++)
 */
static inline int64_t region_record(const struct target *t, const struct region *r, uint32_t *k)
{
	for (; r->detail && *k < REGION_PAGES; (*k)++) {
		int64_t i = page_table__find(&t->pt, r->base + ((uint64_t)*k << CXLT_PAGE_SHIFT));

		if (i >= 0)
			return i;
	}
	return -1;
}

#endif
