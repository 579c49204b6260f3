// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "replay.h"
#include "util.h"

/* ---- synthetic traces ---- */

#define SCAN_ACCESSES 512	/* a 4 KiB page read 8 bytes at a time */


uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

double unit_rand(uint64_t *x)
{
	return (splitmix64(x) >> 11) * (1.0 / 9007199254740992.0);
}

int synth(const struct synth_opts *so, const struct model_opts *o, const char *path)
{
	const uint64_t base = 0x7f0000000ULL, epoch_ns = (uint64_t)o->epoch_ms * 1000000;
	struct trace_node nodes[2] = {
		{ .id = 0, .role = CXLT_NODE_FAST, .tier = 4, .capacity_pages = so->pages / 4 },
		{ .id = 1, .role = CXLT_NODE_SLOW, .tier = 22, .capacity_pages = so->pages },
	};
	uint64_t *perm = malloc(so->pages * sizeof(*perm)), rng = so->seed;
	double *cdf = NULL;
	uint32_t *counts = NULL;
	struct cxlt_sample buf[4096];
	struct trace_writer w;
	uint64_t hot_pages = (uint64_t)ceil(so->hot * so->pages), accesses = 0;
	int err;

	if (!perm)
		goto nomem;
	/* Ranks map to scattered pages, as a real heap's hot objects are. */
	for (uint64_t i = 0; i < so->pages; i++)
		perm[i] = i;
	for (uint64_t i = so->pages - 1; i > 0; i--) {
		uint64_t j = splitmix64(&rng) % (i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	if (!strcmp(so->kind, "zipf")) {
		double sum = 0;

		cdf = malloc(so->pages * sizeof(*cdf));
		if (!cdf)
			goto nomem;
		for (uint64_t i = 0; i < so->pages; i++)
			cdf[i] = (sum += 1.0 / pow((double)(i + 1), so->alpha));
		for (uint64_t i = 0; i < so->pages; i++)
			cdf[i] /= sum;
	}
	counts = calloc(so->pages, sizeof(*counts));
	if (!counts)
		goto nomem;
	if ((err = trace_writer__open(&w, path, 4096, nodes, 2)))
		goto out;
	for (uint64_t e = 0; e < so->epochs && !err; e++) {
		/* shift: the hot window moves by its own length every shift_every epochs. */
		uint64_t hot_start = !strcmp(so->kind, "shift") ?
				     (e / so->shift_every) * hot_pages % so->pages : 0;
		uint32_t n = 0, touched = 0;
		/*
		 * scan: the hot set of hotset, and in the middle of every
		 * shift_every epochs a one-off sequential scan of the next quarter
		 * of the address space (as much as the fast tier at 1:4), every
		 * 8-byte word read once: 512 accesses a page, more in one epoch
		 * than a hot page gets.
		 */
		bool scan = !strcmp(so->kind, "scan") && e % so->shift_every == so->shift_every / 2;

		for (uint64_t i = 0; i < so->samples; i++) {
			uint64_t rank;

			if (cdf) {
				double u = unit_rand(&rng);
				uint64_t lo = 0, hi = so->pages - 1;

				while (lo < hi) {
					uint64_t mid = (lo + hi) / 2;

					if (cdf[mid] < u)
						lo = mid + 1;
					else
						hi = mid;
				}
				rank = lo;
			} else if (unit_rand(&rng) < so->hot_share) {
				rank = (hot_start + splitmix64(&rng) % hot_pages) % so->pages;
			} else {
				rank = (hot_start + hot_pages + splitmix64(&rng) % (so->pages - hot_pages)) %
				       so->pages;
			}
			counts[perm[rank]]++;
		}
		accesses += so->samples;
		if (scan) {
			uint64_t len = so->pages / 4, from = (e / so->shift_every) * len;

			for (uint64_t i = 0; i < len; i++)
				counts[(from + i) % so->pages] += SCAN_ACCESSES;
			accesses += len * SCAN_ACCESSES;
		}
		/*
		 * One sample per touched page and epoch, its weight the access
		 * count: the same accesses in a fraction of the file.
		 */
		for (uint64_t p = 0; p < so->pages; p++)
			touched += counts[p] > 0;
		for (uint64_t p = 0, k = 0; p < so->pages && !err; p++) {
			while (counts[p]) {
				uint32_t wgt = counts[p] > UINT16_MAX ? UINT16_MAX : counts[p];

				buf[n++] = (struct cxlt_sample){
					.time_ns = e * epoch_ns + k++ * (epoch_ns / (touched + 1)),
					.tgid = 1000, .source = CXLT_SRC_PMU, .weight = (uint16_t)wgt,
					.vpage = base + p,
				};
				counts[p] -= wgt;
				if (n == ARRAY_SIZE(buf)) {
					err = trace_writer__add(&w, buf, n);
					n = 0;
				}
			}
		}
		if (n && !err)
			err = trace_writer__add(&w, buf, n);
	}
	err = trace_writer__close(&w) ?: err;
	if (!err)
		fprintf(stderr, "wrote %s: %s, %llu pages, %llu epochs of %u ms, %llu accesses in %llu weighted samples, seed %llu\n",
			path, so->kind, (unsigned long long)so->pages, (unsigned long long)so->epochs,
			o->epoch_ms, (unsigned long long)accesses,
			(unsigned long long)w.samples, (unsigned long long)so->seed);
out:
	free(counts);
	free(cdf);
	free(perm);
	return err;
nomem:
	fprintf(stderr, "cxltier-replay: out of memory for a synthetic trace of %llu pages\n",
		(unsigned long long)so->pages);
	err = -ENOMEM;
	goto out;
}
