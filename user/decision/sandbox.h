/* SPDX-License-Identifier: MIT */
/*
 * A live policy decides in a child process of its own: the agent copies the
 * view into memory it shares with the child, wakes it through a pipe and
 * waits at most the decision limit.  The child sees a copy (writing node,
 * heat or samples changes nothing the agent trusts), runs under a seccomp
 * filter (read its pipe, write its pipe and stderr, manage memory, exit)
 * as nobody with every other file descriptor closed, and dies with the
 * agent.  A crash, an abort or an overrun ends the child, never the agent:
 * the sandbox says why, and no page moves until another policy is loaded.
 * Only the plan's moves and the policy's words come back, checked.
 *
 * init() runs in the child too, before its first decision, unless the host
 * ran it already (policy_host__load(), the replay and the tests): its crash,
 * failure or overrun fails sandbox__start().  Only the object's ELF
 * constructors run in the agent (dlopen): the .so comes only from a trusted
 * path.
 */
#ifndef CXLT_SANDBOX_H
#define CXLT_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy_host.h"

struct sandbox {
	pid_t pid;		/* the child, 0: none */
	int to_child, from_child;
	int memfd;
	char *shm;		/* the shared mapping, same address in both */
	size_t size;		/* bytes the memfd holds now */
	double limit_ms;	/* longest decision */
	char failed[256];	/* why the child ended, "" while it serves */
	bool init_refused;	/* init failed, crashed or overran: the policy, not the machine */
	bool reported;		/* the failure was logged */
	uint64_t decisions;
	double last_ms;		/* the last decision, copies included */
	/* Where copy_in put each target's pages and the plan's moves. */
	uint32_t **words_at;	/* each target's policy_words in the shared copy */
	uint32_t words_cap;
	struct cxlt_move *moves_at;
};

/*
 * Starts a child deciding for the loaded policy h (the child inherits the
 * loaded object, and its state when h ran init), and waits at most
 * limit_ms for its init.  0 or -errno; a sandbox that is not started has
 * pid 0 and failed set ("init failed: ...", "init: crashed: ...").
 */
int sandbox__start(struct sandbox *sb, struct policy_host *h, double limit_ms);
/*
 * One decision on a copy of view into plan (plan->cap moves at most).
 * Returns decide()'s result, or -ECHILD once the child has failed (crash,
 * abort, overrun, or it was never started): sb->failed says why.
 */
int sandbox__decide(struct sandbox *sb, const struct cxlt_view *view, struct cxlt_plan *plan);
/* Ends the child (if any) and frees the mapping. */
void sandbox__stop(struct sandbox *sb);

#endif
