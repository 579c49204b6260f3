// SPDX-License-Identifier: MIT
/*
 * Sources damon, damon-vaddr and damon-paddr: DAMON's access regions
 * (damon.c) beside the page-fault tracepoint's first touches.  damon
 * observes a kdamond someone else runs, or starts our own when no one uses
 * DAMON; the other two only ever start our own, of that kind.  DAMON checks
 * accessed bits whatever a page's memory policy, so it sees what hint cannot.
 */
#include <json-c/json.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "damon.h"
#include "sampler.h"

static enum damon_mode mode_of(const struct source_def *d)
{
	return d == &damon_vaddr_source ? DAMON_OWN_VADDR :
	       d == &damon_paddr_source ? DAMON_OWN_PADDR : DAMON_ANY;
}

static int damon_usable(const struct sampler_opts *o, char *why, size_t len)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/sys/kernel/mm/damon/admin/kdamonds",
		 o->sysfs_root ? o->sysfs_root : "");
	if (!access(path, F_OK))
		return 0;
	snprintf(why, len, "no DAMON sysfs in this kernel (%s)", path);
	return -ENOENT;
}

static int damon_open(struct sampler *s, const struct sampler_opts *o, const struct source_def *d)
{
	struct damon_src *dm = sampler__state(s, d);
	int err = damon__open(dm, o->sysfs_root, o->damon_state, mode_of(d));

	if (err) {
		sampler__why_not(s, "%s: %s", mode_of(d) == DAMON_ANY ? "no DAMON to observe or own" :
				 "no DAMON of our own", dm->why);
		return err;
	}
	sampler__note(s, "%s; first touches from the page-fault tracepoint", dm->why);
	if ((err = sampler__attach_fault_tp(s, d))) {
		damon__close(dm);
		return err;
	}
	/* auto's DAMON is "damon" to the status and the log, whichever kdamond it took. */
	if (s->choosing)
		snprintf(s->source, sizeof(s->source), "damon");
	return 0;
}

static int damon_drain(struct sampler *s, const struct source_def *d, struct tracker *tr)
{
	struct damon_src *dm = sampler__state(s, d);
	int n = damon__drain(dm, tr);

	damon__set_targets(dm, tr);
	return n;
}

static void damon_set_targets(struct sampler *s, const struct source_def *d,
			      const struct tracker *tr)
{
	damon__set_targets(sampler__state(s, d), tr);
}

static void damon_status(const struct sampler *s, const struct source_def *def,
			 struct json_object *sampler)
{
	const struct damon_src *dm = sampler__state(s, def);
	struct json_object *d = json_object_new_object();

	json_object_object_add(d, "owner", json_object_new_string(dm->own ? "agent" : "someone else"));
	json_object_object_add(d, "operations", json_object_new_string(dm->ops));
	json_object_object_add(d, "kdamond_pid", json_object_new_int(dm->kdamond_pid));
	json_object_object_add(d, "targets", json_object_new_uint64(dm->nr_pids));
	json_object_object_add(d, "commits", json_object_new_uint64(dm->commits));
	json_object_object_add(d, "regions_seen", json_object_new_uint64(dm->regions_seen));
	json_object_object_add(d, "pages_sampled", json_object_new_uint64(dm->pages_matched));
	json_object_object_add(sampler, "damon", d);
}

static void damon_close(struct sampler *s, const struct source_def *d)
{
	damon__close(sampler__state(s, d));
}

#define DAMON_OPS .kind = 0, .hook = HOOK_DAMON, .repeats = true, .sight = SIGHT_ALL, \
	.state_size = sizeof(struct damon_src), .usable = damon_usable, .open = damon_open, \
	.drain = damon_drain, .set_targets = damon_set_targets, .status = damon_status, \
	.close = damon_close

const struct source_def damon_source = {
	.name = "damon",
	.help = "observes a running paddr kdamond, or starts our own when none is set up",
	.auto_rank = 4,
	DAMON_OPS,
};

const struct source_def damon_vaddr_source = {
	.name = "damon-vaddr",
	.help = "our own DAMON kdamond, virtual addresses",
	.auto_rank = 2,
	DAMON_OPS,
};

const struct source_def damon_paddr_source = {
	.name = "damon-paddr",
	.help = "our own DAMON kdamond, physical addresses",
	DAMON_OPS,
};
