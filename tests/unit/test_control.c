// SPDX-License-Identifier: MIT
/*
 * The control socket's request parser: every valid request parses to what
 * it says, and anything else — empty, unknown, wrong arity, bad numbers,
 * non-printable bytes, too long, too many words — is refused with a reason.
 * Names a process chose are escaped for terminals, logs and metric labels.
 * The socket server never waits on a client: a slow one neither holds up
 * serve nor others, and is dropped at its deadline; past the cap, new
 * connections are closed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"
#include "status.h"
#include "util.h"

static struct control_req req;
static char err[256];

static int parse(const char *s)
{
	err[0] = '\0';
	return control__parse(s, strlen(s), &req, err, sizeof(err));
}

static void valid_requests_parse(void **state)
{
	(void)state;
	assert_int_equal(parse("status\n"), 0);
	assert_int_equal(req.cmd, CTL_STATUS);
	assert_int_equal(parse("targets"), 0);
	assert_int_equal(req.cmd, CTL_TARGETS);
	assert_int_equal(parse("metrics"), 0);
	assert_int_equal(parse("pause"), 0);
	assert_int_equal(req.cmd, CTL_PAUSE);
	assert_int_equal(parse("resume"), 0);
	assert_int_equal(parse("rate 128.5"), 0);
	assert_int_equal(req.cmd, CTL_RATE);
	assert_true(req.rate_mbps == 128.5);
	assert_int_equal(parse("policy  hotcold promote_heat=2   demote_idle=0\n"), 0);
	assert_int_equal(req.cmd, CTL_POLICY);
	assert_string_equal(req.policy, "hotcold");
	assert_int_equal(req.nr_params, 2);
	assert_string_equal(req.params[1], "demote_idle=0");
}

static void expect_refused(const char *s, size_t len, const char *words)
{
	assert_int_equal(control__parse(s, len, &req, err, sizeof(err)), -EINVAL);
	if (!strstr(err, words))
		fail_msg("'%s': message '%s' lacks '%s'", s, err, words);
}

static void bad_requests_are_refused_with_a_reason(void **state)
{
	static char big[CONTROL_MAX_LINE + 10];
	char many[2048] = "policy p";

	(void)state;
	expect_refused("", 0, "empty request");
	expect_refused("   \n", 4, "empty request");
	expect_refused("reboot", 6, "unknown request 'reboot'");
	expect_refused("status now", 10, "'status' takes no arguments");
	expect_refused("rate", 4, "'rate' takes one number");
	expect_refused("rate 1 2", 8, "'rate' takes one number");
	expect_refused("rate -5", 7, "rate '-5': expected MiB/s");
	expect_refused("rate nan", 8, "rate 'nan'");
	expect_refused("policy", 6, "'policy' takes a name");
	expect_refused("policy p key", 12, "policy parameter 'key': expected KEY=VALUE");
	expect_refused("policy p =v", 11, "policy parameter '=v'");
	expect_refused("sta\x01tus", 7, "non-printable byte 0x01 at 3");
	expect_refused("status\n\n", 8, "non-printable byte 0x0a at 6");
	expect_refused("st\0tus", 6, "non-printable byte 0x00 at 2");
	memset(big, 'a', sizeof(big));
	expect_refused(big, sizeof(big), "longer than");
	for (int i = 0; i < CXLT_MAX_PARAMS + 1; i++)
		strcat(many, " k=v");
	expect_refused(many, strlen(many), "too many words");
}

/* Each row of the command table is in the table's order, and documented in the man page. */
static void every_command_is_documented(void **state)
{
	FILE *f = fopen("man/cxltierctl.8", "r");
	static char man[1 << 16];
	size_t n;

	(void)state;
	assert_non_null(f);
	n = fread(man, 1, sizeof(man) - 1, f);
	man[n] = '\0';
	fclose(f);
	for (int i = 0; i < CTL_NR_CMDS; i++) {
		const struct control_command *c = &control__commands[i];
		char b[64], bi[64], br[64];

		assert_int_equal(c->cmd, i);
		assert_ptr_equal(control__command(c->name), c);
		snprintf(b, sizeof(b), "\n.B %s\n", c->name);
		snprintf(bi, sizeof(bi), "\n.BI %s ", c->name);
		snprintf(br, sizeof(br), "\n.BR %s ", c->name);
		if (!strstr(man, b) && !strstr(man, bi) && !strstr(man, br))
			fail_msg("'%s' is not in man/cxltierctl.8", c->name);
	}
	assert_null(control__command("top"));
}

static void names_are_escaped(void **state)
{
	char out[STR_ESCAPED_SIZE(16)], small[8];

	(void)state;
	assert_string_equal(str_escape("sleep", out, sizeof(out)), "sleep");
	assert_string_equal(str_escape("\x1b[2J\n", out, sizeof(out)), "\\x1b[2J\\x0a");
	assert_string_equal(str_escape("a\\b\x7f\xc3", out, sizeof(out)), "a\\\\b\\x7f\\xc3");
	assert_string_equal(str_escape(NULL, out, sizeof(out)), "");
	/* Cut at a whole escape, never half of one. */
	assert_string_equal(str_escape("ab\x1b" "cd", small, sizeof(small)), "ab\\x1bc");
	assert_string_equal(str_escape("abcd\x1b", small, sizeof(small)), "abcd");
}

static void metric_labels_are_escaped(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	status__label(f, "a\"b\\c\n\x1b");
	fclose(f);
	/* Printable first (\\ and \xHH), then the exposition format's \\ and \". */
	assert_string_equal(buf, "a\\\"b\\\\\\\\c\\\\x0a\\\\x1b");
	free(buf);
}

static char *answer(void *ctx, const struct control_req *r)
{
	(void)ctx;
	return strdup(r->cmd == CTL_STATUS ? "{\"ok\": true}" : "{}");
}

static int client(const char *path, const char *send_text)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (send_text)
		assert_int_equal(write(fd, send_text, strlen(send_text)), (ssize_t)strlen(send_text));
	return fd;
}

/* Serves until fd has something to read (a reply or EOF); false at the deadline. */
static bool serve_until_readable(struct control *c, int fd, double seconds)
{
	double end = now_sec() + seconds;

	while (now_sec() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double t0 = now_sec();

		control__serve(c, answer, NULL);
		/* One serve never waits on a client. */
		assert_true(now_sec() - t0 < 0.05);
		if (poll(&p, 1, 10) > 0)
			return true;
	}
	return false;
}

static void slow_clients_never_hold_the_loop(void **state)
{
	char dir[] = "/tmp/cxlt-control-XXXXXX", buf[256];
	struct control c;
	int slow, quick, extra[CONTROL_MAX_CONNS + 4];
	ssize_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(control__open(&c, &(struct control_opts){ .run_dir = dir }), 0);
	slow = client(c.path, "sta");	/* never ends its line */
	quick = client(c.path, "status\n");
	assert_true(serve_until_readable(&c, quick, 2));
	n = read(quick, buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "{\"ok\": true}\n");
	close(quick);
	/* The slow one is dropped at its deadline, unanswered, and not before. */
	assert_true(control__timeout_ms(&c) > 0);
	assert_true(serve_until_readable(&c, slow, CONTROL_REQUEST_SEC + 2));
	assert_int_equal(read(slow, buf, sizeof(buf)), 0);
	close(slow);

	/* At the cap, what comes beyond it is closed; the open ones stay served. */
	for (size_t i = 0; i < ARRAY_SIZE(extra); i++) {
		extra[i] = client(c.path, NULL);
		control__serve(&c, answer, NULL);	/* accepts: the listen backlog stays short */
	}
	for (size_t i = CONTROL_MAX_CONNS; i < ARRAY_SIZE(extra); i++) {
		struct pollfd p = { .fd = extra[i], .events = POLLIN };

		assert_int_equal(poll(&p, 1, 1000), 1);
		assert_int_equal(read(extra[i], buf, sizeof(buf)), 0);
	}
	assert_int_equal(write(extra[0], "pause\n", 6), 6);
	assert_true(serve_until_readable(&c, extra[0], 2));
	assert_true(read(extra[0], buf, sizeof(buf)) > 0);
	for (size_t i = 0; i < ARRAY_SIZE(extra); i++)
		close(extra[i]);
	control__close(&c);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(valid_requests_parse),
		cmocka_unit_test(bad_requests_are_refused_with_a_reason),
		cmocka_unit_test(every_command_is_documented),
		cmocka_unit_test(names_are_escaped),
		cmocka_unit_test(metric_labels_are_escaped),
		cmocka_unit_test(slow_clients_never_hold_the_loop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
