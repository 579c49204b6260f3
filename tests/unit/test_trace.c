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

#include "trace.h"
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
	h->version = 2;
	expect_refusal(buf, len, -EPROTO, "trace version 2, this build reads version 1");
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(written_trace_reads_back, setup, teardown),
		cmocka_unit_test_setup_teardown(trace_truncated_while_read_is_an_error, setup, teardown),
		cmocka_unit_test_setup_teardown(damaged_traces_are_refused_with_a_reason, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_and_empty_files_are_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
