// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "platform.h"
#include "tracker.h"
#include "util.h"

/*
 * PAGEMAP_SCAN (Linux 6.7+).  Defined here because the distribution's uapi
 * headers may predate it; the ioctl fails with ENOTTY on older kernels and
 * we fall back to reading pagemap.
 */
struct pm_scan_region {
	uint64_t start, end, categories;
};

struct pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};

#define CXLT_PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_PFNZERO (1 << 5)
#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)

/* Small: the replay may hold 100k targets of a page or two each. */
#define MIN_SLOTS 16
/* Scratch flag: the page was found resident by the scan in progress. */
#define PAGE_SEEN 0x40

static inline uint32_t slot_hash(uint64_t addr, uint32_t mask)
{
	return (uint32_t)(((addr >> 12) * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
}

static int page_table__rehash(struct page_table *pt, uint32_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	free(pt->slots);
	pt->slots = slots;
	pt->slot_mask = nslots - 1;
	for (uint32_t i = 0; i < pt->nr; i++) {
		uint32_t s = slot_hash(pt->pages[i].addr, pt->slot_mask);

		while (slots[s])
			s = (s + 1) & pt->slot_mask;
		slots[s] = i + 1;
	}
	return 0;
}

int64_t page_table__find(const struct page_table *pt, uint64_t addr)
{
	uint32_t s;

	if (!pt->slots)
		return -1;
	for (s = slot_hash(addr, pt->slot_mask); pt->slots[s];
	     s = (s + 1) & pt->slot_mask)
		if (pt->pages[pt->slots[s] - 1].addr == addr)
			return pt->slots[s] - 1;
	return -1;
}

int page_table__get(struct page_table *pt, uint64_t addr, bool *created)
{
	struct cxlt_page *p;
	uint32_t s;

	*created = false;
	if (pt->slots) {
		for (s = slot_hash(addr, pt->slot_mask); pt->slots[s];
		     s = (s + 1) & pt->slot_mask)
			if (pt->pages[pt->slots[s] - 1].addr == addr)
				return pt->slots[s] - 1;
	}
	if (pt->nr == pt->cap) {
		uint32_t cap = pt->cap ? pt->cap * 2 : 16;
		struct cxlt_page *pages;

		if (pt->cap >= (1U << 30))
			return -ENOMEM;
		pages = realloc(pt->pages, (size_t)cap * sizeof(*pages));
		if (!pages)
			return -ENOMEM;
		pt->pages = pages;
		pt->cap = cap;
	}
	/* Keep the load at or under 3/4. */
	if (!pt->slots || (uint64_t)(pt->nr + 1) * 4 > (uint64_t)(pt->slot_mask + 1) * 3) {
		uint32_t nslots = pt->slots ? (pt->slot_mask + 1) * 2 : MIN_SLOTS;
		int err = page_table__rehash(pt, nslots);

		if (err)
			return err;
	}
	for (s = slot_hash(addr, pt->slot_mask); pt->slots[s]; s = (s + 1) & pt->slot_mask)
		;
	p = &pt->pages[pt->nr];
	memset(p, 0, sizeof(*p));
	p->addr = addr;
	p->node = CXLT_NODE_UNKNOWN;
	p->since_move = CXLT_NEVER_MOVED;
	pt->slots[s] = ++pt->nr;
	*created = true;
	return pt->nr - 1;
}

uint64_t page_table__bytes(const struct page_table *pt)
{
	return (uint64_t)pt->cap * sizeof(struct cxlt_page) +
	       (pt->slots ? (uint64_t)(pt->slot_mask + 1) * sizeof(uint32_t) : 0);
}

/* Drops records flagged gone or unmarked (mark = keep), then rebuilds the index. */
static int page_table__compact(struct page_table *pt, uint8_t keep_flag)
{
	uint32_t n = 0;
	uint32_t nslots = MIN_SLOTS;

	for (uint32_t i = 0; i < pt->nr; i++) {
		struct cxlt_page *p = &pt->pages[i];

		if ((p->flags & PAGE_GONE) || (keep_flag && !(p->flags & keep_flag)))
			continue;
		p->flags &= ~keep_flag;
		pt->pages[n++] = *p;
	}
	pt->nr = n;
	while ((uint64_t)n * 4 > (uint64_t)nslots * 3)
		nslots *= 2;
	return page_table__rehash(pt, nslots);
}

static void page_table__free(struct page_table *pt)
{
	free(pt->pages);
	free(pt->slots);
	memset(pt, 0, sizeof(*pt));
}

int tracker__init(struct tracker *tr, double decay)
{
	memset(tr, 0, sizeof(*tr));
	tr->decay = (float)decay;
	tr->pf = &platform_kernel;
	tr->page_size = sysconf(_SC_PAGESIZE);
	return 0;
}

void tracker__free(struct tracker *tr)
{
	for (uint32_t i = 0; i < tr->nr_targets; i++) {
		page_table__free(&tr->targets[i].pt);
		free(tr->targets[i].scan.skips);
	}
	free(tr->targets);
	pfn_nodes__free(&tr->pfn);
	memset(tr, 0, sizeof(*tr));
}

int tracker__add_target(struct tracker *tr, pid_t pid, uint64_t start_time,
			const char *comm, enum target_origin origin)
{
	struct target *t;

	if (tr->nr_targets == tr->cap_targets) {
		uint32_t cap = tr->cap_targets ? tr->cap_targets * 2 : 16;
		struct target *n = realloc(tr->targets, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		tr->targets = n;
		tr->cap_targets = cap;
	}
	t = &tr->targets[tr->nr_targets];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->start_time = start_time;
	t->origin = origin;
	snprintf(t->comm, sizeof(t->comm), "%s", comm ? comm : "");
	return tr->nr_targets++;
}

void tracker__remove_target(struct tracker *tr, uint32_t idx)
{
	if (idx >= tr->nr_targets)
		return;
	page_table__free(&tr->targets[idx].pt);
	free(tr->targets[idx].scan.skips);
	memmove(&tr->targets[idx], &tr->targets[idx + 1],
		(tr->nr_targets - idx - 1) * sizeof(tr->targets[0]));
	tr->nr_targets--;
}

int tracker__find_target(const struct tracker *tr, pid_t pid)
{
	for (uint32_t i = 0; i < tr->nr_targets; i++)
		if (tr->targets[i].pid == pid)
			return i;
	return -1;
}

void tracker__ingest_page(struct tracker *tr, struct target *t, const struct cxlt_page_key *key,
			  const struct cxlt_page_val *val)
{
	struct cxlt_page *p;
	bool created;
	uint32_t s;
	int idx;

	idx = page_table__get(&t->pt, key->vpage << CXLT_PAGE_SHIFT, &created);
	if (idx < 0) {
		tr->dropped++;
		return;
	}
	p = &t->pt.pages[idx];
	s = p->samples + val->samples;
	p->samples = s > UINT16_MAX ? UINT16_MAX : s;
	p->flags |= CXLT_PAGE_SAMPLED | (val->hint_faults ? CXLT_PAGE_HINTED : 0);
	p->flags &= ~PAGE_MARKED;
	t->ctr.samples += val->samples;
	tr->ingested++;
}

void tracker__ingest(struct tracker *tr, const struct cxlt_page_key *keys,
		     const struct cxlt_page_val *vals, uint32_t n)
{
	struct target *t = NULL;

	for (uint32_t i = 0; i < n; i++) {
		/* Entries come grouped by nothing in particular, but runs of one tgid are common. */
		if (!t || t->pid != (pid_t)keys[i].tgid) {
			int ti = tracker__find_target(tr, keys[i].tgid);

			if (ti < 0) {
				t = NULL;
				tr->dropped++;
				continue;
			}
			t = &tr->targets[ti];
		}
		tracker__ingest_page(tr, t, &keys[i], &vals[i]);
	}
}

static int vrange_cmp(const void *a, const void *b)
{
	const struct vrange *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Sorts and merges n ranges (a VMA skipped twice, or resized between two calls); the new n. */
static uint32_t merge_ranges(struct vrange *r, uint32_t n)
{
	uint32_t k = 0;

	qsort(r, n, sizeof(*r), vrange_cmp);
	for (uint32_t i = 0; i < n; i++) {
		if (k && r[i].start <= r[k - 1].end) {
			if (r[i].end > r[k - 1].end)
				r[k - 1].end = r[i].end;
		} else {
			r[k++] = r[i];
		}
	}
	return k;
}

/* Whether addr lies in one of n sorted, disjoint ranges. */
static bool in_ranges(const struct vrange *r, uint32_t n, uint64_t addr)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {	/* the first range starting after addr */
		uint32_t mid = lo + (hi - lo) / 2;

		if (r[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < r[lo - 1].end;
}

void tracker__mark_pass(struct tracker *tr, struct target *t, bool fast, uint64_t fast_mask)
{
	struct scan_follow *f = &t->scan;
	uint64_t since = tr->epoch >= f->pass_start ? tr->epoch - f->pass_start : 0;
	struct vrange *skips = NULL;
	uint32_t n = 0;

	if (f->overflow)
		return;
	/* A sorted copy: the caller keeps the list's tail (this epoch's) for the next pass. */
	if (f->nr_skips) {
		if (!(skips = malloc(f->nr_skips * sizeof(*skips))))
			return;
		memcpy(skips, f->skips, f->nr_skips * sizeof(*skips));
		n = merge_ranges(skips, f->nr_skips);
	}
	for (uint32_t i = 0; i < t->pt.nr; i++) {
		struct cxlt_page *p = &t->pt.pages[i];

		/* Sampled in or after the epoch the pass began: one look cannot order the two. */
		if ((p->flags & CXLT_PAGE_SAMPLED) && p->idle_epochs < since)
			continue;
		if (!fast && (p->node < 0 || (fast_mask >> p->node & 1)))
			continue;
		if (!in_ranges(skips, n, p->addr))
			p->flags |= PAGE_MARKED;
	}
	free(skips);
}

void tracker__age(struct tracker *tr)
{
	const float decay = tr->decay;

	tr->epoch++;
	for (uint32_t ti = 0; ti < tr->nr_targets; ti++) {
		struct page_table *pt = &tr->targets[ti].pt;

		for (uint32_t i = 0; i < pt->nr; i++) {
			struct cxlt_page *p = &pt->pages[i];

			p->heat = p->heat * decay + p->samples;
			if (p->samples)
				p->idle_epochs = 0;
			else if (p->idle_epochs < UINT16_MAX)
				p->idle_epochs++;
			/* A migrated page comes back mapped: the scanner's mark is gone. */
			if (!p->since_move)
				p->flags &= ~PAGE_MARKED;
			if (p->since_move < CXLT_NEVER_MOVED - 1)
				p->since_move++;
			if (tr->sight && !(p->flags & PAGE_MARKED))
				p->flags |= CXLT_PAGE_UNSEEN;
			else
				p->flags &= ~CXLT_PAGE_UNSEEN;
		}
	}
}

void tracker__end_epoch(struct tracker *tr)
{
	for (uint32_t ti = 0; ti < tr->nr_targets; ti++) {
		struct page_table *pt = &tr->targets[ti].pt;

		for (uint32_t i = 0; i < pt->nr; i++) {
			pt->pages[i].samples = 0;
			pt->pages[i].flags &= ~CXLT_PAGE_HINTED;
		}
	}
}

void tracker__count_placement(struct tracker *tr, uint64_t fast_mask, struct placement *total)
{
	memset(total, 0, sizeof(*total));
	for (uint32_t i = 0; i < tr->nr_targets; i++) {
		struct target *t = &tr->targets[i];
		struct placement *pl = &t->place;

		memset(pl, 0, sizeof(*pl));
		for (uint32_t k = 0; k < t->pt.nr; k++) {
			const struct cxlt_page *p = &t->pt.pages[k];

			pl->sampled += !!(p->flags & CXLT_PAGE_SAMPLED);
			if (p->node < 0)
				pl->unknown++;
			else if ((fast_mask >> p->node) & 1) {
				pl->fast++;
				pl->fast_unseen += !!(p->flags & CXLT_PAGE_UNSEEN);
			} else
				pl->slow++;
		}
		total->fast += pl->fast;
		total->slow += pl->slow;
		total->unknown += pl->unknown;
		total->sampled += pl->sampled;
		total->fast_unseen += pl->fast_unseen;
	}
}

uint64_t tracker__pages(const struct tracker *tr)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < tr->nr_targets; i++)
		n += tr->targets[i].pt.nr;
	return n;
}

uint64_t tracker__bytes(const struct tracker *tr)
{
	uint64_t n = (uint64_t)tr->cap_targets * sizeof(struct target);

	for (uint32_t i = 0; i < tr->nr_targets; i++)
		n += page_table__bytes(&tr->targets[i].pt);
	return n;
}

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
			if ((pt->pages[i].flags & PAGE_GONE) || pt->pages[i].node >= 0)
				continue;
			addrs[n] = (void *)(uintptr_t)pt->pages[i].addr;
			idx[n++] = i;
		}
		if (!n)
			break;
		if (tr->pf->move_pages(tr->pf->ctx, t->pid, n, addrs, NULL, status, 0) < 0)
			return errno == ESRCH ? -ESRCH : -errno;
		for (uint32_t k = 0; k < n; k++) {
			struct cxlt_page *p = &pt->pages[idx[k]];

			if (status[k] >= 0)
				p->node = (int8_t)status[k];
			else if (status[k] == -EFAULT)
				p->flags |= PAGE_GONE;	/* no mapping there any more */
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

/*
 * Marks a present page as seen by this scan, adding it when new; node is
 * where the scan found it, or unknown (then move_pages is asked).
 */
static int scan_mark(struct target *t, uint64_t addr, int node)
{
	bool created;
	int idx = page_table__get(&t->pt, addr, &created);

	if (idx < 0)
		return idx;
	t->pt.pages[idx].flags |= PAGE_SEEN;
	t->pt.pages[idx].node = (int8_t)node;
	if (created)
		t->scanned_new++;
	return 0;
}

static int scan_range_pagemap_scan(int fd, struct target *t, uint64_t start,
				   uint64_t end, long psz)
{
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
		.return_mask = PAGE_IS_PRESENT,
	};

	while (arg.start < end) {
		long n = ioctl(fd, CXLT_PAGEMAP_SCAN, &arg);

		if (n < 0)
			return -errno;
		for (long r = 0; r < n; r++)
			for (uint64_t a = regions[r].start; a < regions[r].end; a += psz) {
				int err = scan_mark(t, a, CXLT_NODE_UNKNOWN);

				if (err)
					return err;
			}
		if (arg.walk_end <= arg.start)
			break;
		arg.start = arg.walk_end;
	}
	return 0;
}

static int scan_range_pagemap(int fd, struct tracker *tr, struct target *t,
			      uint64_t start, uint64_t end, long psz)
{
	uint64_t ents[4096];

	for (uint64_t a = start; a < end;) {
		uint64_t n = (end - a) / psz;
		ssize_t got;

		if (n > ARRAY_SIZE(ents))
			n = ARRAY_SIZE(ents);
		got = pread(fd, ents, n * sizeof(ents[0]), (a / psz) * sizeof(ents[0]));
		if (got <= 0)
			return got < 0 ? -errno : -EIO;
		n = got / sizeof(ents[0]);
		for (uint64_t k = 0; k < n; k++, a += psz) {
			int err;

			if (!(ents[k] & PM_PRESENT))
				continue;
			/* PFNs read as 0 without CAP_SYS_ADMIN: node unknown then. */
			err = scan_mark(t, a, tr->pfn.nr_blocks ?
					pfn_nodes__node(&tr->pfn, ents[k] & PM_PFN_MASK) :
					CXLT_NODE_UNKNOWN);
			if (err)
				return err;
		}
	}
	return 0;
}

int tracker__scan(struct tracker *tr, struct target *t)
{
	static int have_pagemap_scan = -1;	/* probed on first use */
	char path[64], line[512];
	long psz = tr->page_size;
	FILE *maps;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", t->pid);
	maps = fopen(path, "re");
	if (!maps)
		return errno == ENOENT ? -ESRCH : -errno;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", t->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno == ENOENT ? -ESRCH : -errno;
		fclose(maps);
		return err;
	}
	t->scanned_new = 0;
	while (!err && fgets(line, sizeof(line), maps)) {
		unsigned long long start, end, inode;
		char perms[8], name[256] = "";

		if (sscanf(line, "%llx-%llx %7s %*s %*s %llu %255s", &start, &end,
			   perms, &inode, name) < 4)
			continue;
		if (!vma_eligible(perms, inode, name))
			continue;
		if (have_pagemap_scan != 0) {
			err = scan_range_pagemap_scan(fd, t, start, end, psz);
			if (have_pagemap_scan < 0 && (err == -ENOTTY || err == -EINVAL)) {
				pr_info("this kernel has no PAGEMAP_SCAN: reading pagemap instead (slower; page frames give the nodes)");
				have_pagemap_scan = 0;
			} else if (have_pagemap_scan < 0 && !err) {
				have_pagemap_scan = 1;
			}
		}
		if (have_pagemap_scan == 0)
			err = scan_range_pagemap(fd, tr, t, start, end, psz);
	}
	close(fd);
	fclose(maps);
	if (err)
		return err;

	/* Pages not seen are no longer resident (freed, unmapped, swapped). */
	err = page_table__compact(&t->pt, PAGE_SEEN);
	if (err)
		return err;
	t->last_scan_epoch = tr->epoch ? tr->epoch : 1;
	return tracker__query_nodes(tr, t, 0);
}
