// SPDX-License-Identifier: GPL-2.0
/*
 * What the kernel's NUMA scanner leaves out of a target: each VMA it skips
 * (sched:sched_skip_vma_numa, from task_numa_work in the task's own
 * context, 6.7 and later: unsuitable, shared read-only, inaccessible, not
 * yet due, not used by the task lately; not the two reasons that mean it
 * was scanned) goes to userspace.  At the end of
 * each pass (mm->numa_scan_seq) the agent takes every other page of the
 * target as marked: a use of it from then on faults, so its idle time is
 * evidence.  Pages in skipped VMAs may be used unseen (CXLT_PAGE_UNSEEN).
 * That matters when the agent's CPU budget holds the kernel at mode 2,
 * which marks only slow-tier pages.  A lost event would make the pass look
 * complete: userspace refuses a pass that overlapped a loss.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "cxltier.h"

char LICENSE[] SEC("license") = "GPL";

/* Events lost to a full ring. */
volatile __u64 dropped = 0;

/* The sampler's target maps, shared through their pins. */
#include "targets.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} cxlt_skips SEC(".maps");

SEC("tp_btf/sched_skip_vma_numa")
int BPF_PROG(cxlt_skip_vma, struct mm_struct *mm, struct vm_area_struct *vma, int reason)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct cxlt_skip *k;

	if (!cxlt_is_target(tgid, true))
		return 0;
	/*
	 * Two reasons are no skip: the VMA is scanned though its task did not
	 * use it lately (a pass under way is finished), or it was scanned
	 * already in this pass (a VMA bigger than a scan chunk is met again).
	 * Taken as skips, they left every page of a big VMA unseen for good.
	 */
	if ((bpf_core_enum_value_exists(enum numa_vmaskip_reason, NUMAB_SKIP_IGNORE_PID) &&
	     reason == bpf_core_enum_value(enum numa_vmaskip_reason, NUMAB_SKIP_IGNORE_PID)) ||
	    (bpf_core_enum_value_exists(enum numa_vmaskip_reason, NUMAB_SKIP_SEQ_COMPLETED) &&
	     reason == bpf_core_enum_value(enum numa_vmaskip_reason, NUMAB_SKIP_SEQ_COMPLETED)))
		return 0;
	k = bpf_ringbuf_reserve(&cxlt_skips, sizeof(*k), 0);
	if (!k) {
		__sync_fetch_and_add(&dropped, 1);
		return 0;
	}
	k->tgid = tgid;
	k->reason = reason;
	k->start = vma->vm_start;
	k->end = vma->vm_end;
	bpf_ringbuf_submit(k, 0);
	return 0;
}
