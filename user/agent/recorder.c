// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "recorder.h"
#include "util.h"

int recorder__sample(void *ctx, const struct cxlt_sample *s)
{
	struct recorder *r = ctx;

	if (!r->on)
		return 0;
	r->buf[r->n++] = *s;
	if (r->n == ARRAY_SIZE(r->buf)) {
		if (trace_writer__add(&r->w, r->buf, r->n))
			r->on = false;	/* said why once; the agent carries on */
		r->n = 0;
	}
	return 0;
}

int recorder__open(struct recorder *r, const char *path, const struct topology *topo)
{
	struct trace_node nodes[TRACE_MAX_NODES];
	uint32_t nn = 0;
	int err;

	for (int i = 0; i < topo->nr_nodes && nn < TRACE_MAX_NODES; i++) {
		const struct topo_node *n = &topo->nodes[i];

		if (n->role == ROLE_NONE)
			continue;
		nodes[nn++] = (struct trace_node){
			.id = n->id, .role = n->role == ROLE_FAST ? CXLT_NODE_FAST : CXLT_NODE_SLOW,
			.tier = n->tier, .capacity_pages = n->total_pages,
		};
	}
	err = trace_writer__open(&r->w, path, topo->page_size, nodes, nn);
	r->on = !err;
	return err;
}

/*
 * Each target's resident memory and its nodes as its first sweep found them
 * (before the first move: that sweep is whole in one epoch's ingest, see
 * tracker.first_sweep_whole): where a replay starts (docs/trace-format.md,
 * resident runs).
 * Again, up to 3 times, after a later sweep that found it more than twice
 * as large: the replay adds the pages it lacks then.
 */
void recorder__targets(struct recorder *r, const struct tracker *tr)
{
	struct timespec ts;

	if (!r->on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);	/* bpf_ktime_get_ns()'s clock */
	for (uint32_t i = 0; i < tr->nr_targets && r->on; i++) {
		const struct target *t = &tr->targets[i];
		uint64_t pages = tracker__target_pages(t), runs = r->w.runs;
		uint32_t k = 0;

		if (t->gone || !t->sweep_gen)
			continue;
		while (k < r->nr_told && (r->told[k].pid != t->pid ||
					  r->told[k].start_time != t->start_time))
			k++;
		/*
		 * Told already: again only if a later sweep found it much larger
		 * (an exec after the first sweep, a heap that filled), a few times.
		 */
		if (k < r->nr_told && (t->sweep_gen == r->told[k].gen || r->told[k].times >= 4 ||
				       pages <= 2 * r->told[k].pages + 64))
			continue;
		if (k == r->nr_told) {
			if (r->nr_told == r->cap_told) {
				uint32_t cap = r->cap_told ? 2 * r->cap_told : 16;
				void *p = realloc(r->told, cap * sizeof(*r->told));

				if (!p)
					return;
				r->told = p;
				r->cap_told = cap;
			}
			r->told[k] = (typeof(r->told[k])){ .pid = t->pid, .start_time = t->start_time };
			r->nr_told++;
		}
		r->told[k].pages = pages;
		r->told[k].gen = t->sweep_gen;
		r->told[k].times++;
		/* The samples before it first, so the file stays in time order. */
		if ((r->n && trace_writer__add(&r->w, r->buf, r->n)) ||
		    trace_writer__add_target(&r->w, (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, t,
					     tr))
			r->on = false;
		r->n = 0;
		if (r->on)
			pr_info("recorded the resident memory of pid %d: %llu pages in %llu runs",
				t->pid, (unsigned long long)pages,
				(unsigned long long)(r->w.runs - runs));
	}
}

/*
 * The epoch has taken its samples: the ring's samples so far, then a mark,
 * so a replay can cut its epochs where this agent did.
 */
void recorder__epoch(struct recorder *r, struct sampler *s, uint64_t epoch)
{
	struct timespec ts;

	if (!r->on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sampler__ring_consume(s);
	if ((r->n && trace_writer__add(&r->w, r->buf, r->n)) ||
	    trace_writer__add_mark(&r->w, (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, epoch))
		r->on = false;
	r->n = 0;
}

/* Returns the first write error: a trace cut short by a full disk fails the run. */
int recorder__close(struct recorder *r, struct sampler *s)
{
	uint64_t stats[CXLT_NR_STATS] = { 0 };
	int err;

	if (!r->w.open)
		return 0;
	sampler__ring_consume(s);
	if (r->n && r->on)
		trace_writer__add(&r->w, r->buf, r->n);
	r->n = 0;
	if (s->skel)
		sampler__read_stats(s->stats_fd, stats);
	err = trace_writer__close(&r->w);
	if (!err)
		pr_info("recorded %llu samples to %s; %llu dropped because the ring buffer was full%s; the resident memory of %u targets in %llu runs",
			(unsigned long long)(r->w.samples - r->w.runs - r->w.marks), r->w.path,
			(unsigned long long)stats[CXLT_STAT_RING_DROPPED],
			stats[CXLT_STAT_RING_DROPPED] ? " (shorter epochs drain it more often)" : "",
			r->nr_told, (unsigned long long)r->w.runs);
	else
		pr_err("recording failed: %s; %s holds the %llu samples written before, and replays",
		       strerror(-err), r->w.path, (unsigned long long)r->w.samples);
	free(r->told);
	r->told = NULL;
	r->nr_told = r->cap_told = 0;
	return err;
}
