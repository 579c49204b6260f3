/* SPDX-License-Identifier: MIT */
/*
 * Fast-tier shares (config fast_share, --fast-share): a target whose command
 * name is listed may hold at most its percentage of the fast nodes' memory.
 * The mover refuses promotions past it; targets not listed share what is
 * left on one scale, as the policy ranks them.
 */
#ifndef CXLT_SHARES_H
#define CXLT_SHARES_H

#include <stddef.h>
#include <stdint.h>

#define MAX_SHARES 64

struct fast_shares {
	struct {
		char comm[16];
		double pct;	/* of the fast nodes' total memory, (0, 100] */
	} e[MAX_SHARES];
	int n;
};

/*
 * "COMM:PCT%[,COMM:PCT%...]" (the % is optional); the shares may add up to
 * 100 at most.  Returns 0, or -EINVAL with what is wrong in why.
 */
int shares__parse(const char *s, struct fast_shares *out, char *why, size_t len);

struct tracker;

/* Sets each target's fast_cap (pages; 0: none) from its command name. */
void shares__apply(const struct fast_shares *sh, struct tracker *tr, uint64_t fast_total_pages);

#endif
