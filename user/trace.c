// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pagemap.h"
#include "platform.h"
#include "trace.h"
#include "tracker.h"
#include "util.h"

#define TRACE_BUF_BYTES (1 << 20)

/*
 * A failed write leaves whatever part of it reached the disk: cut the file
 * back to the last whole sample, so that what was recorded still replays.
 */
static int writer__fail(struct trace_writer *w, int err)
{
	uint64_t keep;

	if (!w->err)
		w->err = err;
	if (w->bytes >= w->header_bytes) {
		keep = w->header_bytes + (w->bytes - w->header_bytes) / sizeof(struct cxlt_sample) *
						 sizeof(struct cxlt_sample);
		if (ftruncate(w->fd, keep) == 0) {
			w->bytes = keep;
			w->samples = (keep - w->header_bytes) / sizeof(struct cxlt_sample);
		}
	}
	w->used = 0;
	return w->err;
}

/* Writes buf whole, or fails with -errno; bytes counts what reached the file. */
static int write_all(struct trace_writer *w, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(w->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ENOSPC;
		w->bytes += n;
		p += n;
		len -= n;
	}
	return 0;
}

static int writer__flush(struct trace_writer *w)
{
	int err;

	if (w->err)
		return w->err;
	if (!w->used)
		return 0;
	if ((err = write_all(w, w->buf, w->used)))
		return writer__fail(w, err);
	w->samples += w->used / sizeof(struct cxlt_sample);
	w->used = 0;
	return 0;
}

int trace_writer__open(struct trace_writer *w, const char *path, uint32_t page_size,
		       const struct trace_node *nodes, uint32_t nr_nodes)
{
	struct trace_header h = {
		.magic = TRACE_MAGIC,
		.version = TRACE_VERSION,
		.header_size = sizeof(h),
		.page_size = page_size,
		.nr_nodes = nr_nodes,
		.sample_size = sizeof(struct cxlt_sample),
	};
	char why[1200];
	int err;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	snprintf(w->path, sizeof(w->path), "%s", path);
	if (nr_nodes > TRACE_MAX_NODES)
		return -E2BIG;
	w->nr_nodes = nr_nodes;
	w->page_size = page_size;
	for (uint32_t i = 0; i < nr_nodes; i++)
		w->node_ids[i] = nodes[i].id;
	if (!(w->buf = malloc(TRACE_BUF_BYTES)))
		return -ENOMEM;
	w->fd = open_output_file(path, why, sizeof(why));
	if (w->fd < 0) {
		err = w->fd;
		pr_err("cannot record the trace: %s", why);
		free(w->buf);
		w->buf = NULL;
		return err;
	}
	w->open = true;
	/* Written now: a disk already full is found before the agent starts. */
	if ((err = write_all(w, &h, sizeof(h))) ||
	    (nr_nodes && (err = write_all(w, nodes, nr_nodes * sizeof(*nodes))))) {
		w->err = err;
		pr_err("cannot write trace %s: %s", path, strerror(-err));
	}
	w->header_bytes = w->bytes;
	return w->err;
}

int trace_writer__add(struct trace_writer *w, const struct cxlt_sample *s, uint32_t n)
{
	size_t len = (size_t)n * sizeof(*s);

	if (w->err)
		return w->err;
	while (len) {
		size_t room = TRACE_BUF_BYTES - w->used, take = len < room ? len : room;

		memcpy(w->buf + w->used, s, take);
		w->used += take;
		s = (const struct cxlt_sample *)((const char *)s + take);
		len -= take;
		if (w->used == TRACE_BUF_BYTES && writer__flush(w)) {
			pr_err("cannot write trace %s: %s; recording stops, the trace keeps the %llu samples written before",
			       w->path, strerror(-w->err), (unsigned long long)w->samples);
			return w->err;
		}
	}
	return 0;
}

/* Ends the run being extended: into the buffer. */
static int run_flush(struct trace_writer *w)
{
	int err = 0;

	if (w->run.weight) {
		err = trace_writer__add(w, &w->run, 1);
		w->runs++;
	}
	w->run.weight = 0;
	return err;
}

/* n pages from vpage on node record idx: the run goes on, or a new one starts. */
static int run_add(struct trace_writer *w, uint64_t time_ns, uint32_t tgid, uint64_t vpage,
		   uint32_t n, uint16_t idx)
{
	int err;

	while (n) {
		struct cxlt_sample *r = &w->run;
		uint32_t take;

		if (!r->weight || r->tgid != tgid || r->time_ns != time_ns ||
		    r->source != TRACE_RESIDENT + idx || r->vpage + r->weight != vpage ||
		    r->weight == TRACE_RUN_MAX) {
			if ((err = run_flush(w)))
				return err;
			*r = (struct cxlt_sample){ .time_ns = time_ns, .tgid = tgid,
						   .source = TRACE_RESIDENT + idx, .vpage = vpage };
		}
		take = TRACE_RUN_MAX - r->weight < n ? TRACE_RUN_MAX - r->weight : n;
		r->weight += take;
		vpage += take;
		n -= take;
	}
	return 0;
}

static uint16_t node_index(const struct trace_writer *w, int node)
{
	for (uint32_t i = 0; i < w->nr_nodes; i++)
		if (w->node_ids[i] == node)
			return (uint16_t)i;
	return TRACE_RESIDENT_UNKNOWN;
}

static const struct target *sort_target;

static int cmp_region(const void *a, const void *b)
{
	uint64_t x = sort_target->rt.rg[*(const uint32_t *)a].base;
	uint64_t y = sort_target->rt.rg[*(const uint32_t *)b].base;

	return x < y ? -1 : x > y;
}

/* The pages of [from, from + n) tracker pages on node record idx, in the trace's pages. */
static int run_add_pages(struct trace_writer *w, uint64_t time_ns, uint32_t tgid, uint64_t from,
			 uint32_t n, uint16_t idx)
{
	uint64_t to = from + ((uint64_t)n << CXLT_PAGE_SHIFT);

	return run_add(w, time_ns, tgid, from / w->page_size,
		       (uint32_t)((to + w->page_size - 1) / w->page_size - from / w->page_size), idx);
}

#define NODE_NOT_KNOWN (-100000)	/* resident, on a node not known */

/*
 * A region's pages asked one by one, exact where the counts are not: from
 * pagemap's page frames where the tracker knows the frames' nodes (root),
 * as its sweep does; else with move_pages (no nodes), which before Linux
 * 6.5 misses the pages the NUMA scanner made PROT_NONE.  1 when done, 0
 * when the query failed (the estimate then), or the write error.
 */
static int region_exact(struct trace_writer *w, const struct tracker *tr, int *pagemap,
			uint64_t time_ns, const struct target *t, const struct region *r)
{
	void *addrs[REGION_PAGES];
	int status[REGION_PAGES];
	uint64_t ents[REGION_PAGES];
	int err;

	for (uint32_t k = 0; k < REGION_PAGES; k++)
		addrs[k] = (void *)(uintptr_t)(r->base + ((uint64_t)k << CXLT_PAGE_SHIFT));
	if (tr->pfn.nr_blocks && *pagemap == -1) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/pagemap", t->pid);
		*pagemap = open(path, O_RDONLY | O_CLOEXEC);
		if (*pagemap < 0)
			*pagemap = -2;
	}
	if (tr->pfn.nr_blocks && *pagemap >= 0) {
		if (pread(*pagemap, ents, sizeof(ents), (off_t)(r->base >> CXLT_PAGE_SHIFT) * 8) !=
		    (ssize_t)sizeof(ents))
			return 0;
		for (uint32_t k = 0; k < REGION_PAGES; k++) {
			uint64_t pfn = ents[k] & PM_PFN_MASK;

			status[k] = (ents[k] & PM_PRESENT) && pfn ? pfn_nodes__node(&tr->pfn, pfn) : -ENOENT;
			if (status[k] < 0 && (ents[k] & PM_PRESENT))
				status[k] = NODE_NOT_KNOWN;
		}
	} else if (!tr->pf ||
		   tr->pf->move_pages(tr->pf->ctx, t->pid, REGION_PAGES, addrs, NULL, status, 0) < 0) {
		return 0;
	}
	for (uint32_t k = 0; k < REGION_PAGES; k++) {
		if (status[k] < 0 && status[k] != NODE_NOT_KNOWN)
			continue;	/* not resident (-ENOENT), or not to be moved */
		if ((err = run_add_pages(w, time_ns, (uint32_t)t->pid, (uintptr_t)addrs[k], 1,
					 status[k] < 0 ? TRACE_RESIDENT_UNKNOWN :
							 node_index(w, status[k]))))
			return err;
	}
	return 1;
}

/* The huge pages of t's regions in base order, consecutive ones in one record. */
static int add_huge(struct trace_writer *w, uint64_t time_ns, const struct target *t,
		    const uint32_t *order)
{
	uint32_t per = REGION_SIZE / w->page_size, most = TRACE_RUN_MAX / per * per;
	struct cxlt_sample h = { 0 };
	int err = 0;

	if (w->page_size > REGION_SIZE)
		return 0;
	for (uint32_t k = 0; k < t->rt.nr && !err; k++) {
		const struct region *r = &t->rt.rg[order[k]];
		uint64_t vpage = r->base / w->page_size;

		if (!(r->flags & REGION_SWEPT) || !r->resident ||
		    !(t->pt.pages[r->rec].flags & PAGE_HUGE))
			continue;
		if (h.weight && h.vpage + h.weight == vpage && h.weight + per <= most) {
			h.weight += per;
			continue;
		}
		if (h.weight)
			err = trace_writer__add(w, &h, 1);
		h = (struct cxlt_sample){ .time_ns = time_ns, .tgid = (uint32_t)t->pid,
					  .source = TRACE_HUGE + (uint16_t)__builtin_ctz(per),
					  .weight = (uint16_t)per, .vpage = vpage };
	}
	if (!err && h.weight)
		err = trace_writer__add(w, &h, 1);
	return err;
}

/* Regions whose pages are asked one by one, at most, per target (about 0.1 ms each). */
#define EXACT_REGIONS 1024

int trace_writer__add_target(struct trace_writer *w, uint64_t time_ns, const struct target *t,
			     const struct tracker *tr)
{
	uint32_t exact = 0;
	int pagemap = -1;
	uint32_t *order = malloc((t->rt.nr ? t->rt.nr : 1) * sizeof(*order));
	int err = 0;

	if (!order)
		return -ENOMEM;
	if (w->err)
		goto out;
	for (uint32_t i = 0; i < t->rt.nr; i++)
		order[i] = i;
	sort_target = t;
	qsort(order, t->rt.nr, sizeof(*order), cmp_region);
	for (uint32_t k = 0; k < t->rt.nr && !err; k++) {
		const struct region *r = &t->rt.rg[order[k]];
		uint64_t bits = r->resident_bits;
		uint32_t left[3], chunks = 0, resident = r->resident, nth = 0;
		uint16_t idx[3];

		if (!(r->flags & REGION_SWEPT) || !resident)
			continue;
		if (t->pt.pages[r->rec].flags & PAGE_HUGE)
			bits = ~0ULL, resident = REGION_PAGES;
		for (uint64_t b = bits; b; b &= b - 1)
			chunks++;
		if (!chunks)
			continue;
		/* Split between nodes, or partly resident chunks: ask, while the allowance lasts. */
		if (tr && (r->on_node[1] || resident < chunks * CHUNK_PAGES) && exact < EXACT_REGIONS) {
			exact++;
			if ((err = region_exact(w, tr, &pagemap, time_ns, t, r)) != 0) {
				err = err < 0 ? err : 0;
				continue;
			}
		}
		/* Pages of node_id[0], then of node_id[1], then of no known node. */
		left[0] = r->on_node[0] < resident ? r->on_node[0] : resident;
		left[1] = r->on_node[1] < resident - left[0] ? r->on_node[1] : resident - left[0];
		left[2] = resident - left[0] - left[1];
		idx[0] = r->on_node[0] ? node_index(w, r->node_id[0]) : TRACE_RESIDENT_UNKNOWN;
		idx[1] = r->on_node[1] ? node_index(w, r->node_id[1]) : TRACE_RESIDENT_UNKNOWN;
		idx[2] = TRACE_RESIDENT_UNKNOWN;
		for (uint32_t c = 0, n = 0; c < 64 && !err; c++) {
			uint32_t in_chunk, off = 0;

			if (!(bits >> c & 1))
				continue;
			in_chunk = resident / chunks + (nth++ < resident % chunks);
			if (in_chunk > CHUNK_PAGES)
				in_chunk = CHUNK_PAGES;
			while (in_chunk && !err) {
				uint32_t take;

				while (n < 2 && !left[n])
					n++;
				take = left[n] < in_chunk ? left[n] : in_chunk;
				err = run_add_pages(w, time_ns, (uint32_t)t->pid,
						    r->base + ((uint64_t)(c * CHUNK_PAGES + off) << CXLT_PAGE_SHIFT),
						    take, idx[n]);
				left[n] -= take;
				in_chunk -= take;
				off += take;
			}
		}
	}
	if (!err)
		err = run_flush(w);
	if (!err)
		err = add_huge(w, time_ns, t, order);
	if (pagemap >= 0)
		close(pagemap);
out:
	free(order);
	return err ? err : w->err;
}

int trace_writer__add_mark(struct trace_writer *w, uint64_t time_ns, uint64_t epoch)
{
	struct cxlt_sample m = { .time_ns = time_ns, .source = TRACE_EPOCH, .vpage = epoch };

	w->marks++;
	return trace_writer__add(w, &m, 1);
}

int trace_writer__close(struct trace_writer *w)
{
	int had = w->err;

	if (!w->open)
		return w->err;
	if (writer__flush(w) && !had)
		pr_err("cannot write trace %s: %s; the trace keeps the %llu samples written before",
		       w->path, strerror(-w->err), (unsigned long long)w->samples);
	if (close(w->fd) && !w->err)
		w->err = -errno;
	w->fd = -1;
	w->open = false;
	free(w->buf);
	w->buf = NULL;
	return w->err;
}

/*
 * Checks the header at the start of a file of len bytes (h holds at least
 * sizeof(*h) of it) and fills t but for the nodes, which lie at
 * t->samples_off - nr_nodes * sizeof(struct trace_node).
 */
static int parse_header(struct trace *t, const struct trace_header *h, uint64_t len,
			char *msg, size_t msglen)
{
	uint64_t off, body;

	if (len < sizeof(*h) || memcmp(h->magic, TRACE_MAGIC, sizeof(h->magic))) {
		snprintf(msg, msglen, "not a cxltier trace (no %s magic)", TRACE_MAGIC);
		return -EINVAL;
	}
	memcpy(&t->hdr, h, sizeof(t->hdr));
	if (t->hdr.version < TRACE_VERSION_MIN || t->hdr.version > TRACE_VERSION) {
		snprintf(msg, msglen, "trace version %u, this build reads versions %u to %u",
			 t->hdr.version, TRACE_VERSION_MIN, TRACE_VERSION);
		return -EPROTO;
	}
	if (t->hdr.header_size < sizeof(*h) || t->hdr.header_size > len ||
	    t->hdr.header_size % _Alignof(struct cxlt_sample) ||
	    t->hdr.sample_size != sizeof(struct cxlt_sample) ||
	    t->hdr.nr_nodes > TRACE_MAX_NODES) {
		snprintf(msg, msglen, "corrupt header (header %u bytes, sample %u bytes, %u nodes)",
			 t->hdr.header_size, t->hdr.sample_size, t->hdr.nr_nodes);
		return -EINVAL;
	}
	if (t->hdr.page_size < 512 || (t->hdr.page_size & (t->hdr.page_size - 1))) {
		snprintf(msg, msglen, "corrupt header: page size %u", t->hdr.page_size);
		return -EINVAL;
	}
	off = t->hdr.header_size;
	if (len - off < (uint64_t)t->hdr.nr_nodes * sizeof(struct trace_node)) {
		snprintf(msg, msglen, "truncated: the header names %u nodes, the file ends first",
			 t->hdr.nr_nodes);
		return -EINVAL;
	}
	off += t->hdr.nr_nodes * sizeof(struct trace_node);
	body = len - off;
	if (body % sizeof(struct cxlt_sample)) {
		snprintf(msg, msglen, "truncated: %llu stray bytes after the last whole sample",
			 (unsigned long long)(body % sizeof(struct cxlt_sample)));
		return -EINVAL;
	}
	t->samples_off = off;
	t->nr_samples = body / sizeof(struct cxlt_sample);
	return 0;
}

int trace__parse(struct trace *t, const void *buf, size_t len, char *msg, size_t msglen)
{
	struct trace_header h = { 0 };
	size_t nodes_len;
	int err;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	memcpy(&h, buf, len < sizeof(h) ? len : sizeof(h));
	err = parse_header(t, &h, len, msg, msglen);
	if (err)
		return err;
	nodes_len = t->hdr.nr_nodes * sizeof(struct trace_node);
	memcpy(t->nodes, (const char *)buf + t->samples_off - nodes_len, nodes_len);
	t->samples = (const struct cxlt_sample *)((const char *)buf + t->samples_off);
	return 0;
}

/* pread of exactly len bytes; a short read is the file having shrunk. */
static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pread(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA;
		buf = (char *)buf + n;
		len -= n;
		off += n;
	}
	return 0;
}

int trace__open(struct trace *t, const char *path, char *msg, size_t msglen)
{
	struct trace_header h = { 0 };
	struct stat st;
	size_t nodes_len;
	int fd, err;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(msg, msglen, "%s", strerror(errno));
		return err;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(msg, msglen, "not a regular file");
		return -EINVAL;
	}
	if (st.st_size == 0) {
		close(fd);
		snprintf(msg, msglen, "empty file, not a cxltier trace");
		return -EINVAL;
	}
	err = pread_all(fd, &h, (uint64_t)st.st_size < sizeof(h) ? (size_t)st.st_size : sizeof(h), 0);
	if (!err)
		err = parse_header(t, &h, st.st_size, msg, msglen);
	else
		snprintf(msg, msglen, "cannot read: %s", strerror(-err));
	nodes_len = t->hdr.nr_nodes * sizeof(struct trace_node);
	if (!err && nodes_len &&
	    (err = pread_all(fd, t->nodes, nodes_len, t->samples_off - nodes_len)))
		snprintf(msg, msglen, "cannot read the nodes: %s",
			 err == -ENODATA ? "the file shrank while being read" : strerror(-err));
	if (err) {
		close(fd);
		return err;
	}
	t->fd = fd;
	return 0;
}

void trace__close(struct trace *t)
{
	if (t->fd >= 0)
		close(t->fd);
	memset(t, 0, sizeof(*t));
	t->fd = -1;
}

int trace__run_role(const struct trace *t, const struct cxlt_sample *s)
{
	uint32_t n = s->source & 0xff;

	if (n >= t->hdr.nr_nodes)
		return -1;
	return t->nodes[n].role == CXLT_NODE_FAST ? CXLT_NODE_FAST :
	       t->nodes[n].role == CXLT_NODE_SLOW ? CXLT_NODE_SLOW : -1;
}

void trace_cursor__init_all(struct trace_cursor *c, const struct trace *t)
{
	trace_cursor__init(c, t);
	c->events = true;
}

void trace_cursor__init(struct trace_cursor *c, const struct trace *t)
{
	c->t = t;
	c->events = false;
	c->next = 0;
	c->pos = c->n = 0;
	c->err = 0;
	c->msg[0] = '\0';
}

static const struct cxlt_sample *cursor_fill(struct trace_cursor *c);

const struct cxlt_sample *trace_cursor__peek(struct trace_cursor *c)
{
	for (;;) {
		const struct cxlt_sample *s = c->pos < c->n ? &c->buf[c->pos] : cursor_fill(c);

		if (!s || c->events || trace__kind(c->t, s) == TRACE_SAMPLE)
			return s;
		c->pos++;
	}
}

/* Applies time_scale to the buffer just read; a time past u64 saturates. */
static void stretch(struct trace_cursor *c)
{
	uint64_t k = c->t->time_scale;

	if (c->next == 0)
		c->t0 = c->buf[0].time_ns;
	for (uint32_t i = 0; i < c->n; i++) {
		uint64_t t = c->buf[i].time_ns, d = t >= c->t0 ? t - c->t0 : c->t0 - t;
		uint64_t dk = d > UINT64_MAX / k ? UINT64_MAX : d * k;

		if (t >= c->t0)
			c->buf[i].time_ns = dk > UINT64_MAX - c->t0 ? UINT64_MAX : c->t0 + dk;
		else
			c->buf[i].time_ns = dk > c->t0 ? 0 : c->t0 - dk;
	}
}

/* The next buffer's first record, or NULL at the end or on an error. */
static const struct cxlt_sample *cursor_fill(struct trace_cursor *c)
{
	const struct trace *t = c->t;
	uint64_t left;
	uint32_t n;

	c->next += c->n;
	c->pos = c->n = 0;
	left = t->nr_samples - c->next;
	if (c->err || !left)
		return NULL;
	n = left < ARRAY_SIZE(c->buf) ? (uint32_t)left : ARRAY_SIZE(c->buf);
	if (t->samples) {
		memcpy(c->buf, t->samples + c->next, n * sizeof(*c->buf));
	} else {
		c->err = pread_all(t->fd, c->buf, n * sizeof(*c->buf),
				   t->samples_off + c->next * sizeof(*c->buf));
		if (c->err == -ENODATA)
			snprintf(c->msg, sizeof(c->msg),
				 "truncated while being read: it ends before sample %llu of %llu",
				 (unsigned long long)c->next + 1, (unsigned long long)t->nr_samples);
		else if (c->err)
			snprintf(c->msg, sizeof(c->msg), "cannot read: %s", strerror(-c->err));
		if (c->err)
			return NULL;
	}
	c->n = n;
	if (t->time_scale > 1)
		stretch(c);
	return &c->buf[0];
}
