/* SPDX-License-Identifier: MIT */
/* /proc/PID/pagemap entries, and PAGEMAP_SCAN for kernels that have it. */
#ifndef CXLT_PAGEMAP_H
#define CXLT_PAGEMAP_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ioctl.h>

/*
 * PAGEMAP_SCAN (Linux 6.7+).  Defined here because the distribution's uapi
 * headers may predate it; the ioctl fails with ENOTTY on older kernels and
 * we fall back to reading pagemap.
 */
struct pm_scan_region {
	uint64_t start, end, categories;
};

struct pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};

#define CXLT_PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_PFNZERO (1 << 5)
#define PAGE_IS_HUGE (1 << 6)
#define PAGE_IS_SOFT_DIRTY (1 << 7)
#define PM_PRESENT (1ULL << 63)
#define PM_FILE (1ULL << 61)
#define PM_MMAP_EXCLUSIVE (1ULL << 56)
#define PM_PFN_MASK ((1ULL << 55) - 1)

/* pid's pagemap, open read-only; -ESRCH when the process is gone, else -errno. */
static inline int pagemap_open(int pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd >= 0 ? fd : errno == ENOENT ? -ESRCH : -errno;
}

#endif
