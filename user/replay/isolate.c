// SPDX-License-Identifier: MIT
/*
 * Each policy's row of a replay runs in a child process of its own, and the
 * policy in it sees copies, never the model.
 *
 * Why a process per row: a policy is native code.  A NULL dereference, a
 * heap corrupted by writing past an array, a refusal at load or a decision
 * that never returns would otherwise end the whole replay and lose every
 * row.  Forked after the trace is open and scanned, the child loads the
 * policy (its constructors and init() are policy code too), runs the whole
 * row and leaves the result in memory shared with the parent; the parent
 * reads how the child ended and reports a crash, an abort, a refusal or a
 * time-out as that row's result, by name, while the other rows complete.
 *
 * Why copies: the score is the model's (where each page is, how often it
 * was accessed), and the page records the engine hands out are the
 * tracker's own.  A policy that writes `node`, `samples` or `heat` into
 * them would score accesses it never earned.  So each decision gets a copy
 * of the view (nodes, targets, names, page records) and writes its plan
 * into a scratch plan; after it returns, only the policy's words (the one
 * thing the ABI lets a policy write) and the plan's moves go back.
 * The copies and the plan end against a PROT_NONE guard page, so writing
 * past the last target's words or past the plan's capacity faults at
 * once instead of corrupting the heap: the row says "crashed" and why.
 *
 * The decision time limit is an interval timer armed around each decide()
 * (and around loading): SIGALRM, left at its default action, ends the
 * child, and the parent reports the time-out.  A policy that blocks or
 * catches SIGALRM defeats it; so can any code that means harm in the
 * child's address space (it could scan memory for the model): the copies
 * and the process keep honest mistakes from costing the score or the run,
 * they are no sandbox against a hostile .so.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay.h"
#include "util.h"

/* How a child ends when it could say why itself. */
enum {
	CHILD_OK = 0,
	CHILD_FAILED = 3,	/* the run failed: out of memory, an unreadable trace */
	CHILD_REFUSED = 4,	/* the policy could not be loaded */
};

/* A writable mapping whose last page is PROT_NONE: arrays end-aligned against it. */
struct guarded {
	char *base;
	size_t size;		/* usable bytes, before the guard page */
};

struct guard {
	struct cxlt_policy ops;		/* the policy's, decide and fini wrapped */
	const struct cxlt_policy *inner;
	void *inner_state;
	uint32_t limit_ms;
	struct result *res;
	struct guarded view_mem, plan_mem;
	double policy_ms;		/* the last decide()'s own time */
};

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* At least want usable bytes; 0 or -ENOMEM. */
static int guarded_reserve(struct guarded *g, size_t want)
{
	size_t ps = page_size(), size = (want + ps - 1) / ps * ps;
	char *p;

	if (size == 0)
		size = ps;
	if (g->base && size <= g->size)
		return 0;
	/* The view grows as pages are first seen: by half again, not every epoch. */
	if (g->base && size < g->size + g->size / 2)
		size = (g->size + g->size / 2 + ps - 1) / ps * ps;
	if (g->base)
		munmap(g->base, g->size + ps);
	g->base = NULL;
	p = mmap(NULL, size + ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	if (mprotect(p + size, ps, PROT_NONE)) {
		munmap(p, size + ps);
		return -ENOMEM;
	}
	g->base = p;
	g->size = size;
	return 0;
}

static void guarded_free(struct guarded *g)
{
	if (g->base)
		munmap(g->base, g->size + page_size());
	g->base = NULL;
}

static void arm(uint32_t ms)
{
	struct itimerval it = { .it_value = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 } };

	if (ms)
		setitimer(ITIMER_REAL, &it, NULL);
}

static void disarm(void)
{
	struct itimerval it = { 0 };

	setitimer(ITIMER_REAL, &it, NULL);
}

/*
 * The copy a decision works on, in g->view_mem: nodes, targets and their
 * names first, then every target's page records, the last of them ending
 * at the guard page.
 */
static int copy_view(struct guard *g, const struct cxlt_view *v, struct cxlt_view *copy)
{
	size_t head = v->nr_nodes * sizeof(struct cxlt_node) +
		      v->nr_targets * (sizeof(struct cxlt_target_view) + 16);
	size_t pages = 0, words = 0, off, woff;
	struct cxlt_target_view *tv;
	struct cxlt_node *nodes;
	char *comm;
	int err;

	head = (head + 7) & ~(size_t)7;
	for (uint32_t t = 0; t < v->nr_targets; t++) {
		pages += v->targets[t].nr_pages * sizeof(struct cxlt_page);
		words += v->targets[t].nr_pages * sizeof(uint32_t);
	}
	pages = (pages + 7) & ~(size_t)7;
	if ((err = guarded_reserve(&g->view_mem, head + pages + words + 8)))
		return err;
	nodes = (struct cxlt_node *)g->view_mem.base;
	tv = (struct cxlt_target_view *)(nodes + v->nr_nodes);
	comm = (char *)(tv + v->nr_targets);
	memcpy(nodes, v->nodes, v->nr_nodes * sizeof(*nodes));
	/* The words last: writing past the last target's faults on the guard. */
	off = g->view_mem.size - ((words + 7) & ~(size_t)7) - pages;	/* 8-byte aligned records */
	woff = g->view_mem.size - words;
	for (uint32_t t = 0; t < v->nr_targets; t++) {
		size_t n = v->targets[t].nr_pages;
		struct cxlt_page *pg = (struct cxlt_page *)(g->view_mem.base + off);

		tv[t] = v->targets[t];
		snprintf(comm + 16 * t, 16, "%s", v->targets[t].comm ? v->targets[t].comm : "");
		tv[t].comm = comm + 16 * t;
		memcpy(pg, v->targets[t].pages, n * sizeof(*pg));
		tv[t].pages = pg;
		tv[t].policy_words = (uint32_t *)(g->view_mem.base + woff);
		memcpy(tv[t].policy_words, v->targets[t].policy_words, n * sizeof(uint32_t));
		off += n * sizeof(*pg);
		woff += n * sizeof(uint32_t);
	}
	*copy = *v;
	copy->nodes = nodes;
	copy->targets = tv;
	return 0;
}

static int guard_decide(void *state, const struct cxlt_view *view, struct cxlt_plan *plan)
{
	struct guard *g = state;
	size_t bytes = (size_t)plan->cap * sizeof(struct cxlt_move);
	struct cxlt_plan mine = { .cap = plan->cap };
	struct cxlt_view copy;
	double t0;
	int err;

	if ((err = copy_view(g, view, &copy)) || (err = guarded_reserve(&g->plan_mem, bytes)))
		return err;
	mine.moves = (struct cxlt_move *)(g->plan_mem.base + g->plan_mem.size - bytes);
	/* As the engine does: slots claimed but never written read as invalid. */
	memset(mine.moves, 0xff, bytes);
	t0 = now_sec();
	arm(g->limit_ms);
	err = g->inner->decide(g->inner_state, &copy, &mine);
	disarm();
	g->policy_ms = (now_sec() - t0) * 1000;
	for (uint32_t t = 0; t < view->nr_targets; t++)
		memcpy(view->targets[t].policy_words, copy.targets[t].policy_words,
		       view->targets[t].nr_pages * sizeof(uint32_t));
	memcpy(plan->moves, mine.moves, (mine.nr < plan->cap ? mine.nr : plan->cap) * sizeof(*plan->moves));
	plan->nr = mine.nr;
	return err;
}

static void guard_fini(void *state)
{
	struct guard *g = state;

	if (g->inner->fini && g->inner_state)
		g->inner->fini(g->inner_state);
	guarded_free(&g->view_mem);
	guarded_free(&g->plan_mem);
}

/* The child: load the policy under the limit, wrap it, run the row. */
static void child(const struct run_in *tmpl, const struct row *row, const char *policy_dir,
		  uint32_t limit_ms, struct result *res)
{
	struct rlimit no_core = { 0, 0 };
	struct policy_host host;
	struct guard g = { .limit_ms = limit_ms, .res = res };
	struct run_in in = *tmpl;
	sigset_t alrm;
	int err;

	/*
	 * A crash is reported by the parent, from the signal that ended the
	 * child: no core file per bad policy, and no handler in between (a
	 * sanitizer's would turn SIGSEGV into an exit or an abort).
	 */
	setrlimit(RLIMIT_CORE, &no_core);
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	signal(SIGFPE, SIG_DFL);
	signal(SIGILL, SIG_DFL);
	signal(SIGALRM, SIG_DFL);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &alrm, NULL);
	arm(limit_ms);
	err = policy_host__load(&host, row->policy, policy_dir, row->kv, row->nr_kv);
	disarm();
	if (err)
		_exit(CHILD_REFUSED);
	g.inner = host.ops;
	g.inner_state = host.state;
	g.ops = *host.ops;
	g.ops.decide = guard_decide;
	g.ops.fini = guard_fini;
	host.ops = &g.ops;
	host.state = &g;
	in.policy = &host;
	in.guard_ms = &g.policy_ms;
	err = run_policy(&in, res);
	policy_host__unload(&host);
	_exit(err ? CHILD_FAILED : CHILD_OK);
}

int run_isolated(const struct run_in *in, const struct row *row, const char *policy_dir,
		 uint32_t limit_ms, struct result *res)
{
	double t0 = now_sec();
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "cxltier-replay: cannot fork for policy %s: %s\n", res->name, strerror(errno));
		return -errno;
	}
	if (pid == 0)
		child(in, row, policy_dir, limit_ms, res);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	res->fork_ms = (now_sec() - t0) * 1000;
	if (WIFEXITED(status)) {
		switch (WEXITSTATUS(status)) {
		case CHILD_OK:
			return 0;
		case CHILD_REFUSED:
			snprintf(res->error, sizeof(res->error), "refused at load");
			break;
		case CHILD_FAILED:
			snprintf(res->error, sizeof(res->error), "failed");
			break;
		default:
			snprintf(res->error, sizeof(res->error), "exited with status %d", WEXITSTATUS(status));
		}
	} else if (WTERMSIG(status) == SIGALRM) {
		snprintf(res->error, sizeof(res->error), "timed out: a decision took over %u ms", limit_ms);
	} else if (WTERMSIG(status) == SIGABRT) {
		snprintf(res->error, sizeof(res->error), "aborted (SIGABRT)");
	} else {
		const char *abbrev = sigabbrev_np(WTERMSIG(status));

		if (abbrev)
			snprintf(res->error, sizeof(res->error), "crashed (SIG%s)", abbrev);
		else
			snprintf(res->error, sizeof(res->error), "crashed (signal %d)", WTERMSIG(status));
	}
	fprintf(stderr, "cxltier-replay: policy %s: %s; the other rows go on\n", res->name, res->error);
	return 1;
}
