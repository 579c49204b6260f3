// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shares.h"
#include "tracker.h"

int shares__parse(const char *s, struct fast_shares *out, char *why, size_t len)
{
	double sum = 0;

	memset(out, 0, sizeof(*out));
	while (*s) {
		const char *colon = strchr(s, ':'), *end = strchr(s, ',');
		char *rest;
		size_t n;
		double pct;

		if (!end)
			end = s + strlen(s);
		if (!colon || colon > end) {
			snprintf(why, len, "'%.*s': expected COMM:PERCENT, such as redis:60%%", (int)(end - s), s);
			return -EINVAL;
		}
		n = (size_t)(colon - s);
		if (!n || n > 15) {
			snprintf(why, len, "'%.*s': a command name has 1 to 15 characters", (int)n, s);
			return -EINVAL;
		}
		pct = strtod(colon + 1, &rest);
		if (*rest == '%' && rest > colon + 1)
			rest++;
		if (rest == colon + 1 || rest != end || !(pct > 0 && pct <= 100)) {
			snprintf(why, len, "'%.*s': expected a percentage above 0, at most 100", (int)(end - colon - 1), colon + 1);
			return -EINVAL;
		}
		for (int i = 0; i < out->n; i++)
			if (strlen(out->e[i].comm) == n && !memcmp(out->e[i].comm, s, n)) {
				snprintf(why, len, "'%.*s' has two shares", (int)n, s);
				return -EINVAL;
			}
		if (out->n == MAX_SHARES) {
			snprintf(why, len, "more than %d shares", MAX_SHARES);
			return -EINVAL;
		}
		memcpy(out->e[out->n].comm, s, n);
		out->e[out->n++].pct = pct;
		sum += pct;
		s = *end ? end + 1 : end;
	}
	if (sum > 100 + 1e-9) {
		snprintf(why, len, "the shares add up to %.4g%%, more than the fast tier", sum);
		return -EINVAL;
	}
	return 0;
}

void shares__apply(const struct fast_shares *sh, struct tracker *tr, uint64_t fast_total_pages)
{
	for (uint32_t i = 0; i < tr->nr_targets; i++) {
		struct target *t = &tr->targets[i];

		t->fast_cap = 0;
		for (int k = 0; k < sh->n; k++)
			if (!strcmp(sh->e[k].comm, t->comm))
				t->fast_cap = (uint64_t)(sh->e[k].pct / 100 * (double)fast_total_pages) ?: 1;
	}
}
