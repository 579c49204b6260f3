/* SPDX-License-Identifier: MIT */
/*
 * Userspace twin of bpf/marks.bpf.c: which pages of the targets the
 * kernel's NUMA scanner has marked since their last sample, from its passes
 * (mm->numa_scan_seq in /proc/PID/sched) and the VMAs it skipped, folded
 * into the tracker each epoch (tracker__mark_pass), so that a page's idle
 * time counts only while the hint source could see its use.
 */
#ifndef CXLT_MARKS_H
#define CXLT_MARKS_H

#include <stdbool.h>
#include <stdint.h>

#include "tracker.h"

/* Skipped VMAs kept per target and pass; more and the pass does not count. */
#define MARKS_MAX_SKIPS 4096

struct marks {
	struct marks_bpf *skel;	/* NULL where the kernel skips no VMA for inactivity */
	struct bpf_link *link;
	struct ring_buffer *rb;
	struct tracker *tr;	/* while draining */
	const char *root;
	uint64_t dropped;	/* events lost, as of the last look */
};

/*
 * Follows the scanner where the agent can tell what it leaves out: the
 * sched_skip_vma_numa tracepoint, or a kernel without per-VMA activity
 * skipping (no struct vma_numab_state).  -EOPNOTSUPP otherwise.
 */
int marks__open(struct marks *m, const char *pin_dir, const char *root);
void marks__close(struct marks *m);
/*
 * Once an epoch (tr->epoch), before the ingest: folds in the skips and each
 * target's passes since the last call.  gate_was_open: fast-tier pages were
 * being marked meanwhile.  Returns whether every target has had a pass that
 * marked both tiers after epoch `since`.
 */
bool marks__follow(struct marks *m, struct tracker *tr, bool gate_was_open, uint64_t fast_mask,
		   uint64_t since);
/* mm->numa_scan_seq of pid from ROOT/proc/PID/sched; -errno. */
int marks__scan_seq(const char *root, int pid, uint32_t *seq);

#endif
