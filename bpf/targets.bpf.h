/* SPDX-License-Identifier: MIT */
/*
 * Which processes the BPF programs count: tgids in cxlt_targets, and
 * members of the cgroups (v2 ids) in cxlt_cgroups.  Both maps are pinned by
 * name, so every object that includes this shares the agent's one copy.
 */
#ifndef CXLT_TARGETS_BPF_H
#define CXLT_TARGETS_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CXLT_MAX_TARGETS);
	__type(key, __u32);	/* tgid */
	__type(value, __u32);	/* index of the target in the agent */
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cxlt_targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CXLT_MAX_CGROUPS);
	__type(key, __u64);	/* cgroup v2 id */
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cxlt_cgroups SEC(".maps");

/* cgroups: whether to look the current task's cgroup up too (a lookup per event). */
static __always_inline bool cxlt_is_target(__u32 tgid, bool cgroups)
{
	__u64 cgid;

	if (bpf_map_lookup_elem(&cxlt_targets, &tgid))
		return true;
	if (!cgroups)
		return false;
	cgid = bpf_get_current_cgroup_id();
	return bpf_map_lookup_elem(&cxlt_cgroups, &cgid) != NULL;
}

#endif
