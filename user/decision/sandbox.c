// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox.h"
#include "util.h"

/* Address space kept for the view: room for a 1 TiB machine's page records. */
#define SANDBOX_RESERVE (64ULL << 30)
#define SANDBOX_GRAIN	(1UL << 20)
#define CHILD_IN	3
#define CHILD_OUT	4
#define NOBODY		65534

/* The start of the shared mapping: the view and plan the child works on. */
struct shared {
	struct cxlt_view view;
	struct cxlt_plan plan;
	int32_t rc;
	int32_t init_rc;	/* the child's init(), when the agent did not run it */
	char init_msg[256];
};

#if defined(__x86_64__)
#define SANDBOX_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SANDBOX_ARCH AUDIT_ARCH_AARCH64
#endif

#define ALLOW(call) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (call), 0, 1), \
		  BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
/* The call with its first argument (a file descriptor) equal to fdnum. */
#define ALLOW_FD(call, fdnum) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (call), 0, 3), \
		  BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])), \
		  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (fdnum), 0, 1), \
		  BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), \
		  BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))

/*
 * What deciding needs: its pipe, stdout and stderr for a message (stdio
 * asks fstat first), memory for malloc,
 * the clock, exit.  Anything else kills the child (SIGSYS), so a policy
 * cannot open files, sockets or BPF objects, or signal other processes.
 */
static int confine(void)
{
#ifdef SANDBOX_ARCH
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SANDBOX_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		ALLOW_FD(__NR_read, CHILD_IN),
		ALLOW_FD(__NR_write, CHILD_OUT),
		ALLOW_FD(__NR_write, 1),
		ALLOW_FD(__NR_write, 2),
		ALLOW(__NR_fstat), ALLOW(__NR_newfstatat),
		ALLOW(__NR_brk), ALLOW(__NR_mmap), ALLOW(__NR_munmap), ALLOW(__NR_mremap),
		ALLOW(__NR_mprotect), ALLOW(__NR_madvise), ALLOW(__NR_futex),
		ALLOW(__NR_clock_gettime), ALLOW(__NR_rt_sigreturn), ALLOW(__NR_exit),
		ALLOW(__NR_exit_group), ALLOW(__NR_getrandom),
		/* glibc's qsort asks for the machine's memory before a large sort. */
		ALLOW(__NR_sysinfo),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(f), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) ? -errno : 0;
#else
	return -ENOTSUP;
#endif
}

static __attribute__((noreturn)) void child(struct sandbox *sb, struct policy_host *h, int in,
					    int out, pid_t parent)
{
	struct shared *sh = (struct shared *)sb->shm;
	char c;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NAME, "cxltier-policy");
	if (getppid() != parent)
		_exit(0);
	/* Only the pipe stays open: no BPF map, socket, lock or log file of the agent's. */
	if (dup2(in, CHILD_IN) < 0 || dup2(out, CHILD_OUT) < 0 ||
	    syscall(SYS_close_range, CHILD_OUT + 1, ~0U, 0))
		_exit(120);
	if (geteuid() == 0 && (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
			       setresuid(NOBODY, NOBODY, NOBODY)))
		_exit(121);
	if (confine())
		_exit(122);
	/* init under the same confinement as decide: its crash or overrun is the child's. */
	if (!h->inited)
		sh->init_rc = policy_host__init(h, sh->init_msg, sizeof(sh->init_msg));
	c = 'i';
	if (write(CHILD_OUT, &c, 1) != 1 || sh->init_rc)
		_exit(0);
	while (read(CHILD_IN, &c, 1) == 1) {
		sh->rc = h->ops->decide(h->state, &sh->view, &sh->plan);
		if (write(CHILD_OUT, &c, 1) != 1)
			break;
	}
	_exit(0);
}

static void end_child(struct sandbox *sb, const char *what);
static int wait_reply(struct sandbox *sb, double t0);

/* The child's first word: init ran (or was not needed); -errno and sb->failed if not. */
static int wait_init(struct sandbox *sb)
{
	const struct shared *sh = (const struct shared *)sb->shm;
	char what[320];
	int n = wait_reply(sb, now_sec());

	sb->init_refused = n <= 0 || sh->init_rc;
	if (n == 0) {
		snprintf(what, sizeof(what), "init() took longer than the %.0f ms limit: stopped",
			 sb->limit_ms);
		end_child(sb, what);
		sandbox__stop(sb);
		return -ETIMEDOUT;
	}
	if (n < 0) {
		end_child(sb, NULL);
		snprintf(what, sizeof(what), "init: %s", sb->failed);
		snprintf(sb->failed, sizeof(sb->failed), "%.255s", what);
		sandbox__stop(sb);
		return -ECHILD;
	}
	if (sh->init_rc) {
		snprintf(what, sizeof(what), "init failed: %.*s", (int)sizeof(sh->init_msg),
			 sh->init_msg);
		end_child(sb, NULL);
		snprintf(sb->failed, sizeof(sb->failed), "%.255s", what);
		n = sh->init_rc < 0 ? sh->init_rc : -EINVAL;
		sandbox__stop(sb);
		return n;
	}
	return 0;
}

int sandbox__start(struct sandbox *sb, struct policy_host *h, double limit_ms)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err;
	pid_t parent = getpid();

	memset(sb, 0, sizeof(*sb));
	sb->to_child = sb->from_child = sb->memfd = -1;
	sb->limit_ms = limit_ms;
	sb->memfd = memfd_create("cxltier-policy-view", MFD_CLOEXEC);
	if (sb->memfd < 0 || ftruncate(sb->memfd, SANDBOX_GRAIN))
		goto fail;
	sb->size = SANDBOX_GRAIN;
	sb->shm = mmap(NULL, SANDBOX_RESERVE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
		       sb->memfd, 0);
	if (sb->shm == MAP_FAILED) {
		sb->shm = NULL;
		goto fail;
	}
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		goto fail;
	sb->pid = fork();
	if (sb->pid < 0) {
		sb->pid = 0;
		goto fail;
	}
	if (!sb->pid)
		child(sb, h, in[0], out[1], parent);
	close(in[0]);
	close(out[1]);
	sb->to_child = in[1];
	sb->from_child = out[0];
	return wait_init(sb);
fail:
	err = -errno;
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	snprintf(sb->failed, sizeof(sb->failed), "cannot start the policy's process: %s",
		 strerror(-err));
	sandbox__stop(sb);
	return err;
}

/* The child is gone or must go: reap it and say why in sb->failed. */
static void end_child(struct sandbox *sb, const char *what)
{
	int status = 0;

	if (!sb->pid)
		return;
	if (what)
		kill(sb->pid, SIGKILL);
	while (waitpid(sb->pid, &status, 0) < 0 && errno == EINTR)
		;
	if (what)
		snprintf(sb->failed, sizeof(sb->failed), "%.255s", what);
	else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
		snprintf(sb->failed, sizeof(sb->failed),
			 "made a system call policies may not make (killed by seccomp)");
	else if (WIFSIGNALED(status))
		snprintf(sb->failed, sizeof(sb->failed), "crashed: %s", strsignal(WTERMSIG(status)));
	else
		snprintf(sb->failed, sizeof(sb->failed), "its process exited with status %d",
			 WEXITSTATUS(status));
	sb->pid = 0;
}

/* Bytes of the copy: the view, nodes, targets, names, extents, words and the plan. */
static size_t layout(const struct cxlt_view *v, uint32_t cap)
{
	size_t n = sizeof(struct shared) + v->nr_nodes * sizeof(*v->nodes) +
		   v->nr_targets * (sizeof(*v->targets) + 16);

	for (uint32_t i = 0; i < v->nr_targets; i++)
		n += v->targets[i].nr_pages * (sizeof(struct cxlt_page) + sizeof(uint32_t)) + 16;
	return n + (cap + 1ULL) * sizeof(struct cxlt_move) + 64;
}

static char *take(char **p, size_t bytes)
{
	char *r = *p;

	*p += (bytes + 7) & ~7UL;
	return r;
}

/*
 * Copies the view into the shared mapping.  Where the pages and the moves
 * went is kept on this side (sb->words_at, sb->moves_at): copy_out never
 * reads a pointer the child could have changed.
 */
static int copy_in(struct sandbox *sb, const struct cxlt_view *v, uint32_t cap)
{
	struct shared *sh = (struct shared *)sb->shm;
	char *p = sb->shm + sizeof(*sh);
	struct cxlt_target_view *tv;
	struct cxlt_node *nodes;

	if (v->nr_targets > sb->words_cap) {
		uint32_t **n = realloc(sb->words_at, v->nr_targets * sizeof(*n));

		if (!n)
			return -ENOMEM;
		sb->words_at = n;
		sb->words_cap = v->nr_targets;
	}
	sh->view = *v;
	nodes = (struct cxlt_node *)take(&p, v->nr_nodes * sizeof(*nodes));
	memcpy(nodes, v->nodes, v->nr_nodes * sizeof(*nodes));
	sh->view.nodes = nodes;
	tv = (struct cxlt_target_view *)take(&p, v->nr_targets * sizeof(*tv));
	for (uint32_t i = 0; i < v->nr_targets; i++) {
		char *comm = take(&p, 16);
		struct cxlt_page *pages = (struct cxlt_page *)take(&p, v->targets[i].nr_pages *
									sizeof(*pages));
		uint32_t *words = (uint32_t *)take(&p, v->targets[i].nr_pages * sizeof(*words));

		tv[i] = v->targets[i];
		snprintf(comm, 16, "%s", v->targets[i].comm ? v->targets[i].comm : "");
		tv[i].comm = comm;
		memcpy(pages, v->targets[i].pages, tv[i].nr_pages * sizeof(*pages));
		memcpy(words, v->targets[i].policy_words, tv[i].nr_pages * sizeof(*words));
		tv[i].pages = pages;
		tv[i].policy_words = sb->words_at[i] = words;
	}
	sh->view.targets = tv;
	sb->moves_at = (struct cxlt_move *)p;
	memset(p, 0xff, (cap + 1ULL) * sizeof(struct cxlt_move));
	sh->plan = (struct cxlt_plan){ .moves = sb->moves_at, .cap = cap };
	sh->rc = 0;
	return 0;
}

/* What comes back: the moves (at most the cap), and the policy's words. */
static void copy_out(struct sandbox *sb, const struct cxlt_view *v, struct cxlt_plan *plan)
{
	const struct shared *sh = (const struct shared *)sb->shm;
	uint32_t nr = sh->plan.nr;

	memcpy(plan->moves, sb->moves_at, (nr < plan->cap ? nr : plan->cap) * sizeof(*plan->moves));
	plan->nr = nr;
	for (uint32_t i = 0; i < v->nr_targets; i++)
		memcpy(v->targets[i].policy_words, sb->words_at[i],
		       v->targets[i].nr_pages * sizeof(uint32_t));
}

/* The child's one-byte reply within the limit from t0: 1, 0 on time-out, -1 when it is gone. */
static int wait_reply(struct sandbox *sb, double t0)
{
	struct pollfd pfd = { .fd = sb->from_child, .events = POLLIN };
	char c;
	int n;

	for (;;) {
		int left = (int)(sb->limit_ms - (now_sec() - t0) * 1000) + 1;

		n = left > 0 ? poll(&pfd, 1, left) : 0;
		if (n >= 0 || errno != EINTR)
			break;
	}
	if (n == 0)
		return 0;
	return read(sb->from_child, &c, 1) == 1 ? 1 : -1;
}

int sandbox__decide(struct sandbox *sb, const struct cxlt_view *view, struct cxlt_plan *plan)
{
	size_t need = layout(view, plan->cap);
	double t0 = now_sec();
	char c = 'd', what[256];
	int n;

	if (!sb->pid)
		return -ECHILD;
	if (need > SANDBOX_RESERVE)
		return -E2BIG;
	if (need > sb->size) {
		size_t size = (need + SANDBOX_GRAIN - 1) & ~(SANDBOX_GRAIN - 1);

		if (ftruncate(sb->memfd, size))
			return -errno;
		sb->size = size;
	}
	if ((n = copy_in(sb, view, plan->cap)))
		return n;
	if (write(sb->to_child, &c, 1) != 1) {
		end_child(sb, NULL);
		return -ECHILD;
	}
	if ((n = wait_reply(sb, t0)) == 0) {
		snprintf(what, sizeof(what), "decide() took longer than the %.0f ms limit in epoch %llu: stopped",
			 sb->limit_ms, (unsigned long long)view->epoch);
		end_child(sb, what);
		return -ECHILD;
	}
	if (n < 0) {
		end_child(sb, NULL);
		return -ECHILD;
	}
	copy_out(sb, view, plan);
	sb->decisions++;
	sb->last_ms = (now_sec() - t0) * 1000;
	return ((const struct shared *)sb->shm)->rc;
}

void sandbox__stop(struct sandbox *sb)
{
	if (sb->to_child >= 0)
		close(sb->to_child); /* EOF: the child leaves its loop */
	if (sb->pid)
		end_child(sb, sb->failed[0] ? sb->failed : "stopped");
	if (sb->from_child >= 0)
		close(sb->from_child);
	if (sb->shm)
		munmap(sb->shm, SANDBOX_RESERVE);
	if (sb->memfd >= 0)
		close(sb->memfd);
	free(sb->words_at);
	sb->words_at = NULL;
	sb->words_cap = 0;
	sb->shm = NULL;
	sb->to_child = sb->from_child = sb->memfd = -1;
}
