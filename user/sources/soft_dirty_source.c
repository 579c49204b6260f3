// SPDX-License-Identifier: MIT
/*
 * Source soft-dirty: the pages each target wrote since the last epoch, from
 * the kernel's soft-dirty bits.  Each epoch the agent reads the written
 * pages with PAGEMAP_SCAN (Linux 6.7+), one call per target that returns
 * runs, not pages, and then writes "4" to /proc/PID/clear_refs, which clears
 * the bits and write-protects the pages, so that the next write to each
 * page takes one minor fault and sets its bit again.
 *
 * Why it exists: it needs no BPF, no PMU, no DAMON and no NUMA scanner, so
 * it sees memory under a bind or preferred policy (which hint cannot) on a
 * program that was running before the agent (which fault cannot), on a
 * kernel without DAMON.  What it cannot see: pages only read.  A new or
 * grown mapping reads as written once (the kernel marks a new VMA soft-dirty
 * whole).  Clearing the bits would disturb a checkpointing tool (CRIU) that
 * tracks the same target's soft-dirty bits: do not combine the two.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pagemap.h"
#include "sampler.h"
#include "util.h"

/* The x86-64 user address space (4-level paging); the scan skips its holes. */
#define USER_END 0x7ffffffff000ULL

/*
 * The targets whose bits it has cleared (a first read says only what was
 * written before), the pages found written, the last epoch and all time,
 * and the scans' cost.
 */
struct dirty {
	struct { pid_t pid; uint64_t start_time; } *seen;
	uint32_t nr_seen;
	uint64_t last, total, clear_failures;
	double scan_ms;
};

/* Adds the present, soft-dirty runs of [start, end) in pagemap fd to t; pages or -errno. */
static long scan_dirty(int fd, struct tracker *tr, struct target *t, uint64_t start, uint64_t end)
{
	/* Zeroed: tools like valgrind do not know what PAGEMAP_SCAN writes. */
	struct pm_scan_region runs[256] = { 0 };
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.start = start,
		.end = end,
		.vec = (uintptr_t)runs,
		.vec_len = ARRAY_SIZE(runs),
		.category_inverted = PAGE_IS_PFNZERO,
		.category_mask = PAGE_IS_PRESENT | PAGE_IS_SOFT_DIRTY | PAGE_IS_PFNZERO,
		.return_mask = PAGE_IS_PRESENT | PAGE_IS_SOFT_DIRTY,
	};
	long pages = 0;

	while (arg.start < end) {
		long n = ioctl(fd, CXLT_PAGEMAP_SCAN, &arg);

		if (n < 0)
			return -errno;
		for (long r = 0; r < n; r++) {
			if (tr)
				tracker__ingest_range(tr, t, runs[r].start, runs[r].end, 1);
			pages += (runs[r].end - runs[r].start) >> CXLT_PAGE_SHIFT;
		}
		if (arg.walk_end <= arg.start)
			break;
		arg.start = arg.walk_end;
	}
	return pages;
}

static int clear_refs(pid_t pid)
{
	char path[64];
	int fd, err = 0;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/clear_refs", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/clear_refs");
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	if (write(fd, "4", 1) != 1)
		err = -errno;
	close(fd);
	return err;
}

/*
 * On the agent itself: a page written after the bits are cleared must read
 * as soft-dirty and one left alone must not (a kernel without
 * CONFIG_MEM_SOFT_DIRTY reports neither; one before 6.7 has no PAGEMAP_SCAN).
 */
static int soft_dirty_usable(const struct sampler_opts *o, char *why, size_t len)
{
	long ps = sysconf(_SC_PAGESIZE), written = -1, clean = -1;
	char *p = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC), err = 0;

	(void)o;
	if (p == MAP_FAILED || fd < 0) {
		err = -errno;
		snprintf(why, len, "soft-dirty bits not readable: %s", strerror(-err));
		goto out;
	}
	memset(p, 1, 2 * ps);
	if ((err = clear_refs(0))) {
		snprintf(why, len, "no soft-dirty bits: /proc/self/clear_refs: %s", strerror(-err));
		goto out;
	}
	p[0] = 2;
	written = scan_dirty(fd, NULL, NULL, (uintptr_t)p, (uintptr_t)p + ps);
	clean = scan_dirty(fd, NULL, NULL, (uintptr_t)p + ps, (uintptr_t)p + 2 * ps);
	if (written < 0) {
		err = (int)written;
		snprintf(why, len, "no PAGEMAP_SCAN with soft-dirty bits in this kernel (6.7+): %s",
			 strerror(-err));
	} else if (written != 1 || clean != 0) {
		err = -ENOTSUP;
		snprintf(why, len, "no soft-dirty bits in this kernel (CONFIG_MEM_SOFT_DIRTY): a written page read %ld, an untouched one %ld",
			 written, clean);
	}
out:
	if (fd >= 0)
		close(fd);
	if (p != MAP_FAILED)
		munmap(p, 2 * ps);
	return err;
}

static int soft_dirty_open(struct sampler *s, const struct sampler_opts *o,
			   const struct source_def *d)
{
	(void)o;
	(void)d;
	sampler__note(s, "pages written each epoch, from the soft-dirty bits (PAGEMAP_SCAN, then clear_refs)");
	return 0;
}

/* Forgets the targets gone (or whose pid was reused) since the last epoch. */
static void forget_gone(struct dirty *dd, const struct tracker *tr)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < dd->nr_seen; i++) {
		int idx = tracker__find_target(tr, dd->seen[i].pid);

		if (idx >= 0 && !tr->targets[idx].gone &&
		    tr->targets[idx].start_time == dd->seen[i].start_time)
			dd->seen[n++] = dd->seen[i];
	}
	dd->nr_seen = n;
}

/* Whether t's bits were cleared before. */
static bool seen_before(const struct dirty *dd, const struct target *t)
{
	for (uint32_t i = 0; i < dd->nr_seen; i++)
		if (dd->seen[i].pid == t->pid)
			return true;
	return false;
}

static int remember(struct dirty *dd, const struct target *t)
{
	void *p = realloc(dd->seen, (dd->nr_seen + 1) * sizeof(*dd->seen));

	if (!p)
		return -ENOMEM;
	dd->seen = p;
	dd->seen[dd->nr_seen].pid = t->pid;
	dd->seen[dd->nr_seen++].start_time = t->start_time;
	return 0;
}

static int soft_dirty_drain(struct sampler *s, const struct source_def *d, struct tracker *tr)
{
	struct dirty *dd = sampler__state(s, d);
	double t0 = now_sec();
	uint64_t pages = 0;

	forget_gone(dd, tr);
	for (uint32_t i = 0; i < tr->nr_targets; i++) {
		struct target *t = &tr->targets[i];
		char path[64];
		long n = 0;
		int fd, err;

		if (t->gone)
			continue;
		/*
		 * A target's first read would say what it wrote since it started
		 * (and a new mapping reads as written whole): only clear it.
		 */
		if (seen_before(dd, t)) {
			snprintf(path, sizeof(path), "/proc/%d/pagemap", t->pid);
			if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
				continue;	/* exited: the targets' refresh drops it */
			n = scan_dirty(fd, tr, t, 0, USER_END);
			close(fd);
			if (n < 0)
				continue;
			pages += n;
		} else if (remember(dd, t)) {
			continue;
		}
		/* Cleared after the read: a write in between is seen next epoch. */
		/* A target that has just exited is no failure: the targets' refresh drops it. */
		if ((err = clear_refs(t->pid)) && err != -ENOENT && err != -ESRCH && !dd->clear_failures++)
			pr_warn("soft-dirty: cannot clear the bits of pid %d: its pages will read as written until it can",
				t->pid);
	}
	dd->last = pages;
	dd->total += pages;
	dd->scan_ms = (now_sec() - t0) * 1e3;
	return pages > INT32_MAX ? INT32_MAX : (int)pages;
}

static void soft_dirty_close(struct sampler *s, const struct source_def *d)
{
	struct dirty *dd = sampler__state(s, d);

	free(dd->seen);
}

static void soft_dirty_status(const struct sampler *s, const struct source_def *def,
			      struct json_object *sampler)
{
	const struct dirty *dd = sampler__state(s, def);
	struct json_object *d = json_object_new_object();

	json_object_object_add(d, "pages_last_epoch", json_object_new_uint64(dd->last));
	json_object_object_add(d, "pages_total", json_object_new_uint64(dd->total));
	json_object_object_add(d, "scan_ms", json_object_new_double(dd->scan_ms));
	json_object_object_add(d, "clear_failures", json_object_new_uint64(dd->clear_failures));
	json_object_object_add(sampler, "soft_dirty", d);
}

const struct source_def soft_dirty_source = {
	.name = "soft-dirty",
	.hook = HOOK_PROC,
	.state_size = sizeof(struct dirty),
	.repeats = true,
	.help = "pages written each epoch, from the kernel's soft-dirty bits (6.7+): sees memory under any policy, not reads",
	.sight = SIGHT_ALL,
	.usable = soft_dirty_usable,
	.open = soft_dirty_open,
	.drain = soft_dirty_drain,
	.status = soft_dirty_status,
	.close = soft_dirty_close,
};
