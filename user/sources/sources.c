// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sources.h"
#include "util.h"

/* auto is no source of its own: the sampler tries the others in auto_rank order. */
static const struct source_def auto_source = {
	.name = "auto",
	.hook = HOOK_NONE,
	.help = "pmu if the CPU samples memory, else our own DAMON vaddr kdamond when no one else uses DAMON, else hint where the kernel has NUMA balancing, else fault; a source that cannot see the targets' memory (hint: memory under bind/preferred) comes after one that can (damon observing a paddr kdamond)",
	.sight = SIGHT_ALL,
};

/* The registry: --help, the man page and the sample config list them in this order. */
const struct source_def *const sources[] = {
	&auto_source,
	&pmu_source,
	&hint_source,
	&fault_source,
	&fault_perf_source,
	&damon_source,
	&damon_vaddr_source,
	&damon_paddr_source,
	&soft_dirty_source,
};
const size_t nr_sources = ARRAY_SIZE(sources);

const struct source_def *sources__find(const char *name)
{
	for (size_t i = 0; i < nr_sources; i++)
		if (!strcmp(sources[i]->name, name))
			return sources[i];
	return NULL;
}

const struct source_def *sources__by_kind(enum cxlt_source kind)
{
	for (size_t i = 0; kind && i < nr_sources; i++)
		if (sources[i]->kind == kind)
			return sources[i];
	return NULL;
}

bool sources__kind_repeats(enum cxlt_source kind)
{
	const struct source_def *d = sources__by_kind(kind);

	return d && d->repeats;
}

size_t sources__auto_order(const struct source_def **out, size_t max)
{
	size_t n = 0;

	for (int rank = 1; n < max; rank++) {
		size_t before = n;

		for (size_t i = 0; i < nr_sources && n < max; i++)
			if (sources[i]->auto_rank == rank)
				out[n++] = sources[i];
		if (n == before)
			break;	/* ranks are 1, 2, 3, ... without gaps */
	}
	return n;
}

bool sources__sees_all(enum source_sight sight, unsigned long long policy_pages,
		       unsigned long long resident)
{
	switch (sight) {
	case SIGHT_ALL:
		return true;
	case SIGHT_SCANNED:
		return !policy_pages;
	case SIGHT_FIRST_TOUCH:
		return !resident;
	}
	return false;
}

void sources__names(char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < nr_sources && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? ", " : "", sources[i]->name);
}

struct parse_ctx {
	struct source_list *l;
	bool many;
	const char *names;
	char *why;
	size_t len;
};

static int parse_one(void *ctx, const char *name, const char *val)
{
	struct parse_ctx *c = ctx;
	struct source_list *l = c->l;
	const struct source_def *d;
	int w = 1;

	if (l->n == SOURCES_MAX_LIST) {
		snprintf(c->why, c->len, "at most %d sources", SOURCES_MAX_LIST);
		return -EINVAL;
	}
	if (val && parse_int(val, 1, 1000, &w)) {
		snprintf(c->why, c->len, "weight '%s' of %s is not a number from 1 to 1000", val, name);
		return -EINVAL;
	}
	if (!(d = sources__find(name))) {
		snprintf(c->why, c->len, "unknown source '%s' (%s; several with weights such as pmu:4,hint:1)",
			 name, c->names);
		return -EINVAL;
	}
	if (c->many && !d->listable) {
		snprintf(c->why, c->len, "%s only alone: a list takes pmu, hint, fault and fault-perf", name);
		return -EINVAL;
	}
	/* Two sources on one hook would count every event twice under one weight. */
	for (int i = 0; i < l->n; i++) {
		if (l->def[i]->hook == d->hook) {
			snprintf(c->why, c->len, "%s shares its hook with %s (fault and hint are one tracepoint; pmu and fault-perf one perf_event program)",
				 name, l->def[i]->name);
			return -EINVAL;
		}
	}
	l->def[l->n] = d;
	l->weight[l->n++] = w;
	return 0;
}

int sources__parse(const char *value, struct source_list *l, char *why, size_t len)
{
	char names[160];
	struct parse_ctx c = { l, strchr(value, ',') || strchr(value, ':'), names, why, len };
	int nr;

	memset(l, 0, sizeof(*l));
	sources__names(names, sizeof(names));
	if ((nr = parse_named_list(value, parse_one, &c, why, len)) < 0)
		return nr;
	if (!nr) {
		snprintf(why, len, "no source named (%s)", names);
		return -EINVAL;
	}
	return 0;
}
