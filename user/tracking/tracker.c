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
#include "tracker_int.h"
#include "util.h"

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

struct region *region_table__find(const struct region_table *rt, uint64_t base)
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
struct region *region_get(struct target *t, uint64_t base, bool *created)
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
int target__compact(struct target *t)
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

void tracker__huge_split(struct target *t, struct region *r)
{
	struct cxlt_page *rec = &t->pt.pages[r->rec];

	rec->flags &= ~(PAGE_HUGE | CXLT_PAGE_SAMPLED);
	rec->heat = 0;
	rec->samples = 0;
	r->flags |= REGION_SPLIT | REGION_MIXED;
	t->split_regions++;
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

uint64_t target_bytes(const struct target *t)
{
	return page_table__bytes(&t->pt) + region_table__bytes(&t->rt);
}

/* Bytes the tracker's tables hold, allocated: what the budget weighs. */
uint64_t tracker__bytes_used(const struct tracker *tr)
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

/* Whether a region's sampled chunks differ: some sampled, some resident ones not. */
static bool region_mixed(const struct region *r)
{
	uint64_t resident = r->resident_bits ? r->resident_bits : ~0ULL;

	return r->sampled_bits && (resident & ~r->sampled_bits);
}

static void split_record(struct tracker *tr, struct target *t, struct region *r);

/*
 * Region r's sampled chunks now differ (region_mixed): its sampled pages get
 * records of their own from here on.  What its record gathered so far came
 * from the chunks that differ and says nothing of the rest, which the record
 * stands for now (as never sampled: policies tell hot from cold by that).
 */
static void turn_mixed(struct tracker *tr, struct target *t, struct region *r)
{
	if (!(r->flags & REGION_MIXED) && !(t->pt.pages[r->rec].flags & PAGE_HUGE)) {
		split_record(tr, t, r);
		t->pt.pages[r->rec].heat = 0;
		t->pt.pages[r->rec].samples = 0;
		t->pt.pages[r->rec].flags &= ~CXLT_PAGE_SAMPLED;
	}
	r->flags |= REGION_MIXED;
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
		/* The replay's huge pages (user/replay/run.c): one record each, as here. */
		if (t->rt.nr && (r = region_table__find(&t->rt, addr & ~(REGION_SIZE - 1))) &&
		    (t->pt.pages[r->rec].flags & PAGE_HUGE))
			return &t->pt.pages[r->rec];
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

	if (!p) {
		tr->dropped++;
		return;
	}
	tracker__ingest_record(tr, t, p, val);
}

void tracker__ingest_record(struct tracker *tr, struct target *t, struct cxlt_page *p,
			    const struct cxlt_page_val *val)
{
	uint32_t s;

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

/* The target of a sample; *t caches the last one (runs of one tgid are common). */
static bool sample_target(struct tracker *tr, const struct cxlt_page_key *key, struct target **t)
{
	int ti;

	if (*t && (*t)->pid == (pid_t)key->tgid)
		return true;
	if ((ti = tracker__find_target(tr, key->tgid)) < 0) {
		*t = NULL;
		return false;
	}
	*t = &tr->targets[ti];
	return true;
}

void tracker__ingest(struct tracker *tr, const struct cxlt_page_key *keys,
		     const struct cxlt_page_val *vals, uint32_t n)
{
	struct target *t = NULL;

	/*
	 * The regions' sampled chunks first, so that a region these samples
	 * show mixed gives its sampled pages records of their own now: a
	 * source that samples each page about once a pass (hint faults) would
	 * otherwise pour its first pass into region records, which the review
	 * then empties, and place nothing until the next.
	 */
	for (uint32_t i = 0; i < n && !tr->detail_all; i++) {
		uint64_t addr = keys[i].vpage << CXLT_PAGE_SHIFT, before;
		struct region *r;
		bool created;

		if (!sample_target(tr, &keys[i], &t))
			continue;
		before = target_bytes(t);
		if (!(r = region_get(t, addr & ~(REGION_SIZE - 1), &created)))
			continue;
		tr->bytes_used += target_bytes(t) - before;
		r->sampled_bits |= 1ULL << (((addr >> CXLT_PAGE_SHIFT) & (REGION_PAGES - 1)) / CHUNK_PAGES);
	}
	for (uint32_t i = 0; i < n; i++) {
		struct region *r;

		if (!sample_target(tr, &keys[i], &t)) {
			tr->dropped++;
			continue;
		}
		if (!tr->detail_all && (r = tracker__region(t, keys[i].vpage << CXLT_PAGE_SHIFT)) &&
		    !(r->flags & REGION_MIXED) && region_mixed(r))
			turn_mixed(tr, t, r);
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
void fold_region(struct tracker *tr, struct target *t, struct region *r)
{
	int64_t i;

	for (uint32_t k = 0; (i = region_record(t, r, &k)) >= 0; k++)
		if (!(t->pt.pages[i].flags & PAGE_GONE))
			fold_page(tr, t, (uint32_t)i);
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
			turn_mixed(tr, t, r);
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
			/* After tracker__end_epoch: samples are gone, idle_epochs tells. */
			if ((p->flags & CXLT_PAGE_SAMPLED) && !p->idle_epochs && p->node >= 0 &&
			    !((fast_mask >> p->node) & 1))
				pl->slow_sampled += 1;
			place_pages(pl, fast_mask, p->node, n, unseen);
		}
		total->fast += pl->fast;
		total->slow += pl->slow;
		total->unknown += pl->unknown;
		total->sampled += pl->sampled;
		total->fast_unseen += pl->fast_unseen;
		total->slow_sampled += pl->slow_sampled;
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
