// SPDX-License-Identifier: MIT
/*
 * The control socket's request parser: every valid request parses to what
 * it says, and anything else — empty, unknown, wrong arity, bad numbers,
 * non-printable bytes, too long, too many words — is refused with a reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "control.h"

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
	for (int i = 0; i < CONTROL_MAX_PARAMS + 1; i++)
		strcat(many, " k=v");
	expect_refused(many, strlen(many), "too many words");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(valid_requests_parse),
		cmocka_unit_test(bad_requests_are_refused_with_a_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
