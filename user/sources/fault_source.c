// SPDX-License-Identifier: MIT
/*
 * Sources fault and fault-perf: page faults, which see a page when it is
 * first touched and not again.  fault is the page-fault tracepoint; fault-perf
 * the same faults through the software perf event and the perf_event program
 * pmu uses, for kernels without the tracepoint and to run both side by side.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "sampler.h"

static int fault_open(struct sampler *s, const struct sampler_opts *o, const struct source_def *d)
{
	(void)o;
	return sampler__attach_fault_tp(s, d);
}

static int fault_perf_open(struct sampler *s, const struct sampler_opts *o,
			   const struct source_def *d)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.sample_type = PERF_SAMPLE_ADDR,
		.sample_period = 1,
		.exclude_kernel = 1,
	};
	int nr_links = s->nr_links, cpu, err;

	(void)o;
	if ((err = sampler__attach_perf(s, &attr, NULL, NULL, NULL, &cpu))) {
		sampler__rollback(s, nr_links);
		sampler__why_not(s, "cannot attach %s: perf_event_open of the software page-fault event%s: %s",
				 d->name, cpu >= 0 ? " on a CPU" : "", strerror(-err));
		return err;
	}
	sampler__note(s, "software page-fault perf event, one per CPU");
	return 0;
}

const struct source_def fault_source = {
	.name = "fault",
	.kind = CXLT_SRC_FAULT,
	.hook = HOOK_FAULT_TP,
	.listable = true,
	.help = "page faults: first touches only",
	.sight = SIGHT_FIRST_TOUCH,
	.auto_rank = 5,
	.open = fault_open,
};

const struct source_def fault_perf_source = {
	.name = "fault-perf",
	.kind = CXLT_SRC_FAULT,
	.hook = HOOK_PERF,
	.listable = true,
	.help = "page faults through the perf software event, where the tracepoint is missing",
	.sight = SIGHT_FIRST_TOUCH,
	.open = fault_perf_open,
};
