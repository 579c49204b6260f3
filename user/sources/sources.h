/* SPDX-License-Identifier: MIT */
/*
 * The sampler sources.  Each is one struct source_def, in a file of its own
 * (fault_source.c, hint_source.c, pmu_source.c, damon_source.c): the name
 * --source and the config take, the hook it attaches to, whether its samples
 * repeat, what it is for, and its code (usable here?, open, drain, targets,
 * status, close).  The registry (sources[] in sources.c) lists them: the
 * config's validation, the sampler's parser and dispatch, auto's order, the
 * status, the repeat rule of the agent and of the replay and the --help
 * text test all read it.  Adding a source is its file plus one registry line.
 */
#ifndef CXLT_SOURCES_H
#define CXLT_SOURCES_H

#include <stdbool.h>
#include <stddef.h>

#include "cxltier.h"

enum source_hook {
	HOOK_NONE,	/* auto: picks one of the others */
	HOOK_FAULT_TP,	/* the page-fault tracepoint (first touch and NUMA hint faults) */
	HOOK_PERF,	/* a perf_event BPF program (PMU samples, software page faults) */
	HOOK_DAMON,	/* a DAMON kdamond, read from userspace; first touches from HOOK_FAULT_TP */
	HOOK_PROC,	/* the targets' page tables, read from userspace through /proc */
};

/*
 * Which of a target's resident pages a source can see (issue 18).  The
 * target visibility check (user/sources/sight.c) and auto's choice both read it.
 */
enum source_sight {
	SIGHT_ALL,	  /* every resident page, whatever its memory policy */
	SIGHT_SCANNED,	  /* pages the kernel's NUMA scanner marks: none under a
			   * bind/preferred/interleave/local policy, no hugetlb */
	SIGHT_FIRST_TOUCH, /* only pages first touched while the agent watches */
};

struct sampler;
struct sampler_opts;
struct tracker;
struct json_object;

struct source_def {
	const char *name;
	enum cxlt_source kind; /* what its samples say in a trace (0: none of its own) */
	enum source_hook hook; /* two sources on one hook cannot be listed together */
	bool repeats;	       /* a page is sampled again and again, not only at first touch */
	bool listable;	       /* may be given with others and weights: "pmu:4,hint:1" */
	const char *help;      /* one line */
	enum source_sight sight;
	/*
	 * Where auto tries it: 1 first, 0 never.  auto takes the first one, in
	 * this order, that is usable here and sees all the targets' memory;
	 * when none does, the first usable one (sources__auto_order()).
	 */
	int auto_rank;
	/* Bytes of its own state, zeroed when it opens and freed after close: sampler__state(). */
	size_t state_size;

	/*
	 * Its code; NULL where it has none (auto is the sampler's own).
	 *
	 * usable: whether it can work on this machine, asked without setting
	 * anything up (auto skips it, the unseen pages' advice leaves it out):
	 * 0, or -errno with why not in why.  A why not is "summary: detail":
	 * the log gets it whole, the source's why (status) the summary.
	 */
	int (*usable)(const struct sampler_opts *o, char *why, size_t len);
	/*
	 * Sets it up and attaches it, adding what it is to s->source_why
	 * (sampler__note()); 0, or -errno with why not in s->why_not and
	 * nothing of it left set up.
	 */
	int (*open)(struct sampler *s, const struct sampler_opts *o, const struct source_def *d);
	/* Each epoch after the heat map: its own samples, or upkeep; entries added. */
	int (*drain)(struct sampler *s, const struct source_def *d, struct tracker *tr);
	/* The tracker's targets changed. */
	void (*set_targets)(struct sampler *s, const struct source_def *d, const struct tracker *tr);
	/* Its own fields in the status's "sampler" object. */
	void (*status)(const struct sampler *s, const struct source_def *d,
		       struct json_object *sampler);
	void (*close)(struct sampler *s, const struct source_def *d);
};

#define SOURCES_MAX_LIST 4

/* A --source value, parsed: one source, or several with weights. */
struct source_list {
	int n;
	const struct source_def *def[SOURCES_MAX_LIST];
	unsigned weight[SOURCES_MAX_LIST];
};

/* The registry, and its rows by name and by the kind a trace records. */
extern const struct source_def *const sources[];
extern const size_t nr_sources;
/* Each source's own file defines its rows. */
extern const struct source_def pmu_source, hint_source, fault_source, fault_perf_source,
	damon_source, damon_vaddr_source, damon_paddr_source, soft_dirty_source;
const struct source_def *sources__find(const char *name);
const struct source_def *sources__by_kind(enum cxlt_source kind);
/* Whether samples of this kind (as a trace records them) repeat. */
bool sources__kind_repeats(enum cxlt_source kind);

/*
 * Parses a --source value: one name, or a list of listable names with
 * optional weights 1..1000, at most one per hook.  0, or -EINVAL with why
 * ("unknown source 'x' (auto, pmu, ...)").
 */
int sources__parse(const char *value, struct source_list *l, char *why, size_t len);
/*
 * The sources auto tries, in order: fills out[] (at most max), returns how
 * many.
 */
size_t sources__auto_order(const struct source_def **out, size_t max);
/*
 * Whether a source with this sight sees every resident page of targets
 * where POLICY_PAGES are under a memory policy that the NUMA scanner skips
 * and RESIDENT pages were resident before the agent watched them.
 */
bool sources__sees_all(enum source_sight sight, unsigned long long policy_pages,
		       unsigned long long resident);
/* "auto, pmu, hint, ..." for messages. */
void sources__names(char *buf, size_t len);

#endif
