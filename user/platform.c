// SPDX-License-Identifier: MIT
#include <errno.h>
#include <numaif.h>
#include <sys/uio.h>

#include "platform.h"
#include "util.h"

static long kernel_move_pages(void *ctx, int pid, unsigned long count, void **pages,
			      const int *nodes, int *status, int flags)
{
	(void)ctx;
	return move_pages(pid, count, pages, nodes, status, flags);
}

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

static double kernel_now(void *ctx)
{
	(void)ctx;
	return now_sec();
}

const struct platform platform_kernel = {
	.move_pages = kernel_move_pages,
	.touch_pages = kernel_touch_pages,
	.now = kernel_now,
};
