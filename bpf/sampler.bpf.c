// SPDX-License-Identifier: GPL-2.0
/*
 * cxltier samplers: turn kernel and hardware events into (tgid, virtual page)
 * samples of the target processes and count them into a bounded heat map.
 *
 * Every source ends in cxlt_count(), the one counting core:
 *  - targets are tgids in `cxlt_targets`, or members of a cgroup whose id is
 *    in `cxlt_cgroups` (checked only when `nr_cgroups` is set, so the common
 *    case costs one hash lookup);
 *  - counts go into `cxlt_heat`, an LRU hash keyed by tgid+page.  Userspace
 *    drains it every epoch with batch lookup-and-delete.  When it fills, the
 *    LRU evicts the least recently updated page: we lose that page's count
 *    for this epoch, never block.  Userspace derives evictions from
 *    pages_inserted minus pages drained (racy, but any error is contained in
 *    one epoch and only affects a counter);
 *  - the sample can also be streamed raw into `cxlt_samples` (a ring buffer)
 *    for recording, when userspace sets `record`.
 *
 * Sources:
 *  - cxlt_fault: exceptions:page_fault_user.  Every fault
 *    of a target is a sample: first touches, and the NUMA hint faults that
 *    repeat for as long as the kernel's scanner runs.  On x86 a NUMA hint
 *    PTE is PROT_NONE, which clears the present bit, so a hint fault carries
 *    the same error code as a first touch: the two cannot be told apart
 *    here (measured on 6.1: with only hint faults, prot_faults stayed 0).
 *    Faults with the protection bit (write-protect, COW) are counted apart.
 *    A raw tracepoint: as cheap as tp_btf (0.4 us/fault), and, like every
 *    program here, without CO-RE access, so libbpf loads this object
 *    without parsing vmlinux BTF (slow under TCG, and on the agent's way
 *    to turning the NUMA scanner on).
 *  - cxlt_pmu_sample: perf_event program for hardware memory samples (PEBS, IBS)
 *    or the software page-fault event, reading the sampled data address.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "cxltier.h"

char LICENSE[] SEC("license") = "GPL";

#define X86_PF_PROT 0x1

const volatile bool record = false;
/* Weight of a sample by enum cxlt_source, when several sources run together (0 = 1). */
const volatile __u32 src_weight[CXLT_NR_SOURCES] = {};
/* Number of entries in cxlt_cgroups; 0 skips the cgroup lookup. */
volatile __u32 nr_cgroups = 0;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CXLT_HEAT_ENTRIES);
	__type(key, struct cxlt_page_key);
	__type(value, struct cxlt_page_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cxlt_heat SEC(".maps");

#include "targets.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CXLT_NR_STATS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cxlt_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} cxlt_samples SEC(".maps");

static __always_inline void stat_inc(__u32 id)
{
	__u64 *v = bpf_map_lookup_elem(&cxlt_stats, &id);

	if (v)
		*v += 1;	/* per-CPU: no atomics needed */
}

static __always_inline void stream(__u32 tgid, __u64 vpage, __u16 source)
{
	struct cxlt_sample *s;

	s = bpf_ringbuf_reserve(&cxlt_samples, sizeof(*s), 0);
	if (!s) {
		stat_inc(CXLT_STAT_RING_DROPPED);
		return;
	}
	s->time_ns = bpf_ktime_get_ns();
	s->tgid = tgid;
	s->source = source;
	s->weight = 1;
	s->vpage = vpage;
	bpf_ringbuf_submit(s, 0);
}

static __always_inline int cxlt_count(__u64 addr, __u16 source)
{
	struct cxlt_page_val *val, init = {};
	struct cxlt_page_key key = {};
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	bool hint = source == CXLT_SRC_HINT;
	__u32 w = source < CXLT_NR_SOURCES && src_weight[source] ? src_weight[source] : 1;

	stat_inc(CXLT_STAT_SEEN);
	/* Kernel addresses (top bit set; IBS samples kernel ops before 6.14) are not ours to tier. */
	if (!addr || (addr >> 63) || !cxlt_is_target(tgid, nr_cgroups != 0)) {
		stat_inc(CXLT_STAT_FILTERED);
		return 0;
	}
	stat_inc(CXLT_STAT_KEPT);
	if (hint)
		stat_inc(CXLT_STAT_HINT);

	key.tgid = tgid;
	key.vpage = addr >> CXLT_PAGE_SHIFT;
	val = bpf_map_lookup_elem(&cxlt_heat, &key);
	if (!val) {
		init.samples = w;
		init.hint_faults = hint;
		if (!bpf_map_update_elem(&cxlt_heat, &key, &init, BPF_NOEXIST)) {
			stat_inc(CXLT_STAT_NEW_PAGES);
			goto out;
		}
		/* Lost a race with another CPU inserting the same page. */
		val = bpf_map_lookup_elem(&cxlt_heat, &key);
		if (!val) {
			stat_inc(CXLT_STAT_MAP_FULL);
			goto out;
		}
	}
	__sync_fetch_and_add(&val->samples, w);
	if (hint)
		__sync_fetch_and_add(&val->hint_faults, 1);
out:
	if (record)
		stream(tgid, key.vpage, source);
	return 0;
}

static __always_inline __u16 fault_source(unsigned long error_code)
{
	return (error_code & X86_PF_PROT) ? CXLT_SRC_HINT : CXLT_SRC_FAULT;
}

SEC("raw_tp/page_fault_user")
int BPF_PROG(cxlt_fault, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	return cxlt_count(address, fault_source(error_code));
}

/*
 * struct bpf_perf_event_data is UAPI, its layout fixed: read through a copy
 * without vmlinux.h's preserve_access_index, so that it is no CO-RE access.
 */
struct cxlt_perf_event_data {
	struct pt_regs regs;
	__u64 sample_period;
	__u64 addr;
};

SEC("perf_event")
int cxlt_pmu_sample(struct cxlt_perf_event_data *ctx)
{
	return cxlt_count(ctx->addr, CXLT_SRC_PMU);
}
