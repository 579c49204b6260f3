// SPDX-License-Identifier: MIT
/*
 * The mover's throughput against raw move_pages(2), in one run on a machine
 * with two nodes (the emulated CXL machine): the same pages moved between
 * node 0 and node 1 by (a) plain move_pages in 512-page batches and (b) the
 * agent's mover executing a plan (validation, sorting, batching, status
 * accounting), alternating so both see the same noise.  Also one page per
 * call against 512-page batches.  The process moves its own pages.
 */
#include <errno.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mover.h"
#include "topology.h"
#include "tracker.h"
#include "util.h"

#define PAGES 16384	/* 64 MiB */
#define ROUNDS 4

static char *buf;
static long psz;

static double raw_move(void **addrs, int *nodes, int *status, uint32_t n, uint32_t batch, int node)
{
	double t0 = now_sec();

	for (uint32_t i = 0; i < n; i++)
		nodes[i] = node;
	for (uint32_t i = 0; i < n; i += batch) {
		uint32_t k = n - i < batch ? n - i : batch;

		if (move_pages(0, k, addrs + i, nodes + i, status + i, MPOL_MF_MOVE) < 0) {
			perror("move_pages");
			exit(1);
		}
	}
	for (uint32_t i = 0; i < n; i++)
		if (status[i] != node) {
			fprintf(stderr, "raw move: page %u status %d, wanted node %d\n", i, status[i], node);
			exit(1);
		}
	return now_sec() - t0;
}

static double mover_move(struct mover *m, struct tracker *tr, struct topology *topo,
			 struct cxlt_move *moves, int node)
{
	struct cxlt_plan plan = { .moves = moves, .cap = PAGES };
	double t0;

	for (uint32_t i = 0; i < PAGES; i++)
		cxlt_plan_add(&plan, 0, i, node);
	t0 = now_sec();
	mover__execute(m, tr, topo, &plan, PAGES);
	t0 = now_sec() - t0;
	if (m->epoch.promoted + m->epoch.demoted != PAGES) {
		fprintf(stderr, "mover: moved %llu of %u pages to node %d (busy %llu, gone %llu, invalid %llu, ping-pong %llu, budget %llu, watermark %llu)\n",
			(unsigned long long)(m->epoch.promoted + m->epoch.demoted), PAGES, node,
			(unsigned long long)m->epoch.busy, (unsigned long long)m->epoch.gone,
			(unsigned long long)m->epoch.rejected_invalid,
			(unsigned long long)m->epoch.rejected_pingpong,
			(unsigned long long)m->epoch.rejected_budget,
			(unsigned long long)m->epoch.rejected_watermark);
		exit(1);
	}
	return t0;
}

int main(void)
{
	static void *addrs[PAGES];
	static int nodes[PAGES], status[PAGES];
	struct cxlt_move *moves = calloc(PAGES, sizeof(*moves));
	struct mover_opts o;
	struct topology topo;
	struct tracker tr;
	struct mover m;
	double t_raw = 0, t_mover = 0, t_single = 0, t_batch = 0;
	bool created;

	psz = sysconf(_SC_PAGESIZE);
	if (topology__load(&topo, NULL, NULL, NULL) || !topology__has_slow(&topo)) {
		fprintf(stderr, "bench_mover: needs a fast and a slow node (run it in the emulated CXL machine)\n");
		return 1;
	}
	buf = mmap(NULL, (size_t)PAGES * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	madvise(buf, (size_t)PAGES * psz, MADV_NOHUGEPAGE);
	memset(buf, 7, (size_t)PAGES * psz);
	for (uint32_t i = 0; i < PAGES; i++)
		addrs[i] = buf + (size_t)i * psz;
	raw_move(addrs, nodes, status, PAGES, 512, 0);

	tracker__init(&tr, 0.5);
	tracker__add_target(&tr, getpid(), 0, "bench", ORIGIN_PID);
	for (uint32_t i = 0; i < PAGES; i++) {
		int idx = page_table__get(&tr.targets[0].pt, (uintptr_t)addrs[i], &created);

		tr.targets[0].pt.pages[idx].node = 0;
	}
	mover__default_opts(&o);
	o.pingpong_epochs = 0;
	o.low_wmark_pct = o.high_wmark_pct = 0;
	mover__init(&m, &o, psz);

	/* Pages start and end each round on node 0; both ways are timed. */
	for (int r = 0; r < ROUNDS; r++) {
		t_raw += raw_move(addrs, nodes, status, PAGES, 512, 1);
		t_raw += raw_move(addrs, nodes, status, PAGES, 512, 0);
		t_mover += mover_move(&m, &tr, &topo, moves, 1);
		t_mover += mover_move(&m, &tr, &topo, moves, 0);
	}
	for (int r = 0; r < ROUNDS; r++) {
		t_single += raw_move(addrs, nodes, status, 2048, 1, 1);
		t_single += raw_move(addrs, nodes, status, 2048, 1, 0);
		t_batch += raw_move(addrs, nodes, status, 2048, 512, 1);
		t_batch += raw_move(addrs, nodes, status, 2048, 512, 0);
	}
	printf("move_pages, 512-page batches: %.0f pages/s (%.0f MiB/s)\n",
	       2 * ROUNDS * PAGES / t_raw, 2 * ROUNDS * PAGES / t_raw * psz / 1048576);
	printf("mover (plan of %u pages, batch %u): %.0f pages/s (%.0f MiB/s)\n", PAGES, o.batch,
	       2 * ROUNDS * PAGES / t_mover, 2 * ROUNDS * PAGES / t_mover * psz / 1048576);
	printf("mover / raw: %.2f (goal >= 0.9)\n", t_raw / t_mover);
	printf("one page per call: %.0f pages/s; 512-page batches: %.0f pages/s; batch / single: %.1fx\n",
	       2 * ROUNDS * 2048 / t_single, 2 * ROUNDS * 2048 / t_batch, t_single / t_batch);
	for (uint32_t i = 0; i < (uint32_t)PAGES * psz; i++)
		if (buf[i] != 7) {
			fprintf(stderr, "bench_mover: data changed at byte %u\n", i);
			return 1;
		}
	tracker__free(&tr);
	mover__free(&m);
	free(moves);
	return 0;
}
