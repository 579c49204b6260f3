// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the control socket's request parser (control__parse).
 * The agent hands it what a client wrote, up to CONTROL_MAX_LINE + 1 bytes;
 * so does this target.  On success the parsed words are checked to lie in
 * req->line and to be printable, non-empty strings, as the handlers expect.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "util.h"

static void check_word(const struct control_req *req, const char *w)
{
	size_t len;

	if (!w || w < req->line || w >= req->line + sizeof(req->line))
		abort();
	len = strlen(w);
	if (!len || w + len >= req->line + sizeof(req->line))
		abort();
	for (size_t i = 0; i < len; i++)
		if (w[i] <= ' ' || w[i] > '~')
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct control_req *req;
	char err[256];

	if (size > CONTROL_MAX_LINE + 1)
		size = CONTROL_MAX_LINE + 1;	/* what serve_unix() passes at most */
	req = malloc(sizeof(*req));
	if (!req)
		return 0;
	err[0] = '\0';
	if (control__parse((const char *)data, size, req, err, sizeof(err))) {
		if (!err[0])
			abort();
		free(req);
		return 0;
	}
	switch (req->cmd) {
	case CTL_RATE:
		if (!(req->rate_mbps >= 0.001 && req->rate_mbps <= 1e6))
			abort();
		break;
	case CTL_POLICY:
		check_word(req, req->policy);
		if (req->nr_params < 0 || req->nr_params > CXLT_MAX_PARAMS)
			abort();
		for (int i = 0; i < req->nr_params; i++) {
			check_word(req, req->params[i]);
			if (!strchr(req->params[i], '=') || req->params[i][0] == '=')
				abort();
		}
		break;
	case CTL_STATUS: case CTL_TARGETS: case CTL_METRICS: case CTL_PAUSE: case CTL_RESUME:
	case CTL_RELOAD:
		break;
	default:
		abort();
	}
	free(req);
	return 0;
}
