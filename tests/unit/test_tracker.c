// SPDX-License-Identifier: MIT
/*
 * Tracker: the page index, folding heat-map entries into page records, the
 * per-epoch ageing, targets, the node query (with a fake move_pages) and a
 * real scan of this test process's own memory.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "platform.h"
#include "tracker.h"
#include "util.h"

#define BASE 0x7f1200000000ULL
#define PG 4096ULL

/* ---- page table ---- */

static void page_table_200k_inserts_all_found(void **state)
{
	struct page_table pt = { 0 };
	const uint32_t n = 200000;
	bool created;

	(void)state;
	assert_int_equal(page_table__find(&pt, BASE), -1);	/* empty table */
	for (uint32_t i = 0; i < n; i++) {
		/* Spread addresses over several regions, as a real process has. */
		uint64_t addr = BASE + (uint64_t)(i % 7) * (1ULL << 32) + (uint64_t)(i / 7) * PG;
		int idx = page_table__get(&pt, addr, &created);

		assert_int_equal(idx, i);
		assert_true(created);
		assert_int_equal(pt.pages[idx].node, CXLT_NODE_UNKNOWN);
		assert_int_equal(pt.pages[idx].since_move, CXLT_NEVER_MOVED);
	}
	assert_int_equal(pt.nr, n);
	/* Growth kept every record and the index at or under 3/4 full. */
	assert_true((uint64_t)pt.nr * 4 <= (uint64_t)(pt.slot_mask + 1) * 3);
	assert_true(pt.cap >= n);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t addr = BASE + (uint64_t)(i % 7) * (1ULL << 32) + (uint64_t)(i / 7) * PG;

		assert_int_equal(page_table__find(&pt, addr), i);
		assert_true(pt.pages[i].addr == addr);
	}
	/* A second get finds, does not add. */
	assert_int_equal(page_table__get(&pt, BASE + PG, &created), 7);
	assert_false(created);
	assert_int_equal(pt.nr, n);
	/* Addresses never inserted are not found. */
	assert_int_equal(page_table__find(&pt, BASE + 5 * (1ULL << 32) + 900000 * PG), -1);
	assert_int_equal(page_table__find(&pt, 0x1000), -1);
	assert_true(page_table__bytes(&pt) >= (uint64_t)n * sizeof(struct cxlt_page));
	free(pt.pages);
	free(pt.words);
	free(pt.slots);
}

static void page_record_is_compact(void **state)
{
	(void)state;
	/* The design's promise: tens of millions of pages, 24 bytes each. */
	assert_int_equal(sizeof(struct cxlt_page), 24);
}

/* ---- targets ---- */

static void targets_add_find_remove(void **state)
{
	struct tracker tr;
	bool created;

	(void)state;
	assert_int_equal(tracker__init(&tr, 0.5), 0);
	for (int i = 0; i < 40; i++)	/* past the first growth */
		assert_int_equal(tracker__add_target(&tr, 1000 + i, 77 + i, "app", ORIGIN_PID), i);
	assert_int_equal(tr.nr_targets, 40);
	assert_int_equal(tracker__find_target(&tr, 1000), 0);
	assert_int_equal(tracker__find_target(&tr, 1039), 39);
	assert_int_equal(tracker__find_target(&tr, 999), -1);
	assert_string_equal(tr.targets[3].comm, "app");
	assert_int_equal(tr.targets[3].start_time, 80);

	/* Records stay with their target when another is removed. */
	assert_int_equal(page_table__get(&tr.targets[5].pt, BASE, &created), 0);
	tracker__remove_target(&tr, 2);
	assert_int_equal(tr.nr_targets, 39);
	assert_int_equal(tracker__find_target(&tr, 1002), -1);
	assert_int_equal(tracker__find_target(&tr, 1005), 4);
	assert_int_equal(tr.targets[4].pt.nr, 1);
	assert_true(tr.targets[4].pt.pages[0].addr == BASE);
	assert_int_equal(page_table__find(&tr.targets[4].pt, BASE), 0);
	assert_int_equal(tracker__pages(&tr), 1);
	tracker__remove_target(&tr, 100);	/* out of range: no-op */
	assert_int_equal(tr.nr_targets, 39);
	tracker__free(&tr);
}

/* ---- ingest, age, end of epoch ---- */

static struct cxlt_page *page_of(struct tracker *tr, pid_t pid, uint64_t addr)
{
	int ti = tracker__find_target(tr, pid);
	int64_t idx;

	if (ti < 0)
		return NULL;
	idx = page_table__find(&tr->targets[ti].pt, addr);
	return idx < 0 ? NULL : &tr->targets[ti].pt.pages[idx];
}

static void ingest_two_targets_and_unknown_tgid(void **state)
{
	struct tracker tr;
	const struct cxlt_page_key keys[] = {
		{ .tgid = 100, .vpage = BASE / PG },
		{ .tgid = 100, .vpage = BASE / PG + 1 },
		{ .tgid = 555, .vpage = BASE / PG },		/* not a target */
		{ .tgid = 200, .vpage = BASE / PG },
		{ .tgid = 100, .vpage = BASE / PG },		/* same page again */
		{ .tgid = 555, .vpage = BASE / PG + 9 },	/* not a target */
	};
	const struct cxlt_page_val vals[] = {
		{ .samples = 3 }, { .samples = 1, .hint_faults = 1 }, { .samples = 9 },
		{ .samples = 4 }, { .samples = 2 }, { .samples = 1 },
	};
	struct cxlt_page *p;

	(void)state;
	tracker__init(&tr, 0.5);
	tr.detail_all = true;	/* a record a sampled page, as the replay keeps */
	tracker__add_target(&tr, 100, 1, "a", ORIGIN_PID);
	tracker__add_target(&tr, 200, 1, "b", ORIGIN_COMM);
	tracker__ingest(&tr, keys, vals, ARRAY_SIZE(keys));

	assert_int_equal(tr.dropped, 2);
	assert_int_equal(tr.ingested, 4);
	assert_int_equal(tr.targets[0].pt.nr, 2);
	assert_int_equal(tr.targets[1].pt.nr, 1);
	p = page_of(&tr, 100, BASE);
	assert_non_null(p);
	assert_int_equal(p->samples, 5);
	assert_true(p->flags & CXLT_PAGE_SAMPLED);
	assert_false(p->flags & CXLT_PAGE_HINTED);
	assert_int_equal(p->node, CXLT_NODE_UNKNOWN);
	p = page_of(&tr, 100, BASE + PG);
	assert_int_equal(p->samples, 1);
	assert_true(p->flags & CXLT_PAGE_HINTED);
	assert_true(p->flags & CXLT_PAGE_SAMPLED);
	p = page_of(&tr, 200, BASE);
	assert_int_equal(p->samples, 4);
	assert_int_equal(tr.targets[0].ctr.samples, 6);
	assert_int_equal(tr.targets[1].ctr.samples, 4);
	tracker__free(&tr);
}

static void ingest_samples_saturate_at_65535(void **state)
{
	struct tracker tr;
	const struct cxlt_page_key key = { .tgid = 100, .vpage = BASE / PG };
	const struct cxlt_page_val big = { .samples = 40000 };
	const struct cxlt_page_val huge = { .samples = 1000000 };

	(void)state;
	tracker__init(&tr, 0.5);
	tr.detail_all = true;	/* a record a sampled page, as the replay keeps */
	tracker__add_target(&tr, 100, 1, "a", ORIGIN_PID);
	tracker__ingest(&tr, &key, &big, 1);
	assert_int_equal(page_of(&tr, 100, BASE)->samples, 40000);
	tracker__ingest(&tr, &key, &big, 1);
	assert_int_equal(page_of(&tr, 100, BASE)->samples, 65535);
	tracker__ingest(&tr, &key, &huge, 1);
	assert_int_equal(page_of(&tr, 100, BASE)->samples, 65535);
	tracker__free(&tr);
}

static void age_decays_heat_and_counts_idle_epochs(void **state)
{
	struct tracker tr;
	const struct cxlt_page_key key = { .tgid = 100, .vpage = BASE / PG };
	const struct cxlt_page_val v8 = { .samples = 8 }, v2 = { .samples = 2 };
	struct cxlt_page *p, *moved;
	bool created;
	int idx;

	(void)state;
	tracker__init(&tr, 0.5);
	tr.detail_all = true;	/* a record a sampled page, as the replay keeps */
	tracker__add_target(&tr, 100, 1, "a", ORIGIN_PID);
	tracker__ingest(&tr, &key, &v8, 1);
	idx = page_table__get(&tr.targets[0].pt, BASE + 10 * PG, &created);
	moved = &tr.targets[0].pt.pages[idx];
	moved->since_move = 0;
	p = page_of(&tr, 100, BASE);

	tracker__age(&tr);	/* epoch 1: 8 samples */
	assert_int_equal(tr.epoch, 1);
	assert_float_equal(p->heat, 8.0, 1e-6);
	assert_int_equal(p->idle_epochs, 0);
	assert_int_equal(p->since_move, CXLT_NEVER_MOVED);
	assert_int_equal(moved->since_move, 1);
	assert_int_equal(moved->idle_epochs, 1);
	tracker__end_epoch(&tr);

	tracker__age(&tr);	/* epoch 2: no sample */
	assert_float_equal(p->heat, 4.0, 1e-6);
	assert_int_equal(p->idle_epochs, 1);
	tracker__end_epoch(&tr);
	tracker__age(&tr);	/* epoch 3: no sample */
	assert_float_equal(p->heat, 2.0, 1e-6);
	assert_int_equal(p->idle_epochs, 2);
	assert_int_equal(moved->since_move, 3);
	assert_int_equal(moved->idle_epochs, 3);
	tracker__end_epoch(&tr);

	tracker__ingest(&tr, &key, &v2, 1);	/* epoch 4: 2 samples */
	tracker__age(&tr);
	assert_float_equal(p->heat, 2.0 * 0.5 + 2, 1e-6);
	assert_int_equal(p->idle_epochs, 0);
	assert_int_equal(p->since_move, CXLT_NEVER_MOVED);	/* never moved stays so */
	assert_int_equal(tr.epoch, 4);
	tracker__free(&tr);
}

static void age_saturates_idle_and_since_move(void **state)
{
	struct tracker tr;
	struct cxlt_page *p;
	bool created;
	int idx;

	(void)state;
	tracker__init(&tr, 0.9);
	tracker__add_target(&tr, 100, 1, "a", ORIGIN_PID);
	idx = page_table__get(&tr.targets[0].pt, BASE, &created);
	assert_int_equal(idx, 0);
	p = &tr.targets[0].pt.pages[idx];
	p->idle_epochs = UINT16_MAX - 1;
	p->since_move = CXLT_NEVER_MOVED - 2;
	tracker__age(&tr);
	tracker__age(&tr);
	tracker__age(&tr);
	assert_int_equal(p->idle_epochs, UINT16_MAX);
	/* A moved page never ages into "never moved". */
	assert_true(p->since_move < CXLT_NEVER_MOVED);
	assert_int_equal(p->since_move, CXLT_NEVER_MOVED - 1);
	tracker__free(&tr);
}

static void end_epoch_clears_samples_and_hinted(void **state)
{
	struct tracker tr;
	const struct cxlt_page_key key = { .tgid = 100, .vpage = BASE / PG };
	const struct cxlt_page_val v = { .samples = 5, .hint_faults = 2 };
	struct cxlt_page *p;

	(void)state;
	tracker__init(&tr, 0.5);
	tr.detail_all = true;	/* a record a sampled page, as the replay keeps */
	tracker__add_target(&tr, 100, 1, "a", ORIGIN_PID);
	tracker__ingest(&tr, &key, &v, 1);
	tracker__age(&tr);
	tracker__end_epoch(&tr);
	p = page_of(&tr, 100, BASE);
	assert_int_equal(p->samples, 0);
	assert_false(p->flags & CXLT_PAGE_HINTED);
	assert_true(p->flags & CXLT_PAGE_SAMPLED);	/* "sampled since tracked" stays */
	assert_float_equal(p->heat, 5.0, 1e-6);		/* heat is kept */
	tracker__free(&tr);
}

/* ---- node query with a fake move_pages ---- */

static struct {
	int calls;
	int pid;
	bool nodes_was_null;
	unsigned long pages;
} q;

/* Node = (page number % 3), except every 5th page is gone (-ENOENT). */
static long fake_query(void *ctx, int pid, unsigned long count, void **pages,
		       const int *nodes, int *status, int flags)
{
	(void)ctx;
	(void)flags;
	q.calls++;
	q.pid = pid;
	q.nodes_was_null = nodes == NULL;
	q.pages += count;
	for (unsigned long i = 0; i < count; i++) {
		uint64_t pn = ((uint64_t)(uintptr_t)pages[i] - BASE) / PG;

		status[i] = pn % 5 == 4 ? -ENOENT : pn % 7 == 6 ? -EFAULT : (int)(pn % 3);
	}
	return 0;
}

static long fake_query_esrch(void *ctx, int pid, unsigned long count, void **pages,
			     const int *nodes, int *status, int flags)
{
	(void)ctx;
	(void)pid; (void)count; (void)pages; (void)nodes; (void)status; (void)flags;
	errno = ESRCH;
	return -1;
}

static const struct platform query_platform = { .move_pages = fake_query };
static const struct platform esrch_platform = { .move_pages = fake_query_esrch };

static void query_nodes_fills_nodes_marks_gone_keeps_unknown(void **state)
{
	struct tracker tr;
	struct target *t;
	const uint32_t n = 10000;	/* more than one query batch */
	bool created;

	(void)state;
	tracker__init(&tr, 0.5);
	tracker__add_target(&tr, 4242, 1, "a", ORIGIN_PID);
	t = &tr.targets[0];
	for (uint32_t i = 0; i < n; i++)
		page_table__get(&t->pt, BASE + i * PG, &created);
	memset(&q, 0, sizeof(q));
	tr.pf = &query_platform;
	assert_int_equal(tracker__query_nodes(&tr, t, 0), 0);

	assert_true(q.calls >= 2);
	assert_int_equal(q.pid, 4242);
	assert_true(q.nodes_was_null);	/* a query, not a move */
	assert_int_equal(q.pages, n);
	assert_int_equal(t->nodes_known, n);
	for (uint32_t i = 0; i < n; i++) {
		const struct cxlt_page *p = &t->pt.pages[i];

		if (i % 7 == 6 && i % 5 != 4) {
			assert_true(p->flags & PAGE_GONE);	/* -EFAULT: no mapping */
		} else if (i % 5 == 4) {
			/* -ENOENT may be a PROT_NONE page (pre-6.5): unknown, kept */
			assert_false(p->flags & PAGE_GONE);
			assert_int_equal(p->node, CXLT_NODE_UNKNOWN);
		} else {
			assert_false(p->flags & PAGE_GONE);
			assert_int_equal(p->node, i % 3);
		}
	}

	/* Only unknown records from `from` on are asked about. */
	memset(&q, 0, sizeof(q));
	assert_int_equal(tracker__query_nodes(&tr, t, n - 10), 0);
	assert_int_equal(q.calls, 1);
	/*
	 * n-10 .. n-1 = 9990..9999: known nodes are not asked again, gone ones
	 * are skipped: only 9994 and 9999 (-ENOENT, still unknown) are asked.
	 */
	assert_int_equal(q.pages, 2);
	tracker__free(&tr);
}

static void query_nodes_reports_process_gone(void **state)
{
	struct tracker tr;
	bool created;

	(void)state;
	tracker__init(&tr, 0.5);
	tracker__add_target(&tr, 4242, 1, "a", ORIGIN_PID);
	page_table__get(&tr.targets[0].pt, BASE, &created);
	tr.pf = &esrch_platform;
	assert_int_equal(tracker__query_nodes(&tr, &tr.targets[0], 0), -ESRCH);
	tracker__free(&tr);
}

/* ---- a real scan of this process ---- */

static void sweep_self_finds_every_touched_region_on_node0(void **state)
{
	const size_t len = 4 << 20;
	long psz = sysconf(_SC_PAGESIZE);
	struct tracker tr;
	struct target *t;
	char *buf, *heap, *mem;
	int err;

	(void)state;
	/* 2 MiB aligned, so that the regions are known exactly; no huge pages. */
	mem = mmap(NULL, len + REGION_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(mem != MAP_FAILED);
	buf = (char *)(((uintptr_t)mem + REGION_SIZE - 1) & ~(REGION_SIZE - 1));
	assert_int_equal(madvise(buf, len, MADV_NOHUGEPAGE), 0);
	heap = malloc(len);
	assert_non_null(heap);
	for (size_t off = 0; off < len; off += psz) {
		buf[off] = 1;
		heap[off] = 1;
	}
	tracker__init(&tr, 0.5);
	tracker__add_target(&tr, getpid(), 1, "self", ORIGIN_PID);
	t = &tr.targets[0];
	/* A region of an address never mapped is dropped by the sweep after the one it came in. */
	{
		const struct region_found stale = { .base = 0x200000, .resident = 3, .resident_bits = 1 };

		assert_non_null(tracker__region_found(&tr, t, &stale));
	}
	assert_ptr_equal(tr.pf, &platform_kernel);	/* the real one */
	assert_int_equal(tracker__scan(&tr, t), 0);
	assert_non_null(tracker__region(t, 0x200000));
	err = tracker__scan(&tr, t);
	assert_int_equal(err, 0);
	assert_true(t->last_scan_epoch > 0);
	/* Regions only: no page record for memory never sampled. */
	assert_int_equal(t->pt.hashed, 0);
	assert_null(tracker__region(t, 0x200000));
	for (size_t off = 0; off < len; off += REGION_SIZE) {
		const struct region *r = tracker__region(t, (uint64_t)(uintptr_t)(buf + off));

		assert_non_null(r);
		assert_int_equal(r->resident, REGION_PAGES);
		assert_int_equal(r->resident_bits, ~0ULL);
		assert_int_equal(r->node_id[0], 0);
		assert_int_equal(r->on_node[0], REGION_PAGES);
		assert_int_equal(t->pt.pages[r->rec].node, 0);
		assert_false(t->pt.pages[r->rec].flags & PAGE_HUGE);
		assert_int_equal(tracker__record_pages(t, &t->pt.pages[r->rec]), REGION_PAGES);
	}
	assert_true(tracker__target_pages(t) >= 2 * len / psz);

	/* Unmapped memory leaves the tracker at the next sweep. */
	assert_int_equal(munmap(mem, len + REGION_SIZE), 0);
	assert_int_equal(tracker__scan(&tr, t), 0);
	assert_null(tracker__region(t, (uint64_t)(uintptr_t)buf));
	assert_null(tracker__region(t, (uint64_t)(uintptr_t)buf + len - psz));
	assert_non_null(tracker__region(t, (uint64_t)(uintptr_t)heap + len / 2));
	free(heap);
	tracker__free(&tr);
}

/* How many of the n pages from buf the kernel puts on a node: the zero page is on none. */
static uint32_t pages_on_nodes(char *buf, uint32_t n)
{
	void *addrs[REGION_PAGES];
	int status[REGION_PAGES];
	uint32_t on = 0;

	assert_true(n <= REGION_PAGES);
	for (uint32_t i = 0; i < n; i++)
		addrs[i] = buf + (size_t)i * PG;
	assert_int_equal(platform_kernel.move_pages(NULL, 0, n, addrs, NULL, status, 0), 0);
	for (uint32_t i = 0; i < n; i++)
		on += status[i] >= 0;
	return on;
}

/*
 * Memory read but never written maps the zero page (a process_vm_readv of
 * the agent's does that too): it is on no node and must not be counted,
 * neither through PAGEMAP_SCAN nor through pagemap (the 6.1 path), where
 * 12,824 of them once counted as DRAM pages.  The sweep counts what
 * move_pages finds on a node: on a kernel that maps no zero page (some
 * hosts' test aid, pvm_no_zero_page=1) a read takes a page of its own.
 */
static void sweep_never_counts_the_zero_page(void **state)
{
	const size_t len = 2 * REGION_SIZE;
	long psz = sysconf(_SC_PAGESIZE);
	uint32_t real[2];
	char *mem, *buf;

	(void)state;
	mem = mmap(NULL, len + REGION_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(mem != MAP_FAILED);
	buf = (char *)(((uintptr_t)mem + REGION_SIZE - 1) & ~(REGION_SIZE - 1));
	assert_int_equal(madvise(buf, len, MADV_NOHUGEPAGE), 0);
	/* The first region: every other page written, the rest read. */
	for (size_t off = 0; off < REGION_SIZE; off += psz) {
		if (off / psz % 2)
			(void)*(volatile char *)(buf + off);
		else
			buf[off] = 1;
	}
	/* The second region: read only. */
	for (size_t off = REGION_SIZE; off < len; off += psz)
		(void)*(volatile char *)(buf + off);
	real[0] = pages_on_nodes(buf, REGION_PAGES);
	real[1] = pages_on_nodes(buf + REGION_SIZE, REGION_PAGES);
	assert_true(real[0] == REGION_PAGES / 2 || real[0] == REGION_PAGES);
	for (int pagemap = 0; pagemap < 2; pagemap++) {
		struct tracker tr;
		struct target *t;
		const struct region *r;

		tracker__init(&tr, 0.5);
		tr.no_pagemap_scan = pagemap;
		tracker__add_target(&tr, getpid(), 1, "self", ORIGIN_PID);
		t = &tr.targets[0];
		assert_int_equal(tracker__scan(&tr, t), 0);
		r = tracker__region(t, (uint64_t)(uintptr_t)buf);
		assert_non_null(r);
		assert_int_equal(r->resident, real[0]);
		assert_int_equal(r->on_node[0] + r->on_node[1], real[0]);
		r = tracker__region(t, (uint64_t)(uintptr_t)buf + REGION_SIZE);
		if (real[1])
			assert_int_equal(r ? r->resident : 0, real[1]);
		else
			assert_null(r);
		tracker__free(&tr);
	}
	munmap(mem, len + REGION_SIZE);
}

static bool never_thp(void *ctx, uint64_t pfn)
{
	(void)ctx;
	(void)pfn;
	return false;
}

/*
 * A huge page is one record of 512 pages on both sweep paths; 512 page frames
 * in a row that the kernel's page flags do not call a huge page (base pages
 * a migration allocated in a row, which once counted 511 pages moved for each
 * one the kernel moved) are a region of base pages.  The fake page flags
 * stand for such a run: the frames here are a real huge page's.
 */
static void sweep_huge_only_where_the_page_flags_say_so(void **state)
{
	struct platform base_pages = platform_kernel;
	char *mem, *buf;

	(void)state;
	base_pages.pfn_thp = never_thp;
	mem = mmap(NULL, 2 * REGION_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(mem != MAP_FAILED);
	buf = (char *)(((uintptr_t)mem + REGION_SIZE - 1) & ~(REGION_SIZE - 1));
	assert_int_equal(madvise(buf, REGION_SIZE, MADV_HUGEPAGE), 0);
	memset(buf, 1, REGION_SIZE);
	for (int run = 0; run < 3; run++) {
		struct tracker tr;
		struct target *t;
		const struct region *r;

		tracker__init(&tr, 0.5);
		tr.no_pagemap_scan = run > 0;
		if (run == 2)
			tr.pf = &base_pages;
		tracker__add_target(&tr, getpid(), 1, "self", ORIGIN_PID);
		t = &tr.targets[0];
		assert_int_equal(tracker__scan(&tr, t), 0);
		r = tracker__region(t, (uint64_t)(uintptr_t)buf);
		assert_non_null(r);
		assert_int_equal(r->resident, REGION_PAGES);
		if (run < 2) {
			/* PAGEMAP_SCAN, then page frames and page flags: the kernel's huge page. */
			if (!(t->pt.pages[r->rec].flags & PAGE_HUGE))
				fail_msg("no huge page at %p (sweep %d): THP enabled=never or memory too fragmented?",
					 (void *)buf, run);
		} else {
			assert_false(t->pt.pages[r->rec].flags & PAGE_HUGE);
			assert_int_equal(tracker__record_pages(t, &t->pt.pages[r->rec]), REGION_PAGES);
		}
		tracker__free(&tr);
	}
	munmap(mem, 2 * REGION_SIZE);
}

/* A page record at addr, placed on node by the mover (its region's detail). */
static void placed_record(struct target *t, uint64_t addr, int node)
{
	bool created;
	int idx = page_table__get(&t->pt, addr, &created);

	assert_true(idx >= 0 && created);
	t->pt.pages[idx].node = (int8_t)node;
	t->pt.pages[idx].since_move = 0;
	tracker__region(t, addr)->detail++;
}

static const struct cxlt_page *record_at(const struct target *t, uint64_t addr)
{
	int64_t idx = page_table__find(&t->pt, addr);

	assert_true(idx >= 0);
	assert_false(t->pt.pages[idx].flags & PAGE_GONE);
	return &t->pt.pages[idx];
}

/*
 * khugepaged collapsing a split region again over pages the mover placed
 * elsewhere is seen within an epoch a split region, though the target's
 * next sweep is far off and the sweeps' time is up: the placed pages' records take the huge page's
 * node and count as never moved by the agent (no settle window holds them
 * back), so that a plan brings them back.  A split region of base pages is
 * looked at and left as it is.  The "elsewhere" is node 1, which this
 * machine lacks; the huge page is real, on both sweep paths.
 */
static void a_split_region_huge_again_is_seen_the_next_epoch(void **state)
{
	char *mem, *huge, *base;

	(void)state;
	mem = mmap(NULL, 3 * REGION_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(mem != MAP_FAILED);
	huge = (char *)(((uintptr_t)mem + REGION_SIZE - 1) & ~(REGION_SIZE - 1));
	base = huge + REGION_SIZE;
	assert_int_equal(madvise(huge, REGION_SIZE, MADV_HUGEPAGE), 0);
	assert_int_equal(madvise(base, REGION_SIZE, MADV_NOHUGEPAGE), 0);
	memset(huge, 1, 2 * REGION_SIZE);
	for (int run = 0; run < 2; run++) {
		uint64_t h = (uint64_t)(uintptr_t)huge, b = (uint64_t)(uintptr_t)base;
		struct tracker tr;
		struct target *t;
		struct region *r;
		int status = -1;
		void *pg = huge;

		tracker__init(&tr, 0.5);
		tr.no_pagemap_scan = run > 0;
		tracker__add_target(&tr, getpid(), 1, "self", ORIGIN_PID);
		t = &tr.targets[0];
		assert_int_equal(tracker__scan(&tr, t), 0);
		r = tracker__region(t, h);
		if (!r || !(t->pt.pages[r->rec].flags & PAGE_HUGE))
			fail_msg("no huge page at %p (sweep %d): THP enabled=never or memory too fragmented?",
				 (void *)huge, run);
		/* The mover split both and placed a page of each on node 1. */
		tracker__huge_split(t, r);
		tracker__huge_split(t, tracker__region(t, b));
		placed_record(t, h + 3 * PG, 1);
		placed_record(t, b + 3 * PG, 1);

		/*
		 * Epochs whose sweep turn is far off, with no time for it: one
		 * split region is looked at an epoch all the same.
		 */
		tr.epoch = t->last_scan_epoch;
		tr.sweep_ms = 0;
		tracker__sweep_all(&tr, 1000);
		tracker__sweep_all(&tr, 1000);
		assert_int_equal(t->last_scan_epoch, tr.epoch);
		assert_int_equal(platform_kernel.move_pages(NULL, 0, 1, &pg, NULL, &status, 0), 0);
		assert_true(status >= 0);
		assert_int_equal(record_at(t, h + 3 * PG)->node, status);
		/* Moved by the kernel, not the agent: no settle window holds it back. */
		assert_int_equal(record_at(t, h + 3 * PG)->since_move, CXLT_NEVER_MOVED);
		assert_true(r->flags & REGION_SPLIT);
		assert_false(t->pt.pages[r->rec].flags & PAGE_HUGE);
		assert_int_equal(record_at(t, b + 3 * PG)->node, 1);
		assert_int_equal(record_at(t, b + 3 * PG)->since_move, 0);
		tracker__free(&tr);
	}
	munmap(mem, 3 * REGION_SIZE);
}

/*
 * A sparse mapping (an AddressSanitizer shadow spans 16 TiB) is crossed in a
 * few steps, not one per chunk: each call with its deadline already past
 * sweeps one chunk, and 4 TiB holds 131,072 of them.
 */
static void sweep_crosses_sparse_memory_quickly(void **state)
{
	const size_t len = (size_t)4 << 40;
	long psz = sysconf(_SC_PAGESIZE);
	struct tracker tr;
	struct target *t;
	int calls = 0, ret;
	char *mem;

	(void)state;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	assert_true(mem != MAP_FAILED);
	mem[0] = 1;
	mem[len - psz] = 1;
	tracker__init(&tr, 0.5);
	tracker__add_target(&tr, getpid(), 1, "self", ORIGIN_PID);
	t = &tr.targets[0];
	do
		ret = tracker__sweep(&tr, t, 1.0);
	while (ret == 0 && ++calls < 1000);
	assert_int_equal(ret, 1);
	assert_non_null(tracker__region(t, (uint64_t)(uintptr_t)mem));
	assert_non_null(tracker__region(t, (uint64_t)(uintptr_t)(mem + len - psz)));
	tracker__free(&tr);
	munmap(mem, len);
}

/*
 * The spans a NUMA scanner pass walks (marks.c's one_chunk): a VMA counts
 * as mapped whole, and as present by the scanner's pieces that hold pages;
 * a sweep cut into many calls tells them when it ends, not before.  Counted
 * against a sweep before the VMAs are made: the process's own (ASan's
 * shadow, in the sanitizer build) hold pages in pieces of their own.
 */
static void sweep_measures_the_spans_a_scanner_pass_walks(void **state)
{
	const size_t len = (size_t)1 << 40;
	long psz = sysconf(_SC_PAGESIZE);
	struct vma_span before;
	struct tracker tr;
	struct target *t;
	int calls = 0, ret;
	char *mem, *none;

	(void)state;
	tracker__init(&tr, 0.5);
	tracker__add_target(&tr, getpid(), 1, "self", ORIGIN_PID);
	t = &tr.targets[0];
	assert_int_equal(tracker__sweep(&tr, t, 0), 1);
	before = t->span;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	assert_true(mem != MAP_FAILED);
	/* read-only: not merged with mem, and never given a page */
	none = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	assert_true(none != MAP_FAILED);
	mem[0] = 1;
	mem[len - psz] = 1;
	assert_int_equal(tracker__sweep(&tr, t, 1.0), 0);	/* cut short */
	assert_memory_equal(&t->span, &before, sizeof(before));
	do
		ret = tracker__sweep(&tr, t, 1.0);
	while (ret == 0 && ++calls < 100000);
	assert_int_equal(ret, 1);
	/* mem's first and last pieces, however few their pages; none of its middle, nor none */
	assert_true(t->span.present - before.present >= 2 * HINT_SCAN_CHUNK_BYTES);
	assert_true(t->span.present - before.present < len / 64);
	assert_true(t->span.mapped - before.mapped >= 2 * len);
	assert_true(tracker__target_pages(t) * (uint64_t)psz < len / 1024);
	tracker__free(&tr);
	munmap(mem, len);
	munmap(none, len);
}

/* A region of 4 KiB pages and one that a huge page backs, as a sweep reports them. */
static struct target *two_regions(struct tracker *tr)
{
	const struct region_found small = { .base = BASE, .resident = REGION_PAGES,
					    .resident_bits = ~0ULL, .node_id = { 1, -1 },
					    .on_node = { REGION_PAGES, 0 } };
	const struct region_found huge = { .base = BASE + REGION_SIZE, .resident = REGION_PAGES,
					   .resident_bits = ~0ULL, .huge = true,
					   .node_id = { 1, -1 }, .on_node = { REGION_PAGES, 0 } };

	tracker__init(tr, 0.5);
	tracker__add_target(tr, 100, 1, "a", ORIGIN_PID);
	assert_non_null(tracker__region_found(tr, &tr->targets[0], &small));
	assert_non_null(tracker__region_found(tr, &tr->targets[0], &huge));
	return &tr->targets[0];
}

static void ingest(struct tracker *tr, uint64_t addr, uint32_t samples)
{
	const struct cxlt_page_key key = { .tgid = 100, .vpage = addr / PG };
	const struct cxlt_page_val val = { .samples = samples };

	tracker__ingest(tr, &key, &val, 1);
}

static void a_region_sampled_all_over_stays_one_record(void **state)
{
	struct tracker tr;
	struct target *t = two_regions(&tr);
	const struct region *r;

	(void)state;
	for (int e = 0; e < 16; e++) {
		for (uint32_t k = 0; k < REGION_PAGES; k += CHUNK_PAGES)
			ingest(&tr, BASE + (k + e % CHUNK_PAGES) * PG, 1);
		tracker__age(&tr);
		tracker__end_epoch(&tr);
	}
	r = tracker__region(t, BASE);
	assert_false(r->flags & REGION_MIXED);
	assert_int_equal(t->pt.hashed, 0);
	assert_int_equal(t->pt.nr, 2);
	assert_true(t->pt.pages[r->rec].heat > 60);	/* 64 samples an epoch */
	assert_int_equal(tracker__pages(&tr), 2 * REGION_PAGES);
	tracker__free(&tr);
}

static void a_mixed_region_gets_detail_for_its_hot_pages(void **state)
{
	struct tracker tr;
	struct target *t = two_regions(&tr);
	const struct region *r;
	struct cxlt_page *p;

	(void)state;
	for (int e = 0; e < 4; e++) {
		ingest(&tr, BASE + 3 * PG, 4);		/* two hot pages, one chunk apart */
		ingest(&tr, BASE + 100 * PG, 2);
		tracker__age(&tr);
		tracker__end_epoch(&tr);
	}
	r = tracker__region(t, BASE);
	assert_true(r->flags & REGION_MIXED);
	assert_int_equal(r->detail, 2);
	assert_int_equal(t->pt.hashed, 2);
	p = page_of(&tr, 100, BASE + 3 * PG);
	assert_non_null(p);
	assert_true(p->heat > 4);
	/* The region's record stands for the rest; the pages total stays. */
	assert_int_equal(tracker__record_pages(t, &t->pt.pages[r->rec]), REGION_PAGES - 2);
	/* The policy's view says so (ABI 2): its pages, mixed; a page record counts one. */
	assert_int_equal(t->pt.pages[r->rec].npages, REGION_PAGES - 2);
	assert_true(t->pt.pages[r->rec].flags & CXLT_PAGE_MIXED);
	assert_int_equal(p->npages, 1);
	assert_int_equal(tracker__pages(&tr), 2 * REGION_PAGES);
	/* A huge page counts as all its pages. */
	r = tracker__region(t, BASE + REGION_SIZE);
	assert_true(t->pt.pages[r->rec].flags & PAGE_HUGE);
	assert_int_equal(tracker__record_pages(t, &t->pt.pages[r->rec]), REGION_PAGES);
	tracker__free(&tr);
}

/*
 * A huge page sampled in a few chunks stays one record: moving any of its
 * pages moves all 512, so a page record there would count one where 512 move.
 * Its heat is the record's, whatever its chunks.  A region that becomes huge
 * (khugepaged) folds the page records it had.
 */
static void a_huge_page_sampled_unevenly_stays_one_record(void **state)
{
	struct tracker tr;
	struct target *t = two_regions(&tr);
	const struct region_found collapsed = { .base = BASE, .resident = REGION_PAGES,
						.resident_bits = ~0ULL, .huge = true,
						.node_id = { 1, -1 }, .on_node = { REGION_PAGES, 0 } };
	const struct region *r;

	(void)state;
	for (int e = 0; e < 4; e++) {
		ingest(&tr, BASE + 3 * PG, 4);
		ingest(&tr, BASE + REGION_SIZE + 3 * PG, 4);
		ingest(&tr, BASE + REGION_SIZE + 100 * PG, 2);
		tracker__age(&tr);
		tracker__end_epoch(&tr);
	}
	r = tracker__region(t, BASE + REGION_SIZE);
	assert_true(r->flags & REGION_MIXED);
	assert_int_equal(r->detail, 0);
	assert_null(page_of(&tr, 100, BASE + REGION_SIZE + 3 * PG));
	assert_true(t->pt.pages[r->rec].flags & CXLT_PAGE_SAMPLED);
	assert_true(t->pt.pages[r->rec].heat > 6);
	assert_int_equal(tracker__record_pages(t, &t->pt.pages[r->rec]), REGION_PAGES);

	r = tracker__region(t, BASE);
	assert_int_equal(r->detail, 1);
	assert_non_null(tracker__region_found(&tr, t, &collapsed));
	assert_int_equal(r->detail, 0);
	assert_true(t->pt.pages[r->rec].heat > 4);
	assert_int_equal(tracker__record_pages(t, &t->pt.pages[r->rec]), REGION_PAGES);
	tracker__free(&tr);
}

/* DAMON's ranges: a whole region at once, a partial one page by page. */
static void a_range_samples_whole_regions_at_once(void **state)
{
	struct tracker tr;
	struct target *t = two_regions(&tr);
	const struct region *r;

	(void)state;
	/* All of the first region and the first 8 pages of the second. */
	tracker__ingest_range(&tr, t, BASE, BASE + REGION_SIZE + 8 * PG, 3);
	r = tracker__region(t, BASE);
	assert_int_equal(r->sampled_bits, ~0ULL);
	assert_int_equal(t->pt.pages[r->rec].samples, 3 * REGION_PAGES);
	assert_true(t->pt.pages[r->rec].flags & CXLT_PAGE_SAMPLED);
	r = tracker__region(t, BASE + REGION_SIZE);
	assert_int_equal(r->sampled_bits, 1);	/* one chunk: 8 pages */
	assert_int_equal(t->pt.pages[r->rec].samples, 3 * 8);	/* a huge page: its record */
	assert_int_equal(t->ctr.samples, 3 * REGION_PAGES + 3 * 8);
	tracker__free(&tr);
}

/*
 * A first-touch source reports a page once: a region that turns mixed hands
 * what its record gathered to the pages of its sampled chunks, which would
 * otherwise lose their only sample.  Here the region had one chunk resident
 * when its page was sampled; a sweep then finds the rest.
 */
static void a_first_touch_region_turning_mixed_keeps_its_samples(void **state)
{
	const struct region_found one_chunk = { .base = BASE, .resident = 8, .resident_bits = 1,
						.node_id = { 1, -1 }, .on_node = { 8, 0 } };
	struct region_found all = one_chunk;
	struct tracker tr;
	struct target *t;
	const struct region *r;
	const struct cxlt_page *p;

	(void)state;
	tracker__init(&tr, 0.5);
	tracker__add_target(&tr, 100, 1, "a", ORIGIN_PID);
	t = &tr.targets[0];
	tr.split_mixed = true;
	assert_non_null(tracker__region_found(&tr, t, &one_chunk));
	ingest(&tr, BASE + 3 * PG, 1);		/* chunk 0, all that is resident */
	tracker__age(&tr);
	tracker__end_epoch(&tr);
	r = tracker__region(t, BASE);
	assert_false(r->flags & REGION_MIXED);
	assert_true(t->pt.pages[r->rec].flags & CXLT_PAGE_SAMPLED);

	all.resident = REGION_PAGES;
	all.resident_bits = ~0ULL;
	all.on_node[0] = REGION_PAGES;
	assert_non_null(tracker__region_found(&tr, t, &all));
	tracker__age(&tr);
	tracker__end_epoch(&tr);
	assert_true(r->flags & REGION_MIXED);
	assert_int_equal(r->detail, CHUNK_PAGES);
	p = page_of(&tr, 100, BASE + 3 * PG);
	assert_non_null(p);
	assert_true(p->flags & CXLT_PAGE_SAMPLED);
	assert_true(p->heat > 0);
	assert_false(t->pt.pages[r->rec].flags & CXLT_PAGE_SAMPLED);
	tracker__free(&tr);
}

/*
 * One scanner pass of hint faults: a page each, spread over a region (hot
 * keys among cold ones).  They arrive in one drain, and that drain shows the
 * region mixed: each page gets its own record with its sample at once, in
 * the epoch of the pass, not the next (when the review would have emptied
 * the region's record of them).  A region sampled all over in the same drain
 * stays one record.
 */
static void one_drain_of_spread_samples_gets_page_records_at_once(void **state)
{
	struct cxlt_page_key keys[25 + 64];
	struct cxlt_page_val vals[25 + 64];
	struct tracker tr;
	struct target *t = two_regions(&tr);
	const struct region *r;
	uint32_t n = 0;

	(void)state;
	memset(vals, 0, sizeof(vals));
	for (uint32_t k = 0; k < 25; k++, n++) {
		keys[n] = (struct cxlt_page_key){ .tgid = 100, .vpage = (BASE + (k * 20 + 1) * PG) / PG };
		vals[n].samples = 1;
	}
	/* The huge page's region: each of its chunks once; and it is one record anyway. */
	for (uint32_t k = 0; k < 64; k++, n++) {
		keys[n] = (struct cxlt_page_key){ .tgid = 100,
						  .vpage = (BASE + REGION_SIZE + k * CHUNK_PAGES * PG) / PG };
		vals[n].samples = 1;
	}
	tracker__ingest(&tr, keys, vals, n);
	r = tracker__region(t, BASE);
	assert_true(r->flags & REGION_MIXED);
	assert_int_equal(r->detail, 25);
	for (uint32_t k = 0; k < 25; k++) {
		const struct cxlt_page *p = page_of(&tr, 100, BASE + (k * 20 + 1) * PG);

		assert_non_null(p);
		assert_int_equal(p->samples, 1);
		assert_true(p->flags & CXLT_PAGE_SAMPLED);
	}
	assert_false(t->pt.pages[r->rec].flags & CXLT_PAGE_SAMPLED);
	r = tracker__region(t, BASE + REGION_SIZE);
	assert_false(r->flags & REGION_MIXED);
	assert_int_equal(r->detail, 0);
	assert_int_equal(t->pt.pages[r->rec].samples, 64);
	tracker__free(&tr);
}

static void over_budget_the_coldest_detail_folds_into_its_region(void **state)
{
	struct tracker tr;
	struct target *t;
	const struct region *r;
	float total = 0;

	(void)state;
	t = two_regions(&tr);
	/* Room for the two regions and about 40 page records, allocations counted. */
	tr.budget_bytes = page_table__bytes(&t->pt) + 64 * 4 + 40 * (sizeof(struct cxlt_page) + sizeof(uint32_t)) +
			  (uint64_t)t->rt.cap * sizeof(struct region) + (t->rt.slot_mask + 1) * 4;
	for (int e = 0; e < 8; e++) {	/* folds come at a window's end */
		/* 100 sampled pages in the first half: page k gets k+1 samples, hottest first. */
		for (uint32_t k = 100; k-- > 0;)
			ingest(&tr, BASE + k * PG, k + 1);
		tracker__age(&tr);
		tracker__end_epoch(&tr);
	}
	r = tracker__region(t, BASE);
	assert_true(tr.folded > 0);
	assert_true(tr.bytes_used <= tr.budget_bytes);
	assert_true(r->detail <= 48 && r->detail >= 20);
	assert_int_equal(r->detail, t->pt.hashed);
	/* What stayed is the hottest: page 99 yes, page 0 no. */
	assert_non_null(page_of(&tr, 100, BASE + 99 * PG));
	assert_null(page_of(&tr, 100, BASE));
	/* Folded heat is kept, in the region's record. */
	for (uint32_t i = 0; i < t->pt.nr; i++)
		if (!(t->pt.pages[i].flags & PAGE_HUGE))
			total += t->pt.pages[i].heat;
	assert_true(total > 0.9f * 5050 * 1.5f);	/* 1 + 0.5 (+ 0.25 ...) */
	assert_int_equal(tracker__pages(&tr), 2 * REGION_PAGES);
	tracker__free(&tr);
}

static void scan_of_exited_process_is_esrch(void **state)
{
	struct tracker tr;

	(void)state;
	tracker__init(&tr, 0.5);
	/* pid_max is at most 4194304: this pid cannot exist. */
	tracker__add_target(&tr, 4194305, 1, "ghost", ORIGIN_PID);
	assert_int_equal(tracker__scan(&tr, &tr.targets[0]), -ESRCH);
	tracker__free(&tr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(page_table_200k_inserts_all_found),
		cmocka_unit_test(page_record_is_compact),
		cmocka_unit_test(targets_add_find_remove),
		cmocka_unit_test(ingest_two_targets_and_unknown_tgid),
		cmocka_unit_test(ingest_samples_saturate_at_65535),
		cmocka_unit_test(age_decays_heat_and_counts_idle_epochs),
		cmocka_unit_test(age_saturates_idle_and_since_move),
		cmocka_unit_test(end_epoch_clears_samples_and_hinted),
		cmocka_unit_test(query_nodes_fills_nodes_marks_gone_keeps_unknown),
		cmocka_unit_test(query_nodes_reports_process_gone),
		cmocka_unit_test(sweep_self_finds_every_touched_region_on_node0),
		cmocka_unit_test(sweep_never_counts_the_zero_page),
		cmocka_unit_test(sweep_huge_only_where_the_page_flags_say_so),
		cmocka_unit_test(a_split_region_huge_again_is_seen_the_next_epoch),
		cmocka_unit_test(sweep_crosses_sparse_memory_quickly),
		cmocka_unit_test(sweep_measures_the_spans_a_scanner_pass_walks),
		cmocka_unit_test(a_region_sampled_all_over_stays_one_record),
		cmocka_unit_test(a_mixed_region_gets_detail_for_its_hot_pages),
		cmocka_unit_test(a_huge_page_sampled_unevenly_stays_one_record),
		cmocka_unit_test(a_range_samples_whole_regions_at_once),
		cmocka_unit_test(a_first_touch_region_turning_mixed_keeps_its_samples),
		cmocka_unit_test(one_drain_of_spread_samples_gets_page_records_at_once),
		cmocka_unit_test(over_budget_the_coldest_detail_folds_into_its_region),
		cmocka_unit_test(scan_of_exited_process_is_esrch),
	};

	log_verbosity = LOG_WARN;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
