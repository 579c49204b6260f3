// SPDX-License-Identifier: MIT
/*
 * Source hint: NUMA hint faults, on the page-fault tracepoint fault uses.
 * The kernel's NUMA scanner unmaps pages so that their next touch faults;
 * the agent sets the scanner up and meters it to a CPU budget
 * (user/agent/ksettings.c).  It cannot see memory under a bind, preferred
 * or interleave policy, which the scanner skips (sight.c finds that memory).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sampler.h"

static int hint_usable(const struct sampler_opts *o, char *why, size_t len)
{
	if (o->allow_hint)
		return 0;
	snprintf(why, len, "this kernel has no NUMA balancing (/proc/sys/kernel/numa_balancing) to make hint faults");
	return -ENOTSUP;
}

static int hint_open(struct sampler *s, const struct sampler_opts *o, const struct source_def *d)
{
	(void)o;
	sampler__note(s, "NUMA hint faults from the kernel's scanner");
	return sampler__attach_fault_tp(s, d);
}

const struct source_def hint_source = {
	.name = "hint",
	.kind = CXLT_SRC_HINT,
	.hook = HOOK_FAULT_TP,
	.repeats = true,
	.listable = true,
	.help = "NUMA hint faults from the kernel's scanner, metered to a CPU budget",
	.sight = SIGHT_SCANNED,
	.auto_rank = 3,
	.usable = hint_usable,
	.open = hint_open,
};
