// SPDX-License-Identifier: MIT
/*
 * Sampler emulation: what a live source would have seen of a full access
 * stream (a capture of a real program, a synthetic trace: every access,
 * weighted).  The model counts every access for the score (struct
 * model_page, run.c); the tracker, and so the policy, gets only what the
 * source emulated here reports.  One run, one source (--sampler):
 *
 *   none    the trace as recorded, each sample as it is: a recording of a
 *           live source already is what that source saw.
 *   pmu:N   one access in N, at random: the gap to the next sampled access
 *           is geometric with mean N (each access is sampled with
 *           probability 1/N, as a randomized sample period does), seeded by
 *           --seed.  Without N, the agent's own budget: PMU_CPU_SHARE_DEFAULT
 *           of one core at PMU_COST_NS_DEFAULT a sample (1% at 3 us: 3,333
 *           samples a second of trace time), N being the trace's accesses
 *           a second over that.  A live PMU samples memory-bound loads, not
 *           every access: this is the same number of samples, spread over
 *           all accesses.
 *   hint    NUMA hint faults: a page faults on its first touch and on its
 *           first use after each pass of the kernel's scanner, which marks
 *           every page at the end of each --hint-period-ms (the agent's
 *           hint_period_ms) at once; a migration drops the mark (the page
 *           comes back mapped).  So at most one sample a page a period.  On
 *           a trace coarser than the period, a window's w accesses count
 *           as spread evenly over it (before its time: every pass in it is
 *           past at an access): the page faults after each pass in the
 *           window, up to w, and before the first if a pass marked it
 *           since its last window (hint_spread).  The
 *           agent learns of a pass at the next epoch's start and marks its
 *           records as live (tracker__mark_pass, tracker.sight): pages not
 *           marked since their last sample are CXLT_PAGE_UNSEEN.  The CPU
 *           budget that gates the live scanner is not modelled: every pass
 *           marks both tiers.
 *   fault   page faults: each page's first touch only.
 *   damon:M DAMON: the agent's own vaddr kdamond, with the kernel's
 *           adaptive regions (at most M, default DAMON_MAX_REGIONS, at
 *           least DAMON_MIN_REGIONS): each DAMON_SAMPLE_US one page of each
 *           region is checked for an access, each DAMON_AGGR_US every page
 *           of a region gets the region's count as its samples, as
 *           damon__drain() hands them to the tracker, and regions merge and
 *           split (damon.c).  On a trace coarser than the checks (a
 *           capture puts a window's accesses at its end), a sample's
 *           accesses are taken as spread evenly over the trace's least
 *           gap between two times after it (a window): a check finds a
 *           page with w of them with probability 1 - (1 - its share of
 *           the window)^w, not in one check a window.
 *
 * Pages the source never reports still have records, with no samples and
 * not CXLT_PAGE_SAMPLED: live, the agent's scan finds resident pages.  Time
 * is the trace's: its samples are the stream's resolution (a capture puts a
 * window's accesses at its end, a synthetic trace spreads an epoch's over
 * it).  Events on the source's own clock (passes, checks, aggregations) due
 * at or before an access happen before it; those after an epoch's last
 * access and before its end, at its end (live, the agent reads what DAMON
 * aggregated at its tick).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "damon.h"
#include "pmu.h"
#include "replay.h"
#include "sources.h"
#include "util.h"

static const struct {
	const char *name;
	enum sampler_kind kind;
	bool takes_n;		/* NAME:N */
} kinds[] = {
	{ "none", SAMPLER_NONE, false },
	{ "pmu", SAMPLER_PMU, true },
	{ "hint", SAMPLER_HINT, false },
	{ "fault", SAMPLER_FAULT, false },
	{ "damon", SAMPLER_DAMON, true },
};

#define SAMPLER_NAMES "none, pmu[:N], hint, fault, damon[:REGIONS]"

struct parse_ctx {
	struct sampler_spec *specs;
	int max, *n;
	char *why;
	size_t len;
};

static int parse_one(void *ctx, const char *name, const char *val)
{
	struct parse_ctx *c = ctx;
	struct sampler_spec *sp;
	uint64_t v = 0;
	size_t k;

	for (k = 0; k < ARRAY_SIZE(kinds) && strcmp(kinds[k].name, name); k++)
		;
	if (k == ARRAY_SIZE(kinds)) {
		snprintf(c->why, c->len, "unknown sampler '%s' (%s)", name, SAMPLER_NAMES);
		return -EINVAL;
	}
	if (val && !kinds[k].takes_n) {
		snprintf(c->why, c->len, "%s takes no value (%s)", name, SAMPLER_NAMES);
		return -EINVAL;
	}
	if (val && kinds[k].kind == SAMPLER_DAMON && parse_u64(val, DAMON_MIN_REGIONS, UINT32_MAX, &v)) {
		snprintf(c->why, c->len, "'%s' of %s is not a number of regions from %d to %u", val,
			 name, DAMON_MIN_REGIONS, UINT32_MAX);
		return -EINVAL;
	}
	if (val && parse_u64(val, 1, 1ULL << 32, &v)) {
		snprintf(c->why, c->len, "'%s' of %s is not a number from 1 to 4294967296", val, name);
		return -EINVAL;
	}
	if (*c->n == c->max) {
		snprintf(c->why, c->len, "at most %d samplers", c->max);
		return -EINVAL;
	}
	sp = &c->specs[(*c->n)++];
	*sp = (struct sampler_spec){ .kind = kinds[k].kind, .n = v };
	snprintf(sp->label, sizeof(sp->label), "%s", name);
	return 0;
}

int sampler_parse(const char *value, struct sampler_spec *specs, int max, int *n, char *why,
		  size_t len)
{
	struct parse_ctx c = { specs, max, n, why, len };
	int nr = parse_named_list(value, parse_one, &c, why, len);

	if (nr < 0)
		return nr;
	if (!nr) {
		snprintf(why, len, "no sampler named (%s)", SAMPLER_NAMES);
		return -EINVAL;
	}
	return 0;
}

void sampler_resolve(struct sampler_spec *sp, const struct trace_scan *sc)
{
	const char *name = sp->label;
	char *colon = strchr(sp->label, ':');

	if (colon)
		*colon = '\0';
	if (sp->kind == SAMPLER_PMU && !sp->n) {
		/* Samples a second the agent's budget allows, over the trace's accesses a second. */
		double budget = PMU_CPU_SHARE_DEFAULT / (PMU_COST_NS_DEFAULT * 1e-9);
		double span_s = (sc->t_last - sc->t_first) / 1e9;
		double every = span_s > 0 ? sc->accesses / span_s / budget : 1;

		sp->n = every < 1 ? 1 : every > 4294967296.0 ? 4294967296ULL : (uint64_t)llround(every);
	}
	if (sp->kind == SAMPLER_DAMON && !sp->n)
		sp->n = DAMON_MAX_REGIONS;
	if (sp->n) {
		char label[sizeof(sp->label)];

		snprintf(label, sizeof(label), "%.8s:%llu", name, (unsigned long long)sp->n);
		memcpy(sp->label, label, sizeof(label));
	}
}

uint32_t sampler_source_flags(const struct sampler_spec *sp, uint32_t recorded)
{
	if (sp->kind == SAMPLER_NONE)
		return recorded;
	return sp->kind == SAMPLER_FAULT ? 0 : CXLT_SOURCE_REPEATS;
}

/* The next tick of a clock of period p after t, from next (<= t); saturates. */
static uint64_t tick_after(uint64_t next, uint64_t t, uint64_t p)
{
	uint64_t k = (t - next) / p + 1;

	return k > (UINT64_MAX - next) / p ? UINT64_MAX : next + k * p;
}

/* Accesses up to and including the next sampled one (pmu): geometric, mean N. */
static uint64_t pmu_gap(struct sampler_run *s)
{
	double u;

	if (s->spec->n <= 1)
		return 1;
	u = unit_rand(&s->rng);
	return 1 + (uint64_t)floor(log1p(-u) / log1p(-1.0 / (double)s->spec->n));
}

void sampler_emit(struct sampler_run *s, uint32_t ti, uint32_t idx, uint64_t time_ns, uint32_t n,
		  uint16_t source)
{
	struct target *t = &s->md->tr.targets[ti];
	uint64_t addr = t->pt.pages[idx].addr;
	struct cxlt_page_key key = { .tgid = (uint32_t)t->pid, .vpage = addr >> CXLT_PAGE_SHIFT };
	struct cxlt_page_val val = { .samples = n, .hint_faults = source == CXLT_SRC_HINT };

	tracker__ingest_record(&s->md->tr, t, &t->pt.pages[idx], &val);
	if (s->csv) {
		const struct source_def *d = sources__by_kind(source);

		csv_sample(s->csv, time_ns, key.tgid, (addr >> CXLT_PAGE_SHIFT) * s->page_size,
			   source ? (d ? d->name : "?") : "damon", n);
	}
}

/* damon: the checks and aggregations due up to t. */
static int damon_advance(struct sampler_run *s, uint64_t t)
{
	int err;

	while (s->next_ns <= t) {
		uint64_t prev = s->next_ns - s->period_ns;

		if (!s->pending && (s->spread_ns ? prev >= s->spread_ns &&
						  s->last_access_ns <= prev - s->spread_ns :
						  s->last_access_ns < prev)) {
			/* Nothing to find and nothing to hand on: every check due is empty. */
			uint64_t next = tick_after(s->next_ns, t, s->period_ns);

			s->checks += (next - s->next_ns) / s->period_ns;
			s->next_ns = next;
			break;
		}
		if ((err = damon_emu__check(s, prev, s->next_ns)))
			return err;
		if (++s->checks % s->checks_per_aggr == 0 &&
		    (err = damon_emu__aggregate(s, s->next_ns)))
			return err;
		s->next_ns = s->next_ns > UINT64_MAX - s->period_ns ? UINT64_MAX : s->next_ns + s->period_ns;
		if (s->next_ns == UINT64_MAX)
			break;
	}
	return 0;
}

int sampler_run__clock(struct sampler_run *s, uint64_t t)
{
	const struct model *md = s->md;

	if (s->spec->kind == SAMPLER_DAMON)
		return damon_advance(s, t);
	if (s->spec->kind == SAMPLER_HINT && s->next_ns <= t) {
		/* Passes with no access between them mark what one marks. */
		for (uint32_t ti = 0; ti < md->tr.nr_targets; ti++)
			for (uint32_t i = 0; i < md->tr.targets[ti].pt.nr; i++)
				md->pages[ti][i].marked = true;
		s->passes++;
		s->next_ns = tick_after(s->next_ns, t, s->period_ns);
	}
	return 0;
}

int sampler_run__init(struct sampler_run *s, const struct sampler_spec *spec, struct model *md,
		      const struct trace_scan *sc, const struct model_opts *o, uint32_t page_size,
		      FILE *csv)
{
	uint64_t t_first = sc->t_first;
	static const struct sampler_spec none = { .kind = SAMPLER_NONE, .label = "none" };

	*s = (struct sampler_run){ .spec = spec ? spec : &none, .md = md, .csv = csv,
				   .page_size = page_size, .rng = o->sampler_seed };
	switch (s->spec->kind) {
	case SAMPLER_PMU:
		s->pmu_left = pmu_gap(s);
		break;
	case SAMPLER_HINT:
		s->period_ns = (uint64_t)o->hint_period_ms * 1000000;
		s->origin_ns = t_first;
		if (sc->res_ns > s->period_ns)
			s->spread_ns = sc->res_ns;
		md->tr.sight = true;
		break;
	case SAMPLER_DAMON:
		s->period_ns = DAMON_SAMPLE_US * 1000ULL;
		s->checks_per_aggr = DAMON_AGGR_US / DAMON_SAMPLE_US;
		s->dm.max_regions = s->spec->n ? (uint32_t)s->spec->n : DAMON_MAX_REGIONS;
		if (sc->res_ns > s->period_ns) {
			s->spread_ns = sc->res_ns;
			s->spread_log1p = log1p(-(double)s->period_ns / (double)s->spread_ns);
		}
		break;
	default:
		break;
	}
	s->next_ns = s->period_ns && t_first <= UINT64_MAX - s->period_ns ? t_first + s->period_ns :
									     UINT64_MAX;
	return 0;
}

void sampler_run__free(struct sampler_run *s)
{
	damon_emu__free(&s->dm);
}

int sampler_run__epoch(struct sampler_run *s, uint64_t start)
{
	struct tracker *tr = &s->md->tr;
	int err = sampler_run__clock(s, start);

	if (err || s->spec->kind != SAMPLER_HINT || s->passes == s->passes_told)
		return err;
	/* As the agent follows the scanner (marks.c): a pass ended since the last look. */
	for (uint32_t ti = 0; ti < tr->nr_targets; ti++) {
		tracker__mark_pass(tr, &tr->targets[ti], true, 0);
		tr->targets[ti].scan.pass_start = tr->epoch;
	}
	s->passes_told = s->passes;
	return 0;
}

/* hint: the passes at or before t, and those before it. */
static uint64_t passes_upto(const struct sampler_run *s, uint64_t t)
{
	return t < s->origin_ns ? 0 : (t - s->origin_ns) / s->period_ns;
}

static uint64_t passes_before(const struct sampler_run *s, uint64_t t)
{
	return t <= s->origin_ns ? 0 : (t - s->origin_ns - 1) / s->period_ns;
}

/*
 * hint on a coarse trace: the w accesses of a window (t - spread_ns, t]
 * spread evenly over it.  The page faults in the stretch before the
 * window's first pass if a pass marked it between its last window (or the
 * start) and this one, and in each stretch after one of the window's
 * passes that one of its accesses falls in: min(w, that many).  (A
 * migration drops the mark, but a pass inside the window sets it again:
 * one that came before the window is missed then.)  On first touch the
 * first is a page fault, the rest hint faults.  A second record of the
 * page at the same time (a huge page's, or a capture's weight split over
 * 65535) adds what its accesses add.
 */
static void hint_spread(struct sampler_run *s, struct model_page *mp, uint32_t ti,
			uint32_t idx, uint64_t t, uint32_t w, bool first)
{
	uint64_t from = t > s->spread_ns ? t - s->spread_ns : 0;
	uint64_t inside = passes_before(s, t) - passes_upto(s, from), n;
	bool before;

	if (mp->last_ns == model_stamp(t)) {
		uint64_t cap = inside + mp->hint_extra, had = mp->last_w;

		n = (had + w < cap ? had + w : cap) - (had < cap ? had : cap);
		if (n)
			sampler_emit(s, ti, idx, t, (uint32_t)n, CXLT_SRC_HINT);
		return;
	}
	before = !first && mp->marked &&
		 passes_upto(s, from) > (mp->last_ns ? passes_before(s, mp->last_ns - 1) : 0);
	mp->hint_extra = first || before;
	n = inside + before;
	if (n > w)
		n = w;
	if (first) {
		sampler_emit(s, ti, idx, t, 1, CXLT_SRC_FAULT);
		n = n < w ? n : w - 1;
	}
	if (n)
		sampler_emit(s, ti, idx, t, (uint32_t)n, CXLT_SRC_HINT);
}

int sampler_run__access(struct sampler_run *s, const struct cxlt_sample *x, uint32_t ti,
			uint32_t idx, bool first)
{
	uint32_t w = x->weight ? x->weight : 1;
	struct model_page *mp = &s->md->pages[ti][idx];
	uint64_t k = 0;

	switch (s->spec->kind) {
	case SAMPLER_NONE:
		sampler_emit(s, ti, idx, x->time_ns, w, x->source);
		break;
	case SAMPLER_FAULT:
		if (first)
			sampler_emit(s, ti, idx, x->time_ns, 1, CXLT_SRC_FAULT);
		break;
	case SAMPLER_HINT:
		if (s->spread_ns)
			hint_spread(s, mp, ti, idx, x->time_ns, w, first);
		else if (first || mp->marked)
			sampler_emit(s, ti, idx, x->time_ns, 1, first ? CXLT_SRC_FAULT : CXLT_SRC_HINT);
		mp->marked = false;
		break;
	case SAMPLER_PMU:
		if (s->spec->n <= 1) {
			k = w;
		} else {
			for (; w >= s->pmu_left; k++) {
				w -= (uint32_t)s->pmu_left;
				s->pmu_left = pmu_gap(s);
			}
			s->pmu_left -= w;
		}
		if (k)
			sampler_emit(s, ti, idx, x->time_ns, (uint32_t)k, CXLT_SRC_PMU);
		break;
	case SAMPLER_DAMON:
		if (x->time_ns > s->last_access_ns)
			s->last_access_ns = x->time_ns;
		break;
	}
	return 0;
}
