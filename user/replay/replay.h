/* SPDX-License-Identifier: MIT */
/*
 * cxltier-replay's parts: the tier model behind move_pages (model.c), one
 * run of a policy over a trace through the epoch pipeline (run.c), synthetic
 * traces (synth.c), and the table, JSON, CSV and plots (output.c); the
 * options and main are in user/cxltier-replay.c.
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
	bool timing, json, progress;
	const char *plot_dir;
};

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
	uint64_t promoted, demoted, pingpong;
	uint64_t epochs;
	double decide_ms;	/* the policy's own decide() time */
	double isolate_ms;	/* copying its view and plan, arming its time limit */
	double fork_ms;		/* the row's child process, start to end */
	char error[96];		/* why the row has no result ("" when it has one) */
	const struct row *row;	/* the policy and parameters; NULL for oracle and none */
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

/* What a first pass over the samples learns; memory grows with the pages seen only. */
struct trace_scan {
	uint64_t pages;			/* distinct (tgid, page) pairs */
	uint64_t t_first, t_last;	/* samples may be a little out of order across CPUs */
	uint64_t vpage_min, vpage_max;
	uint32_t source_flags;		/* CXLT_SOURCE_REPEATS unless only page faults were recorded */
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
int scan_trace(const struct trace *tr, struct trace_scan *sc, char *msg, size_t msglen);
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

/* synth.c */
int synth(const struct synth_opts *so, const struct model_opts *o, const char *path);

/* output.c */
int close_output(FILE *f, const char *name);
int to_csv(const char *path, const struct trace *t, const char *out);
void print_table(const struct model_opts *o, const struct trace *t, uint64_t pages,
		 uint64_t fast_cap, struct result *r, int n);
void print_json(const struct model_opts *o, const struct trace *t, uint64_t pages,
		uint64_t fast_cap, struct result *r, int n);
int write_plots(const char *dir, struct result *r, int n, const uint64_t *heat,
		uint32_t w, uint32_t h);

#endif
