// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "status.h"
#include "util.h"

#define ADD(obj, key, val) json_object_object_add(obj, key, val)
#define U64(v) json_object_new_uint64(v)

static struct json_object *nodes_json(const struct topology *t)
{
	struct json_object *arr = json_object_new_array();

	for (int i = 0; i < t->nr_nodes; i++) {
		const struct topo_node *n = &t->nodes[i];
		struct json_object *o = json_object_new_object();

		ADD(o, "id", json_object_new_int(n->id));
		ADD(o, "role", json_object_new_string(topology__role_name(n->role)));
		ADD(o, "tier", json_object_new_int(n->tier));
		ADD(o, "cpus", json_object_new_boolean(n->has_cpus));
		ADD(o, "total_bytes", U64(n->total_pages * t->page_size));
		ADD(o, "free_bytes", U64(n->free_pages * t->page_size));
		json_object_array_add(arr, o);
	}
	return arr;
}

static struct json_object *targets_json(const struct tracker *tr, const struct topology *topo)
{
	static const char *const origin[] = { "pid", "comm", "cgroup" };
	struct json_object *arr = json_object_new_array();

	for (uint32_t i = 0; i < tr->nr_targets; i++) {
		const struct target *t = &tr->targets[i];
		struct json_object *o = json_object_new_object();
		uint64_t fast = 0, slow = 0, unknown = 0, sampled = 0;

		for (uint32_t k = 0; k < t->pt.nr; k++) {
			const struct cxlt_page *p = &t->pt.pages[k];

			if (p->flags & CXLT_PAGE_SAMPLED)
				sampled++;
			if (p->node < 0)
				unknown++;
			else if ((topo->fast_mask >> p->node) & 1)
				fast++;
			else
				slow++;
		}
		ADD(o, "pid", json_object_new_int(t->pid));
		ADD(o, "comm", json_object_new_string(t->comm));
		ADD(o, "origin", json_object_new_string(origin[t->origin]));
		ADD(o, "pages_tracked", U64(t->pt.nr));
		ADD(o, "pages_sampled", U64(sampled));
		ADD(o, "pages_fast", U64(fast));
		ADD(o, "pages_slow", U64(slow));
		ADD(o, "pages_unknown", U64(unknown));
		ADD(o, "samples", U64(t->ctr.samples));
		ADD(o, "promoted", U64(t->ctr.promoted));
		ADD(o, "demoted", U64(t->ctr.demoted));
		json_object_array_add(arr, o);
	}
	return arr;
}

static struct json_object *mover_json(const struct mover_stats *ms)
{
	struct json_object *o = json_object_new_object();

#define X(name, desc) ADD(o, #name, U64(ms->name));
	MOVER_STATS(X)
#undef X
	return o;
}

int status__publish(const struct agent_state *st)
{
	struct json_object *root = json_object_new_object(), *agent, *params, *sampler;
	char path[512], tmp[512];
	uint64_t stats[CXLT_NR_STATS];
	int err = 0;

	agent = json_object_new_object();
	ADD(agent, "pid", json_object_new_int(getpid()));
	ADD(agent, "started", json_object_new_double(st->started));
	ADD(agent, "updated", json_object_new_double((double)time(NULL)));
	ADD(agent, "mode", json_object_new_string(st->mode));
	ADD(agent, "mode_why", json_object_new_string(st->mode_why));
	ADD(agent, "epoch", U64(st->tr->epoch));
	ADD(agent, "epoch_ms", json_object_new_int(st->epoch_ms));
	ADD(agent, "last_epoch_ms", json_object_new_double(st->last_epoch_ms));
	ADD(agent, "tracked_pages", U64(tracker__pages(st->tr)));
	ADD(agent, "tracker_bytes", U64(tracker__bytes(st->tr)));
	ADD(root, "agent", agent);

	sampler = json_object_new_object();
	ADD(sampler, "source", json_object_new_string(st->s->source));
	ADD(sampler, "why", json_object_new_string(st->s->source_why));
	ADD(sampler, "pin_dir", json_object_new_string(st->s->pin_dir));
	ADD(sampler, "entries_drained", U64(st->s->drained));
	if (!sampler__read_stats(st->s->stats_fd, stats))
		for (int i = 0; i < CXLT_NR_STATS; i++)
			ADD(sampler, cxlt_stat_names[i], U64(stats[i]));
	ADD(root, "sampler", sampler);

	params = json_object_new_object();
	for (uint32_t i = 0; i < st->policy->nr_params; i++)
		ADD(params, st->policy->params[i].key,
		    json_object_new_string(st->policy->params[i].value));
	agent = json_object_new_object();
	ADD(agent, "name", json_object_new_string(st->policy->ops->name));
	ADD(agent, "path", json_object_new_string(st->policy->path));
	ADD(agent, "params", params);
	ADD(agent, "last_plan", U64(st->last_plan));
	ADD(root, "policy", agent);

	ADD(root, "nodes", nodes_json(st->topo));
	ADD(root, "targets", targets_json(st->tr, st->topo));
	ADD(root, "mover", mover_json(&st->m->total));
	{
		struct cxlt_kmigrate km[CXLT_MIGRATE_REASONS];
		struct json_object *o = json_object_new_object();

		/* Every migration in the kernel since the agent started, by reason. */
		if (!kmigrate__read(st->km, km))
			for (int r = 0; r < CXLT_MIGRATE_REASONS; r++) {
				struct json_object *e;

				if (!km[r].batches)
					continue;
				e = json_object_new_object();
				ADD(e, "pages", U64(km[r].succeeded));
				ADD(e, "failed", U64(km[r].failed));
				ADD(o, st->km->names[r], e);
			}
		ADD(root, "kernel_migrations", o);
	}
	ADD(root, "mover_last_epoch", mover_json(&st->m->epoch));

	snprintf(path, sizeof(path), "%s/status.json", st->run_dir);
	snprintf(tmp, sizeof(tmp), "%s/.status.json.tmp", st->run_dir);
	/* 0600: per-process memory layout is for root's eyes only. */
	if (json_object_to_file_ext(tmp, root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE) ||
	    chmod(tmp, 0600) || rename(tmp, path)) {
		err = -errno;
		pr_warn("cannot write %s: %s", path, strerror(errno));
	}
	json_object_put(root);
	return err;
}
