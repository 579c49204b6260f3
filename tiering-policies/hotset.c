// SPDX-License-Identifier: MIT
/*
 * hotset: the default policy.  Goal-based: no heat threshold to tune.
 *
 * In a paragraph: the fast tier holds the hottest pages that fit, ranked by
 * heat; a page whose count this epoch breaks with its history is ranked by
 * this epoch alone, so a moved hot set is followed within an epoch (but a
 * fast page that fell off and came back before keeps its heat, so a
 * program's phases do not cost it its pages); a slow
 * page must show up in two epochs before it displaces a fast page that is
 * still in use (unless it is ten times hotter in its one epoch), so a
 * one-off scan does not push out a hot set in use; and a swap needs a
 * clear gain, beyond sampling noise, so pages of about the same heat stay
 * put.  In detail:
 *
 * Idea (after Memtis): the fast tier should hold the hottest pages that fit
 * in it, whatever their absolute heat.  Each epoch a histogram of the pages'
 * heat gives the threshold T at which the pages with heat >= T fill the fast
 * memory the tracked pages may use:
 *
 *	capacity = tracked pages on fast nodes + free fast pages
 *		   - the high watermark - headroom * fast total pages
 *
 * (free fast memory counts, memory held by untracked processes does not).
 * Those pages are the hot set; T follows the histogram, so the hot set grows,
 * shrinks and moves with the workload.  Then:
 *  - slow pages in the hot set are promoted, hottest first, into the room
 *    over the high watermark and the headroom;
 *  - when that room runs out, a slow page still replaces a fast page outside
 *    the hot set if it is clearly hotter: hotter by `min_gain` (a fraction)
 *    and by more than sampling noise (3 standard deviations of a sample
 *    count; 2 against a page that first touch put there, below).  The fast
 *    page is demoted in the same plan, so the mover has
 *    the room the promotion needs; and where free memory is under the
 *    high watermark and the headroom (first touches filled it), enough
 *    more are demoted with it to get there.  This hysteresis is what keeps pages of
 *    about the same heat from trading places every epoch;
 *  - when fast memory is short, view->demote_goal_pages fast pages are
 *    demoted first, taken from outside the hot set while it has enough.
 * Demotions go coldest first: never sampled, then pages no longer in use,
 * then the longest idle, then the least heat.  Nothing else is demoted: a cold page in a fast tier costs
 * nothing until a hotter page needs its place, and moving it costs bandwidth.
 * When every sampled page fits, T is 0 and everything sampled is promoted.
 * Pages moved less than `settle_epochs` ago are left alone (the mover would
 * refuse them), as are pages whose node is unknown.
 *
 * Heat decays slowly (it halves each epoch with the default decay), so when
 * a hot set moves, the old hot pages would look hot for epochs after their
 * last access.  The policy therefore keeps each page's heat of the previous
 * epoch in its policy word, and when this epoch's sample count is more than 3
 * standard deviations away from what that history predicts, it ranks the
 * page by this epoch's count alone: the old hot set drops out and the new one
 * comes in within one epoch, while pages whose counts only jitter keep their
 * heat.  (The policy derives the host's decay from the two heats, so it needs
 * no setting for it.)  Except a fast page that fell off and came back before
 * (two bits of the word remember it): when it falls again it keeps its
 * decaying heat, and stays while hotter pages do not need its place.  A
 * program working through its data in phases (gzip's window sliding over
 * its buffers) would otherwise lose each page to the slow tier as it went
 * idle, and its return would wait out the settle window there (make traces:
 * gzip 0.83 -> 0.90 of the oracle, every access and pmu; the synthetic
 * traces unchanged: a moved hot set never comes back).
 *
 * Evidence, against one-off scans (after Memtis, where a page's count must
 * build up over time before it outranks pages with long histories).  A page
 * whose samples this epoch are more than 4 times what its history predicts
 * (its heat before the epoch, decayed once, is that of a rate of
 * (heat - samples) * (1 - d) / d samples an epoch, d the host's decay) has
 * one epoch of evidence: a page read by a scan, or a new hot page in its
 * first epoch.  A fast page is in use when it was sampled this epoch, from
 * half to 4 times what its history predicts.  A slow page with one epoch of
 * evidence may take free room and the place of fast pages not in use (idle,
 * or whose use fell off, as an old hot set's does when it moves), but not
 * of a page in use, unless this epoch's samples alone are 10 times the rate
 * that page keeps up: an order of magnitude hotter, not a scan's page
 * against a hot set.  So a scan that touches each page once leaves the hot
 * set where it is, and its pages drop out the next epoch (their counts
 * break with their history); a moving hot set still comes in within an
 * epoch, in place of the old one, which fell out of use in the same epoch;
 * a page that gets hot while all of fast memory stays in use comes in one
 * epoch later, with two epochs of evidence.
 *
 * Sparse samples (after hint faults, one a page and scanner pass): when no
 * page scores 5 in an epoch, a count says only whether a page was used, no
 * swap passes the noise test, and a fast page counts as dormant after 3
 * idle epochs instead of settle_epochs (replay at --time-scale 1000 with
 * --sampler hint: sqlite 0.74 -> 0.90 of the oracle, python3 dict 0.79 ->
 * 0.86; the full streams and the synthetic traces are unchanged).
 *
 * The histogram has 8 buckets per power of two of heat, indexed by the high
 * bits of the float (sign, exponent, 3 mantissa bits), so no log() per page;
 * candidates are ranked with a quickselect of the plan's size.  Work per
 * epoch is three passes over the pages.
 *
 * Parameters:
 *   headroom       fraction of fast capacity kept free on top of the high
 *                  watermark, for the workload's new pages (default 0: the
 *                  mover's high watermark is the reserve; 0.02 moved no
 *                  score in make bench or make traces by more than 0.002)
 *   min_gain       a slow page displaces a fast one only if its heat is
 *                  greater by this fraction (default 1: twice as hot)
 *   settle_epochs  epochs a moved page stays put; match the agent's
 *                  --pingpong-epochs (default 10)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxltier/policy.h"
#include "cxltier/policy-helpers.h"

#define NR_BUCKETS 2048		/* (float bits >> 20) of a non-negative float */
#define NOISE_Z2 9		/* beyond noise: 3 standard deviations, squared */
/*
 * Against a fast page the agent never moved (first touch put it there, so
 * no decision of ours is undone), 2 standard deviations.  Such a page can
 * be displaced under this rule once only: demoted, it counts as moved, and
 * coming back needs the full test, so no two pages trade places on it.
 * First touch fills the fast tier in allocation order, and with 3 the pages
 * a few times hotter than the coldest fast ones waited for lucky epochs to
 * get in (zipf 1:4: 0.967 -> 0.970 of the oracle, a hit ratio of 0.86
 * reached in epoch 9 instead of 29; shift 1:4 0.894 -> 0.890, the corpus
 * within 0.002).
 */
#define FIRST_TOUCH_Z2 4
#define NEWCOMER_GAIN 10	/* one epoch's samples against a rate in use: 10 times */
/*
 * Sparse samples: no page scores this high (hint faults at one scanner pass
 * an epoch give each page one sample at most, a score of 2 at most).  Then
 * no swap can pass the noise test, and a fast page idle this many epochs
 * while its source looked is taken for cold instead.
 */
#define SPARSE_SCORE 5
#define SPARSE_IDLE 3

struct hotset {
	double headroom;
	double min_gain;
	unsigned long settle_epochs;
	struct cxlt_cand *cands;	/* promotions from the front, demotions from the back */
	uint64_t cap;
	uint64_t last_epoch;	/* of the last decide(), 0 before the first */
	bool sparse;		/* no page scores SPARSE_SCORE this epoch */
	uint64_t hist[NR_BUCKETS];
};

static int parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || !(*out >= lo && *out <= hi) ? -EINVAL : 0;
}

static int parse_ulong(const char *s, unsigned long hi, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || end == s || *end || s[0] == '-' || *out > hi ? -EINVAL : 0;
}

static int hotset_init(void **state, const struct cxlt_param *params,
		       uint32_t nr, char *err, size_t errlen)
{
	struct hotset *hs = calloc(1, sizeof(*hs));

	if (!hs)
		return -ENOMEM;
	hs->headroom = 0;
	hs->min_gain = 1;
	hs->settle_epochs = 10;
	for (uint32_t i = 0; i < nr; i++) {
		const char *k = params[i].key, *v = params[i].value;

		if (!strcmp(k, "headroom")) {
			if (parse_double(v, 0, 0.5, &hs->headroom)) {
				snprintf(err, errlen, "%s=%s: expected a fraction from 0 to 0.5",
					 k, v);
				goto bad;
			}
		} else if (!strcmp(k, "min_gain")) {
			if (parse_double(v, 0, 1000, &hs->min_gain)) {
				snprintf(err, errlen, "%s=%s: expected a number from 0 to 1000",
					 k, v);
				goto bad;
			}
		} else if (!strcmp(k, "settle_epochs")) {
			if (parse_ulong(v, CXLT_NEVER_MOVED - 1, &hs->settle_epochs)) {
				snprintf(err, errlen, "%s=%s: expected a whole number from 0 to %d",
					 k, v, CXLT_NEVER_MOVED - 1);
				goto bad;
			}
		}
	}
	*state = hs;
	return 0;
bad:
	free(hs);
	return -EINVAL;
}

static void hotset_fini(void *state)
{
	struct hotset *hs = state;

	free(hs->cands);
	free(hs);
}

/* Histogram bucket of a heat: monotonic, 8 buckets per power of two. */
static inline uint32_t bucket(float heat)
{
	uint32_t bits;

	if (!(heat > 0))	/* 0, and anything broken (negative, NaN) */
		return 0;
	memcpy(&bits, &heat, sizeof(bits));
	return bits >> 20;
}

/* The smallest heat that falls into bucket b. */
static float bucket_floor(uint32_t b)
{
	uint32_t bits = b << 20;
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

static inline const struct cxlt_page *page_of(const struct cxlt_view *v, const struct cxlt_cand *c)
{
	return &v->targets[c->target].pages[c->page];
}

/*
 * The policy's word: the page's heat of the previous epoch, a float, whose
 * two lowest mantissa bits (a part in 2^21) hold what the page did before:
 */
#define WORD_FELL 0x1u		/* its count fell off its history since it last rose */
#define WORD_RETURNS 0x2u	/* it rose again after such a fall: it comes back */
#define WORD_FLAGS (WORD_FELL | WORD_RETURNS)

/*
 * Whether this epoch's samples contradict the page's history beyond noise.
 * With the word's heat h' and the host's decay d = (heat - samples) / h',
 * the history predicts h' * (1 - d) samples this epoch.  When the count is
 * more than 3 standard deviations (Poisson) away from that, the page
 * changed: 1 it rose, -1 it fell (0: neither, or no history), and *alone
 * is this epoch's count in heat units.
 */
static inline int broke(const struct cxlt_page *p, uint32_t word, bool history, float *alone)
{
	/* An extent of several pages ranks by its heat a page. */
	float n = p->npages > 1 ? p->npages : 1, heat = p->heat / n, s = p->samples / n;
	uint32_t bits = word & ~WORD_FLAGS;
	float prev, d, expect, diff;

	if (!history)
		return 0;
	memcpy(&prev, &bits, sizeof(prev));
	if (!(prev > 0 && prev < 1e30f))
		return 0;		/* no history (0, or another policy's word) */
	d = (heat - s) / prev;
	if (!(d > 0 && d < 1))
		return 0;
	expect = prev * (1 - d);
	diff = s - expect;
	if (diff * diff <= NOISE_Z2 * ((expect > s ? expect : s) + 1))
		return 0;
	*alone = s / (1 - d);
	return diff > 0 ? 1 : -1;
}

/*
 * What the policy ranks by: the page's heat, or this epoch's count alone
 * when that breaks with its history.  A hot page that stopped being touched
 * then drops out at once instead of decaying for epochs (a hot set moved),
 * and a page that just got hot ranks as hot.  But a fast page that has
 * fallen off and come back before keeps its decaying heat when it falls
 * again: a program working through its data in phases (gzip's window
 * sliding over its buffers, each page idle for a few epochs and then hot
 * again) would otherwise lose the page to the slow tier each time, and its
 * return would wait out the mover's settle window there.  A moved hot set
 * never comes back to the same pages, so it still drops out at once.
 */
static inline float score(const struct cxlt_page *p, uint32_t word, bool history, bool fast)
{
	float heat = cxlt_heat_per_page(p), alone = 0;
	int c = broke(p, word, history, &alone);

	return !c || (c < 0 && fast && (word & WORD_RETURNS)) ? heat : alone;
}

/* The next epoch's word: this epoch's heat, and the page's fall and return. */
static inline uint32_t next_word(const struct cxlt_page *p, uint32_t word, bool history)
{
	float heat = cxlt_heat_per_page(p), alone;
	uint32_t flags = history ? word & WORD_FLAGS : 0, bits;
	int c = broke(p, word, history, &alone);

	if (c < 0)
		flags |= WORD_FELL;
	else if (c > 0 && (flags & WORD_FELL))
		flags = WORD_RETURNS;
	memcpy(&bits, &heat, sizeof(bits));
	return (bits & ~WORD_FLAGS) | flags;
}

#define SCORE(v, t, i, history)                                                       \
	score(&(v)->targets[t].pages[i], (v)->targets[t].policy_words[i], history,      \
	      (v)->targets[t].pages[i].node >= 0 &&                                     \
	      roles[(v)->targets[t].pages[i].node] == CXLT_NODE_FAST)

/* Pages an extent moves (0: nothing to move now). */
static inline uint64_t pages_of(const struct cxlt_view *v, const struct cxlt_cand *c)
{
	return v->targets[c->target].pages[c->page].npages;
}

/*
 * Whether a slow page of score `in` should displace the fast page `out` of
 * score `out_score`: hotter by min_gain, and by more than sampling noise
 * (heat counts samples, so its noise grows like the square root of the
 * count) -- unless the fast page is dormant: never sampled, or not for
 * settle_epochs (SPARSE_IDLE when samples are sparse), while its source
 * was looking (not CXLT_PAGE_UNSEEN).  Then any clear ratio will do, or
 * with sparse samples (a few a page and epoch) nothing could ever
 * displace it.
 */
static inline bool clear_gain(const struct hotset *hs, float in, const struct cxlt_page *out,
			      float out_score)
{
	unsigned long dormant = hs->sparse && hs->settle_epochs > SPARSE_IDLE ? SPARSE_IDLE :
				hs->settle_epochs;
	float gain = in - out_score;

	if (!(gain > out_score * hs->min_gain))
		return false;
	if (!(out->flags & CXLT_PAGE_UNSEEN) &&
	    (!(out->flags & CXLT_PAGE_SAMPLED) || out->idle_epochs >= dormant))
		return true;
	return gain * gain > (out->since_move == CXLT_NEVER_MOVED ? FIRST_TOUCH_Z2 : NOISE_Z2) *
			     (in + out_score);
}

/*
 * Samples this epoch that the page's history predicts: its heat before
 * this epoch (heat - samples, decayed once) comes from a rate of
 * (heat - samples) / d * (1 - d) samples an epoch.
 */
static inline float predicted(const struct cxlt_page *p, float d)
{
	return ((float)p->heat - (float)p->samples) / d * (1 - d);
}

/*
 * Evidence.  Proven: this epoch's samples are at most 4 times what the
 * history predicts.  A page used at a steady rate, or used in the last
 * epoch too, is; a page that appears in this epoch only (read by a scan,
 * or the first epoch of a new hot page) is not.
 */
static inline bool proven(const struct cxlt_page *p, float d)
{
	return (float)p->samples <= 4 * predicted(p, d);
}

/* In use: sampled this epoch, from half to 4 times what its history predicts. */
static inline bool in_use(const struct cxlt_page *p, float d)
{
	return p->samples && proven(p, d) && 2 * (float)p->samples >= predicted(p, d);
}

/*
 * Whether the slow page `in` may take the place of the fast page `out` as
 * far as evidence goes: always if `in` is proven or `out` is not in use;
 * with one epoch of evidence against a page in use, only if this epoch's
 * samples alone (not the steady heat they would make) are NEWCOMER_GAIN
 * times the rate the page in use keeps up (its heat times 1 - d).
 */
static inline bool may_displace(const struct cxlt_page *in, const struct cxlt_page *out, float d)
{
	return proven(in, d) || !in_use(out, d) ||
	       (float)in->samples / (in->npages > 1 ? in->npages : 1) >
	       NEWCOMER_GAIN * cxlt_heat_per_page(out) * (1 - d);
}

/*
 * Coldest first: never sampled (seen so before unseen: an unseen page's
 * silence proves nothing, and a swap would not pass with it), then not in
 * use (idle, or its use fell off), then the longest idle, then the least
 * score.
 */
static inline float coldness(const struct cxlt_page *p, float score, float d)
{
	return (p->flags & CXLT_PAGE_SAMPLED ? 0 : p->flags & CXLT_PAGE_UNSEEN ? 5e8f : 1e9f) +
	       (in_use(p, d) ? 0 : 1e6f) + p->idle_epochs - score;
}

static int hotset_decide(void *state, const struct cxlt_view *v, struct cxlt_plan *plan)
{
	struct hotset *hs = state;
	int fast = cxlt_roomiest_node(v, CXLT_NODE_FAST), slow = cxlt_roomiest_node(v, CXLT_NODE_SLOW);
	uint64_t total = 0, fast_total = 0, tracked_fast = 0, ns = 0, nf = 0, hot = 0;
	uint64_t left = plan->cap > plan->nr ? plan->cap - plan->nr : 0;
	uint64_t np = 0, nd = 0, np_pages = 0, nd_pages = 0, goal = v->demote_goal_pages;
	/* The words hold last epoch's heat only if we saw the last epoch. */
	bool history = hs->last_epoch && v->epoch == hs->last_epoch + 1;
	float d = v->heat_decay > 0 && v->heat_decay < 1 ? v->heat_decay : 0.5f;
	int64_t room, want;
	uint32_t boundary = 0;
	struct cxlt_cand *demote;
	int8_t roles[CXLT_MAX_NODE_ID];
	float threshold;
	int err = 0;

	hs->last_epoch = v->epoch;
	if (fast < 0 || slow < 0 || !left)
		goto remember;	/* nothing to move between, or no budget */
	cxlt_role_table(v, roles);
	for (uint32_t i = 0; i < v->nr_nodes; i++)
		if (v->nodes[i].role == CXLT_NODE_FAST)
			fast_total += v->nodes[i].total_pages;
	total = cxlt_view_pages(v);
	if ((err = cxlt_cands_reserve(&hs->cands, &hs->cap, total)))
		goto remember;

	/* Pass 1: the histogram of the sampled pages' scores; the fast pages. */
	memset(hs->hist, 0, sizeof(hs->hist));
	for (uint32_t t = 0; t < v->nr_targets; t++) {
		const struct cxlt_page *pages = v->targets[t].pages;

		for (uint64_t i = 0; i < v->targets[t].nr_pages; i++) {
			const struct cxlt_page *p = &pages[i];

			if (p->node < 0 || roles[p->node] < 0)
				continue;
			if (roles[p->node] == CXLT_NODE_FAST)
				tracked_fast += p->npages;
			if (p->flags & CXLT_PAGE_SAMPLED)
				hs->hist[bucket(SCORE(v, t, i, history))] += p->npages;
		}
	}

	/*
	 * room: pages the fast tier can still take (negative: it is over the
	 * headroom); want: the hot set's size.  The boundary bucket is the one
	 * the hot set ends in: the buckets above it fit whole.  (With no room
	 * at all, it is the hottest bucket: then only the hottest pages swap.)
	 */
	room = (int64_t)v->fast_free_pages - (int64_t)v->fast_high_pages -
	       (int64_t)(hs->headroom * (double)fast_total);
	want = (int64_t)tracked_fast + room;
	hs->sparse = true;
	for (uint32_t b = NR_BUCKETS; b-- > 0;) {
		if (hs->hist[b] && bucket_floor(b) >= SPARSE_SCORE)
			hs->sparse = false;
		hot += hs->hist[b];
		if (hs->hist[b] && (int64_t)hot > want) {
			boundary = b;
			break;
		}
	}
	threshold = bucket_floor(boundary);

	/*
	 * Pass 2: candidates.  Promotions: sampled slow pages from the boundary
	 * bucket up, from the front of cands.  Demotions: fast pages not
	 * clearly hot (never sampled or not over the boundary bucket), from
	 * the back; every fast page when only that meets the demote goal.
	 */
	demote = hs->cands + total;
	for (int all = 0; all < 2; all++) {
		ns = nf = 0;
		for (uint32_t t = 0; t < v->nr_targets; t++) {
			const struct cxlt_page *pages = v->targets[t].pages;

			for (uint64_t i = 0; i < v->targets[t].nr_pages; i++) {
				const struct cxlt_page *p = &pages[i];
				struct cxlt_cand *c;
				float sc;

				if (p->node < 0 || roles[p->node] < 0 || !p->npages ||
				    p->since_move < hs->settle_epochs)
					continue;
				sc = SCORE(v, t, i, history);
				if (roles[p->node] == CXLT_NODE_SLOW) {
					if (!(p->flags & CXLT_PAGE_SAMPLED) || sc < threshold)
						continue;
					c = &hs->cands[ns++];
					c->key = sc;
				} else {
					if (!all && (p->flags & CXLT_PAGE_SAMPLED) &&
					    bucket(sc) > boundary)
						continue;
					c = &demote[-(int64_t)++nf];
					c->key = coldness(p, sc, d);
				}
				c->target = t;
				c->page = (uint32_t)i;
			}
		}
		if (nf >= goal || nf >= left)
			break;
	}
	demote -= nf;
	cxlt_top_k(hs->cands, ns, ns < left ? ns : left);
	cxlt_top_k(demote, nf, nf < left ? nf : left);

	/* The demotions fast memory needs whatever is promoted (the goal is in pages). */
	while (nd < nf && nd < left && nd_pages < goal)
		nd_pages += pages_of(v, &demote[nd++]);
	/*
	 * Promotions, hottest first: into the room, then in place of colder
	 * pages.  The mover lets a promotion in only while free fast memory
	 * stays over the high watermark, so the first swap under it also
	 * demotes the pages that bring free memory back up to it.
	 */
	for (uint64_t i = 0; i < ns && nd + np < left; i++) {
		const struct cxlt_page *cand = page_of(v, &hs->cands[i]);
		const struct cxlt_cand *out;
		int64_t in = (int64_t)cand->npages, need;
		uint64_t k = nd, got = 0;
		bool ok = true;

		if (room + (int64_t)nd_pages - (int64_t)np_pages >= in) {
			hs->cands[np++] = hs->cands[i];
			np_pages += (uint64_t)in;
			continue;
		}
		if (!cxlt_idle_is_evidence(v))
			break;	/* no swaps */
		/* Pages to demote so that this one fits over the high watermark. */
		need = (int64_t)np_pages + in - (room + (int64_t)nd_pages);
		if (need < 1)
			need = 1;
		while (k < nf && (int64_t)got < need) {
			ok = ok && may_displace(cand, page_of(v, &demote[k]), d);
			got += pages_of(v, &demote[k++]);
		}
		if ((int64_t)got < need || k + np + 1 > left)
			break;
		out = &demote[k - 1];
		if (!clear_gain(hs, hs->cands[i].key, page_of(v, out),
				SCORE(v, out->target, out->page, history)))
			break;
		if (!ok)
			continue;	/* colder candidates may have the evidence */
		nd = k;
		nd_pages += got;
		hs->cands[np++] = hs->cands[i];
		np_pages += (uint64_t)in;
	}

	/* Demotions first in the plan, then the promotions in order. */
	for (uint64_t i = 0; i < nd; i++)
		if (cxlt_plan_add(plan, demote[i].target, demote[i].page, slow))
			break;
	for (uint64_t i = 0; i < np; i++)
		if (cxlt_plan_add(plan, hs->cands[i].target, hs->cands[i].page, fast))
			break;

remember:
	/* Pass 3: this epoch's heat, the next epoch's history. */
	for (uint32_t t = 0; t < v->nr_targets; t++)
		for (uint64_t i = 0; i < v->targets[t].nr_pages; i++)
			v->targets[t].policy_words[i] = next_word(&v->targets[t].pages[i],
								  v->targets[t].policy_words[i], history);
	return err;
}

static const struct cxlt_param_desc hotset_params[] = {
	{ "headroom", "0", "fraction of fast capacity kept free over the high watermark (swaps restore it)" },
	{ "min_gain", "1", "a slow page displaces a fast one only if hotter by this fraction (1: twice as hot)" },
	{ "settle_epochs", "10", "epochs a moved page is left alone (match --pingpong-epochs)" },
	{ NULL, NULL, NULL },
};

const struct cxlt_policy cxlt_policy = {
	.sz = sizeof(struct cxlt_policy),
	.abi = CXLT_POLICY_ABI,
	.name = "hotset",
	.description = "keep the hottest pages that fit in the fast tier (heat histogram, no threshold)",
	.params = hotset_params,
	.init = hotset_init,
	.decide = hotset_decide,
	.fini = hotset_fini,
};
