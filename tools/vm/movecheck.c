// SPDX-License-Identifier: GPL-2.0
/*
 * movecheck: prove that pages can move between two NUMA nodes with intact data.
 *
 * Used inside the emulated CXL guest (tools/vm) to check that the dax/kmem node is
 * usable by move_pages(2) before any cxltier test relies on it.  Static, libc only
 * (no libnuma in the guest): move_pages is called through syscall(2).
 *
 *   movecheck [-m MIB] [-f FAST_NODE] [-s SLOW_NODE] [-r ROUNDS]
 *
 * Prints key=value lines (movecheck_*) on stdout; exits 0 when every page reached the
 * requested node with its content intact after each round, 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MPOL_MF_MOVE (1 << 1)

static long sys_move_pages(unsigned long count, void **pages, const int *nodes,
			   int *status, int flags)
{
	return syscall(SYS_move_pages, 0, count, pages, nodes, status, flags);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Pattern depends on page index and word, so a page swapped with another is caught. */
static uint64_t pattern(size_t page, size_t word)
{
	return (page * 0x9E3779B97F4A7C15ull) ^ (word * 0xBF58476D1CE4E5B9ull) ^ 0xC0FFEEull;
}

static size_t verify(const char *buf, size_t npages, size_t psz)
{
	size_t bad = 0;

	for (size_t p = 0; p < npages; p++) {
		const uint64_t *w = (const uint64_t *)(buf + p * psz);
		for (size_t i = 0; i < psz / 8; i++)
			if (w[i] != pattern(p, i)) {
				bad++;
				break;
			}
	}
	return bad;
}

/* Move every page to `node` in batches of 512 (the cheap batch size: docs/design.md, "Costs"). */
static int move_all(void **pages, int *nodes, int *status, size_t npages, int node,
		    size_t *failed)
{
	const size_t batch = 512;

	*failed = 0;
	for (size_t i = 0; i < npages; i++)
		nodes[i] = node;
	for (size_t off = 0; off < npages; off += batch) {
		size_t n = npages - off < batch ? npages - off : batch;
		if (sys_move_pages(n, pages + off, nodes + off, status + off, MPOL_MF_MOVE) < 0) {
			fprintf(stderr, "movecheck: move_pages to node %d: %s\n", node,
				strerror(errno));
			return -1;
		}
	}
	for (size_t i = 0; i < npages; i++)
		if (status[i] != node)
			(*failed)++;
	return 0;
}

/* Ask the kernel where each page is (nodes = NULL) and count those not on `node`. */
static long count_elsewhere(void **pages, int *status, size_t npages, int node)
{
	long off_node = 0;

	if (sys_move_pages(npages, pages, NULL, status, 0) < 0) {
		fprintf(stderr, "movecheck: move_pages query: %s\n", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < npages; i++)
		if (status[i] != node)
			off_node++;
	return off_node;
}

int main(int argc, char **argv)
{
	size_t mib = 16;
	int fast = 0, slow = 1, rounds = 1, opt, ok = 1;

	while ((opt = getopt(argc, argv, "m:f:s:r:h")) != -1) {
		switch (opt) {
		case 'm': mib = strtoul(optarg, NULL, 0); break;
		case 'f': fast = atoi(optarg); break;
		case 's': slow = atoi(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: movecheck [-m MIB] [-f FAST_NODE] [-s SLOW_NODE] [-r ROUNDS]\n");
			return 2;
		}
	}

	size_t psz = (size_t)sysconf(_SC_PAGESIZE), len = mib << 20, npages = len / psz;
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void **pages = calloc(npages, sizeof(*pages));
	int *nodes = calloc(npages, sizeof(int)), *status = calloc(npages, sizeof(int));

	if (buf == MAP_FAILED || !pages || !nodes || !status) {
		perror("movecheck: allocation");
		return 1;
	}
	/* 4 KiB pages: 6.1 reports -EBUSY for moved THP tail pages, which would muddy the check. */
	madvise(buf, len, MADV_NOHUGEPAGE);
	for (size_t p = 0; p < npages; p++) {
		uint64_t *w = (uint64_t *)(buf + p * psz);
		for (size_t i = 0; i < psz / 8; i++)
			w[i] = pattern(p, i);
		pages[p] = buf + p * psz;
	}
	printf("movecheck_mib=%zu\nmovecheck_pages=%zu\n", mib, npages);

	for (int r = 0; r < rounds; r++) {
		int legs[2] = { slow, fast };
		for (int l = 0; l < 2; l++) {
			int to = legs[l], from = legs[1 - l];
			size_t failed;
			double t0 = now_ms();

			if (move_all(pages, nodes, status, npages, to, &failed) < 0)
				return 1;
			double ms = now_ms() - t0;
			long elsewhere = count_elsewhere(pages, status, npages, to);
			size_t bad = verify(buf, npages, psz);

			printf("movecheck_%d_to_%d_ms=%.1f\nmovecheck_%d_to_%d_mib_s=%.1f\n", from, to,
			       ms, from, to, ms > 0 ? mib / (ms / 1e3) : 0.0);
			printf("movecheck_%d_to_%d_status_fail=%zu\nmovecheck_%d_to_%d_not_on_node=%ld\n"
			       "movecheck_%d_to_%d_corrupt_pages=%zu\n",
			       from, to, failed, from, to, elsewhere, from, to, bad);
			if (failed || elsewhere != 0 || bad)
				ok = 0;
		}
	}
	printf("movecheck_ok=%d\n", ok);
	return ok ? 0 : 1;
}
