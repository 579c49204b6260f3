// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"
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

static struct json_object *targets_json(const struct tracker *tr)
{
	static const char *const origin[] = { "pid", "comm", "cgroup" };
	struct json_object *arr = json_object_new_array();

	for (uint32_t i = 0; i < tr->nr_targets; i++) {
		const struct target *t = &tr->targets[i];
		struct json_object *o = json_object_new_object();
		ADD(o, "pid", json_object_new_int(t->pid));
		ADD(o, "comm", json_object_new_string(t->comm));
		ADD(o, "origin", json_object_new_string(origin[t->origin]));
		ADD(o, "pages_tracked", U64(tracker__target_pages(t)));
		ADD(o, "regions", U64(t->rt.nr));
		ADD(o, "page_records", U64(t->pt.hashed));
		ADD(o, "pages_sampled", U64(t->place.sampled));
		ADD(o, "pages_fast", U64(t->place.fast));
		if (t->fast_cap)
			ADD(o, "fast_cap_pages", U64(t->fast_cap));
		ADD(o, "pages_slow", U64(t->place.slow));
		ADD(o, "pages_unknown", U64(t->place.unknown));
		ADD(o, "pages_fast_unseen", U64(t->place.fast_unseen));
		/* Resident pages no attached source can see (sight.h), with why and what sees them. */
		ADD(o, "unseen_pages", U64(t->unseen.pages));
		ADD(o, "unseen_reason", t->unseen.pages ? json_object_new_string(t->unseen.reason) : NULL);
		ADD(o, "unseen_suggestion", t->unseen.pages ?
			json_object_new_string(t->unseen.suggestion) : NULL);
		ADD(o, "unseen_source_instead", t->unseen.pages && t->unseen.source ?
			json_object_new_string(t->unseen.source) : NULL);
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

struct json_object *status__json(const struct agent_state *st)
{
	struct json_object *root = json_object_new_object(), *agent, *params, *sampler;
	uint64_t stats[CXLT_NR_STATS];

	agent = json_object_new_object();
	ADD(agent, "pid", json_object_new_int(getpid()));
	ADD(agent, "started", json_object_new_double(st->started));
	ADD(agent, "updated", json_object_new_double((double)time(NULL)));
	ADD(agent, "mode", json_object_new_string(st->mode));
	ADD(agent, "paused", json_object_new_boolean(st->paused));
	ADD(agent, "rate_mbps", json_object_new_double(st->m->opts.rate_mbps));
	ADD(agent, "mode_why", json_object_new_string(st->mode_why));
	ADD(agent, "epoch", U64(st->tr->epoch));
	ADD(agent, "epoch_ms", json_object_new_int(st->epoch_ms));
	ADD(agent, "last_epoch_ms", json_object_new_double(st->last_epoch_ms));
	ADD(agent, "max_epoch_ms", json_object_new_double(st->max_epoch_ms));
	ADD(agent, "tracked_pages", U64(tracker__pages(st->tr)));
	ADD(agent, "tracker_bytes", U64(tracker__bytes(st->tr)));
	ADD(agent, "tracker_budget_bytes", U64(st->tr->budget_bytes));
	ADD(agent, "tracker_records", U64(tracker__records(st->tr)));
	ADD(agent, "tracker_folded", U64(st->tr->folded));
	ADD(agent, "targets_refused_budget", U64(st->tr->refused_budget));
	ADD(root, "agent", agent);

	sampler = json_object_new_object();
	ADD(sampler, "source", json_object_new_string(st->s->source));
	ADD(sampler, "why", json_object_new_string(st->s->source_why));
	ADD(sampler, "pin_dir", json_object_new_string(st->s->pin_dir));
	ADD(sampler, "entries_drained", U64(st->s->drained));
	if (!sampler__read_stats(st->s->stats_fd, stats)) {
		for (int i = 0; i < CXLT_NR_STATS; i++)
			ADD(sampler, cxlt_stat_names[i], U64(stats[i]));
		/*
		 * Entries the LRU heat map evicted before a drain: inserted but
		 * never drained (racy by the entries still in the map: at most
		 * one epoch's worth).
		 */
		ADD(sampler, "evicted_estimate",
		    U64(stats[CXLT_STAT_NEW_PAGES] > st->s->drained ?
			stats[CXLT_STAT_NEW_PAGES] - st->s->drained : 0));
	}
	sampler__status(st->s, sampler);
	if (st->hint && st->hint->on) {
		struct json_object *h = json_object_new_object();

		ADD(h, "budget_faults_per_sec", json_object_new_double(st->hint->budget));
		/* Cost follows need: the budget in force once placement has settled. */
		ADD(h, "budget_now_faults_per_sec", json_object_new_double(st->hint->budget * st->hint->need));
		ADD(h, "faults_per_sec", json_object_new_double(st->hint->rate));
		ADD(h, "credit", json_object_new_double(st->hint->credit));
		ADD(h, "fast_tier_marked", json_object_new_boolean(st->hint->open));
		ADD(h, "open_share", json_object_new_double(st->hint->looks ?
			(double)st->hint->open_looks / st->hint->looks : 1));
		ADD(h, "switches", U64(st->hint->flips));
		/* Passes marked because hot pages waited on unseen fast pages. */
		ADD(h, "starved_wakes", U64(st->hint->starved_wakes));
		ADD(sampler, "hint", h);
	}
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
	if (st->sandbox) {
		ADD(agent, "isolated", json_object_new_boolean(st->sandbox->pid != 0));
		ADD(agent, "failed", st->sandbox->failed[0] ?
			json_object_new_string(st->sandbox->failed) : NULL);
		ADD(agent, "decide_ms", json_object_new_double(st->sandbox->last_ms));
	}
	ADD(root, "policy", agent);

	ADD(root, "nodes", nodes_json(st->topo));
	ADD(root, "targets", targets_json(st->tr));
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
	return root;
}

int status__publish(const struct agent_state *st)
{
	struct json_object *root = status__json(st);
	char path[512], tmp[512], why[800];
	int err = 0, fd;

	snprintf(path, sizeof(path), "%s/status.json", st->run_dir);
	snprintf(tmp, sizeof(tmp), "%s/.status.json.tmp", st->run_dir);
	/* 0600, a new file: per-process memory layout is for root's eyes only. */
	fd = create_private_file(tmp, why, sizeof(why));
	if (fd < 0) {
		pr_warn("%s", why);
		json_object_put(root);
		return fd;
	}
	if (json_object_to_fd(fd, root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE) ||
	    close(fd) || rename(tmp, path)) {
		err = errno ? -errno : -EIO;
		pr_warn("cannot write %s: %s", path, strerror(-err));
		unlink(tmp);
	}
	json_object_put(root);
	return err;
}

/*
 * A Prometheus label value from text a process controls: first made
 * printable (str_escape: \xHH, \\), then escaped as the exposition format
 * requires (backslash and double quote; no newline is left by then).
 */
void status__label(FILE *f, const char *v)
{
	char safe[STR_ESCAPED_SIZE(64)];

	for (const char *p = str_escape(v, safe, sizeof(safe)); *p; p++) {
		if (*p == '\\' || *p == '"')
			fputc('\\', f);
		fputc(*p, f);
	}
}

static void metric_head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static uint64_t jget(struct json_object *o, const char *k)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, k, &v) ? json_object_get_uint64(v) : 0;
}

char *status__metrics(const struct agent_state *st)
{
	struct json_object *root = status__json(st), *o, *arr;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		json_object_put(root);
		return NULL;
	}
	json_object_object_get_ex(root, "agent", &o);
	metric_head(f, "cxltier_up", "gauge", "1 while the agent runs; migrate 1 unless observing or paused");
	fprintf(f, "cxltier_up{mode=\"%s\"} 1\n", st->mode);
	if (st->sandbox) {
		metric_head(f, "cxltier_policy_failed", "gauge",
			    "1 once the policy crashed, overran its limit or made a forbidden call");
		fprintf(f, "cxltier_policy_failed %d\n", st->sandbox->failed[0] != 0);
	}
	metric_head(f, "cxltier_epochs_total", "counter", "epochs run");
	fprintf(f, "cxltier_epochs_total %llu\n", (unsigned long long)jget(o, "epoch"));
	metric_head(f, "cxltier_epoch_duration_seconds", "gauge", "time the last epoch took");
	fprintf(f, "cxltier_epoch_duration_seconds %.6f\n", st->last_epoch_ms / 1000);
	metric_head(f, "cxltier_epoch_duration_max_seconds", "gauge", "the longest epoch since the start");
	fprintf(f, "cxltier_epoch_duration_max_seconds %.6f\n", st->max_epoch_ms / 1000);
	metric_head(f, "cxltier_tracked_pages", "gauge", "pages the tracker holds");
	fprintf(f, "cxltier_tracked_pages %llu\n", (unsigned long long)jget(o, "tracked_pages"));
	metric_head(f, "cxltier_tracker_bytes", "gauge", "memory of the tracker");
	fprintf(f, "cxltier_tracker_bytes %llu\n", (unsigned long long)jget(o, "tracker_bytes"));
	metric_head(f, "cxltier_targets_refused", "gauge",
		    "matching processes not managed: the tracker is full (--tracker-mb)");
	fprintf(f, "cxltier_targets_refused %llu\n", (unsigned long long)jget(o, "targets_refused_budget"));

	json_object_object_get_ex(root, "sampler", &o);
	metric_head(f, "cxltier_sampler_events_total", "counter", "sampler counters by kind (bpf/stats.def)");
	for (int i = 0; i < CXLT_NR_STATS; i++)
		fprintf(f, "cxltier_sampler_events_total{kind=\"%s\",source=\"%s\"} %llu\n",
			cxlt_stat_names[i], st->s->source, (unsigned long long)jget(o, cxlt_stat_names[i]));

	metric_head(f, "cxltier_node_bytes", "gauge", "memory of each managed node");
	arr = json_object_object_get(root, "nodes");
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		struct json_object *n = json_object_array_get_idx(arr, i);

		fprintf(f, "cxltier_node_bytes{node=\"%llu\",role=\"%s\",kind=\"total\"} %llu\n",
			(unsigned long long)jget(n, "id"),
			json_object_get_string(json_object_object_get(n, "role")),
			(unsigned long long)jget(n, "total_bytes"));
		fprintf(f, "cxltier_node_bytes{node=\"%llu\",role=\"%s\",kind=\"free\"} %llu\n",
			(unsigned long long)jget(n, "id"),
			json_object_get_string(json_object_object_get(n, "role")),
			(unsigned long long)jget(n, "free_bytes"));
	}

	metric_head(f, "cxltier_target_pages", "gauge", "pages of each target by tier");
	arr = json_object_object_get(root, "targets");
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		struct json_object *t = json_object_array_get_idx(arr, i);
		const char *tiers[] = { "fast", "slow", "unknown" };
		const char *keys[] = { "pages_fast", "pages_slow", "pages_unknown" };

		for (int k = 0; k < 3; k++) {
			fprintf(f, "cxltier_target_pages{pid=\"%llu\",comm=\"", (unsigned long long)jget(t, "pid"));
			status__label(f, json_object_get_string(json_object_object_get(t, "comm")));
			fprintf(f, "\",tier=\"%s\"} %llu\n", tiers[k], (unsigned long long)jget(t, keys[k]));
		}
	}

	metric_head(f, "cxltier_target_unseen_pages", "gauge",
		    "resident pages of each target that the attached sources cannot see (bind/preferred policy under hint; resident before a first-touch source)");
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		struct json_object *t = json_object_array_get_idx(arr, i);

		fprintf(f, "cxltier_target_unseen_pages{pid=\"%llu\",comm=\"", (unsigned long long)jget(t, "pid"));
		status__label(f, json_object_get_string(json_object_object_get(t, "comm")));
		fprintf(f, "\",source=\"%s\"} %llu\n", st->s->source,
			(unsigned long long)jget(t, "unseen_pages"));
	}

	metric_head(f, "cxltier_mover_pages_total", "counter", "mover results by outcome (promoted, demoted, busy, gone, ...)");
	json_object_object_get_ex(root, "mover", &o);
	json_object_object_foreach(o, key, val)
		fprintf(f, "cxltier_mover_pages_total{outcome=\"%s\"} %llu\n", key,
			(unsigned long long)json_object_get_uint64(val));

	metric_head(f, "cxltier_kernel_migrated_pages_total", "counter",
		    "pages the kernel migrated since the agent started, by reason (syscall includes move_pages)");
	json_object_object_get_ex(root, "kernel_migrations", &o);
	json_object_object_foreach(o, reason, v2)
		fprintf(f, "cxltier_kernel_migrated_pages_total{reason=\"%s\"} %llu\n", reason,
			(unsigned long long)jget(v2, "pages"));
	fclose(f);
	json_object_put(root);
	return buf;
}
