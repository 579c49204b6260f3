// SPDX-License-Identifier: MIT
/*
 * Service integration: the sd_notify datagrams reach $NOTIFY_SOCKET (path
 * and abstract names) as systemd expects them, nothing is sent without it,
 * and the watchdog interval is taken only when it is meant for us.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "service.h"

static int listener(const char *name, bool abstract)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len = offsetof(struct sockaddr_un, sun_path) + strlen(name);
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct timeval tv = { .tv_sec = 2 };

	assert_true(fd >= 0);
	strcpy(sa.sun_path, name);
	if (abstract)
		sa.sun_path[0] = '\0';
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void expect_datagram(int fd, const char *want)
{
	char buf[256];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);

	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

static void notify_reaches_path_and_abstract_sockets(void **state)
{
	char path[64], abstract[64];
	int fd, afd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/cxlt-notify-%d", getpid());
	unlink(path);
	fd = listener(path, false);
	setenv("NOTIFY_SOCKET", path, 1);
	assert_int_equal(service__notify("READY=1"), 0);
	expect_datagram(fd, "READY=1");
	assert_int_equal(service__notify("WATCHDOG=1"), 0);
	expect_datagram(fd, "WATCHDOG=1");
	close(fd);
	unlink(path);

	snprintf(abstract, sizeof(abstract), "@cxlt-notify-%d", getpid());
	afd = listener(abstract, true);
	setenv("NOTIFY_SOCKET", abstract, 1);
	assert_int_equal(service__notify("STOPPING=1"), 0);
	expect_datagram(afd, "STOPPING=1");
	close(afd);

	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(service__notify("READY=1"), 0);	/* not under systemd: a no-op */
}

static void watchdog_interval_only_when_meant_for_us(void **state)
{
	char pid[32];

	(void)state;
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	assert_int_equal(service__watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "30000000", 1);
	assert_int_equal(service__watchdog_usec(), 30000000);
	snprintf(pid, sizeof(pid), "%d", getpid());
	setenv("WATCHDOG_PID", pid, 1);
	assert_int_equal(service__watchdog_usec(), 30000000);
	setenv("WATCHDOG_PID", "1", 1);	/* for another process */
	assert_int_equal(service__watchdog_usec(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(notify_reaches_path_and_abstract_sockets),
		cmocka_unit_test(watchdog_interval_only_when_meant_for_us),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
