/* SPDX-License-Identifier: MIT */
/*
 * The sampler sources, one row each: the name --source and the config take,
 * the hook it attaches to, whether its samples repeat, what it is for.  The
 * config's validation, the sampler's parser and attach dispatch, the repeat
 * rule of the agent and of the replay, and the --help text test all read
 * this table: adding a source is its attach code plus one row here.
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
};

struct source_def {
	const char *name;
	enum cxlt_source kind; /* what its samples say in a trace (0: none of its own) */
	enum source_hook hook; /* two sources on one hook cannot be listed together */
	bool repeats;	       /* a page is sampled again and again, not only at first touch */
	bool listable;	       /* may be given with others and weights: "pmu:4,hint:1" */
	const char *help;      /* one line */
};

#define SOURCES_MAX_LIST 4

/* A --source value, parsed: one source, or several with weights. */
struct source_list {
	int n;
	const struct source_def *def[SOURCES_MAX_LIST];
	unsigned weight[SOURCES_MAX_LIST];
};

/* The table, and its rows by name and by the kind a trace records. */
extern const struct source_def sources[];
extern const size_t nr_sources;
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
/* "auto, pmu, hint, ..." for messages. */
void sources__names(char *buf, size_t len);

#endif
