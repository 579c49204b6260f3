/* SPDX-License-Identifier: MIT */
/*
 * The running agent, shared by its three parts: cxltierd.c (set-up, the
 * loop, tear-down), live.c (its steps of the epoch pipeline) and
 * requests.c (what SIGHUP and the control socket ask of it).
 */
#ifndef CXLT_AGENT_H
#define CXLT_AGENT_H

#include <stdbool.h>
#include <stdint.h>

#include "agent_settings.h"
#include "control.h"
#include "engine.h"
#include "kmigrate.h"
#include "ksettings.h"
#include "marks.h"
#include "mover.h"
#include "policy_host.h"
#include "recorder.h"
#include "sampler.h"
#include "sandbox.h"
#include "shares.h"
#include "status.h"
#include "topology.h"
#include "tracker.h"

/* Targets whose scanner passes the epochs follow (hint source); with more, the clock. */
#define PASS_WATCH_MAX 64

struct agent {
	struct config *cfg;
	double started_at;	/* monotonic seconds at main(): the set-up's length is logged */
	struct topology topo;
	struct tracker tr;
	struct sampler s;
	struct mover m;
	struct policy_host policy;
	struct ksettings kset;
	struct marks marks;
	struct kmigrate km;
	char damon_state[600];	/* our kdamond's settings, for a later start to recover */
	struct agent_state st;
	bool migrate;
	struct engine eng;
	struct control ctl;
	uint64_t log_every;
	double epoch_t0;	/* when the epoch in flight began */
	int drained;		/* heat entries the epoch in flight took in */
	int argc;		/* the command line, read again by a reload */
	char **argv;
	struct recorder rec;
	struct sandbox sandbox;	/* where the policy decides */
	struct fast_shares shares;	/* --fast-share */
	int lock_fd, sfd;	/* the machine lock, the signals; -1: not yet */
	bool run_dir_ok;
	char kset_state[600];
	/* Hint source: the targets' scanner pass counts as the last epoch began (epoch_due()). */
	struct pass_seq {
		pid_t pid;
		uint32_t seq;
	} pass_seq[PASS_WATCH_MAX];
	int nr_pass_seq;	/* 0: the epochs keep to the clock */
	bool marks_failed;	/* marks__open() failed: no budget */
};

/* Migrate or observe, from the topology and the flags; says which and why. */
void agent__set_mode(struct agent *a);
/* One epoch of the pipeline (pipeline.h) with the agent's steps. */
void agent__epoch(struct agent *a);

/*
 * The loaded policy's own process, where it runs init and then decide();
 * 0, or -errno with why logged (a->sandbox.init_refused: init failed,
 * crashed or took too long; else the process could not be made).
 */
int agent__start_sandbox(struct agent *a);
/* The fast-tier shares of a setting (validated with the settings); logs them. */
void agent__set_shares(struct agent *a, const char *setting);
/* SIGHUP and `cxltierctl reload`: the settings read again; 0, or -EINVAL and nothing changed. */
int agent__reload(struct agent *a);
/* A control socket request, vetted by control.c; the reply (malloc'd JSON). */
char *agent__handle_request(void *ctx, const struct control_req *req);

#endif
