/* SPDX-License-Identifier: MIT */
/*
 * One epoch's decision, shared by the live agent and the offline replay:
 * build the policy's view over the tracker's records, ask the policy for a
 * plan within the budget, and hand the plan to the mover.  Replay differs
 * only in what stands behind move_pages (a tier model) and in its clock.
 */
#ifndef CXLT_ENGINE_H
#define CXLT_ENGINE_H

#include <stdbool.h>

#include "mover.h"
#include "policy_host.h"
#include "sandbox.h"
#include "topology.h"
#include "tracker.h"

struct engine {
	struct topology *topo;
	struct tracker *tr;
	struct mover *m;
	struct policy_host *policy;
	struct sandbox *sandbox;	/* the live agent: decide() in the policy's own process */
	uint32_t epoch_ms;
	bool quiet;		/* replay: no per-epoch log lines */
	uint32_t source_flags;	/* CXLT_SOURCE_*, for the view */
	uint64_t last_plan;	/* moves the policy planned */
	double last_decide_ms;	/* time the policy's decide() took */
	/* scratch, grown on demand */
	struct cxlt_node nodes[TOPO_MAX_NODES];
	struct cxlt_target_view *views;
	uint32_t views_cap;
	struct cxlt_move *moves;
	uint32_t moves_cap;
};

/* now: seconds on the clock that refills the mover's budget. */
int engine__decide_and_move(struct engine *e, double now);
void engine__free(struct engine *e);

#endif
