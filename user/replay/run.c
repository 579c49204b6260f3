// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"
#include "replay.h"
#include "sources.h"
#include "util.h"

/* ---- one pass of a policy over the trace ---- */


/* Appends size bytes at *a (n of them, room for cap); 0 or -ENOMEM. */
static int push(void *a, uint64_t *n, uint64_t *cap, const void *x, size_t size)
{
	void **arr = a;

	if (*n == *cap) {
		uint64_t c = *cap ? 2 * *cap : 256;
		void *p = realloc(*arr, c * size);

		if (!p)
			return -ENOMEM;
		*arr = p;
		*cap = c;
	}
	memcpy((char *)*arr + *n * size, x, size);
	(*n)++;
	return 0;
}

static int cmp_run(const void *a, const void *b);

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void trace_scan__free(struct trace_scan *sc)
{
	free(sc->run);
	free(sc->marks);
	free(sc->huge);
	free(sc->page_of);
	sc->run = NULL;
	sc->marks = NULL;
	sc->huge = NULL;
	sc->page_of = NULL;
}

static int cmp_huge(const void *a, const void *b)
{
	const struct huge_unit *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->vpage < y->vpage ? -1 : x->vpage > y->vpage;
}

uint64_t huge_base(const struct trace_scan *sc, uint32_t tgid, uint64_t vpage)
{
	const struct huge_unit key = { .vpage = vpage & ~(uint64_t)(REGION_PAGES - 1), .tgid = tgid };

	if (!sc->nr_huge)
		return UINT64_MAX;
	return bsearch(&key, sc->huge, sc->nr_huge, sizeof(key), cmp_huge) ? key.vpage : UINT64_MAX;
}

/* A huge-page record the model can use: 2 MiB of 4 KiB pages, aligned. */
static bool huge_usable(const struct trace *tr, const struct cxlt_sample *x)
{
	uint32_t order = x->source & 0xff;

	return tr->hdr.page_size == 1U << CXLT_PAGE_SHIFT && (1U << order) == REGION_PAGES &&
	       x->vpage % REGION_PAGES == 0 && x->weight % REGION_PAGES == 0;
}

/* The distinct page key of scan_trace: tgid in the top bits keeps processes apart. */
/*
 * (tgid, vpage) as one page-table key: the tgid spread over every bit (a
 * shift dropped all but its low 12 bits under the page table's << 12).
 * 84 bits do not fit in 64, so two pairs can share a key in theory; what
 * relies on it checks the record it finds (ingest_epoch).
 */
static uint64_t scan_key(uint32_t tgid, uint64_t vpage)
{
	return (vpage ^ ((uint64_t)tgid * 0x9E3779B97F4A7C15ULL)) << 12;
}

/*
 * Huge pages sorted, once each; their pages count among the distinct ones:
 * all of them where resident runs count (the recording found them
 * resident), else those of huge pages that have a sampled page (a first
 * touch brings the whole huge page in).
 */
static int scan_huge(struct trace_scan *sc, struct page_table *pt, bool with_runs)
{
	uint64_t k = 0;
	bool created;

	if (!sc->nr_huge)
		return 0;
	qsort(sc->huge, sc->nr_huge, sizeof(*sc->huge), cmp_huge);
	for (uint64_t i = 0; i < sc->nr_huge; i++)
		if (!k || cmp_huge(&sc->huge[k - 1], &sc->huge[i]))
			sc->huge[k++] = sc->huge[i];
	sc->nr_huge = k;
	for (uint64_t i = 0; i < sc->nr_huge; i++) {
		const struct huge_unit *u = &sc->huge[i];
		bool touched = with_runs;

		for (uint32_t p = 0; p < REGION_PAGES && !touched; p++)
			touched = page_table__find(pt, scan_key(u->tgid, u->vpage + p)) >= 0;
		for (uint32_t p = 0; p < REGION_PAGES && touched; p++)
			if (page_table__get(pt, scan_key(u->tgid, u->vpage + p), &created) < 0)
				return -ENOMEM;
	}
	return 0;
}

int scan_trace(const struct trace *tr, struct trace_scan *sc, bool with_runs, char *msg,
	       size_t msglen)
{
	struct trace_cursor *c = malloc(sizeof(*c));
	struct page_table pt = { 0 };
	uint64_t cap_runs = 0, cap_marks = 0, cap_huge = 0, prev_t = 0;
	const struct cxlt_sample *x;
	bool created;
	int err = 0;

	*sc = (struct trace_scan){ .t_first = UINT64_MAX, .vpage_min = UINT64_MAX };
	if (!c) {
		snprintf(msg, msglen, "out of memory");
		return -ENOMEM;
	}
	if (tr->nr_samples <= SCAN_INDEX_MAX &&
	    !(sc->page_of = malloc((tr->nr_samples ? tr->nr_samples : 1) * sizeof(*sc->page_of)))) {
		free(c);
		snprintf(msg, msglen, "out of memory");
		return -ENOMEM;
	}
	trace_cursor__init_all(c, tr);
	while ((x = trace_cursor__next(c))) {
		enum trace_kind kind = trace__kind(tr, x);
		uint64_t ri = c->next + c->pos - 1;	/* x's index in the trace */
		int idx;

		if (sc->page_of)
			sc->page_of[ri] = UINT32_MAX;

		if (kind == TRACE_MARK && push(&sc->marks, &sc->nr_marks, &cap_marks, &x->time_ns,
					       sizeof(x->time_ns))) {
			err = -ENOMEM;
			snprintf(msg, msglen, "out of memory for %llu epoch marks",
				 (unsigned long long)sc->nr_marks);
			goto out;
		}
		if (kind == TRACE_HUGE_RUN && !huge_usable(tr, x)) {
			sc->huge_ignored++;
		} else if (kind == TRACE_HUGE_RUN) {
			for (uint32_t k = 0; k < x->weight; k += REGION_PAGES) {
				const struct huge_unit u = { .vpage = x->vpage + k, .tgid = x->tgid };

				if (push((void **)&sc->huge, &sc->nr_huge, &cap_huge, &u, sizeof(u))) {
					err = -ENOMEM;
					snprintf(msg, msglen, "out of memory for %llu huge pages",
						 (unsigned long long)sc->nr_huge);
					goto out;
				}
			}
		}
		if (kind == TRACE_RUN && x->weight && with_runs &&
		    push((void **)&sc->run, &sc->runs, &cap_runs, x, sizeof(*x))) {
			err = -ENOMEM;
			snprintf(msg, msglen, "out of memory for %llu resident runs",
				 (unsigned long long)sc->runs);
			goto out;
		}
		if (kind == TRACE_RUN) {
			if (!with_runs)
				sc->runs++;
			sc->run_pages += x->weight;
			for (uint32_t k = 0; with_runs && k < x->weight; k++)
				if (page_table__get(&pt, scan_key(x->tgid, x->vpage + k), &created) < 0) {
					snprintf(msg, msglen, "out of memory after %llu distinct pages",
						 (unsigned long long)pt.nr);
					err = -ENOMEM;
					goto out;
				}
		}
		if (kind != TRACE_SAMPLE)
			continue;
		sc->samples++;
		if ((idx = page_table__get(&pt, scan_key(x->tgid, x->vpage), &created)) < 0) {
			snprintf(msg, msglen, "out of memory after %llu distinct pages",
				 (unsigned long long)pt.nr);
			err = -ENOMEM;
			break;
		}
		if (sc->page_of)
			sc->page_of[ri] = (uint32_t)idx;
		sc->accesses += x->weight ? x->weight : 1;
		if (sources__kind_repeats(x->source))
			sc->source_flags |= CXLT_SOURCE_REPEATS;
		if (x->vpage < sc->vpage_min)
			sc->vpage_min = x->vpage;
		if (x->vpage > sc->vpage_max)
			sc->vpage_max = x->vpage;
		if (sc->samples > 1 && x->time_ns != prev_t) {
			uint64_t gap = x->time_ns > prev_t ? x->time_ns - prev_t : prev_t - x->time_ns;

			if (!sc->res_ns || gap < sc->res_ns)
				sc->res_ns = gap;
		}
		prev_t = x->time_ns;
		if (x->time_ns < sc->t_first)
			sc->t_first = x->time_ns;
		if (x->time_ns > sc->t_last)
			sc->t_last = x->time_ns;
	}
	if (c->err) {
		snprintf(msg, msglen, "%s", c->msg);
		err = c->err;
	}
	if (!err && (err = scan_huge(sc, &pt, with_runs)))
		snprintf(msg, msglen, "out of memory after %llu distinct pages",
			 (unsigned long long)pt.nr);
	/* Marks in time order (a trace may come from anyone); runs grouped by process. */
	if (sc->nr_marks)
		qsort(sc->marks, sc->nr_marks, sizeof(*sc->marks), cmp_u64);
	if (sc->runs && sc->run)
		qsort(sc->run, sc->runs, sizeof(*sc->run), cmp_run);
out:
	if (err)
		trace_scan__free(sc);
	sc->pages = pt.nr;
	free(pt.pages);
	free(pt.words);
	free(pt.slots);
	free(c);
	return err;
}

/* Access counts below this go through the oracle's histogram; the rare larger ones are sorted. */
#define ORACLE_HIST 65536

static int cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The replay's steps of the epoch pipeline (pipeline.h), over one run's model. */
struct replay_run {
	const struct run_in *in;
	struct result *res;
	struct model md;
	struct trace_cursor *c;
	uint32_t *count_hist;	/* for the oracle: pages by access count */
	uint32_t max_count;	/* the largest count in count_hist */
	uint64_t *big;		/* for the oracle: counts of ORACLE_HIST and more */
	size_t nr_big, cap_big;
	uint64_t *huge_acc;	/* for the oracle: each accessed huge page's count */
	uint64_t nr_huge_acc, cap_huge_acc;
	/*
	 * The last epoch's oracle set, for the lagged oracle: pages with more
	 * accesses a page than lag_thr, and lag_frac of those with lag_thr.
	 */
	uint64_t lag_thr;
	double lag_frac;
	struct sampler_run smp;	/* what feeds the tracker */
	struct rec_ref { uint32_t ti; int32_t idx; } *rec_of;	/* by the scan's page_of: a record, idx -1: none */
	/* --start trace: the resident runs by tgid (the scan's), a group per tgid, the groups by time. */
	const struct cxlt_sample *runs;
	struct start_group *groups;
	uint32_t *by_time;
	uint32_t nr_runs, nr_groups, next_group;
	uint64_t spilled;	/* pages of runs that did not fit their tier */
	FILE *epochs;		/* --epochs-csv */
};

struct start_group {
	uint32_t tgid, first, n;
	uint64_t time_ns;	/* its runs' */
	bool applied;
};

static int cmp_run(const void *a, const void *b)
{
	const struct cxlt_sample *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->vpage < y->vpage ? -1 : x->vpage > y->vpage;
}

static const struct start_group *sort_groups;

static int cmp_group_time(const void *a, const void *b)
{
	const struct start_group *x = &sort_groups[*(const uint32_t *)a];
	const struct start_group *y = &sort_groups[*(const uint32_t *)b];

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

/*
 * Groups the scan's resident runs by process and time: a process's first
 * group is where it starts, a later one (cxltierd records a target again
 * when it grew a lot) adds the pages the model lacks at its time.  0 or
 * -errno.
 */
static int load_start(struct replay_run *r)
{
	const struct trace_scan *sc = r->in->scan;

	if (sc->runs > UINT32_MAX)
		return -E2BIG;
	r->runs = sc->run;
	r->nr_runs = (uint32_t)sc->runs;
	r->groups = calloc(r->nr_runs ? r->nr_runs : 1, sizeof(*r->groups));
	r->by_time = calloc(r->nr_runs ? r->nr_runs : 1, sizeof(*r->by_time));
	if (!r->groups || !r->by_time)
		return -ENOMEM;
	for (uint32_t i = 0; i < r->nr_runs; i++) {
		struct start_group *g = r->nr_groups ? &r->groups[r->nr_groups - 1] : NULL;

		if (!g || g->tgid != r->runs[i].tgid || g->time_ns != r->runs[i].time_ns) {
			g = &r->groups[r->nr_groups++];
			*g = (struct start_group){ .tgid = r->runs[i].tgid, .first = i,
						   .time_ns = r->runs[i].time_ns };
		}
		g->n++;
	}
	for (uint32_t i = 0; i < r->nr_groups; i++)
		r->by_time[i] = i;
	sort_groups = r->groups;
	qsort(r->by_time, r->nr_groups, sizeof(*r->by_time), cmp_group_time);
	return 0;
}

/*
 * The record of page vpage of target ti: its own, or its huge page's (one
 * record of REGION_PAGES pages, as the live tracker keeps a huge page).
 */
static int page_record(struct replay_run *r, uint32_t ti, uint64_t vpage, bool *created)
{
	struct target *t = &r->md.tr.targets[ti];
	uint64_t base = huge_base(r->in->scan, (uint32_t)t->pid, vpage);
	struct region_found f = { .base = base << CXLT_PAGE_SHIFT, .resident = REGION_PAGES,
				  .resident_bits = ~0ULL, .huge = true,
				  .node_id = { CXLT_NODE_UNKNOWN, CXLT_NODE_UNKNOWN } };
	struct region *rg;

	if (base == UINT64_MAX)
		return page_table__get(&t->pt, vpage << CXLT_PAGE_SHIFT, created);
	*created = false;
	if ((rg = tracker__region(t, f.base)))
		return (int)rg->rec;
	if (!(rg = tracker__region_found(&r->md.tr, t, &f)))
		return -ENOMEM;
	*created = true;
	t->pt.pages[rg->rec].npages = REGION_PAGES;
	return (int)rg->rec;
}

/* Where a first touch of n pages goes: fast while it stays over its low watermark. */
static int first_touch_node(const struct replay_run *r, uint32_t n)
{
	const struct model *md = &r->md;
	uint64_t low = (uint64_t)(md->cap[NODE_FAST] * r->in->o->low_pct / 100);

	return md->used[NODE_FAST] + low + n <= md->cap[NODE_FAST] ? NODE_FAST : NODE_SLOW;
}

/* The node n pages of the start go to: their run's tier if there is room, else the other's. */
static int start_node(struct replay_run *r, int role, uint32_t n)
{
	struct model *md = &r->md;
	int want = role == CXLT_NODE_FAST ? NODE_FAST : role == CXLT_NODE_SLOW ? NODE_SLOW :
		   first_touch_node(r, n);

	if (md->used[want] + n <= md->cap[want] || role < 0)
		return want;
	r->spilled += n;
	return md->used[!want] + n <= md->cap[!want] ? !want : want;
}

/* Puts a process's resident pages in the model where its runs say; pages it has keep theirs. */
static int apply_group(struct replay_run *r, struct start_group *g, uint32_t ti)
{
	struct model *md = &r->md;
	struct target *t = &md->tr.targets[ti];
	int err;

	g->applied = true;
	for (uint32_t i = g->first; i < g->first + g->n; i++) {
		const struct cxlt_sample *x = &r->runs[i];
		int role = trace__run_role(r->in->trace, x);

		for (uint64_t vp = x->vpage; vp < x->vpage + x->weight;) {
			bool created;
			int idx = page_record(r, ti, vp, &created);
			uint32_t n;
			int node;

			if (idx < 0)
				return idx;
			/* A huge page is placed whole, once: on to the page after it. */
			n = tracker__record_pages(t, &t->pt.pages[idx]);
			vp = n > 1 ? (t->pt.pages[idx].addr >> CXLT_PAGE_SHIFT) + n : vp + 1;
			if (!created)
				continue;
			node = start_node(r, role, n);
			t->pt.pages[idx].node = (int8_t)node;
			md->used[node] += n;
		}
	}
	if ((err = model_pages_grow(md, ti, t->pt.nr)))
		return err;
	t->nodes_known = t->pt.nr;
	return 0;
}

static struct start_group *find_group(struct replay_run *r, uint32_t tgid)
{
	uint32_t lo = 0, hi = r->nr_groups;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (r->groups[mid].tgid < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->nr_groups && r->groups[lo].tgid == tgid ? &r->groups[lo] : NULL;
}

/*
 * tgid's target, made on its first sample or resident run; a new one
 * begins with its first group of resident pages (--start trace).  The
 * index or -errno.
 */
static int replay_target(struct replay_run *r, uint32_t tgid)
{
	uint32_t before = r->md.tr.nr_targets;
	int ti = model_target(&r->md, tgid), err;
	struct start_group *g;

	if (ti < 0 || r->md.tr.nr_targets == before || !r->nr_groups)
		return ti;
	g = find_group(r, tgid);
	if (g && !g->applied && (err = apply_group(r, g, (uint32_t)ti)))
		return err;
	return ti;
}

/*
 * The groups of runs that lie before end: in the model before the epoch's
 * samples (a process's first makes it; a later one adds the pages it lacks).
 */
static int start_due(struct replay_run *r, uint64_t end)
{
	while (r->next_group < r->nr_groups) {
		struct start_group *g = &r->groups[r->by_time[r->next_group]];
		int ti, err;

		if (g->time_ns >= end)
			break;
		r->next_group++;
		if (g->applied)
			continue;
		if ((ti = replay_target(r, g->tgid)) < 0)
			return ti;
		if (!g->applied && (err = apply_group(r, g, (uint32_t)ti)))
			return err;
	}
	return 0;
}

/* One page's accesses this epoch, for the oracle; 0 or -ENOMEM. */
static int oracle_count(struct replay_run *r, uint64_t a)
{
	if (a < ORACLE_HIST) {
		r->count_hist[a]++;
		if (a > r->max_count)
			r->max_count = (uint32_t)a;
		return 0;
	}
	if (r->nr_big == r->cap_big) {
		size_t n = r->cap_big ? 2 * r->cap_big : 64;
		uint64_t *big = realloc(r->big, n * sizeof(*big));

		if (!big)
			return -ENOMEM;
		r->big = big;
		r->cap_big = n;
	}
	r->big[r->nr_big++] = a;
	return 0;
}

/* A huge page's accesses this epoch, for the oracle; 0 or -ENOMEM. */
static int oracle_count_huge(struct replay_run *r, uint64_t a)
{
	return push(&r->huge_acc, &r->nr_huge_acc, &r->cap_huge_acc, &a, sizeof(a));
}

/*
 * Takes the huge pages (sorted, from *h on) at least as dense as a page of
 * `per_page` accesses, each whole where it fits; returns their accesses.
 */
static uint64_t oracle_take_huge(struct replay_run *r, uint64_t *h, uint64_t per_page,
				 uint64_t *left)
{
	uint64_t hits = 0;

	for (; *h < r->nr_huge_acc && r->huge_acc[*h] >= per_page * REGION_PAGES; (*h)++) {
		if (*left < REGION_PAGES)
			continue;
		hits += r->huge_acc[*h];
		*left -= REGION_PAGES;
	}
	return hits;
}

/*
 * The oracle's hits this epoch: the cap fast pages given to the densest
 * accesses, a huge page whole (greedy by accesses per page, as the model
 * moves a huge page whole: no split); the counts start again.
 */
static uint64_t oracle_hits(struct replay_run *r, uint64_t cap)
{
	uint64_t hits = 0, left = cap, h = 0;
	bool cut = false;	/* lag_thr found: where the fast tier filled */

	if (r->nr_big)
		qsort(r->big, r->nr_big, sizeof(*r->big), cmp_desc);
	if (r->nr_huge_acc)
		qsort(r->huge_acc, r->nr_huge_acc, sizeof(*r->huge_acc), cmp_desc);
	r->lag_thr = 0;
	r->lag_frac = 1;
	for (size_t k = 0; k < r->nr_big; k++) {
		hits += oracle_take_huge(r, &h, r->big[k], &left);
		if (left) {
			hits += r->big[k];
			left--;
		} else if (!cut) {
			cut = true;
			r->lag_thr = r->big[k];
			r->lag_frac = 0;
		}
	}
	for (uint32_t s = r->max_count; s > 0; s--) {
		uint64_t take;

		hits += oracle_take_huge(r, &h, s, &left);
		take = r->count_hist[s] < left ? r->count_hist[s] : left;
		if (!cut && take < r->count_hist[s]) {
			cut = true;
			r->lag_thr = s;
			r->lag_frac = (double)take / r->count_hist[s];
		}
		hits += take * s;
		left -= take;
		r->count_hist[s] = 0;
	}
	hits += oracle_take_huge(r, &h, 0, &left);
	r->nr_big = 0;
	r->max_count = 0;
	r->nr_huge_acc = 0;
	return hits;
}

/*
 * The epoch [start, end): its accesses, every one (the cursor stops at the
 * first later one).  Each page gets its record in the tracker on its first
 * access, and its count of the epoch beside it (struct model_page): the
 * truth the score is made of.  The emulated source sees each access and
 * feeds the tracker what it would have reported (sampler.c).
 */
/* Whether record idx of t is page vpage's (its own, or its huge page's). */
static inline bool record_holds(const struct target *t, uint32_t idx, uint64_t vpage)
{
	uint64_t a = vpage << CXLT_PAGE_SHIFT;
	const struct cxlt_page *p;

	if (idx >= t->pt.nr)
		return false;
	p = &t->pt.pages[idx];
	if (!(p->flags & PAGE_REGION))
		return p->addr == a;
	return (p->flags & PAGE_HUGE) && p->addr <= a && a - p->addr < REGION_SIZE;
}

static int ingest_epoch(struct replay_run *r, uint64_t start, uint64_t end)
{
	const struct run_in *in = r->in;
	const struct trace_scan *sc = in->scan;
	struct model *md = &r->md;
	struct trace_cursor *c = r->c;
	const struct cxlt_sample *x;
	int err;

	if ((err = sampler_run__epoch(&r->smp, start)) || (err = start_due(r, end)))
		return err;
	while ((x = trace_cursor__peek(c)) && x->time_ns < end) {
		uint32_t w = x->weight ? x->weight : 1;
		int ti = replay_target(r, x->tgid), idx;
		uint32_t sp;
		struct model_page *mp;
		struct target *t;
		bool created;

		if (ti < 0)
			return ti;
		if ((err = sampler_run__clock(&r->smp, x->time_ns)))
			return err;
		t = &md->tr.targets[ti];
		sp = sc->page_of ? sc->page_of[c->next + c->pos] : UINT32_MAX;
		if (sp != UINT32_MAX && r->rec_of[sp].ti == (uint32_t)ti && r->rec_of[sp].idx >= 0 &&
		    record_holds(t, (uint32_t)r->rec_of[sp].idx, x->vpage)) {
			idx = r->rec_of[sp].idx;
			created = false;
		} else if ((idx = page_record(r, (uint32_t)ti, x->vpage, &created)) < 0) {
			return idx;
		} else if (sp != UINT32_MAX) {
			r->rec_of[sp] = (struct rec_ref){ .ti = (uint32_t)ti, .idx = idx };
		}
		if (created && (err = model_pages_grow(md, ti, t->pt.nr)))
			return err;
		if ((err = sampler_run__access(&r->smp, x, ti, idx, created)))
			return err;
		mp = &md->pages[ti][idx];
		mp->accesses += w;
		model_page_at(mp, x->time_ns, w);
		if (in->heat_bins) {
			/* Rows: address order, as the heap lies.  128 bits: the span may be 2^64. */
			uint32_t x_bin = (uint32_t)(md->e * in->heat_w / in->nr_epochs);
			uint32_t y_bin = (uint32_t)((unsigned __int128)(x->vpage - sc->vpage_min) *
						    in->heat_h /
						    ((unsigned __int128)(sc->vpage_max - sc->vpage_min) + 1));

			in->heat_bins[(uint64_t)y_bin * in->heat_w + x_bin] += w;
		}
		c->pos++;
	}
	if (c->err)
		return c->err;
	/* The source's own events before the epoch's end are the epoch's, as live at the tick. */
	return end > start && end != UINT64_MAX ? sampler_run__clock(&r->smp, end - 1) : 0;
}

void epoch_window(const struct run_in *in, uint64_t e, uint64_t *start, uint64_t *end)
{
	const struct trace_scan *sc = in->scan;
	uint64_t epoch_ns = (uint64_t)in->o->epoch_ms * 1000000;

	if (in->o->bounds == BOUNDS_LIVE) {
		*start = e ? sc->marks[e - 1] : 0;
		*end = e < sc->nr_marks ? sc->marks[e] : UINT64_MAX;
		return;
	}
	*start = sc->t_first + e * epoch_ns;
	*end = *start + epoch_ns;
}

static int replay_ingest(void *ctx)
{
	struct replay_run *r = ctx;
	uint64_t start, end;

	epoch_window(r->in, r->md.e, &start, &end);
	return ingest_epoch(r, start, end);
}

/* First touch, then the score of this epoch's accesses, all of them: the model's and the oracle's. */
static int replay_account(void *ctx)
{
	struct replay_run *r = ctx;
	const struct run_in *in = r->in;
	struct model *md = &r->md;
	uint64_t acc = 0, hits = 0;
	double lag = 0;

	for (uint32_t ti = 0; ti < md->tr.nr_targets; ti++) {
		struct target *t = &md->tr.targets[ti];
		struct model_page *mp = md->pages[ti];

		for (uint32_t i = t->nodes_known; i < t->pt.nr; i++) {
			uint32_t n = tracker__record_pages(t, &t->pt.pages[i]);
			int node = first_touch_node(r, n);

			t->pt.pages[i].node = (int8_t)node;
			md->used[node] += n;
		}
		t->nodes_known = t->pt.nr;
		for (uint32_t i = 0; i < t->pt.nr; i++) {
			uint64_t a = mp[i].accesses;

			if (in->oracle && a && mp[i].prev) {
				/* A huge page was in the set by its accesses a page. */
				uint64_t dense = mp[i].prev / tracker__record_pages(t, &t->pt.pages[i]);

				lag += dense > r->lag_thr ? (double)a : dense == r->lag_thr ? a * r->lag_frac : 0;
			}
			if (in->oracle)
				mp[i].prev = a < UINT32_MAX ? (uint32_t)a : UINT32_MAX;
			if (!a)
				continue;
			acc += a;
			if (t->pt.pages[i].node == NODE_FAST)
				hits += a;
			if (in->oracle && ((t->pt.pages[i].flags & PAGE_HUGE) ?
					   oracle_count_huge(r, a) : oracle_count(r, a)))
				return -ENOMEM;
			mp[i].accesses = 0;
		}
	}
	r->res->accesses += acc;
	r->res->fast_hits += hits;
	if (r->res->epoch_ratio)
		r->res->epoch_ratio[r->md.e] = acc ? (double)hits / acc : 0;
	if (in->oracle) {
		uint64_t oh = oracle_hits(r, md->cap[NODE_FAST]);

		in->oracle->accesses += acc;
		in->oracle->fast_hits += oh;
		in->oracle->lag_hits += (uint64_t)(lag + 0.5);
		if (in->oracle->epoch_ratio)
			in->oracle->epoch_ratio[r->md.e] = acc ? (double)oh / acc : 0;
	}
	return 0;
}

static void replay_topology(void *ctx)
{
	struct replay_run *r = ctx;

	if (r->in->policy)
		model_topology(&r->md, r->in->trace->hdr.page_size);
}

/* The "none" run (no policy) never moves a page. */
static bool replay_may_move(void *ctx)
{
	return ((struct replay_run *)ctx)->in->policy != NULL;
}

/* --epochs-csv: run,epoch,end_s,promoted,demoted,fast_pages,slow_pages,watch_fast,watch_slow */
static void epochs_line(struct replay_run *r)
{
	const struct model *md = &r->md;
	const struct model_opts *o = r->in->o;
	uint64_t wf = 0, ws = 0, start, end;

	for (uint32_t ti = 0; o->watch_hi && ti < md->tr.nr_targets; ti++) {
		const struct page_table *pt = &md->tr.targets[ti].pt;

		for (uint32_t i = 0; i < pt->nr; i++) {
			uint64_t lo = pt->pages[i].addr >> CXLT_PAGE_SHIFT;
			uint64_t hi = lo + tracker__record_pages(&md->tr.targets[ti], &pt->pages[i]);

			/* The record's pages in the watched range (a huge page's may be some). */
			lo = lo > o->watch_lo ? lo : o->watch_lo;
			hi = hi < o->watch_hi ? hi : o->watch_hi;
			if (lo >= hi)
				continue;
			wf += pt->pages[i].node == NODE_FAST ? hi - lo : 0;
			ws += pt->pages[i].node == NODE_SLOW ? hi - lo : 0;
		}
	}
	epoch_window(r->in, md->e, &start, &end);
	if (end == UINT64_MAX)	/* after the last mark */
		end = r->in->scan->t_last;
	fprintf(r->epochs, "%s,%llu,%.3f,%llu,%llu,%llu,%llu,%llu,%llu\n", r->res->name,
		(unsigned long long)md->e,
		end > r->in->scan->t_first ? (end - r->in->scan->t_first) / 1e9 : 0.0,
		(unsigned long long)(r->in->policy ? md->m.epoch.promoted : 0),
		(unsigned long long)(r->in->policy ? md->m.epoch.demoted : 0),
		(unsigned long long)md->used[NODE_FAST], (unsigned long long)md->used[NODE_SLOW],
		(unsigned long long)wf, (unsigned long long)ws);
}

static void replay_publish(void *ctx)
{
	struct replay_run *r = ctx;
	struct result *res = r->res;
	uint64_t n = r->in->nr_epochs;

	if (r->in->policy) {
		double own = r->in->guard_ms ? *r->in->guard_ms : r->md.eng.last_decide_ms;

		res->decide_ms += own;
		res->isolate_ms += r->md.eng.last_decide_ms - own;
		res->promoted += r->md.m.epoch.promoted;
		res->demoted += r->md.m.epoch.demoted;
	}
	res->epochs++;
	if (r->epochs)
		epochs_line(r);
	if (r->in->o->progress && (r->md.e % 8 == 0 || r->md.e + 1 == n))
		fprintf(stderr, "\r%-12s [%-40.*s] %3.0f%%", res->name, (int)(40 * (r->md.e + 1) / n),
			"########################################", 100.0 * (r->md.e + 1) / n);
}

static const struct pipeline_steps replay_steps = {
	.ingest = replay_ingest,
	.account = replay_account,
	.topology = replay_topology,
	.may_move = replay_may_move,
	.publish = replay_publish,
};

int run_policy(const struct run_in *in, struct result *res)
{
	const struct trace *trace = in->trace;
	const struct model_opts *o = in->o;
	struct replay_run *r = calloc(1, sizeof(*r));
	struct pipeline pipe;
	struct mover_opts mo;
	struct model *md;
	int err = 0;

	if (!r)
		return -ENOMEM;
	md = &r->md;
	*r = (struct replay_run){ .in = in, .res = res, .md = { .o = o, .res = res },
				  .count_hist = calloc(ORACLE_HIST, sizeof(*r->count_hist)),
				  .c = calloc(1, sizeof(*r->c)),
				  .rec_of = malloc((in->scan->pages ? in->scan->pages : 1) *
						   sizeof(*r->rec_of)) };
	if (!r->count_hist || !r->c || !r->rec_of) {
		err = -ENOMEM;
		goto out;
	}
	memset(r->rec_of, 0xff, (in->scan->pages ? in->scan->pages : 1) * sizeof(*r->rec_of));
	trace_cursor__init(r->c, trace);
	md->cap[NODE_FAST] = in->fast_cap;
	md->cap[NODE_SLOW] = in->slow_cap;
	if (o->start == START_TRACE && (err = load_start(r)))
		goto out;
	if (o->epochs_csv && !(r->epochs = fopen(o->epochs_csv, "a"))) {
		err = -errno;
		fprintf(stderr, "cxltier-replay: cannot write %s: %s\n", o->epochs_csv, strerror(-err));
		goto out;
	}
	tracker__init(&md->tr, o->decay);
	/* The two-tier model is per page: a record for every sampled page. */
	md->tr.detail_all = true;
	mover__default_opts(&mo);
	mo.rate_mbps = o->rate_mbps;
	mo.low_wmark_pct = o->low_pct;
	mo.high_wmark_pct = o->high_pct;
	mo.pingpong_epochs = o->pingpong_epochs;
	mover__init(&md->m, &mo, trace->hdr.page_size);
	md->eng = (struct engine){ .topo = &md->topo, .tr = &md->tr, .m = &md->m,
				   .policy = in->policy, .epoch_ms = o->epoch_ms, .quiet = true,
				   .source_flags = in->sampler ?
					sampler_source_flags(in->sampler, in->scan->source_flags) :
					in->scan->source_flags };
	sampler_run__init(&r->smp, in->sampler, md, in->scan, o, trace->hdr.page_size, in->csv);
	md->pf = (struct platform){ .move_pages = model_move_pages,
				    .touch_pages = model_touch_pages, .now = model_now, .ctx = md };
	md->tr.pf = md->m.pf = &md->pf;
	pipe = (struct pipeline){ .steps = &replay_steps, .ctx = r, .eng = &md->eng };

	for (md->e = 0; md->e < in->nr_epochs && !err; md->e++)
		err = pipeline__epoch(&pipe);
	if (o->progress && !err)
		fprintf(stderr, "\r%*s\r", 70, "");
	/* Once, from the run without a policy: every run starts alike. */
	if (!err && r->spilled && !in->policy)
		fprintf(stderr, "cxltier-replay: %s: %llu resident pages did not fit the tier the trace puts them on (--fast-pages, --slow-pages): placed on the other\n",
			in->path, (unsigned long long)r->spilled);
out:
	if (r->epochs && fclose(r->epochs) && !err) {
		fprintf(stderr, "cxltier-replay: cannot write %s: %s\n", o->epochs_csv, strerror(errno));
		err = -EIO;
	}
	if (err && r->c && r->c->err)
		fprintf(stderr, "cxltier-replay: %s: %s\n", in->path, r->c->msg);
	else if (err == -ENOMEM)
		fprintf(stderr, "cxltier-replay: %s: out of memory replaying %s\n", in->path, res->name);
	else if (err)
		fprintf(stderr, "cxltier-replay: %s: policy %s failed: %s\n", in->path, res->name,
			strerror(-err));
	for (uint32_t i = 0; i < md->nr_pages; i++)
		free(md->pages[i]);
	free(md->pages);
	free(md->pages_cap);
	free(md->tgid_slots);
	engine__free(&md->eng);
	mover__free(&md->m);
	tracker__free(&md->tr);
	free(r->count_hist);
	free(r->big);
	free(r->huge_acc);
	sampler_run__free(&r->smp);
	free(r->groups);
	free(r->by_time);
	free(r->rec_of);
	free(r->c);
	free(r);
	return err;
}
