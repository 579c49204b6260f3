// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <numaif.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "pagemap.h"
#include "platform.h"
#include "util.h"

static long kernel_move_pages(void *ctx, int pid, unsigned long count, void **pages,
			      const int *nodes, int *status, int flags)
{
	(void)ctx;
	return move_pages(pid, count, pages, nodes, status, flags);
}

/*
 * Reads one byte of each page through process_vm_readv(): the read takes the
 * owner's NUMA hint fault, which maps a PROT_NONE page again.  No data
 * changes.  A page that cannot be read is skipped.
 */
static void kernel_touch_pages(void *ctx, int pid, void **addrs, uint32_t n)
{
	enum { CHUNK = 1024 };	/* IOV_MAX */
	struct iovec remote[CHUNK], local;
	char sink[CHUNK];
	uint32_t done = 0;

	(void)ctx;
	while (done < n) {
		uint32_t k = n - done < CHUNK ? n - done : CHUNK;
		ssize_t got;

		for (uint32_t i = 0; i < k; i++)
			remote[i] = (struct iovec){ .iov_base = addrs[done + i], .iov_len = 1 };
		local = (struct iovec){ .iov_base = sink, .iov_len = k };
		got = process_vm_readv(pid, &local, 1, remote, k, 0);
		if (got < 0 && errno == ESRCH)
			return;
		/* It stops at the first unreadable page: step over that one. */
		done += (got > 0 ? (uint32_t)got : 0) + (got < (ssize_t)k ? 1 : 0);
	}
}

/* The pagemap entry of the page at addr; 0 or -errno. */
static int pagemap_entry(int fd, uint64_t addr, uint64_t *ent)
{
	ssize_t got = pread(fd, ent, sizeof(*ent), (off_t)(addr / 4096 * sizeof(*ent)));

	return got == sizeof(*ent) ? 0 : got < 0 ? -errno : -EIO;
}

static int kernel_pages_present(void *ctx, int pid, void **pages, uint32_t count, bool *present)
{
	int fd = pagemap_open(pid);

	(void)ctx;
	if (fd < 0)
		return fd;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t ent = 0;

		present[i] = !pagemap_entry(fd, (uintptr_t)pages[i], &ent) && (ent & PM_PRESENT);
	}
	close(fd);
	return 0;
}

/* From include/uapi/linux/kernel-page-flags.h. */
#define KPF_COMPOUND_HEAD 15
#define KPF_THP 22

static bool kernel_pfn_thp(void *ctx, uint64_t pfn)
{
	static int fd = -2;
	uint64_t flags = 0;

	(void)ctx;
	if (fd == -2)
		fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pread(fd, &flags, sizeof(flags), (off_t)(pfn * sizeof(flags))) != sizeof(flags))
		return false;
	return (flags >> KPF_THP & 1) && (flags >> KPF_COMPOUND_HEAD & 1);
}

static int kernel_huge_at(void *ctx, int pid, uint64_t addr)
{
	uint64_t ent = 0, pfn;
	int fd = pagemap_open(pid), err;

	if (fd < 0)
		return fd;
	err = pagemap_entry(fd, addr, &ent);
	close(fd);
	if (err)
		return err;
	if (!(ent & PM_PRESENT))
		return 0;
	if (!(pfn = ent & PM_PFN_MASK))
		return -EPERM;
	/* A huge page mapped whole sits on an aligned frame that heads a THP. */
	return !(pfn & 511) && kernel_pfn_thp(ctx, pfn);
}

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

static int kernel_madvise(int pid, uint64_t addr, size_t len, int advice)
{
	struct iovec iov = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), err = 0;

	if (pidfd < 0)
		return -errno;
	if (syscall(SYS_process_madvise, pidfd, &iov, 1, advice, 0) < 0)
		err = -errno;
	close(pidfd);
	return err;
}

/*
 * MADV_COLD over part of a huge page mapped by one process splits it first
 * (mm/madvise.c, since Linux 5.4): the one call that splits a huge page of
 * another process without debugfs.  The page it names goes to the inactive
 * list, which an access undoes.
 */
static int kernel_split_huge(void *ctx, int pid, uint64_t page)
{
	(void)ctx;
	return kernel_madvise(pid, page, 4096, MADV_COLD);
}

static int kernel_collapse_huge(void *ctx, int pid, uint64_t addr, uint64_t len)
{
	(void)ctx;
	return kernel_madvise(pid, addr, len, MADV_COLLAPSE);
}

static double kernel_now(void *ctx)
{
	(void)ctx;
	return now_sec();
}

const struct platform platform_kernel = {
	.move_pages = kernel_move_pages,
	.touch_pages = kernel_touch_pages,
	.pages_present = kernel_pages_present,
	.pfn_thp = kernel_pfn_thp,
	.split_huge = kernel_split_huge,
	.huge_at = kernel_huge_at,
	.collapse_huge = kernel_collapse_huge,
	.now = kernel_now,
};
