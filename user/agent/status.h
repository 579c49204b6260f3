/* SPDX-License-Identifier: MIT */
/*
 * What the agent publishes for cxltierctl: a JSON document written
 * atomically (temp file + rename) to RUN_DIR/status.json each epoch.
 */
#ifndef CXLT_STATUS_H
#define CXLT_STATUS_H

#include <stdbool.h>
#include <stdio.h>

#include "kmigrate.h"
#include "ksettings.h"
#include "mover.h"
#include "policy_host.h"
#include "sampler.h"
#include "topology.h"
#include "tracker.h"

#define CXLT_RUN_DIR "/run/cxltier"
/* One agent per machine, whatever its run dir: see take_lock() in cxltierd.c. */
#define CXLT_MACHINE_LOCK "/run/cxltierd.lock"

struct agent_state {
	const char *run_dir;
	const struct topology *topo;
	const struct tracker *tr;
	const struct sampler *s;
	const struct mover *m;
	const struct policy_host *policy;
	const struct kmigrate *km;	/* may be unloaded */
	const struct hint_gate *hint;	/* NULL unless the source is hint */
	const struct sandbox *sandbox;	/* where the policy decides */
	const char *mode;	/* "migrate" or "observe" */
	const char *mode_why;
	double started;		/* wall clock */
	uint32_t epoch_ms;
	double last_epoch_ms;	/* time the last epoch took */
	double max_epoch_ms;	/* the longest epoch since the start */
	bool paused;		/* migration paused from the control socket */
	uint64_t last_plan;	/* moves the policy planned in the last epoch */
};

struct json_object;
/* The status document (the caller puts it). */
struct json_object *status__json(const struct agent_state *st);
int status__publish(const struct agent_state *st);
/* The same facts in Prometheus text format, into a malloc'd string. */
char *status__metrics(const struct agent_state *st);
/* Writes v as a Prometheus label value, escaped (what a process named itself included). */
void status__label(FILE *f, const char *v);

#endif
