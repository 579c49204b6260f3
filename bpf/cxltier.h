/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Plain data shared by the BPF samplers and userspace: map keys and values,
 * counter indexes.  No functions, no side-specific includes.
 */
#ifndef CXLTIER_BPF_SHARED_H
#define CXLTIER_BPF_SHARED_H

#ifndef __VMLINUX_H__
#include <linux/types.h>	/* userspace; BPF gets the types from vmlinux.h */
#endif

#define CXLT_PAGE_SHIFT 12

/* Default capacity of the heat map; userspace may resize it before load. */
#define CXLT_HEAT_ENTRIES (1 << 20)
#define CXLT_MAX_TARGETS 4096
#define CXLT_MAX_CGROUPS 256

enum cxlt_source {
	CXLT_SRC_FAULT = 1,	/* page fault (first touch) */
	CXLT_SRC_HINT = 2,	/* protection fault: NUMA hint fault */
	CXLT_SRC_PMU = 3,	/* hardware memory sample (PEBS / IBS) */
	CXLT_NR_SOURCES		/* one past the last: arrays by source */
};

struct cxlt_page_key {
	__u32 tgid;
	__u32 pad;	/* keeps the key free of holes: always 0 */
	__u64 vpage;	/* virtual address >> CXLT_PAGE_SHIFT */
};

struct cxlt_page_val {
	__u32 samples;
	__u32 hint_faults;
};

/* One raw sample in the ring buffer (recording). */
struct cxlt_sample {
	__u64 time_ns;
	__u32 tgid;
	__u16 source;	/* enum cxlt_source */
	__u16 weight;
	__u64 vpage;
};

/* A VMA the kernel's NUMA scanner passed over in a target (bpf/marks.bpf.c). */
struct cxlt_skip {
	__u32 tgid;
	__u32 reason;	/* enum numa_vmaskip_reason */
	__u64 start, end;
};

/* Kernel migrations by enum migrate_reason; the last slot takes reasons past it. */
#define CXLT_MIGRATE_REASONS 16

struct cxlt_kmigrate {
	__u64 succeeded;	/* pages */
	__u64 failed;		/* pages */
	__u64 batches;		/* migrate_pages() calls */
};

/* One DAMON region with accesses, as the damon source streams it. */
struct cxlt_damon_region {
	__u64 start, end;	/* physical or virtual, as the kdamond's context */
	__u32 nr_accesses;
	__u32 target_id;
	__u32 age;		/* aggregations the region's access count held steady */
	__u32 pad;
};

enum cxlt_stat_id {
#define CXLT_STAT(id, name, desc) CXLT_STAT_##id,
#include "stats.def"
#undef CXLT_STAT
	CXLT_NR_STATS
};

#endif
