// SPDX-License-Identifier: MIT
/*
 * The tracker's sweeps: a target's resident private memory found region by
 * region, a bounded slice an epoch (PAGEMAP_SCAN, or pagemap where the kernel
 * lacks it), and the node queries of new records.  The tables they fill are
 * tracker.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pagemap.h"
#include "platform.h"
#include "tracker.h"
#include "tracker_int.h"
#include "util.h"

int tracker__query_nodes(struct tracker *tr, struct target *t, uint32_t from)
{
	enum { BATCH = 4096 };
	void *addrs[BATCH];
	int status[BATCH];
	uint32_t idx[BATCH];
	struct page_table *pt = &t->pt;
	uint32_t i = from;

	while (i < pt->nr) {
		uint32_t n = 0;

		for (; i < pt->nr && n < BATCH; i++) {
			const struct cxlt_page *p = &pt->pages[i];
			const struct region *r;

			if ((p->flags & PAGE_GONE) || p->node >= 0)
				continue;
			addrs[n] = (void *)(uintptr_t)p->addr;
			/* A region is where its known resident page is. */
			if ((p->flags & PAGE_REGION) && (r = region_table__find(&t->rt, p->addr)))
				addrs[n] = (void *)(uintptr_t)(p->addr + ((uint64_t)r->probe << CXLT_PAGE_SHIFT));
			idx[n++] = i;
		}
		if (!n)
			break;
		if (tr->pf->move_pages(tr->pf->ctx, t->pid, n, addrs, NULL, status, 0) < 0)
			return errno == ESRCH || (errno == EINVAL && proc_vanished(t->pid)) ?
			       -ESRCH : -errno;
		for (uint32_t k = 0; k < n; k++) {
			struct cxlt_page *p = &pt->pages[idx[k]];

			if (status[k] >= 0)
				p->node = (int8_t)status[k];
			else if (status[k] == -EFAULT && !(p->flags & PAGE_REGION))
				p->flags |= PAGE_GONE;	/* no mapping there any more; a sweep judges regions */
			else
				/*
				 * -ENOENT: not present, or (before Linux 6.5) made
				 * PROT_NONE by the NUMA scanner a moment ago.  The
				 * page scan, which sees the latter as present, decides.
				 */
				p->node = CXLT_NODE_UNKNOWN;
		}
	}
	t->nodes_known = pt->nr;
	return 0;
}


/*
 * The zero page (and the huge zero page) is present in pagemap wherever a
 * process read memory it never wrote (a process_vm_readv of ours does that
 * too): never a page of any node.  PAGEMAP_SCAN says so itself
 * (PAGE_IS_PFNZERO); reading pagemap, its page frames are found once by
 * reading our own never-written memory.
 */
struct zero_pfns {
	bool probed;
	uint64_t pfn;			/* the zero page; 0: unknown */
	uint64_t huge_pfn;		/* the huge zero page's first; 0: unknown */
};

static uint64_t self_pfn(const void *addr)
{
	uint64_t ent = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (pread(fd, &ent, sizeof(ent), (uintptr_t)addr / 4096 * sizeof(ent)) != sizeof(ent))
		ent = 0;
	close(fd);
	return ent & PM_PRESENT ? ent & PM_PFN_MASK : 0;
}

static const struct zero_pfns *zero_pfns(void)
{
	static struct zero_pfns z;
	volatile const char *p;
	char *m;

	if (z.probed)
		return &z;
	z.probed = true;
	m = mmap(NULL, 2 * REGION_SIZE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return &z;
	p = (const char *)(((uintptr_t)m + REGION_SIZE - 1) & ~(REGION_SIZE - 1));
	madvise((void *)p, REGION_SIZE - 4096, MADV_HUGEPAGE);
	madvise((void *)(p + REGION_SIZE - 4096), 4096, MADV_NOHUGEPAGE);
	(void)p[0];			/* the huge zero page, where THP uses it */
	(void)p[REGION_SIZE - 4096];	/* the zero page: its VMA cannot be huge */
	z.pfn = self_pfn((const void *)(p + REGION_SIZE - 4096));
	z.huge_pfn = self_pfn((const void *)p);
	if (z.huge_pfn == z.pfn || (z.huge_pfn & (REGION_PAGES - 1)))
		z.huge_pfn = 0;		/* a small zero page there: no huge one */
	munmap(m, 2 * REGION_SIZE);
	return &z;
}

static bool is_zero_pfn(const struct zero_pfns *z, uint64_t pfn)
{
	return (z->pfn && pfn == z->pfn) ||
	       (z->huge_pfn && pfn >= z->huge_pfn && pfn < z->huge_pfn + REGION_PAGES);
}

/* Private memory that a process owns and that move_pages can move. */
static bool vma_eligible(const char *perms, unsigned long inode, const char *name)
{
	if (perms[3] != 'p')
		return false;
	if (name[0] == '[')
		return !strncmp(name, "[heap]", 6) || !strncmp(name, "[stack", 6) ||
		       !strncmp(name, "[anon", 5);
	return inode == 0 || perms[1] == 'w';
}

/* What a sweep reads at a time: 32 MiB, 16 regions. */
#define SWEEP_CHUNK (16 * REGION_SIZE)
#define CHUNK_PGS (SWEEP_CHUNK >> CXLT_PAGE_SHIFT)
/* Pages whose node is asked per region where page frames do not tell (PAGEMAP_SCAN). */
#define NODE_PROBES 16

/* One chunk of a target's address space, as the sweep read it. */
struct sweep_chunk {
	uint64_t start;				/* SWEEP_CHUNK aligned */
	uint64_t present[CHUNK_PGS / 64];	/* bit per page */
	uint16_t huge;				/* bit per region: a huge page maps it */
	int8_t node[CHUNK_PGS];			/* from page frames; unknown without them */
};

/* Marks [a, b) present in c. */
static void chunk_set(struct sweep_chunk *c, uint64_t a, uint64_t b)
{
	for (uint64_t i = (a - c->start) >> CXLT_PAGE_SHIFT; i < (b - c->start) >> CXLT_PAGE_SHIFT; i++)
		c->present[i / 64] |= 1ULL << (i % 64);
}

/* Returns the present runs found in [start, end), or -errno. */
static int read_pagemap_scan(int fd, struct sweep_chunk *c, uint64_t start, uint64_t end)
{
	int found = 0;

	/* Zeroed: tools like valgrind do not know what PAGEMAP_SCAN writes. */
	struct pm_scan_region regions[512] = { 0 };
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.start = start,
		.end = end,
		.vec = (uintptr_t)regions,
		.vec_len = ARRAY_SIZE(regions),
		.category_inverted = PAGE_IS_PFNZERO,
		.category_mask = PAGE_IS_PRESENT | PAGE_IS_PFNZERO,
		.return_mask = PAGE_IS_PRESENT | PAGE_IS_HUGE,
	};

	while (arg.start < end) {
		long n = ioctl(fd, CXLT_PAGEMAP_SCAN, &arg);

		if (n < 0)
			return -errno;
		found += (int)n;
		for (long r = 0; r < n; r++) {
			chunk_set(c, regions[r].start, regions[r].end);
			if (!(regions[r].categories & PAGE_IS_HUGE))
				continue;
			/* A whole region under one huge mapping. */
			for (uint64_t b = (regions[r].start + REGION_SIZE - 1) & ~(REGION_SIZE - 1);
			     b + REGION_SIZE <= regions[r].end; b += REGION_SIZE)
				c->huge |= 1U << ((b - c->start) >> REGION_SHIFT);
		}
		if (arg.walk_end <= arg.start)
			break;
		arg.start = arg.walk_end;
	}
	return found;
}

/*
 * The first present page in [start, end), or end: one call over a sparse
 * mapping (an AddressSanitizer shadow spans terabytes) instead of one per
 * chunk, which would never end a sweep.
 */
static int next_present(int fd, uint64_t start, uint64_t end, uint64_t *next)
{
	struct pm_scan_region region = { 0 };
	struct pm_scan_arg arg = {
		.size = sizeof(arg), .start = start, .end = end,
		.vec = (uintptr_t)&region, .vec_len = 1, .max_pages = 1,
		.category_inverted = PAGE_IS_PFNZERO,
		.category_mask = PAGE_IS_PRESENT | PAGE_IS_PFNZERO,
		.return_mask = PAGE_IS_PRESENT,
	};
	long n = ioctl(fd, CXLT_PAGEMAP_SCAN, &arg);

	if (n < 0)
		return -errno;
	*next = n > 0 ? region.start : end;
	return 0;
}

static int read_pagemap(int fd, struct tracker *tr, struct sweep_chunk *c, uint64_t start, uint64_t end)
{
	const struct zero_pfns *z = zero_pfns();
	uint64_t ents[CHUNK_PGS];
	uint64_t n = (end - start) >> CXLT_PAGE_SHIFT, first = (start - c->start) >> CXLT_PAGE_SHIFT;
	ssize_t got = pread(fd, ents, n * sizeof(ents[0]), (start >> CXLT_PAGE_SHIFT) * sizeof(ents[0]));

	if (got < 0)
		return -errno;
	n = (uint64_t)got / sizeof(ents[0]);
	for (uint64_t k = 0; k < n; k++) {
		uint64_t i = first + k, pfn = ents[k] & PM_PFN_MASK;

		if (!(ents[k] & PM_PRESENT))
			continue;
		/*
		 * Never the zero page.  Without CAP_SYS_ADMIN the page frames
		 * read 0: then a page neither exclusive nor a file's is taken
		 * for it (a page shared after fork, which move_pages would
		 * refuse anyway, goes with it).
		 */
		if (pfn ? is_zero_pfn(z, pfn) : !(ents[k] & (PM_MMAP_EXCLUSIVE | PM_FILE)))
			continue;
		c->present[i / 64] |= 1ULL << (i % 64);
		c->node[i] = pfn && tr->pfn.nr_blocks ? (int8_t)pfn_nodes__node(&tr->pfn, pfn) :
			     CXLT_NODE_UNKNOWN;
		/*
		 * A huge page: 512 page frames in a row from an aligned one that
		 * the kernel's page flags call a huge page's head.  The run
		 * alone is not enough: a 6.1 guest's integrity run once took
		 * two regions of base pages, migrated in a row, for huge pages,
		 * and counted 511 pages moved for each one that was.
		 */
		if (i % REGION_PAGES == 0 && pfn && !(pfn & (REGION_PAGES - 1)) &&
		    k + REGION_PAGES <= n) {
			uint64_t j = 1;

			while (j < REGION_PAGES && (ents[k + j] & PM_PRESENT) &&
			       (ents[k + j] & PM_PFN_MASK) == pfn + j)
				j++;
			if (j == REGION_PAGES && tr->pf->pfn_thp && tr->pf->pfn_thp(tr->pf->ctx, pfn))
				c->huge |= 1U << (i / REGION_PAGES);
		}
	}
	return 0;
}

/* Adds one node's count to a region's two. */
static void found_node(struct region_found *f, int node, uint16_t n)
{
	for (int k = 0; k < 2; k++) {
		if (f->node_id[k] == node || !f->on_node[k]) {
			f->node_id[k] = (int8_t)node;
			f->on_node[k] += n;
			return;
		}
	}
}

/* Whether a page record of r is on another node than r's record (a huge page found now). */
static bool records_elsewhere(const struct target *t, const struct region *r)
{
	int node = t->pt.pages[r->rec].node;
	int64_t idx;

	for (uint32_t k = 0; node >= 0 && (idx = region_record(t, r, &k)) >= 0; k++)
		if (t->pt.pages[idx].node >= 0 && t->pt.pages[idx].node != node)
			return true;
	return false;
}

struct region *tracker__region_found(struct tracker *tr, struct target *t,
				     const struct region_found *f)
{
	struct region *r;
	bool created;
	int k = f->on_node[1] > f->on_node[0];
	uint64_t before = target_bytes(t);

	if (!(r = region_get(t, f->base, &created)))
		return NULL;
	if (created)
		t->scanned_new++;
	tr->bytes_used += target_bytes(t) - before;
	r->sweep = t->sweep_gen;
	r->resident = f->resident;
	r->resident_bits = f->resident_bits;
	r->probe = f->probe;
	/* The node most of its pages are on first: the record's node. */
	r->node_id[0] = f->node_id[k];
	r->on_node[0] = f->on_node[k];
	r->node_id[1] = f->node_id[!k];
	r->on_node[1] = f->on_node[!k];
	r->flags |= REGION_SWEPT;
	t->pt.pages[r->rec].node = r->on_node[0] ? r->node_id[0] : CXLT_NODE_UNKNOWN;
	if (f->huge && r->detail && ((r->flags & REGION_SPLIT) || records_elsewhere(t, r))) {
		/*
		 * khugepaged made a huge page of a region whose pages the mover
		 * placed one by one (split, or never huge), on the node most of
		 * them were on: the hot pages' records stay (their nodes follow
		 * below), so the policy can bring them back at once, and the
		 * mover splits it first (huge_again).  A fold would wait for a
		 * scanner pass to sample them one by one.
		 */
		if (!(r->flags & REGION_SPLIT)) {
			r->flags |= REGION_SPLIT;
			t->split_regions++;
		}
	} else if (f->huge) {
		/* Page records from before a collapse: the huge page is one unit now. */
		if (r->detail)
			fold_region(tr, t, r);
		t->pt.pages[r->rec].flags |= PAGE_HUGE;
	} else {
		t->pt.pages[r->rec].flags &= ~PAGE_HUGE;
		if (r->flags & REGION_SPLIT)
			r->flags |= REGION_SPLIT_SEEN;
	}
	return r;
}

/*
 * Region ri of a chunk as the sweep read it: counts, nodes (from page
 * frames, else from up to NODE_PROBES pages asked), and the page records of
 * pages no longer there.  0 or -errno.
 */
static int sweep_region(struct tracker *tr, struct target *t, const struct sweep_chunk *c, uint32_t ri)
{
	struct region_found f = { .base = c->start + ri * REGION_SIZE,
				  .node_id = { CXLT_NODE_UNKNOWN, CXLT_NODE_UNKNOWN } };
	void *addrs[NODE_PROBES];
	int status[NODE_PROBES];
	uint32_t nprobe = 0, first = ri * REGION_PAGES;
	bool need_query = false;
	struct region *r;
	int64_t idx;

	for (uint32_t k = 0; k < REGION_PAGES; k++) {
		uint32_t i = first + k;

		if (!(c->present[i / 64] >> (i % 64) & 1))
			continue;
		if (!f.resident)
			f.probe = (uint16_t)k;
		f.resident++;
		f.resident_bits |= 1ULL << (k / CHUNK_PAGES);
		if (c->node[i] >= 0)
			found_node(&f, c->node[i], 1);
		else
			need_query = true;
	}
	if (!f.resident) {
		/* Nothing resident: a region known there is gone, its detail with it. */
		if ((r = region_table__find(&t->rt, f.base)))
			r->sweep = t->sweep_gen - 1;
		return 0;
	}
	f.huge = c->huge >> ri & 1;
	if (need_query) {
		/* Evenly spaced resident pages; one for a huge page. */
		uint32_t want = f.huge ? 1 : f.resident < NODE_PROBES ? f.resident : NODE_PROBES;
		uint32_t step = f.resident / want, seen = 0;

		for (uint32_t k = 0; k < REGION_PAGES && nprobe < want; k++) {
			uint32_t i = first + k;

			if (!(c->present[i / 64] >> (i % 64) & 1))
				continue;
			if (seen++ % step == 0)
				addrs[nprobe++] = (void *)(uintptr_t)(f.base + ((uint64_t)k << CXLT_PAGE_SHIFT));
		}
		if (tr->pf->move_pages(tr->pf->ctx, t->pid, nprobe, addrs, NULL, status, 0) < 0)
			return errno == ESRCH || (errno == EINVAL && proc_vanished(t->pid)) ?
			       -ESRCH : -errno;
		for (uint32_t k = 0; k < nprobe; k++)
			if (status[k] >= 0)
				found_node(&f, status[k], 1);
		/* Scaled from the pages asked to all. */
		for (int k = 0; k < 2; k++)
			f.on_node[k] = (uint16_t)((uint32_t)f.on_node[k] * f.resident / nprobe);
	}
	if (!(r = tracker__region_found(tr, t, &f)))
		return -ENOMEM;
	/* Page records: gone where nothing is resident now, nodes from page frames. */
	for (uint32_t k = 0; (idx = region_record(t, r, &k)) >= 0; k++) {
		uint32_t i = first + k;
		struct cxlt_page *p = &t->pt.pages[idx];
		int node;

		if (!(c->present[i / 64] >> (i % 64) & 1)) {
			p->flags |= PAGE_GONE;
			continue;
		}
		/* A huge page is all on one node: the region record's. */
		node = c->node[i] >= 0 ? c->node[i] : f.huge ? t->pt.pages[r->rec].node : CXLT_NODE_UNKNOWN;
		if (node < 0)
			continue;
		/*
		 * khugepaged took it into a huge page elsewhere: the agent's
		 * last move is undone, and bringing it back is no ping-pong of
		 * the agent's (tierbench-thp waited out a 10-epoch settle
		 * window for hot pages khugepaged had taken back to CXL).
		 * Only there: a record can be stale after the agent's own moves
		 * too (a huge page demoted whole).
		 */
		if (f.huge && (r->flags & REGION_SPLIT) && p->node >= 0 && p->node != node)
			p->since_move = CXLT_NEVER_MOVED;
		p->node = (int8_t)node;
	}
	return 0;
}

/* The regions of one chunk. */
static int sweep_chunk_regions(struct tracker *tr, struct target *t, struct sweep_chunk *c)
{
	int err = 0;

	for (uint32_t ri = 0; !err && ri < SWEEP_CHUNK / REGION_SIZE; ri++)
		err = sweep_region(tr, t, c, ri);
	return err;
}

/*
 * Reads [a, b) of one chunk into c: PAGEMAP_SCAN where the kernel has it
 * (probed on first use), pagemap else.  The present runs found, 1 where
 * pagemap cannot say there were none, or -errno.
 */
static int read_range(struct tracker *tr, int fd, struct sweep_chunk *c, uint64_t a, uint64_t b)
{
	static int have_pagemap_scan = -1;
	int found;

	if (have_pagemap_scan != 0 && !tr->no_pagemap_scan) {
		found = read_pagemap_scan(fd, c, a, b);
		if (have_pagemap_scan < 0 && (found == -ENOTTY || found == -EINVAL)) {
			pr_info("this kernel has no PAGEMAP_SCAN: reading pagemap instead (slower; page frames give the nodes)");
			have_pagemap_scan = 0;
		} else {
			if (have_pagemap_scan < 0 && found >= 0)
				have_pagemap_scan = 1;
			return found;
		}
	}
	found = read_pagemap(fd, tr, c, a, b);
	return found < 0 ? found : 1;
}

/* The sweep is over: regions it did not find are gone, with their page records. */
static int sweep_end(struct tracker *tr, struct target *t)
{
	bool gone = false;
	int64_t idx;

	for (uint32_t i = 0; i < t->rt.nr; i++) {
		struct region *r = &t->rt.rg[i];

		if (r->sweep == t->sweep_gen)
			continue;
		gone = true;
		t->pt.pages[r->rec].flags |= PAGE_GONE;
		for (uint32_t k = 0; (idx = region_record(t, r, &k)) >= 0; k++)
			t->pt.pages[idx].flags |= PAGE_GONE;
	}
	for (uint32_t i = 0; i < t->pt.nr && !gone; i++)
		gone = t->pt.pages[i].flags & PAGE_GONE;
	t->sweep_gen++;
	t->sweep_cursor = 0;
	t->span = t->span_acc;
	t->last_scan_epoch = tr->epoch ? tr->epoch : 1;
	if (gone) {
		int err = target__compact(t);

		tr->bytes_used = tracker__bytes_used(tr);
		return err;
	}
	return 0;
}

/*
 * The NUMA scanner walks a VMA in pieces of HINT_SCAN_CHUNK_BYTES from its
 * start, and counts a piece whole against a call's budget if it marked a
 * page in it (task_numa_work): the piece of address a, in the VMA
 * [vstart, vend), has a page.
 */
static void count_piece(struct target *t, uint64_t vstart, uint64_t vend, uint64_t a)
{
	uint64_t p0 = vstart + (a - vstart) / HINT_SCAN_CHUNK_BYTES * HINT_SCAN_CHUNK_BYTES;
	uint64_t p1 = p0 + HINT_SCAN_CHUNK_BYTES < vend ? p0 + HINT_SCAN_CHUNK_BYTES : vend;

	if (p1 <= t->span_counted)
		return;
	t->span_acc.present += p1 - (p0 > t->span_counted ? p0 : t->span_counted);
	t->span_counted = p1;
}

int tracker__sweep(struct tracker *tr, struct target *t, double deadline)
{
	struct sweep_chunk *c = NULL;
	char path[64], line[512];
	bool ended = true;
	FILE *maps;
	int fd, err = 0;

	if (tr->detail_all)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/maps", t->pid);
	maps = fopen(path, "re");
	if (!maps)
		return errno == ENOENT ? -ESRCH : -errno;
	fd = pagemap_open(t->pid);
	if (fd < 0 || !(c = malloc(sizeof(*c)))) {
		err = fd < 0 ? fd : -ENOMEM;
		goto out;
	}
	if (!t->sweep_cursor) {
		t->scanned_new = 0;
		t->span_acc = (struct vma_span){ 0 };
		t->span_counted = 0;
	}
	c->start = UINT64_MAX;
	while (!err && fgets(line, sizeof(line), maps)) {
		unsigned long long start, end, inode;
		char perms[8], name[256] = "";
		uint64_t a, vstart;

		if (sscanf(line, "%llx-%llx %7s %*s %*s %llu %255s", &start, &end,
			   perms, &inode, name) < 4)
			continue;
		if (!vma_eligible(perms, inode, name) || end <= t->sweep_cursor)
			continue;
		vstart = start;
		if (start < t->sweep_cursor)
			start = t->sweep_cursor;
		for (a = start; !err && a < end;) {
			int found;
			uint64_t cstart = a & ~(SWEEP_CHUNK - 1), b = cstart + SWEEP_CHUNK;

			if (b > end)
				b = end;
			if (c->start != cstart) {
				/* A new chunk: the last one's regions are complete. */
				if (c->start != UINT64_MAX) {
					if ((err = sweep_chunk_regions(tr, t, c)))
						break;
					/* Up to the new chunk: what lies between is empty. */
					t->sweep_cursor = cstart;
					if (deadline && now_sec() > deadline) {
						ended = false;
						break;
					}
				}
				memset(c, 0, sizeof(*c));
				memset(c->node, CXLT_NODE_UNKNOWN, sizeof(c->node));
				c->start = cstart;
			}
			found = read_range(tr, fd, c, a, b);
			err = found < 0 ? found : 0;
			if (found > 0)
				count_piece(t, vstart, end, a);
			/* Nothing here: on to the chunk of the next present page. */
			if (!found && b < end) {
				uint64_t nx = end;

				if (!(err = next_present(fd, b, end, &nx)) &&
				    (nx & ~(SWEEP_CHUNK - 1)) > b)
					b = nx >= end ? end : nx & ~(SWEEP_CHUNK - 1);
			}
			a = b;
		}
		/* a sweep cut short reads the rest of the VMA later */
		t->span_acc.mapped += (a < end ? a : end) - start;
		if (!ended)
			break;
	}
	if (!err && ended && c->start != UINT64_MAX)
		err = sweep_chunk_regions(tr, t, c);
	if (!err && ended)
		err = sweep_end(tr, t);
out:
	free(c);
	if (fd >= 0)
		close(fd);
	fclose(maps);
	if (err == -ENOENT || err == -ESRCH)
		return -ESRCH;
	return err ? err : ended;
}

int tracker__scan(struct tracker *tr, struct target *t)
{
	int err;

	t->sweep_cursor = 0;
	err = tracker__sweep(tr, t, 0);
	if (err < 0)
		return err;
	return tracker__query_nodes(tr, t, t->nodes_known);
}

/*
 * khugepaged collapses a split range again once a page of it is young, into
 * a huge page on the node most of its pages are on: the slow one, taking the
 * hot pages the mover placed back with it.  Their records still say fast, so
 * no plan would bring them back before the target's next sweep (every
 * scan_epochs, longer while a sweep is under way: a tierbench-thp run in
 * make compare left half its hot set on CXL for 11 s).  So each epoch the
 * split regions with page records are looked at again, from where the last
 * look stopped until the deadline; one found huge is swept at once, and its
 * records take the huge page's node (sweep_region).  One region at least,
 * whatever the clock.  Returns 1 when the deadline stopped it, 0 when it got
 * round, or -errno.
 */
static int recheck_split(struct tracker *tr, struct target *t, struct sweep_chunk *c, double deadline)
{
	uint32_t n = t->rt.nr, start = t->recheck_next < n ? t->recheck_next : 0, k;
	int fd = pagemap_open(t->pid), err = 0;
	bool late = false, looked = false;

	if (fd < 0)
		return fd;
	for (k = 0; !err && k < n; k++) {
		struct region *r = &t->rt.rg[(start + k) % n];
		uint32_t ri, first, sweep = r->sweep;

		/* The clock before each read but the first, and every 4 Ki regions of a long walk. */
		if ((looked && (r->flags & REGION_SPLIT) && r->detail) || (k & 4095) == 4095)
			if ((late = now_sec() >= deadline))
				break;
		if (!(r->flags & REGION_SPLIT) || !r->detail)
			continue;
		looked = true;
		c->start = r->base & ~(SWEEP_CHUNK - 1);
		ri = (uint32_t)((r->base - c->start) >> REGION_SHIFT);
		first = ri * REGION_PAGES;
		c->huge = 0;
		memset(&c->present[first / 64], 0, REGION_PAGES / 8);
		memset(&c->node[first], CXLT_NODE_UNKNOWN, REGION_PAGES);
		err = read_range(tr, fd, c, r->base, r->base + REGION_SIZE);
		if (err >= 0)
			err = c->huge >> ri & 1 ? sweep_region(tr, t, c, ri) : 0;
		/* Found by the sweep under way is the sweep's to say: a region unmapped since is gone. */
		r->sweep = sweep;
	}
	t->recheck_next = (start + k) % (n ? n : 1);
	close(fd);
	if (err < 0)
		return err == -ENOENT ? -ESRCH : err;
	return late;
}

void tracker__sweep_all(struct tracker *tr, uint32_t min_epochs)
{
	double now = now_sec(), deadline = now + tr->sweep_ms / 1000;
	uint32_t n = tr->nr_targets;
	struct sweep_chunk *c = NULL;
	int err;

	/*
	 * Half the sweep's time at most for the split regions, beginning with
	 * the target the clock stopped last time, so that one with many does
	 * not keep the others waiting.
	 */
	for (uint32_t k = 0; k < n && !tr->detail_all; k++) {
		uint32_t i = (tr->recheck_first + k) % n;
		struct target *t = &tr->targets[i];

		if (t->gone || !t->split_regions)
			continue;
		if (!c && !(c = malloc(sizeof(*c))))
			break;
		err = recheck_split(tr, t, c, now + tr->sweep_ms / 2000);
		if (err == -ESRCH)
			t->gone = true;
		else if (err < 0)
			pr_warn("pid %d: looking at its split huge pages failed: %s", t->pid, strerror(-err));
		if (err == 1) {
			tr->recheck_first = i;
			break;
		}
	}
	free(c);

	for (uint32_t i = 0; i < n && tr->first_sweep_whole; i++) {
		struct target *t = &tr->targets[i];

		if (t->gone || t->sweep_gen)
			continue;
		err = tracker__sweep(tr, t, 0);
		if (err == -ESRCH)
			t->gone = true;
		else if (err < 0)
			pr_warn("pid %d: sweeping its memory failed: %s", t->pid, strerror(-err));
	}
	for (uint32_t k = 0; k < n && now_sec() < deadline; k++) {
		uint32_t i = (tr->sweep_next + k) % n;
		struct target *t = &tr->targets[i];

		if (t->gone || (!t->sweep_cursor && t->last_scan_epoch &&
				tr->epoch + 1 - t->last_scan_epoch < min_epochs))
			continue;
		err = tracker__sweep(tr, t, deadline);
		if (err == -ESRCH)
			t->gone = true;
		else if (err < 0)
			pr_warn("pid %d: sweeping its memory failed: %s", t->pid, strerror(-err));
		/* The next epoch begins with the target after the one the clock stopped. */
		tr->sweep_next = err == 0 ? i : (i + 1) % n;
	}
}
