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
 *
 * A raw tracepoint that reads what it needs at offsets userspace took from
 * the kernel's BTF, not tp_btf and CO-RE: those make libbpf parse vmlinux
 * BTF again for this object, which at the agent's start (under TCG: a
 * second or more) delays the scanner's first pass.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "cxltier.h"

char LICENSE[] SEC("license") = "GPL";

/* Events lost to a full ring. */
volatile __u64 dropped = 0;

/* From the kernel's BTF (marks.c): where vm_start and vm_end are; the no-skip reasons (-1: none). */
const volatile __u32 off_vm_start = 0;
const volatile __u32 off_vm_end = 8;
const volatile __s32 reason_ignore_pid = -1;
const volatile __s32 reason_seq_completed = -1;

/* The sampler's target maps, shared through their pins. */
#include "targets.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} cxlt_skips SEC(".maps");

/* ctx: mm, vma, reason (enum numa_vmaskip_reason) */
SEC("raw_tp/sched_skip_vma_numa")
int cxlt_skip_vma(__u64 *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__s32 reason = (__s32)ctx[2];
	__u64 vma = ctx[1], start = 0, end = 0;
	struct cxlt_skip *k;

	if (!cxlt_is_target(tgid, true))
		return 0;
	/*
	 * Two reasons are no skip: the VMA is scanned though its task did not
	 * use it lately (a pass under way is finished), or it was scanned
	 * already in this pass (a VMA bigger than a scan chunk is met again).
	 * Taken as skips, they left every page of a big VMA unseen for good.
	 */
	if (reason == reason_ignore_pid || reason == reason_seq_completed)
		return 0;
	if (bpf_probe_read_kernel(&start, sizeof(start), (void *)(vma + off_vm_start)) ||
	    bpf_probe_read_kernel(&end, sizeof(end), (void *)(vma + off_vm_end)))
		return 0;
	k = bpf_ringbuf_reserve(&cxlt_skips, sizeof(*k), 0);
	if (!k) {
		__sync_fetch_and_add(&dropped, 1);
		return 0;
	}
	k->tgid = tgid;
	k->reason = reason;
	k->start = start;
	k->end = end;
	bpf_ringbuf_submit(k, 0);
	return 0;
}
