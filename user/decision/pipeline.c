// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "pipeline.h"
#include "util.h"

int pipeline__epoch(struct pipeline *p)
{
	const struct pipeline_steps *s = p->steps;
	struct engine *e = p->eng;
	int err, decided = 0;

	if (s->ingest && (err = s->ingest(p->ctx)))
		return err;
	if (s->account && (err = s->account(p->ctx)))
		return err;
	if (s->topology)
		s->topology(p->ctx);
	tracker__age(e->tr);
	memset(&e->m->epoch, 0, sizeof(e->m->epoch));
	if ((!s->may_move || s->may_move(p->ctx)) && (decided = engine__decide_and_move(e, e->m->pf->now(e->m->pf->ctx))))
		pr_warn("epoch %llu: %s", (unsigned long long)e->tr->epoch, strerror(-decided));
	tracker__end_epoch(e->tr);
	if (s->publish)
		s->publish(p->ctx);
	return decided;
}
