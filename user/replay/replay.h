/* SPDX-License-Identifier: MIT */
/*
 * cxltier-replay's parts: the tier model behind move_pages (model.c), one
 * run of a policy over a trace through the epoch pipeline (run.c), what a
 * live source would have sampled of a full stream (sampler.c), each row in
 * a process of its own (isolate.c), synthetic traces (synth.c), and the
 * table, JSON, CSV and plots (output.c); the options and main are in
 * user/cxltier-replay.c.
 */
#ifndef CXLT_REPLAY_H
#define CXLT_REPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine.h"
#include "mover.h"
#include "platform.h"
#include "policy_host.h"
#include "trace.h"
#include "tracker.h"

#define NODE_FAST 0
#define NODE_SLOW 1

struct model_opts {
	double fast_ratio;	/* fast capacity / distinct pages, when fast_pages is 0 */
	uint64_t fast_pages, slow_pages;
	uint32_t epoch_ms;
	double fast_ns, slow_ns, migrate_ns;
	double rate_mbps;
	double low_pct, high_pct;
	uint32_t pingpong_epochs;	/* the mover's: a moved page stays put this long */
	uint32_t pingpong_window;	/* a move back sooner counts as a ping-pong */
	double decay;
	uint32_t hint_period_ms;	/* the hint sampler's scanner period */
	uint64_t sampler_seed;		/* the pmu and damon samplers' draws */
	bool timing, json, progress;
	const char *plot_dir;
	const char *json_out;		/* --json-out: the JSON to this file too */
	int start;			/* enum start_mode: where the pages begin */
	int bounds;			/* enum epoch_bounds: where epochs end */
	const char *epochs_csv;		/* a line per run and epoch, appended; NULL: none */
	uint64_t watch_lo, watch_hi;	/* --watch: pages [lo, hi) (4 KiB pages) */
};

/*
 * Where the pages begin (--start): as the trace's resident runs say, pages
 * never sampled included (a recording of cxltierd), or each on its first
 * touch in the model (the only way before trace version 2).
 */
enum start_mode { START_AUTO, START_TRACE, START_FIRST_TOUCH };

/*
 * Where epochs end (--epoch-bounds): where the recorded agent's did (its
 * epoch marks: the samples each of its epochs took), or every --epoch-ms
 * from the first sample.
 */
enum epoch_bounds { BOUNDS_AUTO, BOUNDS_LIVE, BOUNDS_FIXED };

/* One row of the table: a policy with its parameters (a sweep gives several). */
#define ROW_MAX_KV 64
struct row {
	const char *policy;		/* as given: a name or a path */
	char *kv[ROW_MAX_KV];		/* KEY=VALUE */
	int nr_kv;
	char *strings;			/* storage behind kv */
	char label[128];		/* name and parameters, as printed */
};

struct result {
	char name[128];
	uint64_t accesses, fast_hits;
	uint64_t lag_hits;	/* the oracle's: the last epoch's hottest pages' (oracle_lag) */
	uint64_t promoted, demoted, pingpong;
	uint64_t epochs;
	double decide_ms;	/* the policy's own decide() time */
	double isolate_ms;	/* copying its view and plan, arming its time limit */
	double fork_ms;		/* the row's child process, start to end */
	char error[96];		/* why the row has no result ("" when it has one) */
	const struct row *row;	/* the policy and parameters; NULL for oracle and none */
	const char *sampler;	/* what the policy saw (--sampler); NULL: the trace as recorded */
	double *epoch_ratio;	/* per epoch fast-hit ratio, for plots */
};


/*
 * Per page, beside the tracker's record and indexed like it: what the model
 * knows and the policy does not.  Every page of the full stream has a
 * record in the tracker (live, the agent's scan finds resident pages that
 * were never sampled); the tracker's samples are what the source saw, these
 * are what happened.
 */
struct model_page {
	uint64_t accesses;	/* this epoch, every access of the stream: the score's */
	uint64_t last_ns;	/* model_stamp() of its last access; 0: none yet */
	uint32_t last_epoch;	/* epoch of the last move + 1; 0 = never */
	int8_t last_to;
	bool marked;		/* hint: the scanner marked it and no use has faulted since */
	bool hint_extra;	/* hint, coarse: its window at last_ns could fault before its passes */
	uint32_t prev;		/* last epoch's accesses, saturated: the lagged oracle's */
	uint32_t last_w;	/* damon, hint: its accesses at last_ns, saturated */
};

/* An access at t as model_page.last_ns keeps it: never 0. */
static inline uint64_t model_stamp(uint64_t t)
{
	return t < UINT64_MAX ? t + 1 : t;
}

/* w accesses at t: the page's last time, and what came at it (a capture's window's). */
static inline void model_page_at(struct model_page *mp, uint64_t t, uint32_t w)
{
	mp->last_w = mp->last_ns != model_stamp(t) ? w :
		     mp->last_w > UINT32_MAX - w ? UINT32_MAX : mp->last_w + w;
	mp->last_ns = model_stamp(t);
}

struct model {
	const struct model_opts *o;
	struct topology topo;
	struct tracker tr;
	struct mover m;
	struct engine eng;
	struct platform pf;		/* this model, behind the tracker's and mover's calls */
	uint64_t e;			/* the epoch in flight, from 0 */
	uint64_t cap[2], used[2];
	struct model_page **pages;	/* per target, indexed like its records */
	uint32_t *pages_cap;
	uint32_t nr_pages;		/* entries in pages and pages_cap */
	/*
	 * tgid -> target index + 1 (0: free slot), open addressing: the
	 * tracker's lookup is a linear scan, fine for the agent's few targets,
	 * not for a trace naming 100k processes.
	 */
	uint32_t *tgid_slots;
	uint32_t tgid_mask;
	struct result *res;
};

/* A huge page of the trace (TRACE_HUGE): REGION_PAGES pages from vpage. */
struct huge_unit {
	uint64_t vpage;
	uint32_t tgid;
};

/* What a first pass over the samples learns; memory grows with the pages seen only. */
struct trace_scan {
	uint64_t samples;		/* records that are samples (not events) */
	uint64_t pages;			/* distinct (tgid, page) pairs */
	uint64_t t_first, t_last;	/* samples may be a little out of order across CPUs */
	uint64_t res_ns;		/* the least gap between two samples' times; 0: one time only */
	uint64_t vpage_min, vpage_max;
	uint32_t source_flags;		/* CXLT_SOURCE_REPEATS unless only page faults were recorded */
	uint64_t accesses;		/* the weights' sum */
	uint64_t runs, run_pages;	/* resident runs, and the pages they name (repeats counted) */
	struct cxlt_sample *run;	/* the runs, by tgid then time (--start trace); NULL: none */
	uint64_t *marks;		/* the live epochs' marks' times, in order; NULL: none */
	uint64_t nr_marks;
	struct huge_unit *huge;		/* huge pages, by tgid then vpage, once each; NULL: none */
	uint64_t nr_huge;
	uint64_t huge_ignored;		/* huge-page records of a size the model has not (read as pages) */
	/*
	 * Each record's distinct page (an index below `pages`), UINT32_MAX for
	 * events: a run finds a sample's record through it, not by hashing
	 * again.  NULL for a trace of more than SCAN_INDEX_MAX records.
	 */
	uint32_t *page_of;
};

#define SCAN_INDEX_MAX (256ULL << 20)

/* A --sampler: how a live source would have seen the stream (sampler.c). */
enum sampler_kind { SAMPLER_NONE, SAMPLER_PMU, SAMPLER_HINT, SAMPLER_FAULT, SAMPLER_DAMON };

struct sampler_spec {
	enum sampler_kind kind;
	uint64_t n;		/* pmu: one access in n; damon: regions at most (0: the default) */
	char label[32];		/* as the table prints it: "pmu:1000", "hint" */
};

/* damon: one region of DAMON's adaptive regions, in 4 KiB pages [start, end). */
struct dregion {
	uint64_t start, end;
	uint64_t check;		/* the page its next check looks at */
	uint32_t nr_accesses, last_nr_accesses, age;
};

/* damon: a record of the model, by address. */
struct drec {
	uint64_t page;		/* its first 4 KiB page */
	uint32_t idx, len;	/* record index; pages it spans */
};

/* damon: a target's regions, in address order, and its records by address. */
struct dtarget {
	struct dregion *r;
	uint32_t nr, cap;
	struct drec *recs;	/* the first `known` records, in address order; room for 2 x */
	uint32_t known, cap_recs;
};

/* damon: the agent's own kdamond (vaddr, one context for every target), emulated. */
struct damon_emu {
	struct dtarget *t;
	uint32_t nr_t;
	uint32_t max_regions;	/* nr_regions/max; the agent sets min to DAMON_MIN_REGIONS */
	uint32_t last_nr_regions;	/* at the last split */
	uint32_t max_nr_accesses;	/* of any region this aggregation */
	uint64_t next_update_ns;	/* the next ops update: regions follow the address space */
};

/* One run's emulated source. */
struct sampler_run {
	const struct sampler_spec *spec;
	struct model *md;
	FILE *csv;		/* the samples it reports, as CSV; NULL: none */
	uint32_t page_size;
	uint64_t rng;
	uint64_t pmu_left;	/* pmu: accesses up to and including the next sampled one */
	uint64_t period_ns;	/* hint: between passes; damon: between checks */
	uint64_t next_ns;	/* the next pass or check */
	uint64_t passes, passes_told;	/* hint: passes, and those the tracker knows of */
	uint64_t last_access_ns;	/* damon: of any page */
	/*
	 * On a trace coarser than the checks or passes (a capture puts a
	 * window's accesses at the window's end), a sample's accesses are taken
	 * as spread evenly over this long: damon, after its time; hint, before
	 * it (passes are all in the past at an access).  0: at its time.
	 */
	uint64_t spread_ns;
	uint64_t origin_ns;	/* hint: the passes are at origin + k * period_ns, k >= 1 */
	double spread_log1p;	/* log1p(-period_ns / spread_ns): a whole check's share */
	uint64_t checks;
	uint32_t checks_per_aggr;
	bool pending;		/* damon: some region counted an access since the last aggregation */
	struct damon_emu dm;
};

struct run_in {
	const char *path;		/* the trace's, for messages */
	const struct trace *trace;
	const struct trace_scan *scan;
	const struct model_opts *o;
	uint64_t fast_cap, slow_cap;
	uint64_t nr_epochs;
	struct policy_host *policy;	/* NULL: no migration */
	const double *guard_ms;		/* isolated: the policy's own time of the last decide() */
	struct result *oracle;		/* filled when not NULL */
	uint64_t *heat_bins;		/* pages x time access counts, when plotting */
	const struct sampler_spec *sampler;	/* what the policy sees; NULL: the trace as recorded */
	FILE *csv;			/* the sampler's samples, as CSV, when not NULL */
	uint32_t heat_w, heat_h;
};

struct synth_opts {
	const char *kind;
	uint64_t pages, epochs, samples;
	uint64_t seed;
	double alpha, hot, hot_share;
	uint64_t shift_every;
};

/* model.c */
int model_target(struct model *md, uint32_t tgid);
long model_move_pages(void *ctx, int pid, unsigned long count, void **pages,
		      const int *nodes, int *status, int flags);
void model_touch_pages(void *ctx, int pid, void **pages, uint32_t n);
double model_now(void *ctx);
void model_topology(struct model *md, long page_size);
int model_pages_grow(struct model *md, uint32_t ti, uint32_t n);

/* run.c */
/* The first page of tgid's huge page holding vpage, or UINT64_MAX: not in one. */
uint64_t huge_base(const struct trace_scan *sc, uint32_t tgid, uint64_t vpage);
/* with_runs: the resident runs' pages count among the distinct pages. */
int scan_trace(const struct trace *tr, struct trace_scan *sc, bool with_runs, char *msg,
	       size_t msglen);
void trace_scan__free(struct trace_scan *sc);
/* Epoch e's samples: time in [*start, *end). */
void epoch_window(const struct run_in *in, uint64_t e, uint64_t *start, uint64_t *end);
int run_policy(const struct run_in *in, struct result *res);

/* isolate.c */
/*
 * Runs one row in a child process (see isolate.c); limit_ms bounds each
 * decision (0: no limit).  Returns 0 with res filled, 1 when the row has no
 * result (res->error says why, and a line on stderr names the policy), or
 * -errno when no child could be started.
 */
int run_isolated(const struct run_in *in, const struct row *row, const char *policy_dir,
		 uint32_t limit_ms, struct result *res);

/* sampler.c */
/*
 * Adds the samplers of a --sampler value (NAME or NAME:N, comma-separated)
 * to specs[*n], at most max in all; 0, or -EINVAL with why.
 */
int sampler_parse(const char *value, struct sampler_spec *specs, int max, int *n, char *why,
		  size_t len);
/* Fills in the defaults that depend on the trace (pmu's N) and the label. */
void sampler_resolve(struct sampler_spec *sp, const struct trace_scan *sc);
/* The view's source_flags under this sampler (recorded: the trace's own). */
uint32_t sampler_source_flags(const struct sampler_spec *sp, uint32_t recorded);
int sampler_run__init(struct sampler_run *s, const struct sampler_spec *spec, struct model *md,
		      const struct trace_scan *sc, const struct model_opts *o, uint32_t page_size,
		      FILE *csv);
void sampler_run__free(struct sampler_run *s);
/* The source's own clock up to t (before an access at t): passes, checks, aggregations. */
int sampler_run__clock(struct sampler_run *s, uint64_t t);
/* An epoch begins at start: the clock, then what the agent learns at an epoch's start (hint). */
int sampler_run__epoch(struct sampler_run *s, uint64_t start);
/* One access of the stream to record idx of target ti (first: the page's first); 0 or -ENOMEM. */
int sampler_run__access(struct sampler_run *s, const struct cxlt_sample *x, uint32_t ti,
			uint32_t idx, bool first);

/* damon.c: the sampler's DAMON, adaptive regions as the kernel's (sampler.c drives it) */
#define DAMON_MIN_REGIONS 10		/* the agent's kdamond's nr_regions/min */
#define DAMON_MAX_REGIONS 1000		/* and nr_regions/max: the emulation's default */
#define DAMON_UPDATE_NS 1000000000ULL	/* ops update: DAMON's default update_us */
/* One sampling interval ending at now (the last began at prev): each region's check. */
int damon_emu__check(struct sampler_run *s, uint64_t prev, uint64_t now);
/* The aggregation: merge, report each region's count to its pages, reset, split. */
int damon_emu__aggregate(struct sampler_run *s, uint64_t now);
void damon_emu__free(struct damon_emu *dm);
/* What the source reports of record idx of target ti: n samples of kind source (0: damon). */
void sampler_emit(struct sampler_run *s, uint32_t ti, uint32_t idx, uint64_t time_ns, uint32_t n,
		  uint16_t source);

/* synth.c */
uint64_t splitmix64(uint64_t *x);
double unit_rand(uint64_t *x);	/* [0, 1) */
int synth(const struct synth_opts *so, const struct model_opts *o, const char *path);

/* output.c */
int close_output(FILE *f, const char *name);
int to_csv(const char *path, const struct trace *t, const char *out);
void csv_header(FILE *f);
void csv_sample(FILE *f, uint64_t time_ns, uint32_t tgid, uint64_t vaddr, const char *source,
		uint32_t weight);
void print_table(const struct model_opts *o, const struct trace_scan *sc,
		 uint64_t fast_cap, struct result *r, int n);
void print_json(FILE *f, const struct model_opts *o, const struct trace_scan *sc,
		uint64_t fast_cap, struct result *r, int n);
int write_plots(const char *dir, struct result *r, int n, const uint64_t *heat,
		uint32_t w, uint32_t h);

#endif
