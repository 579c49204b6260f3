// SPDX-License-Identifier: MIT
/*
 * cxltier-replay: runs tiering policies over a recorded or synthetic trace
 * against a two-tier model, next to an oracle and to no migration.
 *
 * The pipeline is the live agent's own: samples go through the tracker
 * (heat, idle epochs), the engine builds the same view and asks the same
 * policy .so, and the same mover validates and batches the plan.  Only what
 * stands behind move_pages differs: a tier model with a fixed capacity per
 * tier, where a move succeeds while the destination has room.
 *
 * Model: every sample is an access of its weight.  A page appears in the
 * fast tier on first touch while the fast tier is over its low watermark,
 * else in the slow tier.  Accesses of an epoch are served by the placement
 * the page had during that epoch; the policy decides at the end of the
 * epoch.  The oracle places each epoch's most accessed pages in the fast
 * tier with perfect knowledge and no migration cost; "none" never moves.
 * Everything is deterministic: the same inputs give the same output, byte
 * for byte (decision times appear only with --timing).
 */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"
#include "pipeline.h"
#include "mover.h"
#include "policy_host.h"
#include "trace.h"
#include "tracker.h"
#include "util.h"

#define MAX_POLICIES 16
#define NODE_FAST 0
#define NODE_SLOW 1
/*
 * A trace's time span is not trusted: every epoch costs a pass over the
 * pages seen, so a gap of years between two samples would be years of
 * empty epochs.  Beyond this many epochs the replay refuses and names the
 * --epoch-ms that fits (the fuzzer builds with fewer to stay fast).
 */
#ifndef REPLAY_MAX_EPOCHS
#define REPLAY_MAX_EPOCHS 1000000
#endif

struct model_opts {
	double fast_ratio;	/* fast capacity / distinct pages, when fast_pages is 0 */
	uint64_t fast_pages, slow_pages;
	uint32_t epoch_ms;
	double fast_ns, slow_ns, migrate_ns;
	double rate_mbps;
	double low_pct, high_pct;
	uint32_t pingpong_window;
	double decay;
	bool timing, json, progress;
	const char *plot_dir;
};

struct result {
	char name[64];
	uint64_t accesses, fast_hits;
	uint64_t promoted, demoted, pingpong;
	uint64_t epochs;
	double decide_ms;
	double *epoch_ratio;	/* per epoch fast-hit ratio, for plots */
};

/* Per page, beside the tracker's record: for ping-pong counting. */
struct move_hist {
	uint32_t last_epoch;	/* epoch of the last move + 1; 0 = never */
	int8_t last_to;
};

struct model {
	const struct model_opts *o;
	struct topology topo;
	struct tracker tr;
	struct mover m;
	struct engine eng;
	struct platform pf;		/* this model, behind the tracker's and mover's calls */
	uint64_t e;			/* the epoch in flight, from 0 */
	uint64_t cap[2], used[2];
	struct move_hist **hist;	/* per target, indexed like its records */
	uint32_t *hist_cap;
	uint32_t nr_hist;		/* entries in hist and hist_cap */
	/*
	 * tgid -> target index + 1 (0: free slot), open addressing: the
	 * tracker's lookup is a linear scan, fine for the agent's few targets,
	 * not for a trace naming 100k processes.
	 */
	uint32_t *tgid_slots;
	uint32_t tgid_mask;
	struct result *res;
};


static const char usage_text[] =
"Usage: cxltier-replay [OPTIONS] TRACE POLICY...\n"
"       cxltier-replay --synth KIND [SYNTH OPTIONS] -O FILE\n"
"       cxltier-replay --to-csv TRACE [-O FILE]\n"
"\n"
"Runs each POLICY (a name from the policy directory, or a path to a .so) over\n"
"TRACE against a two-tier model and prints, per policy: the share of accesses\n"
"served by the fast tier, next to an oracle (each epoch's hottest pages in the\n"
"fast tier, perfect knowledge, free migration) and to no migration; the mean\n"
"access latency with and without migration cost; pages promoted and demoted;\n"
"ping-pong moves (a page moved back within the window).\n"
"\n"
"Tier model:\n"
"  -f, --fast-ratio A:B     fast capacity : distinct pages in the trace (default 1:4)\n"
"      --fast-pages N       fast capacity in pages (overrides --fast-ratio)\n"
"      --slow-pages N       slow capacity in pages (default: every page fits)\n"
"  -e, --epoch-ms MS        epoch length in trace time (default 1000)\n"
"      --fast-ns NS         access latency of the fast tier (default 100)\n"
"      --slow-ns NS         access latency of the slow tier (default 250)\n"
"      --migrate-ns NS      cost of migrating one page (default 2000)\n"
"  -r, --rate MBPS          migration budget, MiB/s of trace time (default 256)\n"
"      --low-wmark PCT      fast-tier watermarks as in cxltierd (default 1)\n"
"      --high-wmark PCT     (default 2)\n"
"      --decay F            heat decay per epoch (default 0.5)\n"
"      --pingpong-window N  a page moved back within N epochs is a ping-pong (default 10)\n"
"Policies:\n"
"  -o, --param POLICY:KEY=VALUE   a parameter for one policy (repeat)\n"
"      --policy-dir DIR     where policy names are looked up (default: policies/\n"
"                           beside this binary)\n"
"Output:\n"
"  -j, --json               JSON instead of the table\n"
"      --timing             add the policies' decision time per epoch (not\n"
"                           deterministic)\n"
"      --plot DIR           write PNG plots with gnuplot: fast-tier hit ratio\n"
"                           over time per policy, heat map of pages x time\n"
"\n"
"Synthetic traces (--synth zipf|hotset|shift):\n"
"      --pages N            distinct pages (default 32768)\n"
"      --epochs N           epochs (default 60)\n"
"      --samples N          accesses per epoch (default 500000), written as one\n"
"                           sample per touched page and epoch, weighted\n"
"      --seed N             PRNG seed (default 1)\n"
"      --alpha A            zipf exponent (default 0.99)\n"
"      --hot F              hot fraction of the pages (hotset, shift; default 0.1)\n"
"      --hot-share F        share of accesses to the hot set (default 0.9)\n"
"      --shift-every N      shift: the hot set moves every N epochs (default 10)\n"
"  -O, --output FILE        where to write (synth: required; to-csv: default stdout)\n"
"\n"
"EXAMPLES\n"
"  cxltier-replay --synth zipf --seed 1 -O zipf.trace\n"
"  cxltier-replay zipf.trace hotset hotcold age tpp\n"
"  cxltier-replay --fast-ratio 1:8 -o hotcold:promote_heat=2 shift.trace hotcold ./my.so\n"
"  cxltier-replay --json --plot plots/ recorded.trace hotset\n"
"  cxltier-replay --to-csv recorded.trace -O recorded.csv\n";

/* Returns 2, the exit status of a usage error. */
static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "cxltier-replay: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'cxltier-replay --help'.\n");
	return 2;
}

/* ---- the tier model behind move_pages ---- */

static uint32_t tgid_hash(uint32_t tgid)
{
	return tgid * 0x9E3779B1u;
}

/* The index of tgid's target, or -1. */
static int model_find_target(const struct model *md, uint32_t tgid)
{
	if (!md->tgid_slots)
		return -1;
	for (uint32_t i = tgid_hash(tgid) & md->tgid_mask;; i = (i + 1) & md->tgid_mask) {
		uint32_t slot = md->tgid_slots[i];

		if (!slot)
			return -1;
		if ((uint32_t)md->tr.targets[slot - 1].pid == tgid)
			return slot - 1;
	}
}

static void tgid_insert(struct model *md, uint32_t ti)
{
	uint32_t i = tgid_hash((uint32_t)md->tr.targets[ti].pid) & md->tgid_mask;

	while (md->tgid_slots[i])
		i = (i + 1) & md->tgid_mask;
	md->tgid_slots[i] = ti + 1;
}

/* The index of tgid's target, added on its first sample; -ENOMEM. */
static int model_target(struct model *md, uint32_t tgid)
{
	int ti = model_find_target(md, tgid);
	char comm[16];

	if (ti >= 0)
		return ti;
	/* At most half full, so probes stay short. */
	if (2 * (md->tr.nr_targets + 1) > (md->tgid_slots ? md->tgid_mask + 1 : 0)) {
		uint32_t size = md->tgid_slots ? 2 * (md->tgid_mask + 1) : 1024;

		free(md->tgid_slots);
		md->tgid_slots = calloc(size, sizeof(*md->tgid_slots));
		if (!md->tgid_slots)
			return -ENOMEM;
		md->tgid_mask = size - 1;
		for (uint32_t i = 0; i < md->tr.nr_targets; i++)
			tgid_insert(md, i);
	}
	snprintf(comm, sizeof(comm), "tgid%u", tgid);
	ti = tracker__add_target(&md->tr, (pid_t)tgid, 0, comm, ORIGIN_PID);
	if (ti < 0)
		return ti;
	if (md->nr_hist < md->tr.cap_targets) {
		struct move_hist **hist = realloc(md->hist, md->tr.cap_targets * sizeof(*hist));
		uint32_t *cap;

		if (!hist)
			return -ENOMEM;
		md->hist = hist;
		cap = realloc(md->hist_cap, md->tr.cap_targets * sizeof(*cap));
		if (!cap)
			return -ENOMEM;
		md->hist_cap = cap;
		for (uint32_t i = md->nr_hist; i < md->tr.cap_targets; i++) {
			md->hist[i] = NULL;
			md->hist_cap[i] = 0;
		}
		md->nr_hist = md->tr.cap_targets;
	}
	tgid_insert(md, ti);
	return ti;
}

static struct cxlt_page *model_page(struct model *cur, int pid, void *addr, uint32_t *ti,
				    int64_t *idx)
{
	int t = model_find_target(cur, (uint32_t)pid);

	if (t < 0)
		return NULL;
	*ti = t;
	*idx = page_table__find(&cur->tr.targets[t].pt, (uintptr_t)addr);
	return *idx < 0 ? NULL : &cur->tr.targets[t].pt.pages[*idx];
}

/* The model behind move_pages: two nodes with capacities, ping-pong counted. */
static long model_move_pages(void *ctx, int pid, unsigned long count, void **pages,
			     const int *nodes, int *status, int flags)
{
	struct model *cur = ctx;

	(void)flags;
	for (unsigned long i = 0; i < count; i++) {
		struct move_hist *h;
		struct cxlt_page *p;
		uint32_t ti;
		int64_t idx;
		int to;

		p = model_page(cur, pid, pages[i], &ti, &idx);
		if (!p || p->node < 0) {
			status[i] = -ENOENT;
			continue;
		}
		if (!nodes) {
			status[i] = p->node;
			continue;
		}
		to = nodes[i];
		if (to == p->node) {
			status[i] = to;
			continue;
		}
		if (to < 0 || to > 1 || cur->used[to] >= cur->cap[to]) {
			status[i] = to < 0 || to > 1 ? -EINVAL : -ENOMEM;
			continue;
		}
		cur->used[p->node]--;
		cur->used[to]++;
		status[i] = to;
		h = &cur->hist[ti][idx];
		if (h->last_epoch && h->last_to != to &&
		    cur->tr.epoch + 1 - h->last_epoch <= cur->o->pingpong_window)
			cur->res->pingpong++;
		h->last_epoch = (uint32_t)cur->tr.epoch + 1;
		h->last_to = (int8_t)to;
	}
	return 0;
}

static void model_touch_pages(void *ctx, int pid, void **pages, uint32_t n)
{
	(void)ctx;
	(void)pid;
	(void)pages;
	(void)n;
}

static void model_topology(struct model *md, long page_size)
{
	struct topology *t = &md->topo;

	memset(t, 0, sizeof(*t));
	t->page_size = page_size;
	t->nr_nodes = 2;
	t->nodes[0] = (struct topo_node){ .id = 0, .has_cpus = true, .tier = 4, .role = ROLE_FAST };
	t->nodes[1] = (struct topo_node){ .id = 1, .tier = 22, .role = ROLE_SLOW };
	t->fast_mask = 1;
	t->slow_mask = 2;
	t->tiers_known = true;
	for (int n = 0; n < 2; n++) {
		t->nodes[n].total_pages = md->cap[n];
		t->nodes[n].free_pages = md->cap[n] - md->used[n];
	}
}

static int hist_grow(struct model *md, uint32_t ti, uint32_t n)
{
	struct move_hist *h;
	uint32_t cap = md->hist_cap[ti];

	if (n <= cap)
		return 0;
	/* From 16: a trace may name 100k processes of a page or two each. */
	while (cap < n)
		cap = cap ? cap * 2 : 16;
	h = realloc(md->hist[ti], cap * sizeof(*h));
	if (!h)
		return -ENOMEM;
	memset(h + md->hist_cap[ti], 0, (cap - md->hist_cap[ti]) * sizeof(*h));
	md->hist[ti] = h;
	md->hist_cap[ti] = cap;
	return 0;
}

/* ---- one pass of a policy over the trace ---- */

/* What a first pass over the samples learns; memory grows with the pages seen only. */
struct trace_scan {
	uint64_t pages;			/* distinct (tgid, page) pairs */
	uint64_t t_first, t_last;	/* samples may be a little out of order across CPUs */
	uint64_t vpage_min, vpage_max;
	uint32_t source_flags;		/* CXLT_SOURCE_REPEATS unless only page faults were recorded */
};

static int scan_trace(const struct trace *tr, struct trace_scan *sc, char *msg, size_t msglen)
{
	struct trace_cursor *c = malloc(sizeof(*c));
	struct page_table pt = { 0 };
	const struct cxlt_sample *x;
	bool created;
	int err = 0;

	*sc = (struct trace_scan){ .t_first = UINT64_MAX, .vpage_min = UINT64_MAX };
	if (!c) {
		snprintf(msg, msglen, "out of memory");
		return -ENOMEM;
	}
	trace_cursor__init(c, tr);
	while ((x = trace_cursor__next(c))) {
		/* tgid in the top bits keeps processes apart; good enough for a count. */
		if (page_table__get(&pt, (x->vpage ^ ((uint64_t)x->tgid << 40)) << 12, &created) < 0) {
			snprintf(msg, msglen, "out of memory after %llu distinct pages",
				 (unsigned long long)pt.nr);
			err = -ENOMEM;
			break;
		}
		if (x->source != CXLT_SRC_FAULT)
			sc->source_flags |= CXLT_SOURCE_REPEATS;
		if (x->vpage < sc->vpage_min)
			sc->vpage_min = x->vpage;
		if (x->vpage > sc->vpage_max)
			sc->vpage_max = x->vpage;
		if (x->time_ns < sc->t_first)
			sc->t_first = x->time_ns;
		if (x->time_ns > sc->t_last)
			sc->t_last = x->time_ns;
	}
	if (c->err) {
		snprintf(msg, msglen, "%s", c->msg);
		err = c->err;
	}
	sc->pages = pt.nr;
	free(pt.pages);
	free(pt.slots);
	free(c);
	return err;
}

/* The oracle's hits this epoch: the sum of the cap largest access counts. */
static uint64_t oracle_hits(const struct tracker *tr, uint64_t cap, uint32_t *count_hist)
{
	uint32_t max = 0;
	uint64_t hits = 0, left = cap;

	for (uint32_t ti = 0; ti < tr->nr_targets; ti++) {
		const struct page_table *pt = &tr->targets[ti].pt;

		for (uint32_t i = 0; i < pt->nr; i++) {
			uint32_t s = pt->pages[i].samples;

			if (!s)
				continue;
			count_hist[s]++;
			if (s > max)
				max = s;
		}
	}
	for (uint32_t s = max; s > 0; s--) {
		uint64_t take = count_hist[s] < left ? count_hist[s] : left;

		hits += take * s;
		left -= take;
		count_hist[s] = 0;
	}
	return hits;
}

struct run_in {
	const char *path;		/* the trace's, for messages */
	const struct trace *trace;
	const struct trace_scan *scan;
	const struct model_opts *o;
	uint64_t fast_cap, slow_cap;
	uint64_t nr_epochs;
	struct policy_host *policy;	/* NULL: no migration */
	struct result *oracle;		/* filled when not NULL */
	uint64_t *heat_bins;		/* pages x time access counts, when plotting */
	uint32_t heat_w, heat_h;
};

/* Samples up to end (exclusive) into the tracker; the cursor stops at the first later one. */
static int ingest_epoch(const struct run_in *in, struct model *md, struct trace_cursor *c,
			uint64_t e, uint64_t end)
{
	const struct trace_scan *sc = in->scan;
	const struct cxlt_sample *x;

	while ((x = trace_cursor__peek(c)) && x->time_ns < end) {
		struct cxlt_page_key key = { .tgid = x->tgid, .vpage = x->vpage };
		struct cxlt_page_val val = { .samples = x->weight ? x->weight : 1,
					     .hint_faults = x->source == CXLT_SRC_HINT };
		int ti = model_target(md, x->tgid);

		if (ti < 0)
			return ti;
		tracker__ingest_page(&md->tr, &md->tr.targets[ti], &key, &val);
		if (in->heat_bins) {
			/* Rows: address order, as the heap lies.  128 bits: the span may be 2^64. */
			uint32_t x_bin = (uint32_t)(e * in->heat_w / in->nr_epochs);
			uint32_t y_bin = (uint32_t)((unsigned __int128)(x->vpage - sc->vpage_min) *
						    in->heat_h /
						    ((unsigned __int128)(sc->vpage_max - sc->vpage_min) + 1));

			in->heat_bins[(uint64_t)y_bin * in->heat_w + x_bin] += val.samples;
		}
		c->pos++;
	}
	return c->err;
}

/* The replay's steps of the epoch pipeline (pipeline.h), over one run's model. */
struct replay_run {
	const struct run_in *in;
	struct result *res;
	struct model md;
	struct trace_cursor *c;
	uint32_t *count_hist;	/* for the oracle */
};

static int replay_ingest(void *ctx)
{
	struct replay_run *r = ctx;
	uint64_t epoch_ns = (uint64_t)r->in->o->epoch_ms * 1000000;

	return ingest_epoch(r->in, &r->md, r->c, r->md.e, r->in->scan->t_first + (r->md.e + 1) * epoch_ns);
}

/* First touch, then the score of this epoch's accesses: the model's and the oracle's. */
static int replay_account(void *ctx)
{
	struct replay_run *r = ctx;
	const struct run_in *in = r->in;
	struct model *md = &r->md;
	uint64_t acc = 0, hits = 0;
	uint64_t low = (uint64_t)(md->cap[NODE_FAST] * in->o->low_pct / 100);

	for (uint32_t ti = 0; ti < md->tr.nr_targets; ti++) {
		struct target *t = &md->tr.targets[ti];

		if (hist_grow(md, ti, t->pt.nr))
			return -ENOMEM;
		for (uint32_t i = t->nodes_known; i < t->pt.nr; i++) {
			int node = md->used[NODE_FAST] + low < md->cap[NODE_FAST] ? NODE_FAST : NODE_SLOW;

			t->pt.pages[i].node = (int8_t)node;
			md->used[node]++;
		}
		t->nodes_known = t->pt.nr;
		for (uint32_t i = 0; i < t->pt.nr; i++) {
			const struct cxlt_page *p = &t->pt.pages[i];

			acc += p->samples;
			if (p->node == NODE_FAST)
				hits += p->samples;
		}
	}
	r->res->accesses += acc;
	r->res->fast_hits += hits;
	if (r->res->epoch_ratio)
		r->res->epoch_ratio[r->md.e] = acc ? (double)hits / acc : 0;
	if (in->oracle) {
		uint64_t oh = oracle_hits(&md->tr, md->cap[NODE_FAST], r->count_hist);

		in->oracle->accesses += acc;
		in->oracle->fast_hits += oh;
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

static void replay_publish(void *ctx)
{
	struct replay_run *r = ctx;
	struct result *res = r->res;
	uint64_t n = r->in->nr_epochs;

	if (r->in->policy) {
		res->decide_ms += r->md.eng.last_decide_ms;
		res->promoted += r->md.m.epoch.promoted;
		res->demoted += r->md.m.epoch.demoted;
	}
	res->epochs++;
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

/* The budget's clock: the end of the epoch in flight. */
static double model_now(void *ctx)
{
	const struct model *md = ctx;

	return (md->e + 1) * (md->o->epoch_ms / 1000.0);
}

static int run_policy(const struct run_in *in, struct result *res)
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
				  .count_hist = calloc(65536, sizeof(*r->count_hist)),
				  .c = calloc(1, sizeof(*r->c)) };
	if (!r->count_hist || !r->c) {
		err = -ENOMEM;
		goto out;
	}
	trace_cursor__init(r->c, trace);
	md->cap[NODE_FAST] = in->fast_cap;
	md->cap[NODE_SLOW] = in->slow_cap;
	tracker__init(&md->tr, o->decay);
	mover__default_opts(&mo);
	mo.rate_mbps = o->rate_mbps;
	mo.low_wmark_pct = o->low_pct;
	mo.high_wmark_pct = o->high_pct;
	mover__init(&md->m, &mo, trace->hdr.page_size);
	md->eng = (struct engine){ .topo = &md->topo, .tr = &md->tr, .m = &md->m,
				   .policy = in->policy, .epoch_ms = o->epoch_ms, .quiet = true,
				   .source_flags = in->scan->source_flags };
	md->pf = (struct platform){ .move_pages = model_move_pages,
				    .touch_pages = model_touch_pages, .now = model_now, .ctx = md };
	md->tr.pf = md->m.pf = &md->pf;
	pipe = (struct pipeline){ .steps = &replay_steps, .ctx = r, .eng = &md->eng };

	for (md->e = 0; md->e < in->nr_epochs && !err; md->e++)
		err = pipeline__epoch(&pipe);
	if (o->progress && !err)
		fprintf(stderr, "\r%*s\r", 70, "");
out:
	if (err && r->c && r->c->err)
		fprintf(stderr, "cxltier-replay: %s: %s\n", in->path, r->c->msg);
	else if (err == -ENOMEM)
		fprintf(stderr, "cxltier-replay: %s: out of memory replaying %s\n", in->path, res->name);
	else if (err)
		fprintf(stderr, "cxltier-replay: %s: policy %s failed: %s\n", in->path, res->name,
			strerror(-err));
	for (uint32_t i = 0; i < md->nr_hist; i++)
		free(md->hist[i]);
	free(md->hist);
	free(md->hist_cap);
	free(md->tgid_slots);
	engine__free(&md->eng);
	mover__free(&md->m);
	tracker__free(&md->tr);
	free(r->count_hist);
	free(r->c);
	free(r);
	return err;
}

/* ---- synthetic traces ---- */

struct synth_opts {
	const char *kind;
	uint64_t pages, epochs, samples;
	uint64_t seed;
	double alpha, hot, hot_share;
	uint64_t shift_every;
};

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static double unit(uint64_t *x)
{
	return (splitmix(x) >> 11) * (1.0 / 9007199254740992.0);
}

static int synth(const struct synth_opts *so, const struct model_opts *o, const char *path)
{
	const uint64_t base = 0x7f0000000ULL, epoch_ns = (uint64_t)o->epoch_ms * 1000000;
	struct trace_node nodes[2] = {
		{ .id = 0, .role = CXLT_NODE_FAST, .tier = 4, .capacity_pages = so->pages / 4 },
		{ .id = 1, .role = CXLT_NODE_SLOW, .tier = 22, .capacity_pages = so->pages },
	};
	uint64_t *perm = malloc(so->pages * sizeof(*perm)), rng = so->seed;
	double *cdf = NULL;
	uint32_t *counts = NULL;
	struct cxlt_sample buf[4096];
	struct trace_writer w;
	uint64_t hot_pages = (uint64_t)ceil(so->hot * so->pages);
	int err;

	if (!perm)
		goto nomem;
	/* Ranks map to scattered pages, as a real heap's hot objects are. */
	for (uint64_t i = 0; i < so->pages; i++)
		perm[i] = i;
	for (uint64_t i = so->pages - 1; i > 0; i--) {
		uint64_t j = splitmix(&rng) % (i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	if (!strcmp(so->kind, "zipf")) {
		double sum = 0;

		cdf = malloc(so->pages * sizeof(*cdf));
		if (!cdf)
			goto nomem;
		for (uint64_t i = 0; i < so->pages; i++)
			cdf[i] = (sum += 1.0 / pow((double)(i + 1), so->alpha));
		for (uint64_t i = 0; i < so->pages; i++)
			cdf[i] /= sum;
	}
	counts = calloc(so->pages, sizeof(*counts));
	if (!counts)
		goto nomem;
	if ((err = trace_writer__open(&w, path, 4096, nodes, 2)))
		goto out;
	for (uint64_t e = 0; e < so->epochs && !err; e++) {
		/* shift: the hot window moves by its own length every shift_every epochs. */
		uint64_t hot_start = !strcmp(so->kind, "shift") ?
				     (e / so->shift_every) * hot_pages % so->pages : 0;
		uint32_t n = 0, touched = 0;

		for (uint64_t i = 0; i < so->samples; i++) {
			uint64_t rank;

			if (cdf) {
				double u = unit(&rng);
				uint64_t lo = 0, hi = so->pages - 1;

				while (lo < hi) {
					uint64_t mid = (lo + hi) / 2;

					if (cdf[mid] < u)
						lo = mid + 1;
					else
						hi = mid;
				}
				rank = lo;
			} else if (unit(&rng) < so->hot_share) {
				rank = (hot_start + splitmix(&rng) % hot_pages) % so->pages;
			} else {
				rank = (hot_start + hot_pages + splitmix(&rng) % (so->pages - hot_pages)) %
				       so->pages;
			}
			counts[perm[rank]]++;
		}
		/*
		 * One sample per touched page and epoch, its weight the access
		 * count: the same accesses in a fraction of the file.
		 */
		for (uint64_t p = 0; p < so->pages; p++)
			touched += counts[p] > 0;
		for (uint64_t p = 0, k = 0; p < so->pages && !err; p++) {
			while (counts[p]) {
				uint32_t wgt = counts[p] > UINT16_MAX ? UINT16_MAX : counts[p];

				buf[n++] = (struct cxlt_sample){
					.time_ns = e * epoch_ns + k++ * (epoch_ns / (touched + 1)),
					.tgid = 1000, .source = CXLT_SRC_PMU, .weight = (uint16_t)wgt,
					.vpage = base + p,
				};
				counts[p] -= wgt;
				if (n == ARRAY_SIZE(buf)) {
					err = trace_writer__add(&w, buf, n);
					n = 0;
				}
			}
		}
		if (n && !err)
			err = trace_writer__add(&w, buf, n);
	}
	err = trace_writer__close(&w) ?: err;
	if (!err)
		fprintf(stderr, "wrote %s: %s, %llu pages, %llu epochs of %u ms, %llu accesses in %llu weighted samples, seed %llu\n",
			path, so->kind, (unsigned long long)so->pages, (unsigned long long)so->epochs,
			o->epoch_ms, (unsigned long long)(so->samples * so->epochs),
			(unsigned long long)w.samples, (unsigned long long)so->seed);
out:
	free(counts);
	free(cdf);
	free(perm);
	return err;
nomem:
	fprintf(stderr, "cxltier-replay: out of memory for a synthetic trace of %llu pages\n",
		(unsigned long long)so->pages);
	err = -ENOMEM;
	goto out;
}

/*
 * Ends a write to f (stdout: flushed, else closed), named for messages.  A
 * write error may have been latched by any earlier flush, so ferror counts
 * as much as the last flush: no output is lost with exit status 0.
 */
static int close_output(FILE *f, const char *name)
{
	int bad = ferror(f), err = errno;

	if (f == stdout ? fflush(f) : fclose(f)) {
		bad = 1;
		err = errno;
	}
	if (!bad)
		return 0;
	fprintf(stderr, "cxltier-replay: cannot write %s: %s\n", name, err ? strerror(err) : "I/O error");
	return 1;
}

static int to_csv(const char *path, const struct trace *t, const char *out)
{
	static const char *const src[] = { "?", "fault", "hint", "pmu" };
	FILE *f = out ? fopen(out, "w") : stdout;
	struct trace_cursor *c = malloc(sizeof(*c));
	const struct cxlt_sample *s;
	int rc;

	if (!f || !c) {
		fprintf(stderr, "cxltier-replay: cannot create %s: %s\n", out ? out : "the CSV",
			strerror(errno));
		if (f && f != stdout)
			fclose(f);
		free(c);
		return 1;
	}
	trace_cursor__init(c, t);
	fprintf(f, "time_ns,tgid,vaddr,source,weight\n");
	while ((s = trace_cursor__next(c)))
		fprintf(f, "%llu,%u,0x%llx,%s,%u\n", (unsigned long long)s->time_ns, s->tgid,
			(unsigned long long)s->vpage * t->hdr.page_size,
			s->source < 4 ? src[s->source] : "?", s->weight);
	errno = 0;
	rc = close_output(f, out ? out : "standard output");
	if (c->err) {
		fprintf(stderr, "cxltier-replay: %s: %s\n", path, c->msg);
		rc = 1;
	}
	free(c);
	return rc;
}

/* ---- output ---- */

static double lat(const struct model_opts *o, const struct result *r, bool with_migration)
{
	double total = r->fast_hits * o->fast_ns + (r->accesses - r->fast_hits) * o->slow_ns;

	if (with_migration)
		total += (r->promoted + r->demoted) * o->migrate_ns;
	return r->accesses ? total / r->accesses : 0;
}

static void print_table(const struct model_opts *o, const struct trace *t, uint64_t pages,
			uint64_t fast_cap, struct result *r, int n)
{
	const struct result *oracle = &r[0];
	double oracle_ratio = oracle->accesses ? (double)oracle->fast_hits / oracle->accesses : 0;

	printf("trace: %llu samples, %llu distinct pages, %llu epochs of %u ms\n",
	       (unsigned long long)t->nr_samples, (unsigned long long)pages,
	       (unsigned long long)r[1].epochs, o->epoch_ms);
	printf("model: fast tier %llu pages (%.1f%%), access %.0f/%.0f ns, migration %.0f ns/page, budget %.0f MiB/s\n\n",
	       (unsigned long long)fast_cap, 100.0 * fast_cap / pages, o->fast_ns, o->slow_ns,
	       o->migrate_ns, o->rate_mbps);
	printf("%-14s %9s %9s %9s %9s %10s %10s %10s", "policy", "fast-hit", "/oracle", "lat ns",
	       "+migr ns", "promoted", "demoted", "ping-pong");
	if (o->timing)
		printf(" %11s", "decide ms");
	printf("\n");
	for (int i = 0; i < n; i++) {
		double ratio = r[i].accesses ? (double)r[i].fast_hits / r[i].accesses : 0;

		printf("%-14s %8.1f%% %9.3f %9.1f %9.1f %10llu %10llu %10llu", r[i].name, 100 * ratio,
		       oracle_ratio ? ratio / oracle_ratio : 0, lat(o, &r[i], false),
		       lat(o, &r[i], i > 0), (unsigned long long)r[i].promoted,
		       (unsigned long long)r[i].demoted, (unsigned long long)r[i].pingpong);
		if (o->timing)
			printf(" %11.3f", r[i].epochs ? r[i].decide_ms / r[i].epochs : 0);
		printf("\n");
	}
}

static void print_json(const struct model_opts *o, const struct trace *t, uint64_t pages,
		       uint64_t fast_cap, struct result *r, int n)
{
	struct json_object *root = json_object_new_object(), *arr = json_object_new_array();
	double oracle_ratio = r[0].accesses ? (double)r[0].fast_hits / r[0].accesses : 0;

	json_object_object_add(root, "samples", json_object_new_uint64(t->nr_samples));
	json_object_object_add(root, "pages", json_object_new_uint64(pages));
	json_object_object_add(root, "epochs", json_object_new_uint64(r[1].epochs));
	json_object_object_add(root, "epoch_ms", json_object_new_int(o->epoch_ms));
	json_object_object_add(root, "fast_pages", json_object_new_uint64(fast_cap));
	for (int i = 0; i < n; i++) {
		struct json_object *p = json_object_new_object();
		double ratio = r[i].accesses ? (double)r[i].fast_hits / r[i].accesses : 0;

		json_object_object_add(p, "policy", json_object_new_string(r[i].name));
		json_object_object_add(p, "accesses", json_object_new_uint64(r[i].accesses));
		json_object_object_add(p, "fast_hits", json_object_new_uint64(r[i].fast_hits));
		json_object_object_add(p, "fast_hit_ratio", json_object_new_double(ratio));
		json_object_object_add(p, "vs_oracle", json_object_new_double(oracle_ratio ? ratio / oracle_ratio : 0));
		json_object_object_add(p, "latency_ns", json_object_new_double(lat(o, &r[i], false)));
		json_object_object_add(p, "latency_with_migration_ns", json_object_new_double(lat(o, &r[i], i > 0)));
		json_object_object_add(p, "promoted", json_object_new_uint64(r[i].promoted));
		json_object_object_add(p, "demoted", json_object_new_uint64(r[i].demoted));
		json_object_object_add(p, "pingpong", json_object_new_uint64(r[i].pingpong));
		if (o->timing)
			json_object_object_add(p, "decide_ms_per_epoch",
					       json_object_new_double(r[i].epochs ? r[i].decide_ms / r[i].epochs : 0));
		json_object_array_add(arr, p);
	}
	json_object_object_add(root, "policies", arr);
	puts(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
}

/* Opens dir/name for writing into path; NULL with a message. */
static FILE *plot_file(char *path, size_t len, const char *dir, const char *name)
{
	FILE *f;

	if ((size_t)snprintf(path, len, "%s/%s", dir, name) >= len) {
		fprintf(stderr, "cxltier-replay: --plot %s: path too long\n", dir);
		return NULL;
	}
	if (!(f = fopen(path, "w")))
		fprintf(stderr, "cxltier-replay: cannot create %s: %s\n", path, strerror(errno));
	return f;
}

/* gnuplot in dir, as a child with its own working directory: no shell sees dir. */
static int run_gnuplot(const char *dir)
{
#ifdef REPLAY_NO_GNUPLOT
	(void)dir;
	return 0;
#else
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (chdir(dir) == 0)
			execlp("gnuplot", "gnuplot", "plots.gp", (char *)NULL);
		fprintf(stderr, "cxltier-replay: cannot run gnuplot in %s: %s\n", dir, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
#endif
}

static int write_plots(const char *dir, struct result *r, int n, const uint64_t *heat,
		       uint32_t w, uint32_t h)
{
	char path[1024];
	FILE *f;
	int rc;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "cxltier-replay: cannot create %s: %s\n", dir, strerror(errno));
		return 1;
	}
	if (!(f = plot_file(path, sizeof(path), dir, "hit-ratio.dat")))
		return 1;
	fprintf(f, "epoch");
	for (int i = 0; i < n; i++)
		fprintf(f, " %s", r[i].name);
	fprintf(f, "\n");
	for (uint64_t e = 0; e < r[1].epochs; e++) {
		fprintf(f, "%llu", (unsigned long long)e);
		for (int i = 0; i < n; i++)
			fprintf(f, " %.5f", r[i].epoch_ratio[e]);
		fprintf(f, "\n");
	}
	if (close_output(f, path) || !(f = plot_file(path, sizeof(path), dir, "heatmap.dat")))
		return 1;
	for (uint32_t y = 0; y < h; y++) {
		for (uint32_t x = 0; x < w; x++)
			fprintf(f, "%llu ", (unsigned long long)heat[(uint64_t)y * w + x]);
		fprintf(f, "\n");
	}
	if (close_output(f, path) || !(f = plot_file(path, sizeof(path), dir, "plots.gp")))
		return 1;
	fprintf(f, "set terminal pngcairo size 1000,500 noenhanced\n"
		   "set output 'hit-ratio.png'\nset title 'fast-tier hit ratio per epoch'\n"
		   "set xlabel 'epoch'\nset ylabel 'share of accesses served by the fast tier'\n"
		   "set yrange [0:1.05]\nset key outside right\n"
		   "plot for [i=2:%d] 'hit-ratio.dat' using 1:i with lines lw 2 title columnheader(i)\n"
		   "set output 'heatmap.png'\nset title 'accesses: pages (address order) x time'\n"
		   "set xlabel 'epoch bin'\nset ylabel 'page bin (low to high address)'\nunset key\n"
		   "set xrange [-0.5:%u.5]\nset yrange [-0.5:%u.5]\n"
		   "set logscale cb\nplot 'heatmap.dat' matrix with image\n", n + 1, w - 1, h - 1);
	if (close_output(f, path))
		return 1;
	rc = run_gnuplot(dir);
	if (rc) {
		fprintf(stderr, "cxltier-replay: gnuplot failed (exit %d); the data files are in %s (install gnuplot-nox: make deps)\n",
			rc, dir);
		return 1;
	}
	fprintf(stderr, "plots: %s/hit-ratio.png, %s/heatmap.png\n", dir, dir);
	return 0;
}

/* ---- main ---- */

/* -o POLICY:KEY=VALUE names a policy as given on the command line, or by its file's base name. */
static char *param_for(char *param, const char *arg)
{
	const char *base = strrchr(arg, '/') ? strrchr(arg, '/') + 1 : arg;
	size_t len = strlen(arg), blen = strlen(base);

	if (blen > 3 && !strcmp(base + blen - 3, ".so"))
		blen -= 3;
	if (!strncmp(param, arg, len) && param[len] == ':')
		return param + len + 1;
	if (!strncmp(param, base, blen) && param[blen] == ':')
		return param + blen + 1;
	return NULL;
}

/* The command line; bad is set by the first value refused (its message printed). */
struct args {
	struct model_opts o;
	struct synth_opts so;
	char *params[64];
	int nparams;
	char policy_dir[1024];
	const char *out;
	bool to_csv;
	bool bad;
};

static uint64_t parse_num(struct args *a, const char *opt, const char *arg, uint64_t min, uint64_t max)
{
	uint64_t v;

	if (parse_u64(arg, min, max, &v)) {
		a->bad = usage_error("bad value: %s", opt);
		return 0;
	}
	return v;
}

static double parse_dbl(struct args *a, const char *opt, const char *arg, double min, double max)
{
	double v;

	if (parse_double(arg, min, max, &v)) {
		a->bad = usage_error("bad value: %s", opt);
		return 0;
	}
	return v;
}

/* A:B, both finite numbers with 0 < A <= B: the share A/B, or 0 when arg is none. */
static double parse_ratio(const char *arg)
{
	char a_text[64], *colon = strchr(arg, ':');
	size_t alen = colon ? (size_t)(colon - arg) : 0;
	double a, b;

	if (!colon || alen >= sizeof(a_text))
		return 0;
	memcpy(a_text, arg, alen);
	a_text[alen] = '\0';
	if (parse_double(a_text, 0, 1e15, &a) || parse_double(colon + 1, 0, 1e15, &b) ||
	    a <= 0 || b < a)
		return 0;
	return a / b;
}

enum {
	OPT_FAST_PAGES = 256, OPT_SLOW_PAGES, OPT_FAST_NS, OPT_SLOW_NS, OPT_MIGRATE_NS,
	OPT_LOW, OPT_HIGH, OPT_DECAY, OPT_PINGPONG, OPT_POLICY_DIR, OPT_TIMING, OPT_PLOT,
	OPT_SYNTH, OPT_PAGES, OPT_EPOCHS, OPT_SAMPLES, OPT_SEED, OPT_ALPHA, OPT_HOT,
	OPT_HOT_SHARE, OPT_SHIFT, OPT_TO_CSV,
};

/* Returns -1 to go on, else the exit status (help: 0, a usage error: 2). */
static int parse_args(struct args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fast-ratio", required_argument, NULL, 'f' },
		{ "fast-pages", required_argument, NULL, OPT_FAST_PAGES },
		{ "slow-pages", required_argument, NULL, OPT_SLOW_PAGES },
		{ "epoch-ms", required_argument, NULL, 'e' },
		{ "fast-ns", required_argument, NULL, OPT_FAST_NS },
		{ "slow-ns", required_argument, NULL, OPT_SLOW_NS },
		{ "migrate-ns", required_argument, NULL, OPT_MIGRATE_NS },
		{ "rate", required_argument, NULL, 'r' },
		{ "low-wmark", required_argument, NULL, OPT_LOW },
		{ "high-wmark", required_argument, NULL, OPT_HIGH },
		{ "decay", required_argument, NULL, OPT_DECAY },
		{ "pingpong-window", required_argument, NULL, OPT_PINGPONG },
		{ "param", required_argument, NULL, 'o' },
		{ "policy-dir", required_argument, NULL, OPT_POLICY_DIR },
		{ "json", no_argument, NULL, 'j' },
		{ "timing", no_argument, NULL, OPT_TIMING },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "synth", required_argument, NULL, OPT_SYNTH },
		{ "pages", required_argument, NULL, OPT_PAGES },
		{ "epochs", required_argument, NULL, OPT_EPOCHS },
		{ "samples", required_argument, NULL, OPT_SAMPLES },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "alpha", required_argument, NULL, OPT_ALPHA },
		{ "hot", required_argument, NULL, OPT_HOT },
		{ "hot-share", required_argument, NULL, OPT_HOT_SHARE },
		{ "shift-every", required_argument, NULL, OPT_SHIFT },
		{ "to-csv", no_argument, NULL, OPT_TO_CSV },
		{ "output", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct model_opts *o = &a->o;
	struct synth_opts *so = &a->so;
	int opt;

	/* 0, not 1: getopt starts afresh, for a caller that parses more than once (the fuzzer). */
	optind = 0;
	while ((opt = getopt_long(argc, argv, "f:e:r:o:jO:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			if (!(o->fast_ratio = parse_ratio(optarg)))
				return usage_error("--fast-ratio '%s': expected A:B with 0 < A <= B, e.g. 1:4", optarg);
			break;
		case OPT_FAST_PAGES: o->fast_pages = parse_num(a, "--fast-pages", optarg, 1, 1ULL << 40); break;
		case OPT_SLOW_PAGES: o->slow_pages = parse_num(a, "--slow-pages", optarg, 1, 1ULL << 40); break;
		case 'e': o->epoch_ms = parse_num(a, "--epoch-ms", optarg, 1, 3600000); break;
		case OPT_FAST_NS: o->fast_ns = parse_dbl(a, "--fast-ns", optarg, 0, 1e9); break;
		case OPT_SLOW_NS: o->slow_ns = parse_dbl(a, "--slow-ns", optarg, 0, 1e9); break;
		case OPT_MIGRATE_NS: o->migrate_ns = parse_dbl(a, "--migrate-ns", optarg, 0, 1e12); break;
		case 'r': o->rate_mbps = parse_dbl(a, "--rate", optarg, 0.001, 1e9); break;
		case OPT_LOW: o->low_pct = parse_dbl(a, "--low-wmark", optarg, 0, 50); break;
		case OPT_HIGH: o->high_pct = parse_dbl(a, "--high-wmark", optarg, 0, 90); break;
		case OPT_DECAY: o->decay = parse_dbl(a, "--decay", optarg, 0, 1); break;
		case OPT_PINGPONG: o->pingpong_window = parse_num(a, "--pingpong-window", optarg, 1, 1000000); break;
		case 'o':
			if (a->nparams == (int)ARRAY_SIZE(a->params) || !strchr(optarg, ':') || !strchr(optarg, '='))
				return usage_error("--param '%s': expected POLICY:KEY=VALUE", optarg);
			a->params[a->nparams++] = optarg;
			break;
		case OPT_POLICY_DIR: snprintf(a->policy_dir, sizeof(a->policy_dir), "%s", optarg); break;
		case 'j': o->json = true; break;
		case OPT_TIMING: o->timing = true; break;
		case OPT_PLOT: o->plot_dir = optarg; break;
		case OPT_SYNTH:
			if (strcmp(optarg, "zipf") && strcmp(optarg, "hotset") && strcmp(optarg, "shift"))
				return usage_error("--synth '%s': expected zipf, hotset or shift", optarg);
			so->kind = optarg;
			break;
		case OPT_PAGES: so->pages = parse_num(a, "--pages", optarg, 16, 1ULL << 32); break;
		case OPT_EPOCHS: so->epochs = parse_num(a, "--epochs", optarg, 1, 1000000); break;
		case OPT_SAMPLES: so->samples = parse_num(a, "--samples", optarg, 1, 1ULL << 32); break;
		case OPT_SEED: so->seed = parse_num(a, "--seed", optarg, 0, UINT64_MAX); break;
		case OPT_ALPHA: so->alpha = parse_dbl(a, "--alpha", optarg, 0, 10); break;
		case OPT_HOT: so->hot = parse_dbl(a, "--hot", optarg, 1e-6, 1); break;
		case OPT_HOT_SHARE: so->hot_share = parse_dbl(a, "--hot-share", optarg, 0, 1); break;
		case OPT_SHIFT: so->shift_every = parse_num(a, "--shift-every", optarg, 1, 1000000); break;
		case OPT_TO_CSV: a->to_csv = true; break;
		case 'O': a->out = optarg; break;
		case 'h':
			fputs(usage_text, stdout);
			return close_output(stdout, "standard output");
		default: fprintf(stderr, "Try 'cxltier-replay --help'.\n"); return 2;
		}
		if (a->bad)
			return 2;
	}
	if (so->kind) {
		if (!a->out)
			return usage_error("--synth needs -O FILE%s", "");
		if (so->hot >= 1 && strcmp(so->kind, "zipf"))
			return usage_error("--hot must be under 1 for %s traces", so->kind);
		/* Both sets must hold a page: a cold page is picked modulo their count. */
		if (strcmp(so->kind, "zipf") && (uint64_t)ceil(so->hot * so->pages) >= so->pages) {
			fprintf(stderr, "cxltier-replay: --hot %g of %llu pages leaves no cold page: lower --hot or raise --pages\n",
				so->hot, (unsigned long long)so->pages);
			return 2;
		}
	}
	return -1;
}

/* The number of epochs the samples span, or 0 (with a message) when too many. */
static uint64_t count_epochs(const char *path, const struct trace_scan *sc, uint32_t epoch_ms)
{
	uint64_t span = sc->t_last - sc->t_first, epoch_ns = (uint64_t)epoch_ms * 1000000;
	uint64_t nr = span / epoch_ns + 1, fit_ms = span / ((REPLAY_MAX_EPOCHS - 1) * 1000000ULL) + 1;

	if (nr <= REPLAY_MAX_EPOCHS)
		return nr;
	fprintf(stderr, "cxltier-replay: %s: the samples span %.0f s, %llu epochs of %u ms; at most %u epochs are replayed: ",
		path, span / 1e9, (unsigned long long)nr, epoch_ms, REPLAY_MAX_EPOCHS);
	if (fit_ms <= 3600000)
		fprintf(stderr, "use --epoch-ms %llu or more\n", (unsigned long long)fit_ms);
	else
		fprintf(stderr, "its time stamps are not a recording's\n");
	return 0;
}

/* Runs "none" (with the oracle) and each policy, then prints; the exit status. */
static int replay(struct args *a, const char *path, const struct trace *t, char **names, int npol)
{
	struct model_opts *o = &a->o;
	struct policy_host *hosts = calloc(npol, sizeof(*hosts));
	struct result *res = calloc(npol + 2, sizeof(*res));
	struct trace_scan sc;
	uint64_t fast_cap, slow_cap, *heat = NULL;
	struct run_in in;
	char msg[256];
	int rc = 1;
	double t0;

	if (!hosts || !res) {
		fprintf(stderr, "cxltier-replay: out of memory\n");
		goto out;
	}
	for (int k = 0; k < a->nparams; k++) {
		bool used = false;

		for (int i = 0; i < npol; i++)
			used |= param_for(a->params[k], names[i]) != NULL;
		if (!used) {
			rc = usage_error("--param '%s' names no policy on the command line", a->params[k]);
			goto out;
		}
	}
	for (int i = 0; i < npol; i++) {
		char *mine[64];
		int nmine = 0;

		for (int k = 0; k < a->nparams; k++)
			if (param_for(a->params[k], names[i]))
				mine[nmine++] = param_for(a->params[k], names[i]);
		if (policy_host__load(&hosts[i], names[i], a->policy_dir, mine, nmine))
			goto out;
	}
	if (scan_trace(t, &sc, msg, sizeof(msg))) {
		fprintf(stderr, "cxltier-replay: %s: %s\n", path, msg);
		goto out;
	}
	fast_cap = o->fast_pages ? o->fast_pages : (uint64_t)ceil(sc.pages * o->fast_ratio);
	slow_cap = o->slow_pages ? o->slow_pages : sc.pages;
	o->progress = isatty(2) && !o->json;
	in = (struct run_in){ .path = path, .trace = t, .scan = &sc, .o = o,
			      .fast_cap = fast_cap, .slow_cap = slow_cap,
			      .nr_epochs = count_epochs(path, &sc, o->epoch_ms) };
	if (!in.nr_epochs)
		goto out;
	snprintf(res[0].name, sizeof(res[0].name), "oracle");
	snprintf(res[1].name, sizeof(res[1].name), "none");
	/* Per-epoch ratios are for the plot only: memory by time span otherwise stays nil. */
	if (o->plot_dir) {
		for (int i = 0; i < npol + 2; i++)
			if (!(res[i].epoch_ratio = calloc(in.nr_epochs, sizeof(double))))
				goto nomem;
		in.heat_w = in.nr_epochs < 200 ? (uint32_t)in.nr_epochs : 200;
		in.heat_h = 128;
		heat = in.heat_bins = calloc((size_t)in.heat_w * in.heat_h, sizeof(*heat));
		if (!heat)
			goto nomem;
	}
	in.oracle = &res[0];
	t0 = now_sec();
	if (run_policy(&in, &res[1]))
		goto out;
	in.oracle = NULL;
	in.heat_bins = NULL;
	for (int i = 0; i < npol; i++) {
		snprintf(res[2 + i].name, sizeof(res[2 + i].name), "%s", hosts[i].ops->name);
		in.policy = &hosts[i];
		if (run_policy(&in, &res[2 + i]))
			goto out;
	}
	if (o->timing)
		fprintf(stderr, "replayed %llu samples x %d runs in %.2f s: %.1f M samples/s\n",
			(unsigned long long)t->nr_samples, npol + 1, now_sec() - t0,
			t->nr_samples * (npol + 1) / (now_sec() - t0) / 1e6);
	if (o->json)
		print_json(o, t, sc.pages, fast_cap, res, npol + 2);
	else
		print_table(o, t, sc.pages, fast_cap, res, npol + 2);
	errno = 0;
	rc = close_output(stdout, "standard output");
	if (!rc && o->plot_dir)
		rc = write_plots(o->plot_dir, res, npol + 2, heat, in.heat_w, in.heat_h);
	goto out;
nomem:
	fprintf(stderr, "cxltier-replay: %s: out of memory for the plots of %llu epochs\n", path,
		(unsigned long long)in.nr_epochs);
out:
	for (int i = 0; hosts && i < npol; i++)
		if (hosts[i].ops)
			policy_host__unload(&hosts[i]);
	for (int i = 0; res && i < npol + 2; i++)
		free(res[i].epoch_ratio);
	free(hosts);
	free(res);
	free(heat);
	return rc;
}

int main(int argc, char **argv)
{
	struct args a = {
		.o = { .fast_ratio = 0.25, .epoch_ms = 1000, .fast_ns = 100, .slow_ns = 250,
		       .migrate_ns = 2000, .rate_mbps = 256, .low_pct = 1, .high_pct = 2,
		       .pingpong_window = 10, .decay = 0.5 },
		.so = { .pages = 32768, .epochs = 60, .samples = 500000, .seed = 1, .alpha = 0.99,
			.hot = 0.1, .hot_share = 0.9, .shift_every = 10 },
	};
	const char *path;
	char msg[256];
	struct trace t;
	int rc, npol;

	default_policy_dir(a.policy_dir, sizeof(a.policy_dir));
	if ((rc = parse_args(&a, argc, argv)) >= 0)
		return rc;
	if (a.so.kind)
		return synth(&a.so, &a.o, a.out) ? 1 : 0;
	if (optind >= argc)
		return usage_error("no trace given%s", "");
	path = argv[optind];
	if (trace__open(&t, path, msg, sizeof(msg))) {
		fprintf(stderr, "cxltier-replay: %s: %s\n", path, msg);
		return 1;
	}
	npol = argc - optind - 1;
	if (a.to_csv) {
		rc = to_csv(path, &t, a.out);
	} else if (!t.nr_samples) {
		fprintf(stderr, "cxltier-replay: %s: the trace holds no samples\n", path);
		rc = 1;
	} else if (npol < 1) {
		rc = usage_error("no policy given (e.g. hotset, or a path to a .so)%s", "");
	} else if (npol > MAX_POLICIES) {
		rc = usage_error("too many policies (at most %s)", "16");
	} else {
		rc = replay(&a, path, &t, argv + optind + 1, npol);
	}
	trace__close(&t);
	return rc;
}
