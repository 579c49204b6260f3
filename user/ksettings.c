// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ksettings.h"
#include "util.h"

#define NUMA_BALANCING "/proc/sys/kernel/numa_balancing"
#define PROMOTE_RATE "/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps"
/* Since 5.13 the scanner's tunables live in debugfs (if mounted). */
#define SCAN_PERIOD_MAX "/sys/kernel/debug/sched/numa_balancing/scan_period_max_ms"

static int write_text(const char *root, const char *path, const char *val)
{
	char full[512];
	int fd, err = 0;

	snprintf(full, sizeof(full), "%s%s", root, path);
	fd = open(full, O_WRONLY | O_CLOEXEC | O_TRUNC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		err = -errno;
	close(fd);
	return err;
}

bool ksettings__hint_capable(const char *root)
{
	char full[512];

	snprintf(full, sizeof(full), "%s" NUMA_BALANCING, root ? root : "");
	return access(full, W_OK) == 0;
}

static int apply(struct ksettings *k, const char *path, const char *val, bool optional)
{
	struct ksetting *s = &k->set[k->nr];
	int err;

	if (k->nr == KSET_MAX)
		return -E2BIG;
	s->path = path;
	if ((err = read_text(k->root, path, s->old, sizeof(s->old)))) {
		if (optional) {
			pr_info("cannot read %s%s (%s): leaving it alone", k->root, path,
				strerror(-err));
			return 0;
		}
		pr_err("cannot read %s%s: %s", k->root, path, strerror(-err));
		return err;
	}
	s->old[strcspn(s->old, "\n")] = '\0';
	k->nr++;
	if (!strcmp(s->old, val))
		return 0;
	if ((err = write_text(k->root, path, val))) {
		pr_err("cannot set %s%s to %s: %s", k->root, path, val, strerror(-err));
		return err;
	}
	s->changed = true;
	pr_info("set %s to %s (was %s; restored at exit)", path, val, s->old);
	return 0;
}

int ksettings__take(struct ksettings *k, const char *root, unsigned int scan_period_ms)
{
	char period[32];
	int err;

	memset(k, 0, sizeof(*k));
	k->root = root ? root : "";
	snprintf(period, sizeof(period), "%u", scan_period_ms);
	/*
	 * Rate limit first: the kernel must not promote in the instant mode 3
	 * starts.  The scanner's period stretches up to its maximum (60 s by
	 * default) while it migrates nothing, which would starve the samples:
	 * cap it, so each page can report about once a period.
	 */
	if ((err = apply(k, PROMOTE_RATE, "0", false)) ||
	    (err = apply(k, SCAN_PERIOD_MAX, period, true)) ||
	    (err = apply(k, NUMA_BALANCING, "3", false))) {
		ksettings__restore(k);
		return err;
	}
	return 0;
}

void ksettings__restore(struct ksettings *k)
{
	/* Reverse order: balancing off before the rate limit comes back. */
	for (int i = k->nr - 1; i >= 0; i--) {
		struct ksetting *s = &k->set[i];
		int err;

		if (!s->changed)
			continue;
		err = write_text(k->root, s->path, s->old);
		if (err)
			pr_err("cannot restore %s to %s: %s", s->path, s->old, strerror(-err));
		else
			pr_info("restored %s to %s", s->path, s->old);
		s->changed = false;
	}
	k->nr = 0;
}
