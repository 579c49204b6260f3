/* SPDX-License-Identifier: MIT */
/* Loads a policy shared object through include/cxltier/policy.h (ABI v1). */
#ifndef CXLT_POLICY_HOST_H
#define CXLT_POLICY_HOST_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "cxltier/policy.h"

#define CXLT_MAX_PARAMS 32

struct policy_host {
	void *dl;
	int memfd;		/* the loaded copy; names the object for dlopen */
	const struct cxlt_policy *ops;
	void *state;
	bool inited;		/* init() ran in this process */
	char path[PATH_MAX];
	uint32_t nr_params;
	struct cxlt_param params[CXLT_MAX_PARAMS];	/* every declared key, defaults filled */
	char *strings;	/* storage behind params */
};

/*
 * Resolves name (a bare name is looked up as DIR/NAME.so; a name with a '/'
 * is a path), checks that the file is trusted (owned by root or by us, not
 * writable by group or others), checks the ABI, validates the key=value
 * parameters and runs init.  Prints the reason and returns -errno on failure.
 */
int policy_host__load(struct policy_host *h, const char *name, const char *dir,
		      char *const *kv, int nr_kv);
/*
 * The same without init, for a caller that runs init elsewhere (the live
 * agent: in the policy's own process, sandbox.c).
 */
int policy_host__open(struct policy_host *h, const char *name, const char *dir,
		      char *const *kv, int nr_kv);
/* Runs the policy's init here; 0, or -errno with the policy's reason in msg. */
int policy_host__init(struct policy_host *h, char *msg, size_t len);
void policy_host__unload(struct policy_host *h);
/* Lists the parameters of a loaded policy on stdout. */
void policy_host__describe(const struct policy_host *h);

#endif
