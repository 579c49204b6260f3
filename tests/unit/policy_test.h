/* SPDX-License-Identifier: MIT */
/*
 * What the policy tests share: the built policies' directory ($BUILD/policies),
 * a temporary directory for the group, and a loaded policy's parameter by key.
 */
#ifndef CXLT_POLICY_TEST_H
#define CXLT_POLICY_TEST_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy_host.h"

static char policies[PATH_MAX];		/* $BUILD/policies */
static char tmpdir[] = "/tmp/cxlt-policy-XXXXXX";

static int group_setup(void **state)
{
	const char *build = getenv("BUILD");

	(void)state;
	snprintf(policies, sizeof(policies), "%s/policies", build && *build ? build : "build");
	if (!mkdtemp(tmpdir))
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) ? -1 : 0;
}

static const char *param(const struct policy_host *h, const char *key)
{
	for (uint32_t i = 0; i < h->nr_params; i++)
		if (!strcmp(h->params[i].key, key))
			return h->params[i].value;
	return NULL;
}

#endif
