// SPDX-License-Identifier: MIT
/*
 * The replay's DAMON (--sampler damon[:MAX]): the agent's own vaddr kdamond
 * emulated over the model's pages, with the kernel's adaptive regions, so
 * that what a policy sees under it is what DAMON would have shown it.  As
 * mm/damon (core.c, vaddr.c) does, with the agent's attributes (5 ms
 * sampling, 100 ms aggregation, 10 to MAX regions, default 1000):
 *
 *  - regions: each target's address space is cut at its two widest gaps
 *    into (at most) three ranges, which start evenly split into regions of
 *    total / DAMON_MIN_REGIONS pages; every DAMON_UPDATE_NS the ranges are
 *    taken again (a region outside every range goes, the first and last of
 *    each range stretch to its ends, a range with none gets one).  Live the
 *    ranges come from the VMAs; here from the pages the model knows (those
 *    touched so far and the trace's resident runs), the only address space
 *    a trace has;
 *  - each sampling interval, one page of each region, drawn at random when
 *    the interval began, is checked for an access since then;
 *  - each aggregation: neighbours whose counts differ by at most a tenth of
 *    the highest count merge (their counts averaged by size, no region over
 *    total / DAMON_MIN_REGIONS pages; the threshold doubles while there are
 *    more than MAX regions); every page of each region then gets the
 *    region's count as its samples, as damon__drain() hands a
 *    damon_aggregated region to the tracker; counts start again; and, while
 *    there are at most MAX / 2 regions, each is split in two at a random
 *    tenth (in three when the count stood still since the last split).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "util.h"

static int cmp_by_addr(const void *a, const void *b)
{
	const struct drec *x = a, *y = b;

	return x->page < y->page ? -1 : x->page > y->page;
}

/* The target's records in address order, new ones merged in (sorted only, then merged). */
static int sync_records(struct dtarget *dt, const struct target *t)
{
	struct drec *a = dt->recs, *m;
	uint32_t n = t->pt.nr, i, j, k;

	if (n == dt->known)
		return 0;
	if (n < dt->known)	/* records went: start again */
		dt->known = 0;
	/* 2 x n entries: the sorted list, then the merge's output. */
	if (2ULL * n > dt->cap_recs) {
		uint64_t cap = 4ULL * n;

		if (cap > UINT32_MAX || !(a = realloc(a, cap * sizeof(*a))))
			return -ENOMEM;
		dt->recs = a;
		dt->cap_recs = (uint32_t)cap;
	}
	for (i = dt->known; i < n; i++) {
		const struct cxlt_page *p = &t->pt.pages[i];

		a[i] = (struct drec){ .page = p->addr >> CXLT_PAGE_SHIFT, .idx = i,
					 .len = p->flags & PAGE_REGION ? REGION_PAGES : 1 };
	}
	qsort(a + dt->known, n - dt->known, sizeof(*a), cmp_by_addr);
	m = a + n;
	for (i = 0, j = dt->known, k = 0; i < dt->known || j < n;)
		m[k++] = j == n || (i < dt->known && a[i].page <= a[j].page) ? a[i++] : a[j++];
	memcpy(a, m, n * sizeof(*a));
	dt->known = n;
	return 0;
}

/* The first record that ends after page p (n: none). */
static uint32_t first_after(const struct drec *a, uint32_t n, uint64_t p)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (a[mid].page + a[mid].len <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t rand_in(struct sampler_run *s, uint64_t lo, uint64_t hi)
{
	return lo + splitmix64(&s->rng) % (hi - lo);
}

static int reserve(struct dtarget *dt, uint32_t n)
{
	struct dregion *r;
	uint32_t cap;

	if (n <= dt->cap)
		return 0;
	cap = n < 16 ? 16 : n + n / 2;
	if (!(r = realloc(dt->r, (size_t)cap * sizeof(*r))))
		return -ENOMEM;
	dt->r = r;
	dt->cap = cap;
	return 0;
}

/* Inserts a region [start, end) at position i. */
static int insert(struct sampler_run *s, struct dtarget *dt, uint32_t i, uint64_t start, uint64_t end,
		  const struct dregion *like)
{
	int err = reserve(dt, dt->nr + 1);

	if (err)
		return err;
	memmove(&dt->r[i + 1], &dt->r[i], (size_t)(dt->nr - i) * sizeof(*dt->r));
	dt->r[i] = like ? *like : (struct dregion){ 0 };
	dt->r[i].start = start;
	dt->r[i].end = end;
	dt->r[i].check = rand_in(s, start, end);
	dt->nr++;
	return 0;
}

/* Up to three ranges of a target's pages: cut at the two widest gaps. */
static int three_ranges(const struct drec *a, uint32_t n, uint64_t rng[3][2])
{
	uint32_t g[2] = { 0, 0 };	/* the gaps after records g[0], g[1]; 0 width: none */
	uint64_t w[2] = { 0, 0 };
	int nr = 0;

	for (uint32_t i = 0; i + 1 < n; i++) {
		uint64_t gap = a[i + 1].page - (a[i].page + a[i].len);

		if (gap > w[0]) {
			w[1] = w[0], g[1] = g[0];
			w[0] = gap, g[0] = i;
		} else if (gap > w[1]) {
			w[1] = gap, g[1] = i;
		}
	}
	if (w[1] && g[1] < g[0]) {	/* in address order */
		uint32_t gi = g[0];
		uint64_t wi = w[0];

		g[0] = g[1], w[0] = w[1];
		g[1] = gi, w[1] = wi;
	}
	rng[0][0] = a[0].page;
	for (int k = 0; k < 2; k++) {
		if (!w[k])
			continue;
		rng[nr][1] = a[g[k]].page + a[g[k]].len;
		rng[++nr][0] = a[g[k] + 1].page;
	}
	rng[nr][1] = a[n - 1].page + a[n - 1].len;
	return nr + 1;
}

/* Total pages under regions of every target. */
static uint64_t regions_pages(const struct damon_emu *dm)
{
	uint64_t sz = 0;

	for (uint32_t ti = 0; ti < dm->nr_t; ti++)
		for (uint32_t i = 0; i < dm->t[ti].nr; i++)
			sz += dm->t[ti].r[i].end - dm->t[ti].r[i].start;
	return sz;
}

/* The largest region a merge may make. */
static uint64_t sz_limit(const struct damon_emu *dm)
{
	uint64_t sz = regions_pages(dm) / DAMON_MIN_REGIONS;

	return sz ? sz : 1;
}

/*
 * The ops update: each target's regions follow its ranges.  A target with
 * no regions yet gets its ranges evenly split (the kernel's first regions).
 */
static int update(struct sampler_run *s)
{
	struct damon_emu *dm = &s->dm;
	struct tracker *tr = &s->md->tr;
	uint64_t total = 0;
	int err;

	if (tr->nr_targets > dm->nr_t) {
		struct dtarget *t = realloc(dm->t, tr->nr_targets * sizeof(*t));

		if (!t)
			return -ENOMEM;
		memset(t + dm->nr_t, 0, (tr->nr_targets - dm->nr_t) * sizeof(*t));
		dm->t = t;
		dm->nr_t = tr->nr_targets;
	}
	/* The first regions are cut in pieces of the whole space's tenth. */
	for (uint32_t ti = 0; ti < dm->nr_t; ti++) {
		uint64_t rng[3][2];
		int nr;

		if ((err = sync_records(&dm->t[ti], &tr->targets[ti])))
			return err;
		if (!dm->t[ti].nr && dm->t[ti].known) {
			nr = three_ranges(dm->t[ti].recs, dm->t[ti].known, rng);
			for (int k = 0; k < nr; k++)
				total += rng[k][1] - rng[k][0];
		}
	}
	for (uint32_t ti = 0; ti < dm->nr_t; ti++) {
		struct dtarget *dt = &dm->t[ti];
		uint64_t rng[3][2], piece = total / DAMON_MIN_REGIONS ? total / DAMON_MIN_REGIONS : 1;
		uint32_t i = 0;
		int nr;

		if (!dt->known)
			continue;
		nr = three_ranges(dt->recs, dt->known, rng);
		if (!dt->nr) {
			for (int k = 0; k < nr; k++)
				for (uint64_t p = rng[k][0]; p < rng[k][1]; p += piece) {
					uint64_t e = rng[k][1] - p > piece ? p + piece : rng[k][1];

					/* The last piece takes the remainder, as the kernel's does. */
					if (rng[k][1] - e < piece)
						e = rng[k][1];
					if ((err = insert(s, dt, dt->nr, p, e, NULL)))
						return err;
					if (e == rng[k][1])
						break;
				}
			continue;
		}
		/* Regions outside every range go; a range's first and last reach its ends. */
		for (uint32_t j = 0; j < dt->nr; j++) {
			struct dregion *r = &dt->r[j];
			bool in = false;

			for (int k = 0; k < nr && !in; k++)
				in = r->start < rng[k][1] && rng[k][0] < r->end;
			if (in)
				dt->r[i++] = *r;
		}
		dt->nr = i;
		for (int k = 0; k < nr; k++) {
			uint32_t first = dt->nr, last = 0;

			for (uint32_t j = 0; j < dt->nr; j++)
				if (dt->r[j].start < rng[k][1] && rng[k][0] < dt->r[j].end) {
					first = first < j ? first : j;
					last = j;
				}
			if (first == dt->nr) {
				for (i = 0; i < dt->nr && dt->r[i].start < rng[k][0]; i++)
					;
				if ((err = insert(s, dt, i, rng[k][0], rng[k][1], NULL)))
					return err;
				continue;
			}
			dt->r[first].start = rng[k][0];
			dt->r[last].end = rng[k][1];
		}
		for (uint32_t j = 0; j < dt->nr; j++)
			if (dt->r[j].check < dt->r[j].start || dt->r[j].check >= dt->r[j].end)
				dt->r[j].check = rand_in(s, dt->r[j].start, dt->r[j].end);
	}
	return 0;
}

/*
 * Whether a check over [prev, now) finds the page accessed.  On a trace
 * coarser than the checks, the page's last sample stands for last_w
 * accesses spread evenly over spread_ns after its time: the check finds
 * one with probability 1 - (1 - overlap / spread_ns)^last_w.
 */
static bool accessed(struct sampler_run *s, const struct model_page *m, uint64_t prev, uint64_t now)
{
	uint64_t t, lo, hi;
	double l;

	if (!s->spread_ns)
		return m->last_ns > prev;	/* last_ns is a model_stamp, one over the time */
	if (!m->last_ns)
		return false;
	t = m->last_ns - 1;
	lo = t > prev ? t : prev;
	hi = t > UINT64_MAX - s->spread_ns || t + s->spread_ns > now ? now : t + s->spread_ns;
	if (hi <= lo)
		return false;
	l = hi - lo == s->period_ns ? s->spread_log1p :
	    log1p(-(double)(hi - lo) / (double)s->spread_ns);
	return unit_rand(&s->rng) < -expm1((double)m->last_w * l);
}

int damon_emu__check(struct sampler_run *s, uint64_t prev, uint64_t now)
{
	struct damon_emu *dm = &s->dm;
	int err;

	if (!dm->nr_t || now >= dm->next_update_ns) {
		if ((err = update(s)))
			return err;
		dm->next_update_ns = now + DAMON_UPDATE_NS;
	}
	for (uint32_t ti = 0; ti < dm->nr_t; ti++) {
		struct dtarget *dt = &dm->t[ti];
		const struct model_page *mp = s->md->pages[ti];
		const struct drec *a;

		if ((err = sync_records(dt, &s->md->tr.targets[ti])))
			return err;
		a = dt->recs;
		for (uint32_t i = 0; i < dt->nr; i++) {
			struct dregion *r = &dt->r[i];
			uint32_t k = first_after(a, dt->known, r->check);

			if (k < dt->known && a[k].page <= r->check && accessed(s, &mp[a[k].idx], prev, now)) {
				r->nr_accesses++;
				if (r->nr_accesses > dm->max_nr_accesses)
					dm->max_nr_accesses = r->nr_accesses;
				s->pending = true;
			}
			r->check = rand_in(s, r->start, r->end);
		}
	}
	return 0;
}

/* Neighbours of about the same count become one; regions' ages. */
static void merge(struct dtarget *dt, uint32_t thres, uint64_t limit)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < dt->nr; i++) {
		struct dregion *r = &dt->r[i], *p = n ? &dt->r[n - 1] : NULL;
		uint32_t d = r->nr_accesses > r->last_nr_accesses ? r->nr_accesses - r->last_nr_accesses :
								    r->last_nr_accesses - r->nr_accesses;

		r->age = d > thres ? 0 : r->age + 1;
		if (p && p->end == r->start &&
		    (p->nr_accesses > r->nr_accesses ? p->nr_accesses - r->nr_accesses :
						       r->nr_accesses - p->nr_accesses) <= thres &&
		    (p->end - p->start) + (r->end - r->start) <= limit) {
			uint64_t sp = p->end - p->start, sr = r->end - r->start;

			p->nr_accesses = (uint32_t)((p->nr_accesses * sp + r->nr_accesses * sr) / (sp + sr));
			p->age = (uint32_t)((p->age * sp + r->age * sr) / (sp + sr));
			p->end = r->end;
		} else {
			dt->r[n++] = *r;
		}
	}
	dt->nr = n;
}

static uint32_t nr_regions(const struct damon_emu *dm)
{
	uint32_t n = 0;

	for (uint32_t ti = 0; ti < dm->nr_t; ti++)
		n += dm->t[ti].nr;
	return n;
}

int damon_emu__aggregate(struct sampler_run *s, uint64_t now)
{
	struct damon_emu *dm = &s->dm;
	uint32_t thres = dm->max_nr_accesses / 10, max_thres = s->checks_per_aggr, nr, subs;
	uint64_t limit = sz_limit(dm);
	int err;

	do {
		for (uint32_t ti = 0; ti < dm->nr_t; ti++)
			merge(&dm->t[ti], thres, limit);
		nr = nr_regions(dm);
		thres = thres ? thres * 2 : 1;
	} while (nr > dm->max_regions && thres / 2 < max_thres);

	/* Each page of a region with accesses gets its count (a huge page, its pages'). */
	for (uint32_t ti = 0; ti < dm->nr_t; ti++) {
		struct dtarget *dt = &dm->t[ti];
		const struct drec *a = dt->recs;

		for (uint32_t i = 0; i < dt->nr; i++) {
			struct dregion *r = &dt->r[i];

			if (r->nr_accesses)
				for (uint32_t k = first_after(a, dt->known, r->start);
				     k < dt->known && a[k].page < r->end; k++) {
					uint64_t lo = a[k].page > r->start ? a[k].page : r->start;
					uint64_t hi = a[k].page + a[k].len < r->end ? a[k].page + a[k].len :
										      r->end;

					sampler_emit(s, ti, a[k].idx, now, r->nr_accesses * (uint32_t)(hi - lo), 0);
				}
			r->last_nr_accesses = r->nr_accesses;
			r->nr_accesses = 0;
		}
	}
	dm->max_nr_accesses = 0;
	s->pending = false;

	if (nr > dm->max_regions / 2)
		return 0;
	subs = dm->last_nr_regions == nr && nr < dm->max_regions / 3 ? 3 : 2;
	for (uint32_t ti = 0; ti < dm->nr_t; ti++) {
		struct dtarget *dt = &dm->t[ti];

		for (uint32_t i = 0; i < dt->nr; i++) {
			uint64_t sz = dt->r[i].end - dt->r[i].start;
			uint32_t made = 0;

			/* The left part splits again: its right parts follow it in order. */
			for (uint32_t k = 0; k < subs - 1 && sz > 2; k++) {
				uint64_t sub = (splitmix64(&s->rng) % 9 + 1) * sz / 10;
				struct dregion right;

				if (!sub || sub >= sz)
					continue;
				right = dt->r[i];
				dt->r[i].end = dt->r[i].start + sub;
				dt->r[i].check = rand_in(s, dt->r[i].start, dt->r[i].end);
				if ((err = insert(s, dt, i + 1, dt->r[i].start + sub, right.end, &right)))
					return err;
				made++;
				sz = sub;
			}
			i += made;
		}
	}
	dm->last_nr_regions = nr;
	return 0;
}

void damon_emu__free(struct damon_emu *dm)
{
	for (uint32_t ti = 0; ti < dm->nr_t; ti++) {
		free(dm->t[ti].r);
		free(dm->t[ti].recs);
	}
	free(dm->t);
	*dm = (struct damon_emu){ 0 };
}
