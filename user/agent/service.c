// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <stddef.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "service.h"
#include "status.h"
#include "util.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef MCL_ONFAULT
#define MCL_ONFAULT 4
#endif

int service__notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd, err = 0;

	if (!path || !*path || strlen(path) >= sizeof(sa.sun_path))
		return 0;
	strcpy(sa.sun_path, path);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';	/* abstract namespace */
	len = offsetof(struct sockaddr_un, sun_path) + strlen(path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, len) < 0)
		err = -errno;
	close(fd);
	return err;
}

uint64_t service__watchdog_usec(void)
{
	const char *usec = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");

	if (!usec || (pid && atoi(pid) != getpid()))
		return 0;
	return strtoull(usec, NULL, 10);
}

static int caps_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	memset(d, 0, 2 * sizeof(*d));
	return syscall(SYS_capget, &h, d) ? -errno : 0;
}

static bool cap_has(const struct __user_cap_data_struct d[2], int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

int service__check_caps(void)
{
	static const struct { int cap; const char *name, *what; } need[] = {
		{ CAP_SYS_ADMIN, "CAP_SYS_ADMIN", "page frames in /proc/PID/pagemap, mounting bpffs, BPF on older kernels" },
		{ CAP_SYS_NICE, "CAP_SYS_NICE", "move_pages of other processes" },
		{ CAP_SYS_PTRACE, "CAP_SYS_PTRACE", "reading target pages (process_vm_readv) and /proc/PID/pagemap" },
		{ CAP_BPF, "CAP_BPF", "loading the samplers" },
		{ CAP_PERFMON, "CAP_PERFMON", "tracing and PMU events" },
	};
	struct __user_cap_data_struct d[2];

	if (caps_get(d))
		return 0;	/* cannot tell: let the operations speak */
	for (size_t i = 0; i < ARRAY_SIZE(need); i++)
		if (!cap_has(d, need[i].cap)) {
			pr_warn("missing capability %s, needed for %s", need[i].name, need[i].what);
		}
	if (!cap_has(d, CAP_SYS_ADMIN) && (!cap_has(d, CAP_BPF) || !cap_has(d, CAP_PERFMON))) {
		pr_err("cannot load BPF programs without CAP_SYS_ADMIN, or CAP_BPF and CAP_PERFMON: run as root or grant them (see the systemd unit)");
		return -EPERM;
	}
	return 0;
}

void service__drop_setup_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	static const int drop[] = { CAP_BPF, CAP_PERFMON };

	if (caps_get(d))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(drop); i++) {
		d[drop[i] / 32].effective &= ~(1u << (drop[i] % 32));
		d[drop[i] / 32].permitted &= ~(1u << (drop[i] % 32));
		d[drop[i] / 32].inheritable &= ~(1u << (drop[i] % 32));
		prctl(PR_CAPBSET_DROP, drop[i], 0, 0, 0);
	}
	if (syscall(SYS_capset, &h, d))
		pr_warn("cannot drop CAP_BPF and CAP_PERFMON after set-up: %s", strerror(errno));
	else
		pr_debug("dropped CAP_BPF and CAP_PERFMON: set-up is done");
}

void service__lock_memory(void)
{
	/* On fault: lock what the agent touches, without pre-faulting reservations. */
	if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT))
		pr_warn("cannot lock the agent's memory (mlockall: %s): it may be paged or demoted",
			strerror(errno));
}

/*
 * One agent per machine, whatever its --run-dir or --pin-dir: the kernel
 * settings and the BPF hooks are the machine's, so two agents would undo
 * each other's settings and delete each other's live pins.  The lock is a
 * fixed path for that reason; it holds the holder's pid and run dir.
 */
int service__take_lock(const char *run_dir)
{
	char buf[PATH_MAX + 32];
	struct stat st;
	int fd, len;

	fd = open(CXLT_MACHINE_LOCK, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0) {
		pr_err("cannot open the lock %s: %s", CXLT_MACHINE_LOCK, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)) {
		pr_err("refusing the lock %s: not a regular file of root's writable by root alone; remove it",
		       CXLT_MACHINE_LOCK);
		close(fd);
		return -EPERM;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		char *pid, *dir;

		buf[n > 0 ? n : 0] = '\0';
		pid = strtok(buf, " \n");
		dir = pid ? strtok(NULL, "\n") : NULL;
		pr_err("another cxltierd (pid %s, run dir %s) is running on this machine (lock %s held); one agent per machine: stop it first",
		       pid ? pid : "unknown", dir ? dir : "unknown", CXLT_MACHINE_LOCK);
		close(fd);
		return -EBUSY;
	}
	len = snprintf(buf, sizeof(buf), "%d %s\n", getpid(), run_dir);
	if (ftruncate(fd, 0) || pwrite(fd, buf, len, 0) != len)
		pr_warn("cannot write %s", CXLT_MACHINE_LOCK);
	return fd;
}

/*
 * The run dir holds state the agent acts on as root (kernel-settings.state
 * is written back to sysctls at the next start) and files it writes: it must
 * be root's alone, all the way up (the trust rule in util.c).
 */
int service__prepare_run_dir(const char *run_dir)
{
	char why[2 * PATH_MAX + 256];
	int err;

	if (mkdir(run_dir, 0700) && errno != EEXIST) {
		err = -errno;
		pr_err("cannot create %s: %s", run_dir, strerror(errno));
		return err;
	}
	if ((err = trust_dir(run_dir, why, sizeof(why))))
		pr_err("run directory: %s", why);
	return err;
}
