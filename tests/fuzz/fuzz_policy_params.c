// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: policy parameters, as policy_host__load() checks them
 * against a policy's declared keys and as the shipped policies' init()
 * parses the values (strtod, strtoul).
 *
 * The input is cut at NUL bytes and newlines into strings.  If the first
 * one names a shipped policy (age, hotcold, hotset, tpp) that policy is
 * loaded, else hotcold; the other strings are the key=value list.
 *
 * The policies come from build/fuzz/policies/ (beside this binary), built by
 * build.sh with ASan and UBSan so that init() is checked too.  Each run
 * loads the .so afresh, as the agent does on SIGHUP: that is most of the
 * cost of one execution.  CXLT_FUZZ_POLICY_DIR overrides the directory.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_host.h"
#include "util.h"

#define MAX_KV 64

static char policy_dir[PATH_MAX];
static const char *const policies[] = { "age", "hotcold", "hotset", "tpp" };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("CXLT_FUZZ_POLICY_DIR");
	struct policy_host h;
	char *kv[] = { NULL };

	(void)argc;
	(void)argv;
	if (dir)
		snprintf(policy_dir, sizeof(policy_dir), "%s", dir);
	else
		default_policy_dir(policy_dir, sizeof(policy_dir));
	/* Fail early and loudly if the policies are not where we look. */
	for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
		if (policy_host__load(&h, policies[i], policy_dir, kv, 0)) {
			fprintf(stderr, "fuzz_policy_params: cannot load %s from %s (run tests/fuzz/build.sh)\n",
				policies[i], policy_dir);
			exit(1);
		}
		policy_host__unload(&h);
	}
	log_verbosity = -1;	/* quiet from here: the errors are the point */
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *name = NULL;
	char *copy, *kv[MAX_KV], *p, *end;
	struct policy_host h;
	int nr = 0;

	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	for (size_t i = 0; i < size; i++)
		if (copy[i] == '\n')
			copy[i] = '\0';
	for (p = copy, end = copy + size; p < end && nr < MAX_KV; p += strlen(p) + 1) {
		if (p == copy) {
			for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
				if (!strcmp(p, policies[i]))
					name = policies[i];
			if (name)
				continue;
		}
		kv[nr++] = p;
	}
	if (!name)
		name = "hotcold";
	if (policy_host__load(&h, name, policy_dir, kv, nr) == 0) {
		/* Every declared key is present once, with a value. */
		for (uint32_t i = 0; i < h.nr_params; i++)
			if (!h.params[i].key || !h.params[i].value)
				abort();
		policy_host__unload(&h);
	}
	free(copy);
	return 0;
}
