// SPDX-License-Identifier: MIT
/*
 * The trace format: what the writer writes the reader reads back, and every
 * kind of damage in a file is refused with a message that says what is wrong
 * (traces may come from anyone: lengths are checked before use).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform.h"
#include "trace.h"
#include "tracker.h"
#include "util.h"

static char path[64];
static struct trace_cursor c;	/* 100 KiB: not on the stack */

static int setup(void **state)
{
	(void)state;
	snprintf(path, sizeof(path), "/tmp/cxlt-trace-test-%d", getpid());
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static void write_sample_trace(uint64_t n)
{
	struct trace_node nodes[2] = {
		{ .id = 0, .role = CXLT_NODE_FAST, .tier = 4, .capacity_pages = 1000 },
		{ .id = 1, .role = CXLT_NODE_SLOW, .tier = 22, .capacity_pages = 4000 },
	};
	struct trace_writer w;

	assert_int_equal(trace_writer__open(&w, path, 4096, nodes, 2), 0);
	for (uint64_t i = 0; i < n; i++) {
		struct cxlt_sample s = { .time_ns = i * 10, .tgid = 7 + i % 3, .source = CXLT_SRC_HINT,
					 .weight = 1 + i % 5, .vpage = 0x7f00000 + i };

		assert_int_equal(trace_writer__add(&w, &s, 1), 0);
	}
	assert_int_equal(trace_writer__close(&w), 0);
	assert_int_equal(w.samples, n);
}

static void written_trace_reads_back(void **state)
{
	struct trace t;
	char msg[128];

	(void)state;
	write_sample_trace(10000);
	assert_int_equal(trace__open(&t, path, msg, sizeof(msg)), 0);
	assert_int_equal(t.hdr.version, TRACE_VERSION);
	assert_int_equal(t.hdr.page_size, 4096);
	assert_int_equal(t.hdr.nr_nodes, 2);
	assert_int_equal(t.nodes[1].id, 1);
	assert_int_equal(t.nodes[1].role, CXLT_NODE_SLOW);
	assert_int_equal(t.nodes[1].capacity_pages, 4000);
	assert_int_equal(t.nr_samples, 10000);
	/* Twice: a second cursor starts over (the replay reads once per policy). */
	for (int pass = 0; pass < 2; pass++) {
		const struct cxlt_sample *s;
		uint64_t i = 0;

		trace_cursor__init(&c, &t);
		while ((s = trace_cursor__next(&c))) {
			assert_int_equal(s->time_ns, i * 10);
			assert_int_equal(s->tgid, 7 + i % 3);
			assert_int_equal(s->weight, 1 + i % 5);
			assert_int_equal(s->vpage, 0x7f00000 + i);
			i++;
		}
		assert_int_equal(c.err, 0);
		assert_int_equal(i, 10000);
	}
	trace__close(&t);
}

/*
 * time_scale stretches the clock from the first record, for every buffer
 * of a long trace (the cursor reads 4,096 at a time), a record out of
 * order included, and a time past u64 saturates instead of wrapping.
 */
static void time_scale_stretches_from_the_first_record(void **state)
{
	struct trace_node nodes[1] = { { .id = 0, .role = CXLT_NODE_FAST, .capacity_pages = 10 } };
	const struct cxlt_sample *s;
	struct trace_writer w;
	struct trace t;
	char msg[128];
	uint64_t i = 0;

	(void)state;
	assert_int_equal(trace_writer__open(&w, path, 4096, nodes, 1), 0);
	for (uint64_t k = 0; k < 10000; k++) {
		struct cxlt_sample x = { .time_ns = 1000 + 10 * k, .tgid = 1, .weight = 1, .vpage = k };

		if (k == 5000)
			x.time_ns = 990;			/* before the first */
		if (k == 9999)
			x.time_ns = UINT64_MAX / 2;
		assert_int_equal(trace_writer__add(&w, &x, 1), 0);
	}
	assert_int_equal(trace_writer__close(&w), 0);
	assert_int_equal(trace__open(&t, path, msg, sizeof(msg)), 0);
	t.time_scale = 4;
	trace_cursor__init(&c, &t);
	while ((s = trace_cursor__next(&c))) {
		uint64_t want = i == 5000 ? 960 : i == 9999 ? UINT64_MAX : 1000 + 40 * i;

		assert_int_equal(s->time_ns, want);
		i++;
	}
	assert_int_equal(i, 10000);
	trace__close(&t);
}

/*
 * A trace cut short after it was opened (issue 15, #10: a mapping took
 * SIGBUS): the cursor reads up to the cut, then stops with an error that
 * says so.  The samples before the cut come out whole.
 */
static void trace_truncated_while_read_is_an_error(void **state)
{
	const struct cxlt_sample *s;
	struct trace t;
	char msg[128];
	uint64_t i = 0, keep = 5000;

	(void)state;
	write_sample_trace(10000);
	assert_int_equal(trace__open(&t, path, msg, sizeof(msg)), 0);
	assert_int_equal(truncate(path, t.samples_off + keep * sizeof(struct cxlt_sample) + 7), 0);
	trace_cursor__init(&c, &t);
	while ((s = trace_cursor__next(&c))) {
		assert_int_equal(s->vpage, 0x7f00000 + i);
		i++;
	}
	assert_true(i <= keep);
	assert_int_equal(c.err, -ENODATA);
	assert_non_null(strstr(c.msg, "truncated while being read"));
	trace__close(&t);
}

/* Reads the file into memory so each test can damage a copy. */
static char *load(size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = ftell(f);
	rewind(f);
	buf = malloc(*len);
	assert_int_equal(fread(buf, 1, *len, f), *len);
	fclose(f);
	return buf;
}

static void expect_refusal(const void *buf, size_t len, int err, const char *words)
{
	struct trace t;
	char msg[256] = "";

	assert_int_equal(trace__parse(&t, buf, len, msg, sizeof(msg)), err);
	if (!strstr(msg, words))
		fail_msg("message '%s' lacks '%s'", msg, words);
}

static void damaged_traces_are_refused_with_a_reason(void **state)
{
	struct trace_header *h;
	size_t len;
	char *buf;

	(void)state;
	write_sample_trace(10);
	buf = load(&len);
	h = (struct trace_header *)buf;

	expect_refusal(buf, 0, -EINVAL, "not a cxltier trace");
	expect_refusal(buf, sizeof(*h) - 1, -EINVAL, "not a cxltier trace");
	expect_refusal(buf, len - 5, -EINVAL, "truncated: 19 stray bytes");
	expect_refusal(buf, sizeof(*h) + 10, -EINVAL, "truncated: the header names 2 nodes");

	h->magic[0] = 'X';
	expect_refusal(buf, len, -EINVAL, "not a cxltier trace");
	h->magic[0] = 'C';
	h->version = 3;
	expect_refusal(buf, len, -EPROTO, "trace version 3, this build reads versions 1 to 2");
	h->version = 0;
	expect_refusal(buf, len, -EPROTO, "trace version 0");
	h->version = 1;		/* an old trace: read */
	expect_refusal(buf, len, 0, "");
	h->version = TRACE_VERSION;
	h->nr_nodes = 65;
	expect_refusal(buf, len, -EINVAL, "65 nodes");
	h->nr_nodes = 2;
	h->sample_size = 16;
	expect_refusal(buf, len, -EINVAL, "sample 16 bytes");
	h->sample_size = sizeof(struct cxlt_sample);
	h->header_size = 0xffffffff;
	expect_refusal(buf, len, -EINVAL, "corrupt header");
	h->header_size = sizeof(*h);
	h->page_size = 1000;
	expect_refusal(buf, len, -EINVAL, "page size 1000");
	h->page_size = 4096;
	/* Found by the fuzzer: a header size that misaligns the samples. */
	h->header_size = sizeof(*h) + 1;
	expect_refusal(buf, len, -EINVAL, "corrupt header");
	h->header_size = sizeof(*h);
	/* Undamaged again: accepted. */
	expect_refusal(buf, len, 0, "");
	free(buf);
}

static void missing_and_empty_files_are_refused(void **state)
{
	struct trace t;
	char msg[128];
	FILE *f;

	(void)state;
	assert_int_equal(trace__open(&t, "/nonexistent/trace", msg, sizeof(msg)), -ENOENT);
	f = fopen(path, "w");
	fclose(f);
	assert_int_equal(trace__open(&t, path, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "empty"));
	assert_int_equal(trace__open(&t, "/tmp", msg, sizeof(msg)), -EINVAL);
}

/* A record as the file holds it. */
static void put(char *p, uint64_t time, uint32_t tgid, uint16_t source, uint16_t weight, uint64_t vpage)
{
	struct cxlt_sample s = { .time_ns = time, .tgid = tgid, .source = source,
				 .weight = weight, .vpage = vpage };

	memcpy(p, &s, sizeof(s));
}

/*
 * Version 2's events: the cursor gives samples only, or every record; a
 * resident run's node is the role of its node record.  In a version-1
 * file the same bytes are samples (of an unknown source), as they always were.
 */
static void events_are_skipped_and_runs_read(void **state)
{
	struct trace_header h = { .magic = TRACE_MAGIC, .version = 2, .header_size = sizeof(h),
				  .page_size = 4096, .nr_nodes = 2,
				  .sample_size = sizeof(struct cxlt_sample) };
	struct trace_node nodes[2] = {
		{ .id = 0, .role = CXLT_NODE_FAST }, { .id = 1, .role = CXLT_NODE_SLOW },
	};
	char buf[sizeof(h) + sizeof(nodes) + 6 * sizeof(struct cxlt_sample)];
	char *p = buf + sizeof(h) + sizeof(nodes);
	const struct cxlt_sample *x;
	struct trace t;
	char msg[128];
	int n;

	(void)state;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), nodes, sizeof(nodes));
	put(p, 1, 7, CXLT_SRC_HINT, 1, 0x100);
	put(p + 24, 2, 7, TRACE_RESIDENT + 1, 300, 0x200);
	put(p + 48, 2, 7, TRACE_RESIDENT + 0, 20, 0x400);
	put(p + 72, 2, 7, TRACE_RESIDENT + TRACE_RESIDENT_UNKNOWN, 5, 0x500);
	put(p + 96, 3, 7, 0x9000, 1, 0);	/* an event of a later kind: skipped */
	put(p + 120, 4, 7, CXLT_SRC_FAULT, 1, 0x101);
	assert_int_equal(trace__parse(&t, buf, sizeof(buf), msg, sizeof(msg)), 0);
	assert_int_equal(t.nr_samples, 6);
	trace_cursor__init(&c, &t);
	assert_non_null(x = trace_cursor__next(&c));
	assert_int_equal(x->vpage, 0x100);
	assert_non_null(x = trace_cursor__next(&c));
	assert_int_equal(x->vpage, 0x101);
	assert_null(trace_cursor__next(&c));

	trace_cursor__init_all(&c, &t);
	for (n = 0; (x = trace_cursor__next(&c)); n++) {
		static const enum trace_kind kind[] = { TRACE_SAMPLE, TRACE_RUN, TRACE_RUN, TRACE_RUN,
							TRACE_OTHER, TRACE_SAMPLE };
		static const int role[] = { 0, CXLT_NODE_SLOW, CXLT_NODE_FAST, -1 };

		assert_int_equal(trace__kind(&t, x), kind[n]);
		if (kind[n] == TRACE_RUN)
			assert_int_equal(trace__run_role(&t, x), role[n]);
	}
	assert_int_equal(n, 6);

	/* Version 1: every record is a sample. */
	((struct trace_header *)buf)->version = 1;
	assert_int_equal(trace__parse(&t, buf, sizeof(buf), msg, sizeof(msg)), 0);
	trace_cursor__init(&c, &t);
	for (n = 0; (x = trace_cursor__next(&c)); n++)
		assert_int_equal(trace__kind(&t, x), TRACE_SAMPLE);
	assert_int_equal(n, 6);
}

/*
 * Process 4242 with the regions f as its sweep found them, written as runs
 * at time_ns (pf: where a region is asked page by page; NULL: never); the
 * number of runs written.
 */
static uint64_t write_target(const struct region_found *f, size_t n, const struct platform *pf,
			     uint64_t time_ns)
{
	struct trace_node nodes[2] = {
		{ .id = 0, .role = CXLT_NODE_FAST }, { .id = 1, .role = CXLT_NODE_SLOW },
	};
	struct trace_writer w;
	struct tracker tr;

	assert_int_equal(tracker__init(&tr, 0.5), 0);
	assert_int_equal(tracker__add_target(&tr, 4242, 1, "app", ORIGIN_PID), 0);
	for (size_t i = 0; i < n; i++)
		assert_non_null(tracker__region_found(&tr, &tr.targets[0], &f[i]));
	tr.pf = pf;
	assert_int_equal(trace_writer__open(&w, path, 4096, nodes, 2), 0);
	assert_int_equal(trace_writer__add_target(&w, time_ns, &tr.targets[0], pf ? &tr : NULL), 0);
	assert_int_equal(trace_writer__close(&w), 0);
	tracker__free(&tr);
	return w.runs;
}

/*
 * The recorder's runs from the tracker's regions: a region's pages of its
 * main node, then of its other node, over its resident chunks; a run of
 * one node goes on into the next region; a partly resident region's pages
 * spread over its resident chunks.
 */
static void a_target_is_written_as_runs(void **state)
{
	static const struct { uint64_t vpage; uint16_t pages, source; } want[] = {
		{ 0x200, 412, TRACE_RESIDENT + 1 }, { 0x39c, 100, TRACE_RESIDENT + 0 },
		{ 0x400, 512, TRACE_RESIDENT + 1 }, { 0x600, 512, TRACE_RESIDENT + 1 },
		{ 0xa00, 5, TRACE_RESIDENT + 1 }, { 0xa08, 5, TRACE_RESIDENT + 1 },
	};
	struct region_found f[] = {
		{ .base = 0x200000, .resident_bits = ~0ULL, .resident = 512, .node_id = { 0, 1 },
		  .on_node = { 100, 412 } },
		{ .base = 0x600000, .resident_bits = ~0ULL, .resident = 512, .node_id = { 1, -1 },
		  .on_node = { 512, 0 } },
		{ .base = 0x400000, .resident_bits = ~0ULL, .resident = 512, .node_id = { 1, -1 },
		  .on_node = { 512, 0 } },
		{ .base = 0xa00000, .resident_bits = 0x3, .resident = 10, .node_id = { 1, -1 },
		  .on_node = { 10, 0 } },
	};
	const struct cxlt_sample *x;
	struct trace t;
	char msg[128];
	uint32_t n = 0;

	(void)state;
	/* 1024 pages of one node in a row: one run, however many regions. */
	assert_int_equal(write_target(f, ARRAY_SIZE(f), NULL, 77), 5);

	assert_int_equal(trace__open(&t, path, msg, sizeof(msg)), 0);
	assert_int_equal(t.hdr.version, TRACE_VERSION);
	trace_cursor__init_all(&c, &t);
	while ((x = trace_cursor__next(&c))) {
		assert_true(n < ARRAY_SIZE(want));
		assert_int_equal(trace__kind(&t, x), TRACE_RUN);
		assert_int_equal(x->tgid, 4242);
		assert_int_equal(x->time_ns, 77);
		/* Runs 3 and 4 of want are one run in the file. */
		if (n == 2) {
			assert_int_equal(x->vpage, 0x400);
			assert_int_equal(x->weight, 1024);
			n += 2;
			continue;
		}
		assert_int_equal(x->vpage, want[n].vpage);
		assert_int_equal(x->weight, want[n].pages);
		assert_int_equal(x->source, want[n].source);
		n++;
	}
	assert_int_equal(n, ARRAY_SIZE(want));
	trace__close(&t);
}

/*
 * Huge pages follow the runs: consecutive ones in one record (source
 * TRACE_HUGE + order 9: 512 pages of 4 KiB), the regions of small pages none.
 */
static void huge_pages_are_written_after_the_runs(void **state)
{
	struct region_found f[] = {
		{ .base = 0x400000, .resident_bits = ~0ULL, .resident = 512, .huge = true,
		  .node_id = { 1, -1 }, .on_node = { 512, 0 } },
		{ .base = 0x200000, .resident_bits = ~0ULL, .resident = 512, .huge = true,
		  .node_id = { 1, -1 }, .on_node = { 512, 0 } },
		{ .base = 0x600000, .resident_bits = ~0ULL, .resident = 512,
		  .node_id = { 1, -1 }, .on_node = { 512, 0 } },
		{ .base = 0x800000, .resident_bits = ~0ULL, .resident = 512, .huge = true,
		  .node_id = { 0, -1 }, .on_node = { 512, 0 } },
	};
	static const struct { uint64_t vpage; uint16_t pages; } want[] = { { 0x200, 1024 }, { 0x800, 512 } };
	const struct cxlt_sample *x;
	struct trace t;
	char msg[128];
	uint32_t runs = 0, n = 0;

	(void)state;
	write_target(f, ARRAY_SIZE(f), NULL, 9);
	assert_int_equal(trace__open(&t, path, msg, sizeof(msg)), 0);
	trace_cursor__init_all(&c, &t);
	while ((x = trace_cursor__next(&c))) {
		if (trace__kind(&t, x) == TRACE_RUN) {
			assert_int_equal(n, 0);	/* the runs first */
			runs += x->weight;
			continue;
		}
		assert_int_equal(trace__kind(&t, x), TRACE_HUGE_RUN);
		assert_true(n < ARRAY_SIZE(want));
		assert_int_equal(x->source, TRACE_HUGE + 9);
		assert_int_equal(x->tgid, 4242);
		assert_int_equal(x->time_ns, 9);
		assert_int_equal(x->vpage, want[n].vpage);
		assert_int_equal(x->weight, want[n].pages);
		n++;
	}
	assert_int_equal(n, ARRAY_SIZE(want));
	assert_int_equal(runs, 4 * 512);
	trace__close(&t);
}

/* A machine where page k of a region is on node k % 2 for k < 3, not resident beyond. */
static long fake_query(void *ctx, int pid, unsigned long count, void **pages, const int *nodes,
		       int *status, int flags)
{
	(void)ctx, (void)pid, (void)nodes, (void)flags;
	for (unsigned long i = 0; i < count; i++) {
		uint64_t k = ((uintptr_t)pages[i] >> CXLT_PAGE_SHIFT) % REGION_PAGES;

		status[i] = k < 3 ? (int)(k % 2) : -ENOENT;
	}
	return 0;
}

/* A region split between nodes is asked page by page: exact runs, not the estimate. */
static void a_mixed_region_is_asked(void **state)
{
	struct platform pf = { .move_pages = fake_query };
	struct region_found f = { .base = 0xc00000, .resident_bits = 0x1, .resident = 3,
				  .node_id = { 0, 1 }, .on_node = { 2, 1 } };
	static const uint16_t source[] = { TRACE_RESIDENT + 0, TRACE_RESIDENT + 1, TRACE_RESIDENT + 0 };
	const struct cxlt_sample *x;
	struct trace t;
	char msg[128];
	uint32_t n = 0;

	(void)state;
	assert_int_equal(write_target(&f, 1, &pf, 5), 3);
	assert_int_equal(trace__open(&t, path, msg, sizeof(msg)), 0);
	trace_cursor__init_all(&c, &t);
	for (; (x = trace_cursor__next(&c)); n++) {
		assert_true(n < 3);
		assert_int_equal(x->vpage, 0xc00 + n);
		assert_int_equal(x->weight, 1);
		assert_int_equal(x->source, source[n]);
	}
	assert_int_equal(n, 3);
	trace__close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(written_trace_reads_back, setup, teardown),
		cmocka_unit_test_setup_teardown(time_scale_stretches_from_the_first_record, setup, teardown),
		cmocka_unit_test_setup_teardown(trace_truncated_while_read_is_an_error, setup, teardown),
		cmocka_unit_test_setup_teardown(damaged_traces_are_refused_with_a_reason, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_and_empty_files_are_refused, setup, teardown),
		cmocka_unit_test(events_are_skipped_and_runs_read),
		cmocka_unit_test_setup_teardown(a_target_is_written_as_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(a_mixed_region_is_asked, setup, teardown),
		cmocka_unit_test_setup_teardown(huge_pages_are_written_after_the_runs, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
