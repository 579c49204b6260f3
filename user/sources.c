// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sources.h"
#include "util.h"

const struct source_def sources[] = {
	{ "auto", 0, HOOK_NONE, false, false,
	  "pmu if the CPU samples memory, else our own DAMON vaddr kdamond when no one else uses DAMON, else hint where the kernel has NUMA balancing, else fault" },
	{ "pmu", CXLT_SRC_PMU, HOOK_PERF, true, true,
	  "hardware memory samples: Intel PEBS mem-loads, AMD IBS op" },
	{ "hint", CXLT_SRC_HINT, HOOK_FAULT_TP, true, true,
	  "NUMA hint faults from the kernel's scanner, metered to a CPU budget" },
	{ "fault", CXLT_SRC_FAULT, HOOK_FAULT_TP, false, true,
	  "page faults: first touches only" },
	{ "fault-perf", CXLT_SRC_FAULT, HOOK_PERF, false, true,
	  "page faults through the perf software event, where the tracepoint is missing" },
	{ "damon", 0, HOOK_DAMON, true, false,
	  "observes a running paddr kdamond, or starts our own when none is set up" },
	{ "damon-vaddr", 0, HOOK_DAMON, true, false, "our own DAMON kdamond, virtual addresses" },
	{ "damon-paddr", 0, HOOK_DAMON, true, false, "our own DAMON kdamond, physical addresses" },
};
const size_t nr_sources = ARRAY_SIZE(sources);

const struct source_def *sources__find(const char *name)
{
	for (size_t i = 0; i < nr_sources; i++)
		if (!strcmp(sources[i].name, name))
			return &sources[i];
	return NULL;
}

const struct source_def *sources__by_kind(enum cxlt_source kind)
{
	for (size_t i = 0; kind && i < nr_sources; i++)
		if (sources[i].kind == kind)
			return &sources[i];
	return NULL;
}

bool sources__kind_repeats(enum cxlt_source kind)
{
	const struct source_def *d = sources__by_kind(kind);

	return d && d->repeats;
}

void sources__names(char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < nr_sources && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? ", " : "", sources[i].name);
}

int sources__parse(const char *value, struct source_list *l, char *why, size_t len)
{
	char buf[128], names[160], *tok, *save;
	bool many = strchr(value, ',') || strchr(value, ':');

	memset(l, 0, sizeof(*l));
	sources__names(names, sizeof(names));
	if (strlen(value) >= sizeof(buf)) {
		snprintf(why, len, "too long");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", value);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		const struct source_def *d;
		int w = 1;

		if (l->n == SOURCES_MAX_LIST) {
			snprintf(why, len, "at most %d sources", SOURCES_MAX_LIST);
			return -EINVAL;
		}
		if (colon) {
			*colon = '\0';
			if (parse_int(colon + 1, 1, 1000, &w)) {
				snprintf(why, len, "weight '%s' of %s is not a number from 1 to 1000",
					 colon + 1, tok);
				return -EINVAL;
			}
		}
		if (!(d = sources__find(tok))) {
			snprintf(why, len, "unknown source '%s' (%s; several with weights such as pmu:4,hint:1)",
				 tok, names);
			return -EINVAL;
		}
		if (many && !d->listable) {
			snprintf(why, len, "%s only alone: a list takes pmu, hint, fault and fault-perf", tok);
			return -EINVAL;
		}
		/* Two sources on one hook would count every event twice under one weight. */
		for (int i = 0; i < l->n; i++) {
			if (l->def[i]->hook == d->hook) {
				snprintf(why, len, "%s shares its hook with %s (fault and hint are one tracepoint; pmu and fault-perf one perf_event program)",
					 tok, l->def[i]->name);
				return -EINVAL;
			}
		}
		l->def[l->n] = d;
		l->weight[l->n++] = w;
	}
	if (!l->n) {
		snprintf(why, len, "no source named (%s)", names);
		return -EINVAL;
	}
	return 0;
}
