// SPDX-License-Identifier: MIT
/*
 * syscall: a hostile test policy.  From the third epoch its decide() tries
 * to open a file, a system call policies may not make: the live agent's
 * sandbox must stop it and say so (tests/live/policy-sandbox.sh).
 */
#include <fcntl.h>
#include <unistd.h>

#include "cxltier/policy.h"

static int syscall_decide(void *state, const struct cxlt_view *v, struct cxlt_plan *plan)
{
	(void)state;
	(void)plan;
	if (v->epoch >= 3) {
		int fd = open("/etc/passwd", O_RDONLY);

		if (fd >= 0)
			close(fd);
	}
	return 0;
}

const struct cxlt_policy cxlt_policy = {
	.sz = sizeof(struct cxlt_policy),
	.abi = CXLT_POLICY_ABI,
	.name = "syscall",
	.description = "test: opens a file in decide() from the third epoch",
	.decide = syscall_decide,
};
