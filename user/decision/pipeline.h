/* SPDX-License-Identifier: MIT */
/*
 * One epoch, in data-path order, for the live agent and the offline replay
 * alike:
 *
 *   ingest    targets and sources into the tracker (drain, scans, queries)
 *   account   what the epoch's samples mean before anything moves (replay:
 *             the score; live: nothing)
 *   topology  follow the nodes and their free memory
 *   age       decay heat, count idle epochs
 *   decide    the policy's plan within the budget, carried out by the mover
 *   end       close the tracker's epoch
 *   publish   status, log, the caller's records of the epoch
 *
 * The caller supplies the steps that differ (struct pipeline_steps, each
 * may be NULL) and the platform behind move_pages (in the tracker and the
 * mover); the order and the shared steps live here alone.
 */
#ifndef CXLT_PIPELINE_H
#define CXLT_PIPELINE_H

#include <stdbool.h>

#include "engine.h"

struct pipeline_steps {
	int (*ingest)(void *ctx);
	int (*account)(void *ctx);
	void (*topology)(void *ctx);
	/* Whether this epoch may move pages (observe mode, paused, no target: no). */
	bool (*may_move)(void *ctx);
	void (*publish)(void *ctx);
};

struct pipeline {
	const struct pipeline_steps *steps;
	void *ctx;
	struct engine *eng;	/* its tracker, mover, topology and policy */
};

/*
 * Runs one epoch; the mover's platform gives the clock that refills the
 * migration budget.  Returns 0; the error of ingest or account, where the epoch
 * stops; or the error of decide and move, logged, after the epoch has
 * ended and been published (the agent goes on, the replay stops).
 */
int pipeline__epoch(struct pipeline *p);

#endif
