// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "targets.h"
#include "util.h"

#define PF_KTHREAD 0x00200000

int proc_stat(pid_t pid, uint64_t *start_time, char comm[16], int *is_kthread, pid_t *ppid)
{
	char path[64], buf[1024], *p, *close_paren;
	unsigned long flags = 0;
	int parent = 0;
	unsigned long long start = 0;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if ((err = read_text(NULL, path, buf, sizeof(buf))))
		return err == -ENOENT ? -ESRCH : err;
	/* comm may hold spaces and parentheses: it ends at the last ')'. */
	p = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!p || !close_paren || close_paren < p)
		return -EINVAL;
	if (comm)
		snprintf(comm, 16, "%.*s", (int)(close_paren - p - 1), p + 1);
	/* Fields after comm: 3 state, 4 ppid ... 9 flags ... 22 starttime. */
	if (sscanf(close_paren + 2, "%*c %d %*d %*d %*d %*d %lu %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
		   &parent, &flags, &start) != 3)
		return -EINVAL;
	if (ppid)
		*ppid = parent;
	if (start_time)
		*start_time = start;
	if (is_kthread)
		*is_kthread = !!(flags & PF_KTHREAD);
	return 0;
}

/* The state letter of /proc/PID/stat (R, S, Z...), or 0. */
static char proc_state(pid_t pid)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_text(NULL, path, buf, sizeof(buf)) || !(p = strrchr(buf, ')')) || !p[1] || !p[2])
		return 0;
	return p[2];
}

/* Undoes the octal escapes (\040 for a space) of a /proc/mounts field, in place. */
static void unescape_mount_field(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/* Whether mount point M holds path P: M is P or a whole-component prefix of it. */
static size_t mount_holds(const char *m, const char *p)
{
	size_t n = strlen(m);

	if (n == 1 && m[0] == '/')
		return 1;
	return !strncmp(m, p, n) && (p[n] == '/' || p[n] == '\0') ? n : 0;
}

int cgroup_v2_check(const char *mounts, const char *dir, char *why, size_t whylen)
{
	char line[4096], best_type[64] = "", best_at[4096] = "", v2_at[4096] = "";
	size_t best = 0;
	FILE *f = fopen(mounts, "re");

	if (!f) {
		int err = -errno;

		snprintf(why, whylen, "cannot read %s: %s", mounts, strerror(-err));
		return err;
	}
	while (fgets(line, sizeof(line), f)) {
		char at[4096], type[64];
		size_t n;

		if (sscanf(line, "%*s %4095s %63s", at, type) != 2)
			continue;
		unescape_mount_field(at);
		if (!strcmp(type, "cgroup2") && !v2_at[0])
			snprintf(v2_at, sizeof(v2_at), "%s", at);
		/* >=: of mounts stacked on one point, the last one is what the path sees. */
		if ((n = mount_holds(at, dir)) && n >= best) {
			best = n;
			snprintf(best_type, sizeof(best_type), "%s", type);
			snprintf(best_at, sizeof(best_at), "%s", at);
		}
	}
	fclose(f);
	if (!strcmp(best_type, "cgroup2"))
		return 0;
	if (!strcmp(best_type, "cgroup"))
		snprintf(why, whylen, "%s is in a cgroup v1 hierarchy (mounted at %s)", dir, best_at);
	else
		snprintf(why, whylen, "%s is not in a cgroup file system (it is on %s, mounted at %s)",
			 dir, best_type[0] ? best_type : "no known mount", best_at[0] ? best_at : "?");
	if (v2_at[0])
		snprintf(why + strlen(why), whylen - strlen(why),
			 "; the cgroup v2 hierarchy is mounted at %s: name a directory under it", v2_at);
	else
		snprintf(why + strlen(why), whylen - strlen(why),
			 "; this machine has no cgroup v2 hierarchy mounted, and the BPF filter knows only "
			 "cgroup v2 ids: use --comm or --pid instead");
	return -EINVAL;
}

int targets__parse_users(struct target_specs *ts, const char *list)
{
	char buf[1024], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		struct passwd pw, *found = NULL;
		char pwbuf[4096];
		int id;

		if (ts->nr_users == MAX_SPECS) {
			pr_err("--target-user '%s': at most %d users", list, MAX_SPECS);
			return -EINVAL;
		}
		if (!parse_int(tok, 0, INT_MAX, &id)) {
			ts->users[ts->nr_users++] = (uid_t)id;
			continue;
		}
		if (getpwnam_r(tok, &pw, pwbuf, sizeof(pwbuf), &found) || !found) {
			pr_err("--target-user '%s': no user named '%s' here (give a name or a numeric id)",
			       list, tok);
			return -EINVAL;
		}
		ts->users[ts->nr_users++] = found->pw_uid;
	}
	if (!ts->nr_users) {
		pr_err("--target-user '%s': no user in the list", list);
		return -EINVAL;
	}
	return 0;
}

/* The real user id of a process, from /proc/PID/status; -errno. */
static int proc_uid(pid_t pid, uid_t *uid)
{
	char path[64], line[256];
	unsigned long id;
	int err = -EINVAL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!(f = fopen(path, "re")))
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %lu", &id) == 1) {
			*uid = (uid_t)id;
			err = 0;
			break;
		}
	fclose(f);
	return err;
}

/*
 * Whether comm and cgroup may adopt PID: --target-user lists its owner, or
 * lists no one.  A refusal is logged once per process, not every epoch.
 */
static bool owner_allowed(struct target_specs *ts, pid_t pid, uint64_t start, const char *comm)
{
	uid_t uid = (uid_t)-1;

	if (!ts->nr_users)
		return true;
	if (proc_uid(pid, &uid))
		return false;
	for (int i = 0; i < ts->nr_users; i++)
		if (ts->users[i] == uid)
			return true;
	for (unsigned i = 0; i < ts->nr_refused && i < 64; i++)
		if (ts->refused[i].pid == pid && ts->refused[i].start == start)
			return false;
	ts->refused[ts->nr_refused % 64].pid = pid;
	ts->refused[ts->nr_refused % 64].start = start;
	ts->nr_refused++;
	pr_info("pid %d (%s) matches but belongs to uid %u, not a --target-user: left alone",
		pid, comm, (unsigned)uid);
	return false;
}

/* Whether the kernel's NUMA scanner runs now: the fault hook then sees its hint faults too. */
static bool scanner_on(void)
{
	char buf[16];

	return !read_text(NULL, "/proc/sys/kernel/numa_balancing", buf, sizeof(buf)) &&
	       atoi(buf) != 0;
}

/*
 * What the sources miss of target T (issue 18; the judgement is sight.c's),
 * from its census, read off the epoch by sight.c's thread: asked when it is
 * added and every SIGHT_EPOCHS epochs, judged when it is in.  Said in the
 * log at the first judgement with pages unseen, and when that changes from
 * none to some or back.
 */
static void check_sight(struct target *t, const struct sampler *s, uint64_t epoch)
{
	struct sight_env env = s->env;
	struct mem_census c;
	uint64_t was = t->unseen.pages;
	bool first = !t->unseen.judged;
	int ret = sight__take(t->pid, &c);

	if (ret == -ENOENT && epoch >= t->unseen.epoch + SIGHT_EPOCHS) {
		if (!sight__ask(t->pid))
			t->unseen.epoch = epoch;
		return;
	}
	if (ret <= 0)
		return;
	if (first)
		t->unseen.resident_at_add = c.resident;
	t->unseen.judged = true;
	env.scanner_on = scanner_on();
	sight__judge(&c, s->attached, s->nr_attached, &env, &t->unseen);
	if (first ? !t->unseen.pages : !was == !t->unseen.pages)
		return;
	if (!t->unseen.pages) {
		pr_info("target pid %d (%s): the source sees all of its memory now", t->pid, t->comm);
		return;
	}
	/*
	 * A first-touch source adopting a process just after it started is
	 * routine (tests/vm/exit), and its later first touches are still seen:
	 * info, and only past a shell's worth of pages.  A policy is a warning.
	 */
	if (t->unseen.first_touch && t->unseen.pages < 1024)
		return;
	log_msg(t->unseen.first_touch ? LOG_INFO : LOG_WARN,
		"target pid %d (%s): %llu of its %llu resident pages are unseen by source %s: %s; %s",
		t->pid, t->comm, (unsigned long long)t->unseen.pages,
		(unsigned long long)c.resident, s->source, t->unseen.reason, t->unseen.suggestion);
}

static int add(struct target_specs *ts, struct tracker *tr, struct sampler *s, pid_t pid,
	       enum target_origin origin, const char *why)
{
	char comm[16];
	uint64_t start;
	int kthread, idx, err;
	pid_t parent;

	if (pid == getpid())
		return 0;
	/* Nor the agent's own children: the process its policy decides in. */
	if (proc_stat(pid, &start, comm, &kthread, &parent) || kthread || parent == getpid())
		return 0;
	if (origin != ORIGIN_PID && !owner_allowed(ts, pid, start, comm))
		return 0;
	idx = tracker__add_target(tr, pid, start, comm, origin);
	if (idx == -ENOSPC)
		tr->refused_budget++;
	if (idx < 0)
		return idx;
	if (s && (err = sampler__add_target(s, pid))) {
		pr_warn("cannot add pid %d to the BPF target map: %s", pid, strerror(-err));
		tracker__remove_target(tr, idx);
		return err;
	}
	pr_info("target pid %d (%s) added: %s", pid, comm, why);
	if (s && !sight__ask(pid))
		tr->targets[idx].unseen.epoch = tr->epoch;
	return 1;
}

/* Adds PID's census to c, once per process: a pid named twice counts once. */
static void census_add(pid_t pid, pid_t *seen, int *nr, int max, struct mem_census *c,
		       char *who, size_t len)
{
	struct mem_census one;
	char comm[16];
	int kthread;

	for (int i = 0; i < *nr; i++)
		if (seen[i] == pid)
			return;
	if (*nr == max || pid == getpid() || proc_stat(pid, NULL, comm, &kthread, NULL) || kthread ||
	    sight__census(pid, &one))
		return;
	seen[(*nr)++] = pid;
	c->resident += one.resident;
	c->hugetlb += one.hugetlb;
	if (one.policy && !c->policy)
		snprintf(c->policy_name, sizeof(c->policy_name), "%s", one.policy_name);
	c->policy += one.policy;
	if (*nr == 1)
		snprintf(who, len, "pid %d (%s)", pid, comm);
	else
		snprintf(who, len, "%d target processes", *nr);
}

void targets__census(const struct target_specs *ts, struct mem_census *c, char *who, size_t len)
{
	pid_t seen[256];
	int nr = 0, pid;
	struct dirent *de;
	DIR *d;

	memset(c, 0, sizeof(*c));
	snprintf(who, len, "the targets");
	for (int i = 0; i < ts->nr_pids; i++)
		census_add(ts->pids[i], seen, &nr, 256, c, who, len);
	for (int i = 0; i < ts->nr_cgroups; i++) {
		char path[4096];
		FILE *f;

		snprintf(path, sizeof(path), "%s/cgroup.procs", ts->cgroups[i]);
		if (!(f = fopen(path, "re")))
			continue;
		while (fscanf(f, "%d", &pid) == 1)
			census_add(pid, seen, &nr, 256, c, who, len);
		fclose(f);
	}
	if (!ts->nr_comms || !(d = opendir("/proc")))
		return;
	while ((de = readdir(d))) {
		char comm[16];

		if (!isdigit((unsigned char)de->d_name[0]) ||
		    proc_stat(atoi(de->d_name), NULL, comm, NULL, NULL))
			continue;
		for (int i = 0; i < ts->nr_comms; i++)
			if (!strcmp(comm, ts->comms[i]))
				census_add(atoi(de->d_name), seen, &nr, 256, c, who, len);
	}
	closedir(d);
}

int targets__init(struct target_specs *ts, struct sampler *s)
{
	(void)s;
	for (int i = 0; i < ts->nr_pids; i++) {
		int kthread, err = proc_stat(ts->pids[i], NULL, NULL, &kthread, NULL);

		if (err) {
			pr_err("--pid %d: no such process", ts->pids[i]);
			return -ESRCH;
		}
		if (kthread) {
			pr_err("--pid %d: a kernel thread has no user memory to tier", ts->pids[i]);
			return -EINVAL;
		}
		if (proc_state(ts->pids[i]) == 'Z') {
			pr_err("--pid %d: a zombie (it exited; its parent has not reaped it): no memory to tier",
			       ts->pids[i]);
			return -ESRCH;
		}
		if (ts->pids[i] == getpid()) {
			pr_err("--pid %d: that is cxltierd itself", ts->pids[i]);
			return -EINVAL;
		}
	}
	for (int i = 0; i < ts->nr_comms; i++) {
		if (!*ts->comms[i] || strlen(ts->comms[i]) > 15) {
			pr_err("--comm '%s': a command name has 1 to 15 characters (as in /proc/PID/comm)",
			       ts->comms[i]);
			return -EINVAL;
		}
	}
	for (int i = 0; i < ts->nr_cgroups; i++) {
		char dir[PATH_MAX], procs[PATH_MAX + 16], why[PATH_MAX * 2 + 256];
		struct stat st;

		if (!realpath(ts->cgroups[i], dir) || stat(dir, &st) || !S_ISDIR(st.st_mode)) {
			pr_err("--cgroup %s: no such directory", ts->cgroups[i]);
			return -ENOENT;
		}
		if (cgroup_v2_check("/proc/self/mounts", dir, why, sizeof(why))) {
			pr_err("--cgroup %s: %s", ts->cgroups[i], why);
			return -EINVAL;
		}
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
		if (access(procs, R_OK)) {
			pr_err("--cgroup %s: not a cgroup directory (no readable cgroup.procs)",
			       ts->cgroups[i]);
			return -ENOENT;
		}
		/* On cgroup v2 the directory's inode number is the id BPF sees. */
		ts->cgroup_ids[i] = st.st_ino;
		if (s) {
			int err = sampler__add_cgroup(s, st.st_ino);

			if (err) {
				pr_err("--cgroup %s: cannot add to the BPF cgroup map: %s",
				       ts->cgroups[i], strerror(-err));
				return err;
			}
		}
	}
	return 0;
}

static int add_cgroup_members(struct target_specs *ts, struct tracker *tr,
			      struct sampler *s, int ci)
{
	char path[4096], why[256];
	int changes = 0, pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", ts->cgroups[ci]);
	f = fopen(path, "re");
	if (!f)
		return 0;
	snprintf(why, sizeof(why), "member of cgroup %s", ts->cgroups[ci]);
	while (fscanf(f, "%d", &pid) == 1)
		if (tracker__find_target(tr, pid) < 0 && add(ts, tr, s, pid, ORIGIN_CGROUP, why) > 0)
			changes++;
	fclose(f);
	return changes;
}

static int add_comm_matches(struct target_specs *ts, struct tracker *tr, struct sampler *s)
{
	struct dirent *de;
	int changes = 0;
	DIR *d = opendir("/proc");

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char comm[16], why[64];
		pid_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		if (tracker__find_target(tr, pid) >= 0 || proc_stat(pid, NULL, comm, NULL, NULL))
			continue;
		for (int i = 0; i < ts->nr_comms; i++) {
			if (strcmp(comm, ts->comms[i]))
				continue;
			snprintf(why, sizeof(why), "command name %s", comm);
			if (add(ts, tr, s, pid, ORIGIN_COMM, why) > 0)
				changes++;
			break;
		}
	}
	closedir(d);
	return changes;
}

int targets__refresh(struct target_specs *ts, struct tracker *tr, struct sampler *s)
{
	uint32_t refused_before = tr->refused_budget;
	int changes = 0;

	tr->refused_budget = 0;
	/* Drop the dead and the reused. */
	for (uint32_t i = 0; i < tr->nr_targets;) {
		struct target *t = &tr->targets[i];
		uint64_t start;
		/* comm too: a target added before its exec() changes name. */
		int err = proc_stat(t->pid, &start, t->comm, NULL, NULL);

		if (!err && start == t->start_time && !t->gone) {
			i++;
			continue;
		}
		pr_info("target pid %d (%s) %s: dropping its %u tracked pages (moved %llu: promoted %llu, demoted %llu)",
			t->pid, t->comm,
			err ? "exited" : start != t->start_time ? "exited and its PID was reused" :
			"is gone", t->pt.nr,
			(unsigned long long)(t->ctr.promoted + t->ctr.demoted),
			(unsigned long long)t->ctr.promoted, (unsigned long long)t->ctr.demoted);
		if (s)
			sampler__del_target(s, t->pid);
		sight__forget(t->pid);
		tracker__remove_target(tr, i);
		changes++;
	}
	for (uint32_t i = 0; s && i < tr->nr_targets; i++)
		check_sight(&tr->targets[i], s, tr->epoch);
	/* Explicit PIDs are added once; a reused PID is another process. */
	for (int i = 0; i < ts->nr_pids; i++) {
		if (!ts->pids[i] || tracker__find_target(tr, ts->pids[i]) >= 0)
			continue;
		int r = add(ts, tr, s, ts->pids[i], ORIGIN_PID, "--pid");

		changes += r > 0;
		if (r != -ENOSPC)
			ts->pids[i] = 0;	/* never re-adopt this number */
	}
	for (int i = 0; i < ts->nr_cgroups; i++)
		changes += add_cgroup_members(ts, tr, s, i);
	if (ts->nr_comms)
		changes += add_comm_matches(ts, tr, s);
	if (tr->refused_budget && !refused_before)
		pr_warn("the tracker is full (%llu of %llu MiB, --tracker-mb): %u matching processes are not managed until targets exit or the budget grows",
			(unsigned long long)(tr->bytes_used >> 20),
			(unsigned long long)(tr->budget_bytes >> 20), tr->refused_budget);
	else if (!tr->refused_budget && refused_before)
		pr_info("the tracker has room again: every matching process is managed");
	return changes;
}
