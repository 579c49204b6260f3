// SPDX-License-Identifier: MIT
/* What the sources cannot see of a target (issue 18): see sight.h. */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sight.h"

/*
 * Whether the policy field of a numa_maps line ("default", "prefer:1",
 * "bind=static:0", "prefer (many):0-1", "interleave:0-1", "local", ...)
 * keeps the NUMA scanner away.  Only the default policy and bind with
 * MPOL_F_NUMA_BALANCING ("bind=balancing:1", "bind=static|balancing:1")
 * carry MPOL_F_MOF, which task_numa_work() asks of a VMA.
 */
static bool policy_skipped(const char *pol)
{
	size_t len = strcspn(pol, " \n");

	if (len == 7 && !strncmp(pol, "default", 7))
		return false;
	if (!strncmp(pol, "bind", 4)) {
		const char *colon = memchr(pol, ':', len);
		size_t flags = colon ? (size_t)(colon - pol) : len;

		for (size_t i = 4; i + 9 <= flags; i++)
			if (!strncmp(pol + i, "balancing", 9))
				return false;
	}
	return true;
}

int sight__census_file(FILE *f, unsigned page_kb, struct mem_census *c)
{
	char line[4096];

	memset(c, 0, sizeof(*c));
	if (!page_kb)
		page_kb = 4;
	while (fgets(line, sizeof(line), f)) {
		char *pol = strchr(line, ' '), *p;
		unsigned long long n = 0, kb = page_kb;
		bool huge = false;

		if (!pol)
			continue;
		pol++;
		/* Fields after the policy: "N0=12", "kernelpagesize_kB=2048", "huge", ... */
		for (p = strchr(pol, ' '); p; p = strchr(p + 1, ' ')) {
			char *w = p + 1;

			if (w[0] == 'N' && isdigit((unsigned char)w[1]) && strchr(w, '='))
				n += strtoull(strchr(w, '=') + 1, NULL, 10);
			else if (!strncmp(w, "kernelpagesize_kB=", 18))
				kb = strtoull(w + 18, NULL, 10);
			else if (!strncmp(w, "huge", 4) && (w[4] == ' ' || w[4] == '\n' || !w[4]))
				huge = true;
		}
		/* N counts are of the mapping's pages: base pages, or hugetlb pages. */
		n = kb > page_kb ? n * (kb / page_kb) : n;
		c->resident += n;
		if (!n)
			continue;
		if (huge)
			c->hugetlb += n;
		else if (policy_skipped(pol)) {
			if (!c->policy)
				snprintf(c->policy_name, sizeof(c->policy_name), "%.*s",
					 (int)strcspn(pol, " \n"), pol);
			c->policy += n;
		}
	}
	return ferror(f) ? -EIO : 0;
}

int sight__census(pid_t pid, struct mem_census *c)
{
	char path[64];
	long psz = sysconf(_SC_PAGESIZE);
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/numa_maps", pid);
	if (!(f = fopen(path, "re")))
		return -errno;
	err = sight__census_file(f, psz > 0 ? (unsigned)(psz / 1024) : 4, c);
	fclose(f);
	return err;
}

/*
 * The census off the epoch's path: reading numa_maps walks a process's page
 * tables, about 100 ms for 16 GiB of 4 KiB pages, so a thread reads it and
 * the epoch takes what is done.  One slot per process asked.
 */
#define SIGHT_SLOTS 256
enum slot_state { SLOT_FREE, SLOT_ASKED, SLOT_RUNNING, SLOT_DONE };

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t th;
	bool started, stopping;
	struct {
		pid_t pid;
		enum slot_state state;
		int err;
		struct mem_census c;
	} slot[SIGHT_SLOTS];
} worker = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* The slot of pid in state, or (any_pid) the first in state: an index or -1. */
static int find_slot(pid_t pid, bool any_pid, enum slot_state state)
{
	for (int i = 0; i < SIGHT_SLOTS; i++)
		if (worker.slot[i].state == state && (any_pid || worker.slot[i].pid == pid))
			return i;
	return -1;
}

static void *worker_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&worker.mu);
	while (!worker.stopping) {
		struct mem_census c;
		int i = find_slot(0, true, SLOT_ASKED), err;
		pid_t pid;

		if (i < 0) {
			pthread_cond_wait(&worker.cv, &worker.mu);
			continue;
		}
		worker.slot[i].state = SLOT_RUNNING;
		pid = worker.slot[i].pid;
		pthread_mutex_unlock(&worker.mu);
		err = sight__census(pid, &c);
		pthread_mutex_lock(&worker.mu);
		/* Forgotten meanwhile: the slot is someone else's or free. */
		if (worker.slot[i].state == SLOT_RUNNING && worker.slot[i].pid == pid) {
			worker.slot[i].c = c;
			worker.slot[i].err = err;
			worker.slot[i].state = SLOT_DONE;
		}
	}
	pthread_mutex_unlock(&worker.mu);
	return NULL;
}

int sight__ask(pid_t pid)
{
	int i, err = 0;

	pthread_mutex_lock(&worker.mu);
	if (!worker.started) {
		if ((err = -pthread_create(&worker.th, NULL, worker_main, NULL)))
			goto out;
		worker.started = true;
	}
	for (enum slot_state st = SLOT_ASKED; st <= SLOT_DONE; st++)
		if (find_slot(pid, false, st) >= 0)
			goto out;	/* on its way already */
	if ((i = find_slot(0, true, SLOT_FREE)) < 0) {
		err = -EAGAIN;
		goto out;
	}
	worker.slot[i].pid = pid;
	worker.slot[i].state = SLOT_ASKED;
	pthread_cond_signal(&worker.cv);
out:
	pthread_mutex_unlock(&worker.mu);
	return err;
}

int sight__take(pid_t pid, struct mem_census *c)
{
	int i, ret = 0;

	pthread_mutex_lock(&worker.mu);
	if ((i = find_slot(pid, false, SLOT_DONE)) >= 0) {
		*c = worker.slot[i].c;
		ret = worker.slot[i].err == -ENOENT ? -ESRCH : worker.slot[i].err ? worker.slot[i].err : 1;
		worker.slot[i].state = SLOT_FREE;
	} else if (find_slot(pid, false, SLOT_ASKED) < 0 && find_slot(pid, false, SLOT_RUNNING) < 0) {
		ret = -ENOENT;
	}
	pthread_mutex_unlock(&worker.mu);
	return ret;
}

void sight__forget(pid_t pid)
{
	pthread_mutex_lock(&worker.mu);
	for (int i = 0; i < SIGHT_SLOTS; i++)
		if (worker.slot[i].state != SLOT_FREE && worker.slot[i].pid == pid)
			worker.slot[i].state = SLOT_FREE;
	pthread_mutex_unlock(&worker.mu);
}

void sight__stop(void)
{
	pthread_mutex_lock(&worker.mu);
	worker.stopping = true;
	pthread_cond_signal(&worker.cv);
	pthread_mutex_unlock(&worker.mu);
	if (worker.started)
		pthread_join(worker.th, NULL);
	pthread_mutex_lock(&worker.mu);
	worker.started = worker.stopping = false;
	memset(worker.slot, 0, sizeof(worker.slot));
	pthread_mutex_unlock(&worker.mu);
}

/* The first source, in auto's order, that this machine has and that sees everything. */
static const char *better_source(const struct mem_census *c, const struct sight_env *env)
{
	if (env->pmu)
		return "pmu";
	if (env->damon)
		return "damon";
	if (env->hint && sources__sees_all(SIGHT_SCANNED, c->policy + c->hugetlb, 0))
		return "hint";
	return NULL;
}

static const char *why_better(const char *src)
{
	return !strcmp(src, "pmu") ? "hardware samples see every page" :
	       !strcmp(src, "damon") ? "DAMON reads accessed bits whatever the memory policy" :
	       "the kernel's NUMA scanner marks pages again and again";
}

void sight__judge(const struct mem_census *c, const struct source_def *const *att, int n,
		  const struct sight_env *env, struct unseen *u)
{
	enum source_sight best = SIGHT_FIRST_TOUCH;
	const char *name = n ? att[0]->name : "none";
	uint64_t skipped = c->policy + c->hugetlb, before = u->resident_at_add;

	for (int i = 0; i < n; i++)
		if (att[i] && att[i]->sight < best) {
			best = att[i]->sight;
			name = att[i]->name;
		}
	u->resident = c->resident;
	u->pages = 0;
	u->source = NULL;
	u->first_touch = false;
	u->reason[0] = u->suggestion[0] = '\0';
	if (best == SIGHT_ALL)
		return;
	if (before > c->resident)
		before = c->resident;
	if (best == SIGHT_SCANNED || env->scanner_on) {
		/* first touches and, with the scanner on, its hint faults */
		u->pages = best == SIGHT_SCANNED ? skipped : skipped < before ? skipped : before;
		if (!u->pages)
			return;
		if (c->policy && c->hugetlb)
			snprintf(u->reason, sizeof(u->reason),
				 "%llu pages under a %s memory policy and %llu in hugetlb mappings, which the kernel's NUMA scanner skips",
				 (unsigned long long)c->policy, c->policy_name,
				 (unsigned long long)c->hugetlb);
		else if (c->policy)
			snprintf(u->reason, sizeof(u->reason),
				 "under a %s memory policy (bind/preferred), which the kernel's NUMA scanner skips: no hint faults",
				 c->policy_name);
		else
			snprintf(u->reason, sizeof(u->reason),
				 "in hugetlb mappings, which the kernel's NUMA scanner skips: no hint faults");
	} else {
		if (!(u->pages = before))
			return;
		u->first_touch = true;
		snprintf(u->reason, sizeof(u->reason),
			 "resident before the agent adopted the process: source %s sees first touches only",
			 name);
	}
	u->source = better_source(c, env);
	if (u->source)
		snprintf(u->suggestion, sizeof(u->suggestion), "use --source %s (%s)", u->source,
			 why_better(u->source));
	else
		snprintf(u->suggestion, sizeof(u->suggestion),
			 "no source on this machine sees them (no DAMON in this kernel, no memory-sampling PMU)%s",
			 skipped ? ": start the process without a bind/preferred policy (or bind with MPOL_F_NUMA_BALANCING), or use a kernel with DAMON (CONFIG_DAMON_VADDR)" : "");
}
