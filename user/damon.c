// SPDX-License-Identifier: MIT
/* Design notes live in bpf/damon.bpf.c. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "damon.h"
#include "damon.skel.h"
#include "util.h"

#define ADMIN "/sys/kernel/mm/damon/admin/kdamonds"
#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)

static int on_region(void *ctx, void *data, size_t len)
{
	struct damon_src *d = ctx;

	if (len < sizeof(struct cxlt_damon_region))
		return 0;
	if (d->nr == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 1024;
		struct cxlt_damon_region *r = realloc(d->regions, cap * sizeof(*r));

		if (!r)
			return 0;	/* dropped: the next aggregation brings it again */
		d->regions = r;
		d->cap = cap;
	}
	d->regions[d->nr++] = *(struct cxlt_damon_region *)data;
	d->regions_seen++;
	return 0;
}

int damon__open(struct damon_src *d, const char *root)
{
	char state[32] = "", ops[32] = "";
	int err;

	memset(d, 0, sizeof(*d));
	if (read_text(root, ADMIN "/0/state", state, sizeof(state)) || strncmp(state, "on", 2)) {
		snprintf(d->why, sizeof(d->why), "no running kdamond under %s%s (the agent observes one, it does not start its own yet)",
			 root ? root : "", ADMIN);
		return -ENOENT;
	}
	read_text(root, ADMIN "/0/contexts/0/operations", ops, sizeof(ops));
	ops[strcspn(ops, "\n")] = '\0';
	snprintf(d->ops, sizeof(d->ops), "%s", ops);
	if (strcmp(d->ops, "paddr")) {
		snprintf(d->why, sizeof(d->why), "the running kdamond monitors '%s'; only a paddr context can be mapped to the targets' pages here",
			 d->ops);
		return -ENOTSUP;
	}
	d->skel = damon_bpf__open_and_load();
	if (!d->skel) {
		err = -errno;
		snprintf(d->why, sizeof(d->why), "cannot load the DAMON observer: %s (no damon:damon_aggregated tracepoint?)",
			 strerror(-err));
		return err;
	}
	d->link = bpf_program__attach(d->skel->progs.cxlt_damon_region);
	if (!d->link) {
		err = -errno;
		snprintf(d->why, sizeof(d->why), "cannot attach to damon:damon_aggregated: %s", strerror(-err));
		damon__close(d);
		return err;
	}
	d->rb = ring_buffer__new(bpf_map__fd(d->skel->maps.cxlt_damon_regions), on_region, d, NULL);
	if (!d->rb) {
		err = -errno;
		damon__close(d);
		return err;
	}
	snprintf(d->why, sizeof(d->why), "regions of the running kdamond (%s), observed only", d->ops);
	return 0;
}

void damon__close(struct damon_src *d)
{
	ring_buffer__free(d->rb);
	bpf_link__destroy(d->link);
	if (d->skel)
		damon_bpf__destroy(d->skel);
	free(d->regions);
	memset(d, 0, sizeof(*d));
}

static int cmp_region(const void *a, const void *b)
{
	const struct cxlt_damon_region *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The accesses of the region holding phys, or 0. */
static uint32_t accesses_at(const struct damon_src *d, uint64_t phys)
{
	size_t lo = 0, hi = d->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (d->regions[mid].end <= phys)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->nr && d->regions[lo].start <= phys ? d->regions[lo].nr_accesses : 0;
}

int damon__drain(struct damon_src *d, struct tracker *tr)
{
	struct cxlt_page_key keys[1024];
	struct cxlt_page_val vals[1024];
	int sampled = 0;

	ring_buffer__consume(d->rb);
	if (!d->nr)
		return 0;
	qsort(d->regions, d->nr, sizeof(*d->regions), cmp_region);
	for (uint32_t ti = 0; ti < tr->nr_targets; ti++) {
		struct target *t = &tr->targets[ti];
		char path[64];
		uint32_t n = 0;
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/pagemap", t->pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		for (uint32_t i = 0; i < t->pt.nr; i++) {
			uint64_t ent, addr = t->pt.pages[i].addr;
			uint32_t acc;

			if (pread(fd, &ent, sizeof(ent), addr / tr->page_size * sizeof(ent)) != sizeof(ent) ||
			    !(ent & PM_PRESENT) || !(ent & PM_PFN_MASK))
				continue;
			acc = accesses_at(d, (ent & PM_PFN_MASK) * tr->page_size);
			if (!acc)
				continue;
			keys[n] = (struct cxlt_page_key){ .tgid = t->pid, .vpage = addr >> CXLT_PAGE_SHIFT };
			vals[n++] = (struct cxlt_page_val){ .samples = acc };
			if (n == 1024) {
				tracker__ingest(tr, keys, vals, n);
				sampled += n;
				n = 0;
			}
		}
		close(fd);
		tracker__ingest(tr, keys, vals, n);
		sampled += n;
	}
	d->pages_matched += sampled;
	d->nr = 0;
	return sampled;
}
