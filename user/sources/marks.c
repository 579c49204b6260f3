// SPDX-License-Identifier: MIT
/* Design notes live in bpf/marks.bpf.c. */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksettings.h"
#include "marks.h"
#include "marks.skel.h"
#include "sampler.h"
#include "util.h"

/*
 * Whether vmlinux BTF has NAME of KIND; dflt when there is no BTF to ask.
 * Probed before loading so that a kernel which merely lacks the tracepoint
 * gets one info line, not libbpf's load errors.
 */
static bool btf_has(const char *name, int kind, bool dflt)
{
	const struct btf *btf = sampler__kernel_btf();

	return btf ? btf__find_by_name_kind(btf, name, kind) > 0 : dflt;
}

/*
 * The byte offset of member `name` in the struct or union of BTF type id,
 * looking into anonymous members (vm_start sits in an anonymous struct in
 * a union in 6.x); -1 if it has none.
 */
static long member_offset(const struct btf *btf, int id, const char *name)
{
	const struct btf_type *t = btf__type_by_id(btf, btf__resolve_type(btf, id));
	const struct btf_member *mb;

	if (!t || !(btf_is_struct(t) || btf_is_union(t)))
		return -1;
	mb = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, mb++) {
		const char *n = btf__name_by_offset(btf, mb->name_off);
		long off = (long)(btf_member_bit_offset(t, i) / 8), in;

		if (n && !strcmp(n, name))
			return off;
		if ((!n || !*n) && (in = member_offset(btf, (int)mb->type, name)) >= 0)
			return off + in;
	}
	return -1;
}

/* The value of enumerator `name` of enum `type`; -1 if the kernel has none. */
static int enum_value(const struct btf *btf, const char *type, const char *name)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_ENUM);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_enum *e = t ? btf_enum(t) : NULL;

	for (int i = 0; e && i < btf_vlen(t); i++, e++)
		if (!strcmp(btf__name_by_offset(btf, e->name_off), name))
			return e->val;
	return -1;
}

/* Whether this kernel's scanner skips VMAs by recent use (6.4 and later). */
static bool skips_by_activity(void)
{
	return btf_has("vma_numab_state", BTF_KIND_STRUCT, true);
}

/* What the program reads where: from the kernel's BTF, as CO-RE would have. */
static int set_layout(struct marks_bpf *skel)
{
	const struct btf *btf = sampler__kernel_btf();
	int id = btf ? btf__find_by_name_kind(btf, "vm_area_struct", BTF_KIND_STRUCT) : -1;
	long start = id > 0 ? member_offset(btf, id, "vm_start") : -1;
	long end = id > 0 ? member_offset(btf, id, "vm_end") : -1;

	if (start < 0 || end < 0) {
		pr_info("marks: no vm_area_struct.vm_start/vm_end in the kernel's BTF");
		return -EOPNOTSUPP;
	}
	skel->rodata->off_vm_start = (uint32_t)start;
	skel->rodata->off_vm_end = (uint32_t)end;
	skel->rodata->reason_ignore_pid = enum_value(btf, "numa_vmaskip_reason", "NUMAB_SKIP_IGNORE_PID");
	skel->rodata->reason_seq_completed =
		enum_value(btf, "numa_vmaskip_reason", "NUMAB_SKIP_SEQ_COMPLETED");
	return 0;
}

int marks__open(struct marks *m, const char *pin_dir, const char *root)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = pin_dir);
	int err;

	memset(m, 0, sizeof(*m));
	m->root = root ? root : "";
	if (!btf_has("btf_trace_sched_skip_vma_numa", BTF_KIND_TYPEDEF, true)) {
		pr_info("marks: this kernel has no sched_skip_vma_numa tracepoint; %s",
			skips_by_activity() ? "the VMAs its scanner skips go unseen" :
					      "its scanner skips no VMA for inactivity, none is needed");
		return skips_by_activity() ? -EOPNOTSUPP : 0;
	}
	m->skel = marks_bpf__open_opts(&oo);
	if (!m->skel)
		return -errno;
	if ((err = set_layout(m->skel)) || (err = marks_bpf__load(m->skel)))
		goto fail;
	m->link = bpf_program__attach(m->skel->progs.cxlt_skip_vma);
	if (!m->link) {
		err = -errno;
		goto fail;
	}
	return 0;
fail:
	marks__close(m);
	if (!skips_by_activity()) {
		memset(m, 0, sizeof(*m));
		m->root = root ? root : "";
		return 0;	/* nothing to follow but the passes */
	}
	return err ? err : -EOPNOTSUPP;
}

void marks__close(struct marks *m)
{
	ring_buffer__free(m->rb);
	m->rb = NULL;
	bpf_link__destroy(m->link);
	m->link = NULL;
	/* The target maps are the sampler's pins: not ours to unpin. */
	marks_bpf__destroy(m->skel);
	m->skel = NULL;
}

int marks__scan_seq(const char *root, int pid, uint32_t *seq)
{
	char path[64];
	uint64_t v;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/sched", pid);
	if ((err = read_keyed_u64(root, path, "mm->numa_scan_seq", &v)))
		return err;
	*seq = (uint32_t)v;
	return 0;
}

static int on_skip(void *ctx, void *data, size_t len)
{
	struct marks *m = ctx;
	const struct cxlt_skip *k = data;
	struct scan_follow *f;
	int ti;

	if (len < sizeof(*k) || (ti = tracker__find_target(m->tr, (pid_t)k->tgid)) < 0)
		return 0;
	f = &m->tr->targets[ti].scan;
	if (f->nr_skips == f->cap_skips) {
		uint32_t cap = f->cap_skips ? f->cap_skips * 2 : 64;
		struct vrange *r;

		if (cap > MARKS_MAX_SKIPS || !(r = realloc(f->skips, cap * sizeof(*r)))) {
			f->overflow = true;
			return 0;
		}
		f->skips = r;
		f->cap_skips = cap;
	}
	f->skips[f->nr_skips++] = (struct vrange){ k->start, k->end };
	return 0;
}

/*
 * Whether the kernel walks t whole in one call of its scanner, the moment its
 * pass ends (task_numa_work: a call walks up to 256 MiB of VMA spans with
 * pages it marked, and 8 times that of spans in all).  Known once a sweep has
 * covered t: before, the part swept so far made a big process look like one
 * chunk, and a pass that had not marked its fast pages counted as one that
 * had.  Spans, not pages: a few pages spread over a wide span take several
 * calls.
 */
static bool one_chunk(const struct target *t)
{
	return t->sweep_gen && t->span.present <= HINT_SCAN_CHUNK_BYTES &&
	       t->span.mapped <= 8 * HINT_SCAN_CHUNK_BYTES;
}

/* One target's look: a pass that ended since the last look marked what it did not skip. */
static void follow_target(struct marks *m, struct tracker *tr, struct target *t, bool open,
			  uint64_t fast_mask)
{
	struct scan_follow *f = &t->scan;
	bool fast;
	uint32_t seq;

	if (marks__scan_seq(m->root, t->pid, &seq))
		return;
	if (!f->known) {
		/* The pass under way began before we looked: it does not count. */
		*f = (struct scan_follow){ .skips = f->skips, .cap_skips = f->cap_skips, .known = true,
					   .seq = seq, .pass_start = tr->epoch };
		return;
	}
	if (seq == f->seq) {
		f->pass_open &= open;
		return;
	}
	fast = open && (f->pass_open || one_chunk(t));
	tracker__mark_pass(tr, t, fast, fast_mask);
	if (fast && !f->overflow)
		f->fast_pass = tr->epoch;
	/* This epoch's skips may belong to the next pass: keep them. */
	if (f->nr_skips > f->nr_old)
		memmove(f->skips, f->skips + f->nr_old, (f->nr_skips - f->nr_old) * sizeof(*f->skips));
	f->nr_skips -= f->nr_old;
	f->overflow = false;
	f->seq = seq;
	f->pass_start = tr->epoch;
	f->pass_open = open;
}

bool marks__follow(struct marks *m, struct tracker *tr, bool gate_was_open, uint64_t fast_mask,
		   uint64_t since)
{
	bool all = true;

	for (uint32_t i = 0; i < tr->nr_targets; i++)
		tr->targets[i].scan.nr_old = tr->targets[i].scan.nr_skips;
	if (m->skel) {
		uint64_t dropped = m->skel->bss->dropped;

		if (!m->rb)
			m->rb = ring_buffer__new(bpf_map__fd(m->skel->maps.cxlt_skips), on_skip, m, NULL);
		m->tr = tr;
		if (m->rb) {
			int n = ring_buffer__consume(m->rb);

			if (n > 0)
				pr_debug("marks: %d VMAs the scanner skipped since the last look", n);
		}
		/* A lost skip would make a pass look whole: no pass under way counts. */
		if (!m->rb || dropped != m->dropped)
			for (uint32_t i = 0; i < tr->nr_targets; i++)
				tr->targets[i].scan.overflow = true;
		m->dropped = dropped;
	}
	for (uint32_t i = 0; i < tr->nr_targets; i++) {
		follow_target(m, tr, &tr->targets[i], gate_was_open, fast_mask);
		all &= tr->targets[i].scan.fast_pass > since;
	}
	return all;
}
