// SPDX-License-Identifier: MIT
/*
 * What deciding in the policy's own process costs (a benchmark, not a
 * test): the real hotset .so decides on a synthetic view, in the agent's
 * process and through the sandbox (copy in, wake, wait, copy back), at
 * 32 Ki and 1 Mi pages.  The ratio is in the same run, so a busy machine
 * moves both sides alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_host.h"
#include "sandbox.h"
#include "util.h"

#define ROUNDS 20

static double per_decision(struct policy_host *ph, struct sandbox *sb, struct cxlt_view *v,
			   struct cxlt_plan *plan)
{
	double t0 = now_sec();

	for (int r = 0; r < ROUNDS; r++) {
		plan->nr = 0;
		v->epoch++;
		if (sb ? sandbox__decide(sb, v, plan) : ph->ops->decide(ph->state, v, plan)) {
			fprintf(stderr, "bench_sandbox: decide failed: %s\n", sb ? sb->failed : "");
			exit(1);
		}
	}
	return (now_sec() - t0) * 1000 / ROUNDS;
}

static void one_size(struct policy_host *ph, uint64_t pages)
{
	struct cxlt_node nodes[2] = {
		{ .id = 0, .role = CXLT_NODE_FAST, .total_pages = pages / 4, .free_pages = 0 },
		{ .id = 1, .role = CXLT_NODE_SLOW, .total_pages = pages, .free_pages = pages / 2 },
	};
	struct cxlt_page *p = calloc(pages, sizeof(*p));
	struct cxlt_target_view t = { .pid = 1000, .comm = "bench", .pages = p, .nr_pages = pages };
	struct cxlt_move *moves = malloc((pages / 8 + 1) * sizeof(*moves));
	struct cxlt_view v = { .sz = sizeof(v), .page_size = 4096, .epoch_ms = 1000, .nr_nodes = 2,
			       .nodes = nodes, .nr_targets = 1, .targets = &t,
			       .budget_pages = pages / 8, .heat_decay = 0.5, .pingpong_epochs = 10,
			       .source_flags = CXLT_SOURCE_REPEATS };
	struct cxlt_plan plan = { .moves = moves, .cap = (uint32_t)(pages / 8) };
	struct sandbox sb;
	double in, out;

	for (uint64_t i = 0; i < pages; i++) {
		p[i] = (struct cxlt_page){ .addr = i << 12, .node = i < pages / 4 ? 0 : 1,
					   .since_move = CXLT_NEVER_MOVED };
		p[i].samples = (i * 2654435761u) % 64 == 0 ? 8 : 0;
		p[i].heat = p[i].samples;
	}
	if (sandbox__start(&sb, ph, 60000)) {
		fprintf(stderr, "bench_sandbox: %s\n", sb.failed);
		exit(1);
	}
	in = per_decision(ph, NULL, &v, &plan);
	out = per_decision(ph, &sb, &v, &plan);
	printf("%8llu pages: decide in the agent %.2f ms, in its own process %.2f ms: +%.2f ms per epoch (x%.2f)\n",
	       (unsigned long long)pages, in, out, out - in, out / in);
	sandbox__stop(&sb);
	free(p);
	free(moves);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "build/policies";
	struct policy_host ph;

	if (policy_host__load(&ph, "hotset", dir, NULL, 0))
		return 1;
	one_size(&ph, 32768);
	one_size(&ph, 1 << 20);
	policy_host__unload(&ph);
	return 0;
}
