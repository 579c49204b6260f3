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

#endif
