// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
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
#define PAGE_IS_HUGE (1 << 6)
#define PM_PRESENT (1ULL << 63)
#define PM_FILE (1ULL << 61)
#define PM_MMAP_EXCLUSIVE (1ULL << 56)
#define PM_PFN_MASK ((1ULL << 55) - 1)

/*
 * Time the sweeps may take an epoch: with PAGEMAP_SCAN about 4 GiB of
 * address space (5 ms a GiB, plus the node probes); reading pagemap, 1 GiB.
 */
#define SWEEP_MS 20
/* Epochs over which a region's sampled chunks are gathered before they are judged. */
#define MIXED_WINDOW 8
/* Small: the replay may hold 100k targets of a page or two each. */
#define MIN_SLOTS 16

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
		uint32_t s;

		if (pt->pages[i].flags & PAGE_REGION)
			continue;
		s = slot_hash(pt->pages[i].addr, pt->slot_mask);

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

/* Room for one more record; grows by half (a doubling would waste up to half at 1 TiB). */
static int page_table__reserve(struct page_table *pt)
{
	uint32_t cap;
	struct cxlt_page *pages;
	uint32_t *words;

	if (pt->nr < pt->cap)
		return 0;
	if (pt->cap >= (1U << 30))
		return -ENOMEM;
	cap = pt->cap < 16 ? 16 : pt->cap + pt->cap / 2;
	pages = realloc(pt->pages, (size_t)cap * sizeof(*pages));
	if (!pages)
		return -ENOMEM;
	pt->pages = pages;
	words = realloc(pt->words, (size_t)cap * sizeof(*words));
	if (!words)
		return -ENOMEM;
	pt->words = words;
	pt->cap = cap;
	return 0;
}

static struct cxlt_page *page_table__append(struct page_table *pt, uint64_t addr)
{
	struct cxlt_page *p = &pt->pages[pt->nr];

	pt->words[pt->nr++] = 0;
	memset(p, 0, sizeof(*p));
	p->addr = addr;
	p->npages = 1;
	p->node = CXLT_NODE_UNKNOWN;
	p->since_move = CXLT_NEVER_MOVED;
	return p;
}

int page_table__get(struct page_table *pt, uint64_t addr, bool *created)
{
	uint32_t s;
	int err;

	*created = false;
	if (pt->slots) {
		for (s = slot_hash(addr, pt->slot_mask); pt->slots[s];
		     s = (s + 1) & pt->slot_mask)
			if (pt->pages[pt->slots[s] - 1].addr == addr)
				return pt->slots[s] - 1;
	}
	if ((err = page_table__reserve(pt)))
		return err;
	/* Keep the load at or under 3/4. */
	if (!pt->slots || (uint64_t)(pt->hashed + 1) * 4 > (uint64_t)(pt->slot_mask + 1) * 3) {
		uint32_t nslots = pt->slots ? (pt->slot_mask + 1) * 2 : MIN_SLOTS;

		if ((err = page_table__rehash(pt, nslots)))
			return err;
	}
	for (s = slot_hash(addr, pt->slot_mask); pt->slots[s]; s = (s + 1) & pt->slot_mask)
		;
	page_table__append(pt, addr);
	pt->slots[s] = pt->nr;
	pt->hashed++;
	*created = true;
	return pt->nr - 1;
}

static int page_table__compact(struct page_table *pt, uint32_t *below);

/* ---- regions ---- */

static inline uint32_t region_hash(uint64_t base, uint32_t mask)
{
	return (uint32_t)(((base >> REGION_SHIFT) * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
}

static int region_table__rehash(struct region_table *rt, uint32_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	free(rt->slots);
	rt->slots = slots;
	rt->slot_mask = nslots - 1;
	for (uint32_t i = 0; i < rt->nr; i++) {
		uint32_t s = region_hash(rt->rg[i].base, rt->slot_mask);

		while (slots[s])
			s = (s + 1) & rt->slot_mask;
		slots[s] = i + 1;
	}
	return 0;
}

static struct region *region_table__find(const struct region_table *rt, uint64_t base)
{
	if (!rt->slots)
		return NULL;
	for (uint32_t s = region_hash(base, rt->slot_mask); rt->slots[s]; s = (s + 1) & rt->slot_mask)
		if (rt->rg[rt->slots[s] - 1].base == base)
			return &rt->rg[rt->slots[s] - 1];
	return NULL;
}

struct region *tracker__region(const struct target *t, uint64_t addr)
{
	return region_table__find(&t->rt, addr & ~(REGION_SIZE - 1));
}

/* The region of base, made with its record when new (node unknown); NULL when out of memory. */
static struct region *region_get(struct target *t, uint64_t base, bool *created)
{
	struct region_table *rt = &t->rt;
	struct region *r = region_table__find(rt, base);
	uint32_t s;

	*created = false;
	if (r)
		return r;
	if (rt->nr == rt->cap) {
		uint32_t cap = rt->cap < 16 ? 16 : rt->cap + rt->cap / 2;
		struct region *rg = realloc(rt->rg, (size_t)cap * sizeof(*rg));

		if (!rg)
			return NULL;
		rt->rg = rg;
		rt->cap = cap;
	}
	if (!rt->slots || (uint64_t)(rt->nr + 1) * 4 > (uint64_t)(rt->slot_mask + 1) * 3)
		if (region_table__rehash(rt, rt->slots ? (rt->slot_mask + 1) * 2 : MIN_SLOTS))
			return NULL;
	if (page_table__reserve(&t->pt))
		return NULL;
	r = &rt->rg[rt->nr];
	memset(r, 0, sizeof(*r));
	r->base = base;
	r->rec = t->pt.nr;
	r->sweep = t->sweep_gen;
	r->node_id[0] = r->node_id[1] = CXLT_NODE_UNKNOWN;
	page_table__append(&t->pt, base)->flags = PAGE_REGION;
	for (s = region_hash(base, rt->slot_mask); rt->slots[s]; s = (s + 1) & rt->slot_mask)
		;
	rt->slots[s] = ++rt->nr;
	*created = true;
	return r;
}

/* After the records moved (compaction): each region finds its record again. */
static void regions__relink(struct target *t)
{
	for (uint32_t i = 0; i < t->pt.nr; i++) {
		struct cxlt_page *p = &t->pt.pages[i];
		struct region *r;

		if ((p->flags & PAGE_REGION) && (r = region_table__find(&t->rt, p->addr)))
			r->rec = i;
	}
}

/* Drops the regions whose record is flagged gone. */
static int regions__compact(struct target *t)
{
	struct region_table *rt = &t->rt;
	uint32_t n = 0, nslots = MIN_SLOTS;

	for (uint32_t i = 0; i < rt->nr; i++)
		if (!(t->pt.pages[rt->rg[i].rec].flags & PAGE_GONE))
			rt->rg[n++] = rt->rg[i];
	rt->nr = n;
	while ((uint64_t)n * 4 > (uint64_t)nslots * 3)
		nslots *= 2;
	return region_table__rehash(rt, nslots);
}

/* Drops every record flagged gone, regions with theirs. */
static int target__compact(struct target *t)
{
	int err = regions__compact(t);

	if (!err)
		err = page_table__compact(&t->pt, &t->nodes_known);
	regions__relink(t);
	/* Records of pages gone left their regions: count the detail again. */
	for (uint32_t i = 0; i < t->rt.nr; i++)
		t->rt.rg[i].detail = 0;
	for (uint32_t i = 0; i < t->pt.nr; i++) {
		struct region *r;

		if (!(t->pt.pages[i].flags & PAGE_REGION) && (r = tracker__region(t, t->pt.pages[i].addr)))
			r->detail++;
	}
	return err;
}

uint32_t tracker__record_pages(const struct target *t, const struct cxlt_page *p)
{
	const struct region *r;

	if (!(p->flags & PAGE_REGION))
		return 1;
	if (p->flags & PAGE_HUGE)
		return REGION_PAGES;
	if (!(r = region_table__find(&t->rt, p->addr)))
		return 0;
	if (!(r->flags & REGION_SWEPT))	/* not swept yet: the chunks sampled */
		return (uint32_t)__builtin_popcountll(r->sampled_bits) * CHUNK_PAGES;
	return r->resident > r->detail ? r->resident - r->detail : 0;
}

void tracker__record_moved(struct target *t, struct cxlt_page *p, int node)
{
	struct region *r;

	p->node = (int8_t)node;
	p->since_move = 0;
	if (!(p->flags & PAGE_REGION) || !(r = region_table__find(&t->rt, p->addr)))
		return;
	/* Its pages without detail went to node; the detail's stay counted where they were. */
	r->node_id[0] = (int8_t)node;
	r->on_node[0] = r->resident;
	r->on_node[1] = 0;
}

uint64_t page_table__bytes(const struct page_table *pt)
{
	return (uint64_t)pt->cap * (sizeof(struct cxlt_page) + sizeof(*pt->words)) +
	       (pt->slots ? (uint64_t)(pt->slot_mask + 1) * sizeof(uint32_t) : 0);
}

/*
 * Drops records flagged gone, then rebuilds the index; *below (records under
 * it had their node queried) becomes the count of those kept.
 */
static int page_table__compact(struct page_table *pt, uint32_t *below)
{
	uint32_t n = 0, hashed = 0, kept_below = 0;
	uint32_t nslots = MIN_SLOTS;

	for (uint32_t i = 0; i < pt->nr; i++) {
		struct cxlt_page *p = &pt->pages[i];

		if (p->flags & PAGE_GONE)
			continue;
		kept_below += i < *below;
		hashed += !(p->flags & PAGE_REGION);
		pt->words[n] = pt->words[i];
		pt->pages[n++] = *p;
	}
	pt->nr = n;
	pt->hashed = hashed;
	*below = kept_below;
	/* Give back what folding freed: the budget weighs allocations. */
	if (pt->cap > 64 && (uint64_t)n * 3 < (uint64_t)pt->cap * 2) {
		uint32_t cap = n + n / 8 + 16;
		struct cxlt_page *pages = realloc(pt->pages, (size_t)cap * sizeof(*pages));
		uint32_t *words = realloc(pt->words, (size_t)cap * sizeof(*words));

		/* Shrinking: a buffer realloc could not shrink still holds cap. */
		if (pages)
			pt->pages = pages;
		if (words)
			pt->words = words;
		if (pages || words)
			pt->cap = cap;
	}
	while ((uint64_t)hashed * 4 > (uint64_t)nslots * 3)
		nslots *= 2;
	return page_table__rehash(pt, nslots);
}

static void page_table__free(struct page_table *pt)
{
	free(pt->pages);
	free(pt->words);
	free(pt->slots);
	memset(pt, 0, sizeof(*pt));
}

static void region_table__free(struct region_table *rt)
{
	free(rt->rg);
	free(rt->slots);
	memset(rt, 0, sizeof(*rt));
}

static uint64_t region_table__bytes(const struct region_table *rt)
{
	return (uint64_t)rt->cap * sizeof(struct region) +
	       (rt->slots ? (uint64_t)(rt->slot_mask + 1) * sizeof(uint32_t) : 0);
}

int tracker__init(struct tracker *tr, double decay)
{
	memset(tr, 0, sizeof(*tr));
	tr->decay = (float)decay;
	tr->pf = &platform_kernel;
	tr->page_size = sysconf(_SC_PAGESIZE);
	tr->sweep_ms = SWEEP_MS;
	return 0;
}

void tracker__free(struct tracker *tr)
{
	for (uint32_t i = 0; i < tr->nr_targets; i++) {
		page_table__free(&tr->targets[i].pt);
		region_table__free(&tr->targets[i].rt);
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

	if (tr->budget_bytes && tr->bytes_used > tr->budget_bytes)
		return -ENOSPC;
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
	region_table__free(&tr->targets[idx].rt);
	free(tr->targets[idx].scan.skips);
	if (tr->sweep_next > idx)
		tr->sweep_next--;
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

static uint64_t target_bytes(const struct target *t)
{
	return page_table__bytes(&t->pt) + region_table__bytes(&t->rt);
}

/* Bytes the tracker's tables hold, allocated: what the budget weighs. */
static uint64_t tracker__bytes_used(const struct tracker *tr)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < tr->nr_targets; i++)
		n += target_bytes(&tr->targets[i]);
	return n;
}

/*
 * Whether t may get one more page record within the budget, counting what
 * the tables would grow by to hold it.
 */
static bool detail_room(struct tracker *tr, const struct target *t)
{
	const struct page_table *pt = &t->pt;
	uint64_t grow = 0;

	if (!tr->budget_bytes)
		return true;
	if (pt->nr == pt->cap)
		grow += (uint64_t)(pt->cap < 16 ? 16 : pt->cap / 2) *
			(sizeof(struct cxlt_page) + sizeof(uint32_t));
	if (!pt->slots || (uint64_t)(pt->hashed + 1) * 4 > (uint64_t)(pt->slot_mask + 1) * 3)
		grow += pt->slots ? (uint64_t)(pt->slot_mask + 1) * sizeof(uint32_t) : MIN_SLOTS * 4;
	return tr->bytes_used + grow < tr->budget_bytes;
}

/*
 * The record a sample of addr goes to.  Regions first: a page gets a record
 * of its own only where its region's sampled chunks differ (or it has one
 * already), and only within the budget; else the region's record takes it.
 */
static struct cxlt_page *sample_record(struct tracker *tr, struct target *t, uint64_t addr)
{
	uint32_t pg = (addr >> CXLT_PAGE_SHIFT) & (REGION_PAGES - 1);
	struct region *r;
	uint64_t before;
	bool created;
	int64_t idx;

	if (tr->detail_all) {
		idx = page_table__get(&t->pt, addr, &created);
		return idx < 0 ? NULL : &t->pt.pages[idx];
	}
	before = target_bytes(t);
	if (!(r = region_get(t, addr & ~(REGION_SIZE - 1), &created)))
		return NULL;
	tr->bytes_used += target_bytes(t) - before;
	r->sampled_bits |= 1ULL << (pg / CHUNK_PAGES);
	r->probe = (uint16_t)pg;
	if ((idx = page_table__find(&t->pt, addr)) >= 0)
		return &t->pt.pages[idx];
	/* A huge page moves whole (docs/design.md, "Huge pages"): its record is its unit. */
	if (!(r->flags & REGION_MIXED) || (t->pt.pages[r->rec].flags & PAGE_HUGE) ||
	    !detail_room(tr, t))
		return &t->pt.pages[r->rec];
	{
		uint32_t ri = (uint32_t)(r - t->rt.rg);	/* the page table may move, the regions do not */
		uint64_t before = target_bytes(t);

		if ((idx = page_table__get(&t->pt, addr, &created)) < 0)
			return NULL;
		t->rt.rg[ri].detail++;
		tr->bytes_used += target_bytes(t) - before;
		return &t->pt.pages[idx];
	}
}

void tracker__ingest_page(struct tracker *tr, struct target *t, const struct cxlt_page_key *key,
			  const struct cxlt_page_val *val)
{
	struct cxlt_page *p = sample_record(tr, t, key->vpage << CXLT_PAGE_SHIFT);
	uint32_t s;

	if (!p) {
		tr->dropped++;
		return;
	}
	s = p->samples + val->samples;
	p->samples = s > UINT16_MAX ? UINT16_MAX : s;
	p->flags |= CXLT_PAGE_SAMPLED | (val->hint_faults ? CXLT_PAGE_HINTED : 0);
	p->flags &= ~PAGE_MARKED;
	t->ctr.samples += val->samples;
	tr->ingested++;
}

void tracker__ingest_range(struct tracker *tr, struct target *t, uint64_t start, uint64_t end,
			   uint32_t samples)
{
	const struct cxlt_page_val val = { .samples = samples };

	start &= ~((1ULL << CXLT_PAGE_SHIFT) - 1);
	for (uint64_t b = start & ~(REGION_SIZE - 1); b < end; b += REGION_SIZE) {
		uint64_t lo = b > start ? b : start, hi = b + REGION_SIZE < end ? b + REGION_SIZE : end;
		uint64_t before = target_bytes(t), s;
		struct cxlt_page *p;
		struct region *r;
		bool created;

		if (tr->detail_all || lo != b || hi != b + REGION_SIZE) {
			for (uint64_t a = lo; a < hi; a += 1ULL << CXLT_PAGE_SHIFT) {
				const struct cxlt_page_key key = { .tgid = t->pid,
								   .vpage = a >> CXLT_PAGE_SHIFT };

				tracker__ingest_page(tr, t, &key, &val);
			}
			continue;
		}
		if (!(r = region_get(t, b, &created))) {
			tr->dropped++;
			continue;
		}
		tr->bytes_used += target_bytes(t) - before;
		r->sampled_bits = ~0ULL;
		p = &t->pt.pages[r->rec];
		/* As if each page had been sampled: a region's samples are its pages'. */
		s = (uint64_t)samples * (r->flags & REGION_SWEPT ? r->resident : REGION_PAGES);
		t->ctr.samples += s;
		s += p->samples;
		p->samples = s > UINT16_MAX ? UINT16_MAX : (uint16_t)s;
		p->flags |= CXLT_PAGE_SAMPLED;
		p->flags &= ~PAGE_MARKED;
		tr->ingested++;
	}
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

static void regions__review(struct tracker *tr, struct target *t);

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
	/* Before the policy: a region found mixed this epoch shows no borrowed heat. */
	if (!tr->detail_all)
		for (uint32_t ti = 0; ti < tr->nr_targets; ti++)
			regions__review(tr, &tr->targets[ti]);
}

/* Whether a region's sampled chunks differ: some sampled, some resident ones not. */
static bool region_mixed(const struct region *r)
{
	uint64_t resident = r->resident_bits ? r->resident_bits : ~0ULL;

	return r->sampled_bits && (resident & ~r->sampled_bits);
}

/* Folds page record i of t into its region's record; flags it gone. */
static void fold_page(struct tracker *tr, struct target *t, uint32_t i)
{
	struct cxlt_page *p = &t->pt.pages[i], *rec;
	struct region *r = tracker__region(t, p->addr);
	uint32_t s;

	p->flags |= PAGE_GONE;
	tr->folded++;
	if (!r)
		return;
	r->detail--;
	rec = &t->pt.pages[r->rec];
	rec->heat += p->heat;
	s = rec->samples + p->samples;
	rec->samples = s > UINT16_MAX ? UINT16_MAX : s;
	if (p->flags & CXLT_PAGE_SAMPLED) {
		if (!(rec->flags & CXLT_PAGE_SAMPLED) || p->idle_epochs < rec->idle_epochs)
			rec->idle_epochs = p->idle_epochs;
		rec->flags |= CXLT_PAGE_SAMPLED;
	}
}

/* Folds every page record of region r. */
static void fold_region(struct tracker *tr, struct target *t, struct region *r)
{
	for (uint32_t k = 0; k < REGION_PAGES && r->detail; k++) {
		int64_t i = page_table__find(&t->pt, r->base + ((uint64_t)k << CXLT_PAGE_SHIFT));

		if (i >= 0 && !(t->pt.pages[i].flags & PAGE_GONE))
			fold_page(tr, t, (uint32_t)i);
	}
}

/* A page record's coldness bucket: 0 never sampled or long idle, up to 63 hottest. */
static uint32_t heat_bucket(const struct cxlt_page *p)
{
	int e;

	if (!(p->flags & CXLT_PAGE_SAMPLED) || p->heat <= 0)
		return 0;
	frexpf(p->heat, &e);	/* heat in [2^(e-1), 2^e) */
	e += 24;		/* 2^-24 .. 2^38 */
	return e < 1 ? 1 : e > 63 ? 63 : (uint32_t)e;
}

/*
 * Over the budget, the coldest page records fold back into their regions,
 * down to 7/8 of it: room for hotter pages to get records in the next epochs.
 * Uniform regions fold whole at the end of each window (regions__review).
 */
static void fold_detail(struct tracker *tr)
{
	const uint64_t per_page = sizeof(struct cxlt_page) + sizeof(uint32_t) + 8;
	uint64_t hist[64] = { 0 }, excess, want, taken = 0;
	uint32_t cut = 0;

	/*
	 * Near the budget (new detail stops at it): down to 7/8, room for
	 * hotter pages; at a window's end only, so that the pass and the
	 * compaction it costs come once in MIXED_WINDOW epochs, not each.
	 */
	if (tr->detail_all || !tr->budget_bytes || tr->bytes_used < tr->budget_bytes / 16 * 15 ||
	    (tr->epoch % MIXED_WINDOW && tr->bytes_used <= tr->budget_bytes))
		return;
	excess = tr->bytes_used - tr->budget_bytes / 8 * 7;
	want = (excess + per_page - 1) / per_page;
	for (uint32_t ti = 0; ti < tr->nr_targets; ti++) {
		const struct page_table *pt = &tr->targets[ti].pt;

		for (uint32_t i = 0; i < pt->nr; i++)
			if (!(pt->pages[i].flags & (PAGE_REGION | PAGE_GONE)))
				hist[heat_bucket(&pt->pages[i])]++;
	}
	/* The buckets wholly folded, then as many of bucket cut as still wanted. */
	while (cut < 63 && taken + hist[cut] < want)
		taken += hist[cut++];
	want -= taken;
	for (uint32_t ti = 0; ti < tr->nr_targets; ti++) {
		struct target *t = &tr->targets[ti];

		for (uint32_t i = 0; i < t->pt.nr; i++) {
			struct cxlt_page *p = &t->pt.pages[i];
			uint32_t b;

			if (p->flags & (PAGE_REGION | PAGE_GONE))
				continue;
			b = heat_bucket(p);
			if (b < cut || (b == cut && want && want--))
				fold_page(tr, t, i);
		}
	}
}

/*
 * A region turns mixed: what its record gathered came from its sampled
 * chunks, so with split_mixed their pages get records of their own that
 * share it (within the budget).
 */
static void split_record(struct tracker *tr, struct target *t, struct region *r)
{
	uint32_t ri = (uint32_t)(r - t->rt.rg), n = (uint32_t)__builtin_popcountll(r->sampled_bits) * CHUNK_PAGES;
	struct cxlt_page rec = t->pt.pages[r->rec];

	if (!tr->split_mixed || !n || !(rec.flags & CXLT_PAGE_SAMPLED))
		return;
	for (uint32_t k = 0; k < REGION_PAGES; k++) {
		uint64_t addr = r->base + ((uint64_t)k << CXLT_PAGE_SHIFT), before;
		struct cxlt_page *p;
		bool created;
		int64_t idx;

		if (!(r->sampled_bits >> (k / CHUNK_PAGES) & 1))
			continue;
		before = target_bytes(t);
		if (!detail_room(tr, t) || (idx = page_table__get(&t->pt, addr, &created)) < 0)
			return;
		tr->bytes_used += target_bytes(t) - before;
		if (!created)
			continue;
		t->rt.rg[ri].detail++;
		p = &t->pt.pages[idx];
		p->heat = rec.heat / (float)n;
		p->samples = (uint16_t)((rec.samples + n - 1) / n);
		p->idle_epochs = rec.idle_epochs;
		p->flags |= rec.flags & (CXLT_PAGE_SAMPLED | CXLT_PAGE_HINTED | CXLT_PAGE_UNSEEN);
	}
}

/* Once an epoch: which regions are mixed; uniform ones fold at the window's end. */
static void regions__review(struct tracker *tr, struct target *t)
{
	bool window_end = tr->epoch % MIXED_WINDOW == 0;

	for (uint32_t i = 0; i < t->rt.nr; i++) {
		struct region *r = &t->rt.rg[i];

		if (region_mixed(r)) {
			/*
			 * Its samples so far came from the chunks that differ: they
			 * say nothing of the rest, which the record stands for now
			 * (as never sampled: policies tell hot from cold by that).
			 */
			if (!(r->flags & REGION_MIXED) && !(t->pt.pages[r->rec].flags & PAGE_HUGE)) {
				split_record(tr, t, r);
				t->pt.pages[r->rec].heat = 0;
				t->pt.pages[r->rec].samples = 0;
				t->pt.pages[r->rec].flags &= ~CXLT_PAGE_SAMPLED;
			}
			r->flags |= REGION_MIXED;
		} else if (window_end && r->sampled_bits) {
			/* Sampled all over: one record says it all. */
			r->flags &= ~REGION_MIXED;
			if (r->detail)
				fold_region(tr, t, r);
		}
		if (window_end) {
			r->sampled_prev = r->sampled_bits;
			r->sampled_bits = 0;
		}
		/* What the policy's view says of it this epoch. */
		{
			struct cxlt_page *rec = &t->pt.pages[r->rec];
			uint32_t n = tracker__record_pages(t, rec);

			rec->npages = (uint16_t)(n > UINT16_MAX ? UINT16_MAX : n);
			if (r->flags & REGION_MIXED)
				rec->flags |= CXLT_PAGE_MIXED;
			else
				rec->flags &= ~CXLT_PAGE_MIXED;
		}
	}
}

void tracker__end_epoch(struct tracker *tr)
{
	bool folded = false;

	if (!tr->detail_all) {
		tr->bytes_used = tracker__bytes_used(tr);
		fold_detail(tr);
		/* Folds of this epoch's review (in the age) and of the budget. */
		folded = tr->folded != tr->folded_compacted;
		tr->folded_compacted = tr->folded;
	}
	if (folded) {
		for (uint32_t ti = 0; ti < tr->nr_targets; ti++)
			target__compact(&tr->targets[ti]);
		tr->bytes_used = tracker__bytes_used(tr);
	}

	for (uint32_t ti = 0; ti < tr->nr_targets; ti++) {
		struct page_table *pt = &tr->targets[ti].pt;

		for (uint32_t i = 0; i < pt->nr; i++) {
			pt->pages[i].samples = 0;
			pt->pages[i].flags &= ~CXLT_PAGE_HINTED;
		}
	}
}

/* Adds n pages on node to pl. */
static void place_pages(struct placement *pl, uint64_t fast_mask, int node, uint64_t n, bool unseen)
{
	if (node < 0)
		pl->unknown += n;
	else if ((fast_mask >> node) & 1) {
		pl->fast += n;
		pl->fast_unseen += unseen ? n : 0;
	} else
		pl->slow += n;
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
			bool unseen = p->flags & CXLT_PAGE_UNSEEN;
			const struct region *r;
			uint64_t n = 1, on0;

			if (p->flags & PAGE_REGION) {
				n = tracker__record_pages(t, p);
				r = region_table__find(&t->rt, p->addr);
				/* A region's pages by the nodes its sweep found. */
				if (r && (r->flags & REGION_SWEPT) && r->resident && !(p->flags & PAGE_HUGE) &&
				    r->node_id[0] == p->node) {
					on0 = n * r->on_node[0] / r->resident;
					place_pages(pl, fast_mask, r->node_id[0], on0, unseen);
					place_pages(pl, fast_mask, r->node_id[1], n * r->on_node[1] / r->resident, unseen);
					place_pages(pl, fast_mask, CXLT_NODE_UNKNOWN,
						    n - on0 - n * r->on_node[1] / r->resident, unseen);
					n = 0;
				}
			}
			if (p->flags & CXLT_PAGE_SAMPLED)
				pl->sampled += p->flags & PAGE_REGION ? tracker__record_pages(t, p) : 1;
			place_pages(pl, fast_mask, p->node, n, unseen);
		}
		total->fast += pl->fast;
		total->slow += pl->slow;
		total->unknown += pl->unknown;
		total->sampled += pl->sampled;
		total->fast_unseen += pl->fast_unseen;
	}
}

uint64_t tracker__target_pages(const struct target *t)
{
	uint64_t n = 0;

	for (uint32_t k = 0; k < t->pt.nr; k++)
		n += tracker__record_pages(t, &t->pt.pages[k]);
	return n;
}

uint64_t tracker__pages(const struct tracker *tr)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < tr->nr_targets; i++)
		n += tracker__target_pages(&tr->targets[i]);
	return n;
}

uint64_t tracker__records(const struct tracker *tr)
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
		n += page_table__bytes(&tr->targets[i].pt) + region_table__bytes(&tr->targets[i].rt);
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
			return errno == ESRCH ? -ESRCH : -errno;
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

static int read_pagemap_scan(int fd, struct sweep_chunk *c, uint64_t start, uint64_t end)
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
		.return_mask = PAGE_IS_PRESENT | PAGE_IS_HUGE,
	};

	while (arg.start < end) {
		long n = ioctl(fd, CXLT_PAGEMAP_SCAN, &arg);

		if (n < 0)
			return -errno;
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
		/* A huge page: 512 page frames in a row from an aligned one. */
		if (i % REGION_PAGES == 0 && pfn && !(pfn & (REGION_PAGES - 1)) &&
		    k + REGION_PAGES <= n) {
			uint64_t j = 1;

			while (j < REGION_PAGES && (ents[k + j] & PM_PRESENT) &&
			       (ents[k + j] & PM_PFN_MASK) == pfn + j)
				j++;
			if (j == REGION_PAGES)
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
	if (f->huge) {
		/* Page records from before a collapse: the huge page is one unit now. */
		if (r->detail)
			fold_region(tr, t, r);
		t->pt.pages[r->rec].flags |= PAGE_HUGE;
	} else
		t->pt.pages[r->rec].flags &= ~PAGE_HUGE;
	return r;
}

/*
 * The regions of one chunk: counts, nodes (from page frames, else from up to
 * NODE_PROBES pages asked), and the page records of pages no longer there.
 */
static int sweep_chunk_regions(struct tracker *tr, struct target *t, struct sweep_chunk *c)
{
	for (uint32_t ri = 0; ri < SWEEP_CHUNK / REGION_SIZE; ri++) {
		struct region_found f = { .base = c->start + ri * REGION_SIZE,
					  .node_id = { CXLT_NODE_UNKNOWN, CXLT_NODE_UNKNOWN } };
		void *addrs[NODE_PROBES];
		int status[NODE_PROBES];
		uint32_t nprobe = 0, first = ri * REGION_PAGES;
		bool need_query = false;
		struct region *r;

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
			continue;
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
				return errno == ESRCH ? -ESRCH : -errno;
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
		for (uint32_t k = 0; r->detail && k < REGION_PAGES; k++) {
			uint32_t i = first + k;
			int64_t idx = page_table__find(&t->pt, f.base + ((uint64_t)k << CXLT_PAGE_SHIFT));

			if (idx < 0)
				continue;
			if (!(c->present[i / 64] >> (i % 64) & 1))
				t->pt.pages[idx].flags |= PAGE_GONE;
			else if (c->node[i] >= 0)
				t->pt.pages[idx].node = c->node[i];
		}
	}
	return 0;
}

/* The sweep is over: regions it did not find are gone, with their page records. */
static int sweep_end(struct tracker *tr, struct target *t)
{
	bool gone = false;

	for (uint32_t i = 0; i < t->rt.nr; i++) {
		struct region *r = &t->rt.rg[i];

		if (r->sweep == t->sweep_gen)
			continue;
		gone = true;
		t->pt.pages[r->rec].flags |= PAGE_GONE;
		for (uint32_t k = 0; r->detail && k < REGION_PAGES; k++) {
			int64_t idx = page_table__find(&t->pt, r->base + ((uint64_t)k << CXLT_PAGE_SHIFT));

			if (idx >= 0)
				t->pt.pages[idx].flags |= PAGE_GONE;
		}
	}
	for (uint32_t i = 0; i < t->pt.nr && !gone; i++)
		gone = t->pt.pages[i].flags & PAGE_GONE;
	t->sweep_gen++;
	t->sweep_cursor = 0;
	t->last_scan_epoch = tr->epoch ? tr->epoch : 1;
	if (gone) {
		int err = target__compact(t);

		tr->bytes_used = tracker__bytes_used(tr);
		return err;
	}
	return 0;
}

int tracker__sweep(struct tracker *tr, struct target *t, double deadline)
{
	static int have_pagemap_scan = -1;	/* probed on first use */
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
	snprintf(path, sizeof(path), "/proc/%d/pagemap", t->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !(c = malloc(sizeof(*c)))) {
		err = fd < 0 ? (errno == ENOENT ? -ESRCH : -errno) : -ENOMEM;
		goto out;
	}
	if (!t->sweep_cursor)
		t->scanned_new = 0;
	c->start = UINT64_MAX;
	while (!err && fgets(line, sizeof(line), maps)) {
		unsigned long long start, end, inode;
		char perms[8], name[256] = "";

		if (sscanf(line, "%llx-%llx %7s %*s %*s %llu %255s", &start, &end,
			   perms, &inode, name) < 4)
			continue;
		if (!vma_eligible(perms, inode, name) || end <= t->sweep_cursor)
			continue;
		if (start < t->sweep_cursor)
			start = t->sweep_cursor;
		for (uint64_t a = start; !err && a < end;) {
			uint64_t cstart = a & ~(SWEEP_CHUNK - 1), b = cstart + SWEEP_CHUNK;

			if (b > end)
				b = end;
			if (c->start != cstart) {
				/* A new chunk: the last one's regions are complete. */
				if (c->start != UINT64_MAX) {
					if ((err = sweep_chunk_regions(tr, t, c)))
						break;
					t->sweep_cursor = c->start + SWEEP_CHUNK;
					if (deadline && now_sec() > deadline) {
						ended = false;
						break;
					}
				}
				memset(c, 0, sizeof(*c));
				memset(c->node, CXLT_NODE_UNKNOWN, sizeof(c->node));
				c->start = cstart;
			}
			if (have_pagemap_scan != 0 && !tr->no_pagemap_scan) {
				err = read_pagemap_scan(fd, c, a, b);
				if (have_pagemap_scan < 0 && (err == -ENOTTY || err == -EINVAL)) {
					pr_info("this kernel has no PAGEMAP_SCAN: reading pagemap instead (slower; page frames give the nodes)");
					have_pagemap_scan = 0;
				} else if (have_pagemap_scan < 0 && !err) {
					have_pagemap_scan = 1;
				}
			}
			if (have_pagemap_scan == 0 || tr->no_pagemap_scan)
				err = read_pagemap(fd, tr, c, a, b);
			a = b;
		}
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

void tracker__sweep_all(struct tracker *tr, uint32_t min_epochs)
{
	double deadline = now_sec() + tr->sweep_ms / 1000;
	uint32_t n = tr->nr_targets;

	for (uint32_t k = 0; k < n && now_sec() < deadline; k++) {
		uint32_t i = (tr->sweep_next + k) % n;
		struct target *t = &tr->targets[i];
		int err;

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
