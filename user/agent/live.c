// SPDX-License-Identifier: MIT
/* The agent's steps of the epoch pipeline, and what follows the machine's nodes. */
#include <errno.h>
#include <numa.h>
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "pipeline.h"
#include "targets.h"
#include "util.h"

/* Migrate or observe, from the topology and the flags; says which and why. */
void agent__set_mode(struct agent *a)
{
	a->migrate = !a->cfg->k.observe && topology__has_slow(&a->topo) && numa_available() >= 0;
	a->st.mode = a->migrate ? "migrate" : "observe";
	a->st.mode_why = a->cfg->k.observe ? "--observe given" :
			 !topology__has_slow(&a->topo) ?
			 "no slow memory node on this machine: nothing to migrate to" :
			 a->migrate ? "fast and slow nodes present" : "no NUMA support";
	if (a->migrate)
		pr_info("migrate mode: policy %s, %.0f MiB/s budget, watermarks %.1f%%/%.1f%%",
			a->policy.ops->name, a->m.opts.rate_mbps ? a->m.opts.rate_mbps : a->cfg->k.mover.rate_mbps,
			a->cfg->k.mover.low_wmark_pct, a->cfg->k.mover.high_wmark_pct);
	else
		pr_info("observe mode: %s; sampling, tracking and reporting only", a->st.mode_why);
}

/*
 * Memory hotplug and CXL dynamic capacity: nodes appear, grow, shrink and
 * go away while the agent runs.  The topology is read again every epoch;
 * when a node's size or role changed, the agent says so, uses the new one
 * (a node without memory is no longer a destination), and switches between
 * migrate and observe mode as needed.
 */
static void follow_topology(struct agent *a)
{
	struct topology *fresh = malloc(sizeof(*fresh));
	int lvl = log_verbosity;
	bool changed;

	if (!fresh)
		return;
	log_verbosity = LOG_ERR;	/* a failed re-read is reported below, once */
	if (topology__reload(fresh, &a->topo, a->cfg->k.fast_nodes, a->cfg->k.slow_nodes)) {
		log_verbosity = lvl;
		pr_warn("cannot re-read the topology (a named node lost its memory?); keeping the last one");
		free(fresh);
		return;
	}
	log_verbosity = lvl;
	changed = fresh->nr_nodes != a->topo.nr_nodes || fresh->fast_mask != a->topo.fast_mask ||
		  fresh->slow_mask != a->topo.slow_mask;
	for (int i = 0; !changed && i < fresh->nr_nodes; i++)
		changed = fresh->nodes[i].id != a->topo.nodes[i].id ||
			  fresh->nodes[i].total_pages != a->topo.nodes[i].total_pages ||
			  fresh->nodes[i].tier != a->topo.nodes[i].tier;
	if (changed) {
		bool was = a->migrate;

		pr_info("topology changed (memory hotplug or dynamic capacity):");
		a->topo = *fresh;
		topology__log(&a->topo);
		agent__set_mode(a);
		if (was != a->migrate)
			pr_info("now %s", a->migrate ? "migrating again" : "observing: no slow node to migrate to");
	} else {
		for (int i = 0; i < fresh->nr_nodes; i++)
			a->topo.nodes[i].free_pages = fresh->nodes[i].free_pages;
	}
	free(fresh);
}

/* The agent's steps of the epoch pipeline (pipeline.h). */
static int live_ingest(void *ctx)
{
	struct agent *a = ctx;
	int err;

	targets__refresh(&a->cfg->specs, &a->tr, &a->s);
	shares__apply(&a->shares, &a->tr, topology__fast_pages(&a->topo));
	if (a->tr.sight) {
		/* Passes before samples: a page marked and sampled in one epoch stays unseen. */
		bool seen = marks__follow(&a->marks, &a->tr, a->kset.gate.open, a->topo.fast_mask,
					  a->kset.gate.opened_epoch);

		ksettings__meter(&a->kset, a->epoch_t0, a->tr.epoch, seen);
	}
	a->drained = sampler__drain(&a->s, &a->tr);
	recorder__epoch(&a->rec, &a->s, a->tr.epoch + 1);
	if (a->drained < 0)
		pr_warn("draining the heat map failed: %s", strerror(-a->drained));

	/* Memory blocks come and go with hotplug: re-read before the sweeps read page frames. */
	if (a->tr.epoch % a->cfg->k.scan_epochs == 0)
		pfn_nodes__load(&a->tr.pfn, a->cfg->k.sysfs_root);
	for (uint32_t i = 0; i < a->tr.nr_targets; i++) {
		struct target *t = &a->tr.targets[i];

		if (t->gone)
			continue;
		err = tracker__query_nodes(&a->tr, t, t->nodes_known);
		if (err == -ESRCH)
			t->gone = true;
		else if (err)
			pr_warn("pid %d: node query failed: %s", t->pid, strerror(-err));
	}
	/* A bounded slice of the targets' address spaces: the epoch's time does not grow with memory. */
	tracker__sweep_all(&a->tr, a->cfg->k.scan_epochs);
	recorder__targets(&a->rec, &a->tr);
	return 0;
}

static void live_topology(void *ctx)
{
	follow_topology(ctx);
}

static bool live_may_move(void *ctx)
{
	struct agent *a = ctx;

	return a->migrate && !a->st.paused && a->tr.nr_targets;
}

static void live_publish(void *ctx)
{
	struct agent *a = ctx;
	const struct mover_stats *e = &a->m.epoch;
	struct placement place;

	a->st.last_plan = a->eng.last_plan;
	/* One pass for the gate, the log line and the status, not one each. */
	tracker__count_placement(&a->tr, a->topo.fast_mask, &place);
	if (a->migrate) {
		struct wmarks w;

		mover__wmarks(&a->m, &a->topo, &w);
		/* Starved: each page waiting could be some unseen fast page's place. */
		ksettings__need(&a->kset, e->promoted + e->demoted + e->moved_other > 0,
				wmarks__roomy(&w),
				place.slow_sampled && place.fast_unseen >= place.slow_sampled);
	}

	a->st.last_epoch_ms = (now_sec() - a->epoch_t0) * 1000;
	if (a->st.last_epoch_ms > a->st.max_epoch_ms)
		a->st.max_epoch_ms = a->st.last_epoch_ms;
	status__publish(&a->st);

	log_msg(e->promoted || e->demoted || e->rejected_invalid || a->tr.epoch % a->log_every == 1 ?
		LOG_INFO : LOG_DEBUG,
		"epoch %llu: %u targets, %llu pages tracked (fast %llu, slow %llu), %d heat entries drained; plan %llu: promoted %llu, demoted %llu, busy %llu, gone %llu, full %llu, rejected %llu (%.1f ms)",
		(unsigned long long)a->tr.epoch, a->tr.nr_targets,
		(unsigned long long)tracker__pages(&a->tr), (unsigned long long)place.fast,
		(unsigned long long)place.slow, a->drained > 0 ? a->drained : 0,
		(unsigned long long)a->st.last_plan, (unsigned long long)e->promoted,
		(unsigned long long)e->demoted, (unsigned long long)e->busy,
		(unsigned long long)e->gone, (unsigned long long)e->nomem,
		(unsigned long long)(e->rejected_invalid + e->rejected_pingpong +
				     e->rejected_budget + e->rejected_watermark),
		a->st.last_epoch_ms);
}

static const struct pipeline_steps live_steps = {
	.ingest = live_ingest,
	.topology = live_topology,
	.may_move = live_may_move,
	.publish = live_publish,
};

void agent__epoch(struct agent *a)
{
	struct pipeline p = { .steps = &live_steps, .ctx = a, .eng = &a->eng };

	a->epoch_t0 = now_sec();
	pipeline__epoch(&p);
}
