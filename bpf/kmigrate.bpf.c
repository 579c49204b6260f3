// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel migration accounting: every migrate_pages() batch the kernel runs,
 * counted by reason (enum migrate_reason: compaction, syscall — that is
 * move_pages, ours among them —, NUMA misplacement, demotion in reclaim,
 * ...), so the status shows whether the kernel moved pages behind the
 * agent's back.
 *
 * The tracepoint's arguments changed over time (6.1 has 7, later kernels
 * add large_folio_split before mode and reason), and a raw tracepoint
 * program may not read past the last one, so there is one program per
 * shape; userspace reads the shape from the kernel's BTF and loads the
 * matching one.  The arguments are read as plain u64s, not through
 * struct bpf_raw_tracepoint_args, whose CO-RE access would make libbpf
 * parse vmlinux BTF for this object.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "cxltier.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CXLT_MIGRATE_REASONS);
	__type(key, __u32);
	__type(value, struct cxlt_kmigrate);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cxlt_kmigrate SEC(".maps");

static __always_inline int count(__u64 succeeded, __u64 failed, __u64 reason)
{
	__u32 key = reason < CXLT_MIGRATE_REASONS ? reason : CXLT_MIGRATE_REASONS - 1;
	struct cxlt_kmigrate *v = bpf_map_lookup_elem(&cxlt_kmigrate, &key);

	if (v) {
		v->succeeded += succeeded;
		v->failed += failed;
		v->batches++;
	}
	return 0;
}

/* succeeded, failed, thp_succeeded, thp_failed, thp_split, mode, reason */
SEC("raw_tp/mm_migrate_pages")
int cxlt_kmigrate7(__u64 *ctx)
{
	return count(ctx[0], ctx[1], ctx[6]);
}

/* succeeded, failed, thp_succeeded, thp_failed, thp_split, large_folio_split, mode, reason */
SEC("raw_tp/mm_migrate_pages")
int cxlt_kmigrate8(__u64 *ctx)
{
	return count(ctx[0], ctx[1], ctx[7]);
}
