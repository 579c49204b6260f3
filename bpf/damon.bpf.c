// SPDX-License-Identifier: GPL-2.0
/*
 * The damon source: DAMON's aggregated regions (damon:damon_aggregated),
 * streamed to userspace.  Either the agent observes a kdamond someone else
 * runs (it never stops or reconfigures a kdamond it did not start), or, when
 * no one owns DAMON, it starts its own for the targets: vaddr where the kernel
 * has it, else paddr.  Userspace maps each region to the targets' pages, by
 * address for vaddr, through page frames (/proc/PID/pagemap) for paddr;
 * nr_accesses becomes the weight of their samples.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cxltier.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} cxlt_damon_regions SEC(".maps");

/*
 * The kdamond whose regions we want (the tracepoint fires in its thread):
 * other kdamonds, DAMON_RECLAIM's say, number their targets on their own.
 */
__u32 kdamond_pid;

SEC("tp_btf/damon_aggregated")
int BPF_PROG(cxlt_damon_region, unsigned int target_id, struct damon_region *r, unsigned int nr_regions)
{
	struct cxlt_damon_region *out;
	unsigned int nr = BPF_CORE_READ(r, nr_accesses);

	if (!nr || (bpf_get_current_pid_tgid() >> 32) != kdamond_pid)
		return 0;	/* cold regions carry nothing for the heat map */
	out = bpf_ringbuf_reserve(&cxlt_damon_regions, sizeof(*out), 0);
	if (!out)
		return 0;
	out->start = BPF_CORE_READ(r, ar.start);
	out->end = BPF_CORE_READ(r, ar.end);
	out->nr_accesses = nr;
	out->target_id = target_id;
	out->age = BPF_CORE_READ(r, age);
	bpf_ringbuf_submit(out, 0);
	return 0;
}
