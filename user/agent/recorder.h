/* SPDX-License-Identifier: MIT */
/*
 * cxltierd --record: every sample the sources report, each target's
 * resident memory as its sweeps find it, and the epochs' marks, written
 * as a trace (docs/trace-format.md) that cxltier-replay runs policies over.
 * Samples are buffered and written in blocks; a write error stops the
 * recording, said once, and the agent carries on.
 */
#ifndef CXLT_RECORDER_H
#define CXLT_RECORDER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampler.h"
#include "topology.h"
#include "trace.h"
#include "tracker.h"

struct recorder {
	struct trace_writer w;
	struct cxlt_sample buf[4096];
	uint32_t n;
	bool on;
	/* Targets whose resident memory is in the trace: (pid, start time), as of which sweep. */
	struct {
		pid_t pid;
		uint64_t start_time;
		uint64_t pages;		/* resident at the last time told */
		uint32_t gen;		/* its sweep_gen then */
		uint32_t times;
	} *told;
	uint32_t nr_told, cap_told;
};

/* Opens path for the nodes of topo; -errno with a message. */
int recorder__open(struct recorder *r, const char *path, const struct topology *topo);
/* The sampler's on_sample callback (ctx: the recorder). */
int recorder__sample(void *ctx, const struct cxlt_sample *s);
/*
 * Each target's resident memory and its nodes as its first sweep found them;
 * again, up to 3 times, after a sweep that found it more than twice as large.
 */
void recorder__targets(struct recorder *r, const struct tracker *tr);
/* The epoch has taken its samples: the ring's so far, then the epoch's mark. */
void recorder__epoch(struct recorder *r, struct sampler *s, uint64_t epoch);
/* Flushes and closes; the first write error (a trace cut short fails the run). */
int recorder__close(struct recorder *r, struct sampler *s);

#endif
