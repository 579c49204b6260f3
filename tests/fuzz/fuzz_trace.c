// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the trace reader (trace__parse), which takes traces
 * "from anyone" (trace.h).  After a successful parse every node and every
 * sample is read, so a length the reader trusted too far shows up as an
 * out-of-bounds read under ASan, and a misplaced sample array as a
 * misaligned load under UBSan.
 *
 * libFuzzer hands over a malloc'd (16-byte aligned) buffer, as a caller of
 * trace__parse() would; files are read by trace__open() and its cursor
 * into their own buffers, and fuzz_replay drives those end to end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "util.h"

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace t;
	char msg[256];
	uint64_t sum = 0;

	msg[0] = '\0';
	if (trace__parse(&t, data, size, msg, sizeof(msg))) {
		if (!msg[0]) {
			fprintf(stderr, "trace__parse failed without a message\n");
			abort();
		}
		return 0;
	}
	if (t.hdr.nr_nodes > TRACE_MAX_NODES)
		abort();
	for (uint32_t i = 0; i < t.hdr.nr_nodes; i++)
		sum += (uint64_t)t.nodes[i].id + t.nodes[i].role + t.nodes[i].capacity_pages;
	/* The samples must lie wholly inside the input. */
	if (t.nr_samples &&
	    ((const uint8_t *)t.samples < data ||
	     (const uint8_t *)(t.samples + t.nr_samples) > data + size))
		abort();
	for (uint64_t i = 0; i < t.nr_samples; i++) {
		const struct cxlt_sample *s = &t.samples[i];

		sum += s->time_ns + s->tgid + s->source + s->weight + s->vpage;
		/* Version 2's events: a run's node record is looked up, never past the nodes. */
		if (trace__kind(&t, s) == TRACE_RUN)
			sum += (uint64_t)(trace__run_role(&t, s) + 1);
	}
	sink = sum;
	return 0;
}
