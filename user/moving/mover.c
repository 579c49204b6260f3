// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "mover.h"
#include "util.h"

/* Written into status[] before each call, so an entry the kernel skipped is seen. */
#define STATUS_SENTINEL INT_MIN
/* Found on its destination already (retry_not_present): placed, not moved. */
#define STATUS_THERE (INT_MIN + 1)

void mover__default_opts(struct mover_opts *o)
{
	o->rate_mbps = 256;
	o->batch = 1024;
	o->pingpong_epochs = 10;
	o->low_wmark_pct = 2;
	o->high_wmark_pct = 5;
	o->keep_huge = false;
}

int mover__init(struct mover *m, const struct mover_opts *o, long page_size)
{
	memset(m, 0, sizeof(*m));
	m->opts = *o;
	m->pf = &platform_kernel;
	m->page_size = page_size;
	if (o->batch < 1 || o->high_wmark_pct < o->low_wmark_pct)
		return -EINVAL;
	return 0;
}

/* The per-plan arrays grow_scratch() sizes. */
static void free_scratch(struct mover *m)
{
	free(m->sorted);
	free(m->addrs);
	free(m->nodes);
	free(m->status);
	free(m->query);
	free(m->rec);
	free(m->weight);
	free(m->addrs2);
	free(m->nodes2);
	free(m->idx2);
	free(m->asked);
}

void mover__free(struct mover *m)
{
	free_scratch(m);
	memset(m, 0, sizeof(*m));
}

static double rate_pages(const struct mover *m)
{
	return m->opts.rate_mbps * 1048576.0 / m->page_size;
}

uint64_t mover__budget(struct mover *m, double now)
{
	double rate = rate_pages(m);

	/* A full second of bandwidth can be banked, no more: bursts stay bounded. */
	if (m->last_refill == 0)
		m->tokens = rate;
	else
		m->tokens += (now - m->last_refill) * rate;
	if (m->tokens > rate)
		m->tokens = rate;
	m->last_refill = now;
	return m->tokens < 1 ? 0 : (uint64_t)m->tokens;
}

void mover__wmarks(struct mover *m, const struct topology *topo,
		   struct wmarks *w)
{
	uint64_t cap = topology__fast_pages(topo), reserve = topology__fast_reserve(topo);

	memset(w, 0, sizeof(*w));
	for (int i = 0; i < topo->nr_nodes; i++)
		if (topo->nodes[i].role == ROLE_FAST)
			w->fast_free += topo->nodes[i].free_pages;
	/* On top of the kernel's reserve: the agent never fills what the kernel keeps free. */
	w->low = reserve + (uint64_t)(cap * m->opts.low_wmark_pct / 100);
	w->high = reserve + (uint64_t)(cap * m->opts.high_wmark_pct / 100);
	/* Hysteresis: once under low, demote until over high, not just over low. */
	if (w->fast_free < w->low)
		m->fast_short = true;
	else if (w->fast_free >= w->high)
		m->fast_short = false;
	if (m->fast_short)
		w->demote_goal = w->high - w->fast_free;
}

static int grow_scratch(struct mover *m, uint32_t n)
{
	if (n <= m->scratch_cap)
		return 0;
	free_scratch(m);
	m->sorted = malloc(n * sizeof(*m->sorted));
	m->addrs = malloc(n * sizeof(*m->addrs));
	m->nodes = malloc(n * sizeof(*m->nodes));
	m->status = malloc(n * sizeof(*m->status));
	m->query = malloc(n * sizeof(*m->query));
	m->rec = malloc(n * sizeof(*m->rec));
	m->weight = malloc(n * sizeof(*m->weight));
	m->addrs2 = malloc(n * sizeof(*m->addrs2));
	m->nodes2 = malloc(n * sizeof(*m->nodes2));
	m->idx2 = malloc(n * sizeof(*m->idx2));
	m->asked = malloc(2 * n * sizeof(*m->asked));
	if (!m->sorted || !m->addrs || !m->nodes || !m->status || !m->query || !m->rec || !m->weight ||
	    !m->addrs2 || !m->nodes2 || !m->idx2 || !m->asked) {
		m->scratch_cap = 0;
		return -ENOMEM;
	}
	m->scratch_cap = n;
	return 0;
}

static int cmp_move(const void *a, const void *b)
{
	const struct cxlt_move *x = a, *y = b;

	if (x->target != y->target)
		return x->target < y->target ? -1 : 1;
	return x->page < y->page ? -1 : x->page > y->page;
}

/* What became of a record's move, for the policy's next view; a region's move stays "moved" once any of its pages did. */
static void set_outcome(struct cxlt_page *p, enum cxlt_outcome o)
{
	if (p->outcome != CXLT_OUTCOME_MOVED)
		p->outcome = (uint8_t)o;
}

/* n pages of record p moved to node. */
static void account_moved(struct mover *m, struct target *t, struct cxlt_page *p,
			  const struct topology *topo, int node, uint32_t n)
{
	p->outcome = CXLT_OUTCOME_MOVED;
	enum node_role from = p->node >= 0 && (topo->fast_mask >> p->node) & 1 ? ROLE_FAST : ROLE_SLOW;
	enum node_role to = (topo->fast_mask >> node) & 1 ? ROLE_FAST : ROLE_SLOW;

	if (from == to) {
		m->epoch.moved_other += n;
	} else if (to == ROLE_FAST) {
		m->epoch.promoted += n;
		t->ctr.promoted += n;
	} else {
		m->epoch.demoted += n;
		t->ctr.demoted += n;
	}
	/* A region's record moves page by page: its node follows at the end of the batch. */
	if (!(p->flags & PAGE_REGION))
		tracker__record_moved(t, p, node);
}

/* Entry i of the retry's arrays becomes entry *kept, the next one kept. */
static inline void retry_keep(struct mover *m, uint32_t i, uint32_t *kept)
{
	m->addrs2[*kept] = m->addrs2[i];
	m->nodes2[*kept] = m->nodes2[i];
	m->idx2[(*kept)++] = m->idx2[i];
}

/*
 * Before Linux 6.5, move_pages cannot see a page that the NUMA scanner has
 * made PROT_NONE: it reports -ENOENT and the page stays where it is until
 * its owner touches it, which a cold page never does.  So -ENOENT pages are
 * touched on the owner's behalf and tried once more.
 */
static void retry_not_present(struct mover *m, struct target *t, uint32_t n)
{
	uint32_t r = 0, kept = 0;

	for (uint32_t k = 0; k < n; k++) {
		if (m->status[k] != -ENOENT)
			continue;
		m->addrs2[r] = m->addrs[k];
		m->nodes2[r] = m->nodes[k];
		m->idx2[r++] = k;
	}
	/*
	 * A region's pages may never have been populated, and reading one
	 * would map the zero page into the owner: only those the owner's
	 * pagemap shows mapped (a PROT_NONE page is) are touched.
	 */
	for (uint32_t i = 0; i < r; i++) {
		bool present = false;

		if (t->pt.pages[m->rec[m->idx2[i]]].flags & PAGE_REGION) {
			if (!m->pf->pages_present ||
			    m->pf->pages_present(m->pf->ctx, t->pid, &m->addrs2[i], 1, &present) || !present)
				continue;
		}
		retry_keep(m, i, &kept);
	}
	r = kept;
	if (!r)
		return;
	m->pf->touch_pages(m->pf->ctx, t->pid, m->addrs2, r);
	/*
	 * A PROT_NONE page hid its node from skip_in_place() too: one already
	 * on its destination would be reported as moved with nothing moved
	 * (the NUMA scanner in mode 2 marks every slow page, so a demoted
	 * region's slow pages all were).
	 */
	m->epoch.calls++;
	if (m->pf->move_pages(m->pf->ctx, t->pid, r, m->addrs2, NULL, m->query, 0) == 0) {
		kept = 0;
		for (uint32_t i = 0; i < r; i++) {
			if (m->query[i] == m->nodes2[i])
				m->status[m->idx2[i]] = STATUS_THERE;
			else
				retry_keep(m, i, &kept);
		}
		if (!(r = kept))
			return;
	}
	for (uint32_t i = 0; i < r; i++)
		m->query[i] = STATUS_SENTINEL;
	m->epoch.calls++;
	if (m->pf->move_pages(m->pf->ctx, t->pid, r, m->addrs2, m->nodes2, m->query, MPOL_MF_MOVE) < 0)
		return;
	m->epoch.retried += r;
	for (uint32_t i = 0; i < r; i++)
		m->status[m->idx2[i]] = m->query[i];
}

/*
 * A region's pages need not all be where its record says: those already on
 * the destination are left out (move_pages would report them as moved), so
 * the counters count what the kernel moved.  One query (nodes = NULL) for a
 * batch with a region in it; returns the addresses left.
 */
static uint32_t skip_in_place(struct mover *m, struct target *t, uint32_t n)
{
	bool region = false;
	uint32_t j = 0;

	for (uint32_t k = 0; k < n && !region; k++)
		region = t->pt.pages[m->rec[k]].flags & PAGE_REGION;
	if (!region)
		return n;
	m->epoch.calls++;
	if (m->pf->move_pages(m->pf->ctx, t->pid, n, m->addrs, NULL, m->query, 0) < 0)
		return n;	/* the move itself will say what is wrong */
	for (uint32_t k = 0, kept = 0; k < n; k++) {
		struct cxlt_page *p = &t->pt.pages[m->rec[k]];

		/* A record's addresses are contiguous: kept counts this record's. */
		if (k && m->rec[k] != m->rec[k - 1])
			kept = 0;
		if (!(p->flags & PAGE_REGION) || m->query[k] != m->nodes[k]) {
			m->addrs[j] = m->addrs[k];
			m->nodes[j] = m->nodes[k];
			m->rec[j] = m->rec[k];
			m->weight[j++] = m->weight[k];
			kept++;
		}
		/* A region all of whose pages are there already: its record says so. */
		if (!kept && (k + 1 == n || m->rec[k + 1] != m->rec[k]) && (p->flags & PAGE_REGION)) {
			tracker__record_moved(t, p, m->nodes[k]);
			p->outcome = CXLT_OUTCOME_MOVED;
		}
	}
	return j;
}

/*
 * One move_pages call for n pages of target t.  Returns -ENOMEM when the
 * destination ran out of memory (the caller stops promoting), -ESRCH when the
 * process is gone, 0 otherwise.
 */
static int move_batch(struct mover *m, struct target *t, const struct topology *topo,
		      uint32_t n)
{
	bool recheck = false, full = false;
	long ret;

	if (!(n = skip_in_place(m, t, n)))
		return 0;
	for (uint32_t k = 0; k < n; k++)
		m->status[k] = STATUS_SENTINEL;
	m->epoch.calls++;
	ret = m->pf->move_pages(m->pf->ctx, t->pid, n, m->addrs, m->nodes, m->status, MPOL_MF_MOVE);
	for (uint32_t k = 0; k < n; k++)
		m->attempted += m->weight[k];
	if (ret < 0) {
		int call_errno = errno;

		if (call_errno == ESRCH || (call_errno == EINVAL && proc_vanished(t->pid))) {
			m->epoch.process_gone++;
			t->gone = true;
			return -ESRCH;
		}
		m->epoch.call_failed++;
		pr_warn("move_pages of %u pages of pid %d failed: %s", n, t->pid,
			strerror(call_errno));
		return call_errno == ENOMEM ? -ENOMEM : 0;
	}
	retry_not_present(m, t, n);
	for (uint32_t k = 0; k < n; k++) {
		struct cxlt_page *p = &t->pt.pages[m->rec[k]];
		bool region = p->flags & PAGE_REGION;
		int st = m->status[k];

		if (st == m->nodes[k]) {
			account_moved(m, t, p, topo, st, m->weight[k]);
		} else if (st == STATUS_THERE) {
			p->outcome = CXLT_OUTCOME_MOVED;	/* where the plan wanted it */
			if (!region)
				tracker__record_moved(t, p, m->nodes[k]);
		} else if (st >= 0) {
			if (!region)
				p->node = (int8_t)st;	/* moved elsewhere or stayed: trust the kernel */
			m->epoch.other_error += m->weight[k];
		} else if (st == STATUS_SENTINEL) {
			m->epoch.unreported += m->weight[k];
			recheck = true;
		} else if (st == -EBUSY) {
			/* 6.1 reports -EBUSY for tail pages of a THP that did move. */
			recheck = true;
			m->epoch.busy += m->weight[k];
			set_outcome(p, CXLT_OUTCOME_BUSY);
		} else if ((st == -ENOENT || st == -EFAULT || st == -EACCES) && region) {
			/*
			 * A page of the region that is not there (the sweep counts
			 * them), or that other processes share (it stays).
			 */
		} else if (st == -ENOENT || st == -EFAULT) {
			/*
			 * Not mapped now.  On kernels before 6.5 that includes a page
			 * the NUMA scanner just made PROT_NONE, so only -EFAULT (no
			 * such mapping) drops the record; the next scan decides.
			 */
			m->epoch.gone++;
			if (st == -EFAULT)
				p->flags |= PAGE_GONE;
			p->node = CXLT_NODE_UNKNOWN;
		} else if (st == -ENOMEM) {
			m->epoch.nomem += m->weight[k];
			set_outcome(p, CXLT_OUTCOME_FULL);
			full = true;
		} else if (st == -EACCES) {
			/*
			 * Mapped by other processes too: it stays.  The sweeps
			 * track private memory only, so a record of a shared page
			 * (sampled between two sweeps) goes, rather than come back.
			 */
			m->epoch.access += m->weight[k];
			p->flags |= PAGE_GONE;
		} else {
			m->epoch.other_error += m->weight[k];
		}
	}
	if (recheck) {
		/* The node query is the truth where the status array is not. */
		if (m->pf->move_pages(m->pf->ctx, t->pid, n, m->addrs, NULL, m->query, 0) == 0) {
			for (uint32_t k = 0; k < n; k++) {
				struct cxlt_page *p = &t->pt.pages[m->rec[k]];
				int st = m->status[k];

				if ((st != -EBUSY && st != STATUS_SENTINEL) ||
				    m->query[k] != m->nodes[k])
					continue;
				account_moved(m, t, p, topo, m->nodes[k], m->weight[k]);
				if (st == -EBUSY)
					m->epoch.busy -= m->weight[k];
				else
					m->epoch.unreported -= m->weight[k];
			}
		} else if (errno == ESRCH || proc_vanished(t->pid)) {
			/*
			 * The process exited during the call: the kernel left
			 * the rest of the status array alone.  Those pages are
			 * gone with it, not lost track of.
			 */
			uint64_t left = 0;

			for (uint32_t k = 0; k < n; k++)
				left += m->status[k] == STATUS_SENTINEL ? m->weight[k] : 0;
			m->epoch.unreported -= left;
			m->epoch.gone += left;
			m->epoch.process_gone++;
			t->gone = true;
		}
	}
	/*
	 * Regions some of whose pages moved, or none of whose pages asked is
	 * anywhere else (the rest were there already, skip_in_place(), and
	 * these are not mapped): the record is where they are.  Otherwise a
	 * record kept its old node and the policy planned it every epoch.
	 */
	for (uint32_t k = 0, moved = 0, elsewhere = 0; k < n; k++) {
		struct cxlt_page *p = &t->pt.pages[m->rec[k]];
		int st = m->status[k];
		bool there = st == m->nodes[k] || st == STATUS_THERE ||
			     ((st == -EBUSY || st == STATUS_SENTINEL) && recheck &&
			      m->query[k] == m->nodes[k]);

		if (k && m->rec[k] != m->rec[k - 1])
			moved = elsewhere = 0;
		moved += there;
		elsewhere += !there && st != -ENOENT && st != -EFAULT;
		if ((p->flags & PAGE_REGION) && (moved || !elsewhere) &&
		    (k + 1 == n || m->rec[k + 1] != m->rec[k]))
			tracker__record_moved(t, p, m->nodes[k]);
	}
	return full ? -ENOMEM : 0;
}

/*
 * The addresses that move record p: its own; a huge page's first (the kernel
 * moves the whole folio), standing for all its pages; or each page of a
 * region with a resident chunk and no record of its own.  Returns how many.
 */
static uint32_t record_addrs(struct mover *m, const struct target *t, uint32_t rec, int node,
			     uint32_t at, bool demote)
{
	const struct cxlt_page *p = &t->pt.pages[rec];
	const struct region *r;
	uint32_t n = 0;

	if (!(p->flags & PAGE_REGION) || (p->flags & PAGE_HUGE)) {
		m->addrs[at] = (void *)(uintptr_t)p->addr;
		m->nodes[at] = node;
		m->rec[at] = rec;
		m->weight[at] = p->flags & PAGE_REGION ? REGION_PAGES : 1;
		return 1;
	}
	r = tracker__region(t, p->addr);
	for (uint32_t k = 0; k < REGION_PAGES; k++) {
		uint64_t a = p->addr + ((uint64_t)k << CXLT_PAGE_SHIFT);
		uint64_t chunks = r && (r->flags & REGION_SWEPT) ? r->resident_bits : r ? r->sampled_bits : 0;

		/*
		 * A region demotes its cold pages: never the chunks sampled in
		 * this window or the last (hot pages without records of their
		 * own yet, or a v1 policy's guess that one record is one page).
		 */
		if (demote && r)
			chunks &= ~(r->sampled_bits | r->sampled_prev);

		if (!(chunks >> (k / CHUNK_PAGES) & 1) || (r->detail && page_table__find(&t->pt, a) >= 0))
			continue;
		m->addrs[at + n] = (void *)(uintptr_t)a;
		m->nodes[at + n] = node;
		m->rec[at + n] = rec;
		m->weight[at + n] = 1;
		n++;
	}
	return n;
}

/* Runs the moves of one direction (moves[0..n), sorted by target). */
static void run_moves(struct mover *m, struct tracker *tr, const struct topology *topo,
		      const struct cxlt_move *moves, uint32_t n, bool promote)
{
	uint32_t i = 0;

	while (i < n) {
		struct target *t = &tr->targets[moves[i].target];
		uint32_t k = 0, first = i;
		int err;

		/* A batch: whole records, at most batch addresses (one region may go over alone). */
		for (; i < n && &tr->targets[moves[i].target] == t; i++) {
			const struct cxlt_page *p = &t->pt.pages[moves[i].page];
			uint32_t need = (p->flags & PAGE_REGION) && !(p->flags & PAGE_HUGE) ? REGION_PAGES : 1;

			if (k && k + need > m->opts.batch)
				break;
			k += record_addrs(m, t, moves[i].page, moves[i].node, k, !promote);
		}
		if (t->gone) {
			m->epoch.rejected_invalid += i - first;	/* its process exited mid-epoch */
			continue;
		}
		if (!k)
			continue;
		err = move_batch(m, t, topo, k);
		if (err == -ENOMEM && promote) {
			/* Fast memory is full: the rest of the promotions wait. */
			m->epoch.rejected_watermark += n - i;
			for (; i < n; i++)
				tr->targets[moves[i].target].pt.pages[moves[i].page].outcome = CXLT_OUTCOME_FULL;
			return;
		}
	}
}

/* Whether a huge page maps r now, as the kernel says: 1, 0, or -errno where it cannot say. */
static int kernel_says_huge(const struct mover *m, const struct target *t, const struct region *r)
{
	return m->pf->huge_at ? m->pf->huge_at(m->pf->ctx, t->pid, r->base) : -ENOSYS;
}

/* Splits r's huge page by advising one of its pages cold: one never sampled where there is one. */
static int split_region(struct mover *m, const struct target *t, const struct region *r)
{
	uint64_t sampled = r->sampled_bits | r->sampled_prev;
	uint32_t pg = REGION_PAGES - 1;

	if (~sampled)
		pg = (uint32_t)__builtin_ctzll(~sampled) * CHUNK_PAGES;
	return m->pf->split_huge(m->pf->ctx, t->pid, r->base + ((uint64_t)pg << CXLT_PAGE_SHIFT));
}

/*
 * A huge page on its way to fast memory is split first, so that its hot
 * pages follow alone in the epochs after and its cold ones stay: the kernel
 * moves a huge page only whole (docs/design.md, "Huge pages").  Again when
 * it is huge again (khugepaged collapses a split range, on the node most of
 * its pages are on: the slow one, with the hot pages); but a huge page the
 * split left huge (mapped by several processes) moves whole.  Whether the
 * split took, the kernel says; where it cannot, a sweep that found the
 * region split since its last split does.  The page advised cold is one of
 * a chunk never sampled where there is one.  Returns whether it was split.
 */
static bool split_first(struct mover *m, struct target *t, struct cxlt_page *p)
{
	struct region *r;
	int says;

	if (m->opts.keep_huge || !m->pf->split_huge || !(p->flags & PAGE_HUGE) ||
	    !(r = tracker__region(t, p->addr)))
		return false;
	says = kernel_says_huge(m, t, r);
	if (says < 0 && (r->flags & (REGION_SPLIT | REGION_SPLIT_SEEN)) == REGION_SPLIT)
		return false;
	r->flags = (r->flags | REGION_SPLIT) & ~REGION_SPLIT_SEEN;
	if (says && split_region(m, t, r))
		return false;
	if (says > 0 && kernel_says_huge(m, t, r) > 0) {
		pr_debug("pid %d: %#" PRIx64 " stays a huge page after a split (shared?): it moves whole",
			 t->pid, r->base);
		return false;
	}
	tracker__huge_split(t, r);
	m->epoch.split++;
	p->outcome = CXLT_OUTCOME_BUSY;	/* its hot pages come next */
	return true;
}

/*
 * A page of a region the mover split (or the region's record, for its pages
 * without records of their own), on its way to fast memory: khugepaged may
 * have collapsed the region again since (on the slow node, where most of its
 * pages are), and the sweep that would see it may be epochs away; moving the
 * page now would move the whole huge page, cold pages and all.  The same
 * for a page sampled in a region no sweep has reached yet (a start on a
 * kernel without PAGEMAP_SCAN, where the first sweep of a large target
 * takes epochs).  So the kernel is asked, once a plan a region, and a huge
 * page found is split before its pages move.  Returns whether the page must
 * wait: the split did not take.
 */
static bool huge_again(struct mover *m, struct tracker *tr, uint32_t ti, const struct cxlt_page *p)
{
	struct target *t = &tr->targets[ti];
	struct region *r;

	if (m->opts.keep_huge || !m->pf->split_huge || !m->pf->huge_at || (p->flags & PAGE_HUGE) ||
	    !(r = tracker__region(t, p->addr)) || (r->flags & (REGION_SPLIT | REGION_SWEPT)) == REGION_SWEPT)
		return false;
	if (r->flags & REGION_ASKED)
		return r->flags & REGION_STILL_HUGE;
	r->flags |= REGION_ASKED;
	m->asked[2 * m->nr_asked] = ti;
	m->asked[2 * m->nr_asked++ + 1] = (uint32_t)(r - t->rt.rg);
	if (kernel_says_huge(m, t, r) <= 0)
		return false;
	if (split_region(m, t, r) || kernel_says_huge(m, t, r) > 0) {
		pr_debug("pid %d: %#" PRIx64 " is a huge page again and would not split: its pages wait",
			 t->pid, r->base);
		r->flags |= REGION_STILL_HUGE;
		return true;
	}
	pr_debug("pid %d: %#" PRIx64 " was a huge page %s: split before its pages move", t->pid, r->base,
		 r->flags & REGION_SPLIT ? "again (khugepaged)" : "no sweep had seen");
	if (!(r->flags & REGION_SPLIT))
		tracker__huge_split(t, r);
	m->epoch.split++;
	return false;
}

static void forget_asked(struct mover *m, struct tracker *tr)
{
	for (uint32_t i = 0; i < m->nr_asked; i++)
		tr->targets[m->asked[2 * i]].rt.rg[m->asked[2 * i + 1]].flags &=
			(uint8_t)~(REGION_ASKED | REGION_STILL_HUGE);
	m->nr_asked = 0;
}

/*
 * A region the mover split whose pages are all on a fast node now (its hot
 * set was all of it) is made a huge page again there, within the budget:
 * a collapse copies 512 pages.
 */
static void collapse_placed(struct mover *m, struct tracker *tr, const struct topology *topo)
{
	if (!m->pf->collapse_huge)
		return;
	for (uint32_t ti = 0; ti < tr->nr_targets; ti++) {
		struct target *t = &tr->targets[ti];
		uint32_t i, still = 0;

		/* A walk of every region (a 1 TiB target has 512 Ki) only while some are split. */
		for (i = 0; t->split_regions && i < t->rt.nr && !t->gone && m->tokens >= REGION_PAGES; i++) {
			struct region *r = &t->rt.rg[i];

			if (!(r->flags & REGION_SPLIT))
				continue;
			if ((t->pt.pages[r->rec].flags & PAGE_HUGE) || r->resident != REGION_PAGES ||
			    r->on_node[0] != REGION_PAGES || r->node_id[0] < 0 ||
			    !((topo->fast_mask >> r->node_id[0]) & 1)) {
				still++;
				continue;
			}
			r->flags &= ~(REGION_SPLIT | REGION_SPLIT_SEEN);
			m->tokens -= REGION_PAGES;
			if (m->pf->collapse_huge(m->pf->ctx, t->pid, r->base, REGION_SIZE))
				continue;	/* khugepaged may still */
			t->pt.pages[r->rec].flags |= PAGE_HUGE;
			m->epoch.collapsed++;
		}
		if (i == t->rt.nr)
			t->split_regions = still;	/* a whole walk counts them again */
	}
}

static const struct tracker *sort_tr;	/* qsort has no context argument */

static const struct cxlt_page *move_record(const struct tracker *tr, const struct cxlt_move *mv)
{
	return &tr->targets[mv->target].pt.pages[mv->page];
}

/* Coldest first: never sampled, then the least heat. */
static int cmp_cold(const void *a, const void *b)
{
	const struct cxlt_page *x = move_record(sort_tr, a), *y = move_record(sort_tr, b);
	int sx = !!(x->flags & CXLT_PAGE_SAMPLED), sy = !!(y->flags & CXLT_PAGE_SAMPLED);

	if (sx != sy)
		return sx - sy;
	return x->heat < y->heat ? -1 : x->heat > y->heat;
}

/*
 * A v1 policy counts a region's record as one page, so under a demote goal
 * it may name every fast record, hot ones too.  When the plan names a
 * region, its demotions go coldest first (never sampled, then the least
 * heat) until the goal is met in pages.  A plan of pages alone is left as
 * it is.  Returns the demotions kept in m->sorted[0, nd).
 */
static uint32_t demote_to_goal(struct mover *m, struct tracker *tr, uint32_t nd, uint64_t goal)
{
	uint64_t pages = 0;
	uint32_t kept = 0;
	bool region = false;

	for (uint32_t i = 0; i < nd && !region; i++)
		region = move_record(tr, &m->sorted[i])->flags & PAGE_REGION;
	if (!region)
		return nd;
	sort_tr = tr;
	qsort(m->sorted, nd, sizeof(*m->sorted), cmp_cold);
	for (uint32_t i = 0; i < nd; i++) {
		const struct target *t = &tr->targets[m->sorted[i].target];
		const struct cxlt_page *p = move_record(tr, &m->sorted[i]);

		if (pages >= goal) {
			m->epoch.rejected_budget++;
			tr->targets[m->sorted[i].target].pt.pages[m->sorted[i].page].outcome =
				CXLT_OUTCOME_BUDGET;
			continue;
		}
		pages += tracker__record_pages(t, p);
		m->sorted[kept++] = m->sorted[i];
	}
	return kept;
}

int mover__execute(struct mover *m, struct tracker *tr,
		   const struct topology *topo, const struct cxlt_plan *plan,
		   uint64_t budget)
{
	uint64_t managed = topo->fast_mask | topo->slow_mask;
	uint32_t nd = 0, np;
	uint64_t total = 0;
	uint64_t promote_room;
	struct wmarks w;
	int err;

	memset(&m->epoch, 0, sizeof(m->epoch));
	m->attempted = 0;
	/* The view showed the last plan's outcomes; this plan's replace them. */
	if (m->outcomes)
		for (uint32_t ti = 0; ti < tr->nr_targets; ti++)
			for (uint32_t i = 0; i < tr->targets[ti].pt.nr; i++)
				tr->targets[ti].pt.pages[i].outcome = CXLT_OUTCOME_NONE;
	m->outcomes = plan->nr > 0;
	err = grow_scratch(m, (plan->nr > m->opts.batch ? plan->nr : m->opts.batch) + REGION_PAGES);
	if (err)
		return err;
	mover__wmarks(m, topo, &w);

	/* Validate, split into demotions (first) and promotions (after). */
	np = plan->nr;
	for (uint32_t i = 0; i < plan->nr; i++) {
		const struct cxlt_move *mv = &plan->moves[i];
		struct cxlt_page *p;
		uint32_t cost;
		bool to_fast;

		if (mv->target >= tr->nr_targets || tr->targets[mv->target].gone ||
		    mv->page >= tr->targets[mv->target].pt.nr || mv->node < 0 ||
		    mv->node >= 64 || !((managed >> mv->node) & 1)) {
			m->epoch.rejected_invalid++;
			continue;
		}
		p = &tr->targets[mv->target].pt.pages[mv->page];
		/*
		 * Named twice: the second would find its page isolated by the
		 * first (-EBUSY, then counted by the node query as moved again)
		 * or already there, and spend the budget twice.
		 */
		if (p->outcome != CXLT_OUTCOME_NONE) {
			m->epoch.rejected_invalid++;
			continue;
		}
		cost = tracker__record_pages(&tr->targets[mv->target], p);
		if (p->node == mv->node || p->node < 0 || (p->flags & PAGE_GONE) || !cost) {
			m->epoch.rejected_invalid++;
			p->outcome = CXLT_OUTCOME_INVALID;
			continue;
		}
		if (p->since_move < m->opts.pingpong_epochs) {
			m->epoch.rejected_pingpong++;
			p->outcome = CXLT_OUTCOME_PINGPONG;
			continue;
		}
		to_fast = (topo->fast_mask >> mv->node) & 1;
		if (to_fast && split_first(m, &tr->targets[mv->target], p))
			continue;
		if (to_fast && huge_again(m, tr, mv->target, p)) {
			p->outcome = CXLT_OUTCOME_BUSY;
			continue;
		}
		/* The budget is in pages: a region's record costs all the pages it moves. */
		if (total + cost > budget) {
			m->epoch.rejected_budget++;
			p->outcome = CXLT_OUTCOME_BUDGET;
			continue;
		}
		total += cost;
		p->outcome = CXLT_OUTCOME_FAILED;	/* until the kernel says otherwise */
		if (to_fast)
			m->sorted[--np] = *mv;
		else
			m->sorted[nd++] = *mv;
	}
	forget_asked(m, tr);
	if (w.demote_goal)
		nd = demote_to_goal(m, tr, nd, w.demote_goal);
	qsort(m->sorted, nd, sizeof(*m->sorted), cmp_move);
	run_moves(m, tr, topo, m->sorted, nd, false);

	/* Promotions may not take free fast memory under the high watermark. */
	promote_room = w.fast_free + m->epoch.demoted > w.high ?
		       w.fast_free + m->epoch.demoted - w.high : 0;
	{
		/*
		 * Promotions sit at the tail in reverse plan order: in plan order
		 * again, the first kept up to the room; a target at its share
		 * (fast_cap) gets none past it, the others go on.
		 */
		uint32_t npromote = 0, all = plan->nr - np;
		uint64_t pages = 0;
		struct cxlt_move *promotes = m->sorted + np;
		bool full = false;

		for (uint32_t a = 0, b = all; a + 1 < b; a++, b--) {
			struct cxlt_move tmp = promotes[a];

			promotes[a] = promotes[b - 1];
			promotes[b - 1] = tmp;
		}
		for (uint32_t ti = 0; ti < tr->nr_targets; ti++) {
			struct target *t = &tr->targets[ti];

			t->fast_allow = !t->fast_cap ? UINT64_MAX :
					t->fast_cap > t->place.fast ? t->fast_cap - t->place.fast : 0;
		}
		for (uint32_t k = 0; k < all; k++) {
			struct cxlt_move mv = promotes[k];
			struct target *t = &tr->targets[mv.target];
			struct cxlt_page *p = &t->pt.pages[mv.page];
			uint32_t cost = tracker__record_pages(t, p);

			if (full || pages + cost > promote_room) {
				full = true;
				m->epoch.rejected_watermark++;
				p->outcome = CXLT_OUTCOME_WATERMARK;
			} else if (cost > t->fast_allow) {
				m->epoch.rejected_share++;
				p->outcome = CXLT_OUTCOME_SHARE;
			} else {
				t->fast_allow -= cost;
				pages += cost;
				promotes[npromote++] = mv;
			}
		}
		qsort(promotes, npromote, sizeof(*promotes), cmp_move);
		run_moves(m, tr, topo, promotes, npromote, true);
	}

	/* Bandwidth is spent by what went to the kernel, not by what was held back. */
	m->tokens -= m->attempted;
	collapse_placed(m, tr, topo);
	m->last_result = (struct cxlt_plan_result){
		.planned = plan->nr, .promoted = m->epoch.promoted, .demoted = m->epoch.demoted,
		.refused = m->epoch.rejected_invalid + m->epoch.rejected_pingpong +
			   m->epoch.rejected_budget + m->epoch.rejected_watermark + m->epoch.rejected_share,
		.failed = m->epoch.busy + m->epoch.gone + m->epoch.nomem + m->epoch.access +
			  m->epoch.other_error + m->epoch.unreported,
	};
#define X(name, desc) m->total.name += m->epoch.name;
	MOVER_STATS(X)
#undef X
	return 0;
}
