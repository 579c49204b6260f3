// SPDX-License-Identifier: MIT
/*
 * The policy's own process (user/decision/sandbox.c): hotcold deciding there plans
 * exactly what it plans in-process on the same view, epoch after epoch,
 * and keeps its policy words; a large view (glibc's qsort asks the kernel
 * for the machine's memory) passes the seccomp filter.  init runs there
 * too when the agent did not run it: its failure and its crash fail the
 * start, said.  The hostile policies' decisions are in
 * tests/live/policy-sandbox.sh, against the live agent.
 * Needs $BUILD/policies/hotcold.so (make tests builds it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_host.h"
#include "sandbox.h"

#define PAGES (200 * 1024)

static struct cxlt_page *make_pages(void)
{
	struct cxlt_page *p = calloc(PAGES, sizeof(*p));

	for (uint32_t i = 0; i < PAGES; i++) {
		p[i] = (struct cxlt_page){ .addr = (uint64_t)i << 12, .node = i < PAGES / 4 ? 0 : 1,
					   .since_move = CXLT_NEVER_MOVED, .npages = 1 };
		p[i].samples = (i * 2654435761u) % 32 == 0 ? 4 + i % 5 : 0;
		p[i].heat = p[i].samples;
		p[i].flags = p[i].samples ? CXLT_PAGE_SAMPLED : 0;
	}
	return p;
}

static void same_plans_in_and_out_of_process(void **state)
{
	const char *build = getenv("BUILD");
	char dir[256];
	struct policy_host here, there;
	struct cxlt_page *a = make_pages(), *b = make_pages();
	struct cxlt_node nodes[2] = {
		{ .id = 0, .role = CXLT_NODE_FAST, .total_pages = PAGES / 2, .free_pages = PAGES / 4 },
		{ .id = 1, .role = CXLT_NODE_SLOW, .total_pages = PAGES, .free_pages = PAGES / 2 },
	};
	uint32_t *wa = calloc(PAGES, sizeof(*wa)), *wb = calloc(PAGES, sizeof(*wb));
	struct cxlt_target_view ta = { .pid = 1, .comm = "t", .pages = a, .nr_pages = PAGES,
				       .policy_words = wa };
	struct cxlt_target_view tb = ta;
	struct cxlt_move *ma = malloc(PAGES * sizeof(*ma)), *mb = malloc(PAGES * sizeof(*mb));
	struct cxlt_view va = { .sz = sizeof(va), .page_size = 4096, .epoch_ms = 1000, .nr_nodes = 2,
				.nodes = nodes, .nr_targets = 1, .targets = &ta,
				.budget_pages = PAGES / 8, .fast_free_pages = PAGES / 4,
				.fast_low_pages = PAGES / 100, .fast_high_pages = PAGES / 40,
				.heat_decay = 0.5, .pingpong_epochs = 10,
				.source_flags = CXLT_SOURCE_REPEATS };
	struct cxlt_view vb = va;
	struct sandbox sb;

	(void)state;
	tb.pages = b;
	tb.policy_words = wb;
	vb.targets = &tb;
	snprintf(dir, sizeof(dir), "%s/policies", build ? build : "build");
	/* hotset: it keeps state in its words, which must come back from the sandbox. */
	assert_int_equal(policy_host__load(&here, "hotset", dir, NULL, 0), 0);
	/* As the agent does: init runs only in the child. */
	assert_int_equal(policy_host__open(&there, "hotset", dir, NULL, 0), 0);
	assert_int_equal(sandbox__start(&sb, &there, 60000), 0);
	assert_null(there.state);
	for (int e = 1; e <= 3; e++) {
		struct cxlt_plan pa = { .moves = ma, .cap = PAGES / 8 }, pb = { .moves = mb, .cap = PAGES / 8 };

		va.epoch = vb.epoch = e;
		assert_int_equal(here.ops->decide(here.state, &va, &pa), 0);
		assert_int_equal(sandbox__decide(&sb, &vb, &pb), 0);
		assert_string_equal(sb.failed, "");
		assert_int_equal(pa.nr, pb.nr);
		assert_true(pa.nr > 0);
		assert_memory_equal(ma, mb, pa.nr * sizeof(*ma));
		for (uint32_t i = 0; i < PAGES; i++)
			if (wa[i] != wb[i])
				fail_msg("epoch %d page %u: policy word %u here, %u from the sandbox", e, i,
					 wa[i], wb[i]);
		assert_memory_not_equal(wb, (uint32_t[4]){ 0 }, sizeof(uint32_t[4]));
	}
	sandbox__stop(&sb);
	assert_int_equal(sb.pid, 0);
	assert_int_equal(sandbox__decide(&sb, &vb, &(struct cxlt_plan){ .moves = mb, .cap = 1 }),
			 -ECHILD);
	policy_host__unload(&here);
	policy_host__unload(&there);
	free(a);
	free(b);
	free(wa);
	free(wb);
	free(ma);
	free(mb);
}

static void init_failure_and_crash_fail_the_start(void **state)
{
	const char *build = getenv("BUILD");
	char path[256];
	char *bad[] = { "how=bogus" }, *crash[] = { "when=init" };
	struct policy_host h;
	struct sandbox sb;

	(void)state;
	snprintf(path, sizeof(path), "%s/tests/policies/crash.so", build ? build : "build");
	assert_int_equal(policy_host__open(&h, path, NULL, bad, 1), 0);
	assert_int_equal(sandbox__start(&sb, &h, 60000), -EINVAL);
	assert_int_equal(sb.pid, 0);
	assert_string_equal(sb.failed, "init failed: how=bogus: expected null or abort");
	policy_host__unload(&h);

	assert_int_equal(policy_host__open(&h, path, NULL, crash, 1), 0);
	assert_int_equal(sandbox__start(&sb, &h, 60000), -ECHILD);
	assert_int_equal(sb.pid, 0);
	/* Sanitizer builds: the crash handler's own calls end the child first (SIGSYS). */
	if (!strstr(sb.failed, "init: crashed: Segmentation fault") &&
	    !strstr(sb.failed, "init: made a system call"))
		fail_msg("sandbox says: %s", sb.failed);
	policy_host__unload(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_plans_in_and_out_of_process),
		cmocka_unit_test(init_failure_and_crash_fail_the_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
