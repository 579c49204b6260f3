/* SPDX-License-Identifier: MIT */
/*
 * Kernel settings the agent changes while it runs, and restores when it
 * stops: NUMA balancing in normal+tiering mode (3) with the kernel's own
 * promotion rate limit at 0.  The kernel's scanner then keeps producing NUMA
 * hint faults on both tiers — the `hint` sampling source — while it promotes
 * nothing itself, so every placement decision is the agent's (measured in
 * shared/TESTBED.md).
 */
#ifndef CXLT_KSETTINGS_H
#define CXLT_KSETTINGS_H

#include <stdbool.h>

#define KSET_MAX 6

struct ksetting {
	const char *path;
	char old[64];
	bool changed;
};

struct ksettings {
	const char *root;	/* prefix for tests; "" for the real /proc */
	char state[512];	/* where the old values are kept until restored */
	struct ksetting set[KSET_MAX];
	int nr;
};

/* True when this kernel has NUMA balancing to sample with. */
bool ksettings__hint_capable(const char *root);
/*
 * Applies the hint-sampling settings, remembering the old values in memory
 * and in the state file (written before any change, so that an agent killed
 * with SIGKILL leaves enough behind for the next start to restore); -errno.
 * scan_period_ms caps the scanner's period: the sampling-rate knob.  When the
 * kernel's tiering mode is already on and the state file does not say we
 * turned it on, another tool is using it: -EBUSY unless take_over.
 */
int ksettings__take(struct ksettings *k, const char *root, const char *state_path,
		    unsigned int scan_period_ms, bool take_over);
/*
 * At start, with the agent's lock held: puts back the settings recorded in a
 * state file left by an agent that did not stop cleanly.  Returns how many
 * were restored (0 when there was no state file), or -errno.
 */
int ksettings__recover(const char *root, const char *state_path);
/* Puts back every value changed; safe to call twice. */
void ksettings__restore(struct ksettings *k);

#endif
