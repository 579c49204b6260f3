// SPDX-License-Identifier: MIT
/*
 * probe: a test policy that moves nothing and describes, once, the kind of
 * view it was handed — sizes, node roles, the invariants of the page
 * records — as key=value lines in the file named by `out` (with `out=-`,
 * on stderr as "probe: " lines: the live agent's policy process may not
 * open files, its sandbox allows only its pipe, stdout and stderr).  The same .so
 * runs in the live agent and in cxltier-replay, and a test compares the two
 * descriptions: the same file must see the same kind of view.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxltier/policy.h"

struct probe {
	char out[256];
	int done;
};

static int probe_init(void **state, const struct cxlt_param *params, uint32_t nr, char *err,
		      size_t errlen)
{
	struct probe *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	for (uint32_t i = 0; i < nr; i++)
		if (!strcmp(params[i].key, "out"))
			snprintf(p->out, sizeof(p->out), "%s", params[i].value);
	if (!p->out[0]) {
		snprintf(err, errlen, "out=FILE is required");
		free(p);
		return -EINVAL;
	}
	*state = p;
	return 0;
}

static void probe_fini(void *state)
{
	free(state);
}

static int probe_decide(void *state, const struct cxlt_view *v, struct cxlt_plan *plan)
{
	struct probe *p = state;
	int aligned = 1, node_ok = 1, heat_ok = 1, idle_ok = 1, sampled = 0, fast_tier = -1, slow_tier = -1;
	int have_fast = 0, have_slow = 0;
	uint64_t pages = 0;
	FILE *f;
	char *text = NULL;
	size_t len = 0;

	(void)plan;
	for (uint32_t t = 0; t < v->nr_targets; t++)
		for (uint64_t i = 0; i < v->targets[t].nr_pages; i++)
			sampled += v->targets[t].pages[i].samples > 0;
	/* Describe a busy epoch: one with samples. */
	if (p->done || !sampled)
		return 0;
	p->done = 1;
	for (uint32_t n = 0; n < v->nr_nodes; n++) {
		if (v->nodes[n].role == CXLT_NODE_FAST) {
			have_fast = 1;
			fast_tier = v->nodes[n].tier;
		} else {
			have_slow = 1;
			slow_tier = v->nodes[n].tier;
		}
	}
	for (uint32_t t = 0; t < v->nr_targets; t++) {
		for (uint64_t i = 0; i < v->targets[t].nr_pages; i++) {
			const struct cxlt_page *pg = &v->targets[t].pages[i];
			int known = pg->node == CXLT_NODE_UNKNOWN;

			for (uint32_t n = 0; n < v->nr_nodes; n++)
				known |= pg->node == v->nodes[n].id;
			aligned &= (pg->addr % v->page_size) == 0;
			node_ok &= known;
			heat_ok &= pg->heat >= pg->samples;
			idle_ok &= !pg->samples || pg->idle_epochs == 0;
			pages++;
		}
	}
	f = open_memstream(&text, &len);
	if (!f)
		return -errno;
	fprintf(f, "view_sz=%u\npage_size=%u\nnodes=%u\nroles=%s%s\ntier_order=%s\n", v->sz,
		v->page_size, v->nr_nodes, have_fast ? "fast" : "", have_slow ? ",slow" : "",
		fast_tier < slow_tier ? "fast-above-slow" : "other");
	fprintf(f, "targets=%s\npages=%s\naddr=%s\nnode=%s\nheat=%s\nidle=%s\nsamples=%s\n",
		v->nr_targets ? "some" : "none", pages ? "some" : "none",
		aligned ? "page-aligned" : "MISALIGNED", node_ok ? "valid" : "INVALID",
		heat_ok ? "decayed-sum" : "INCONSISTENT", idle_ok ? "consistent" : "INCONSISTENT",
		sampled ? "some" : "none");
	fprintf(f, "budget=%s\nwatermarks=%s\nepoch=%s\n", v->budget_pages ? "positive" : "zero",
		v->fast_low_pages <= v->fast_high_pages ? "ordered" : "DISORDERED",
		v->epoch ? "counted" : "zero");
	if (fclose(f))
		return -errno;
	if (!strcmp(p->out, "-")) {
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
			fprintf(stderr, "probe: %s\n", line);
	} else if (!(f = fopen(p->out, "w")) || fputs(text, f) < 0 || fclose(f)) {
		free(text);
		return -EIO;
	}
	free(text);
	return 0;
}

static const struct cxlt_param_desc probe_params[] = {
	{ "out", "", "file to describe the view in" },
	{ NULL, NULL, NULL },
};

const struct cxlt_policy cxlt_policy = {
	.sz = sizeof(struct cxlt_policy),
	.abi = CXLT_POLICY_ABI,
	.name = "probe",
	.description = "test: describes the view it gets, moves nothing",
	.params = probe_params,
	.init = probe_init,
	.decide = probe_decide,
	.fini = probe_fini,
};
