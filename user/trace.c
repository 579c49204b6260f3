// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"
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
	if (t->hdr.version != TRACE_VERSION) {
		snprintf(msg, msglen, "trace version %u, this build reads version %u",
			 t->hdr.version, TRACE_VERSION);
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

void trace_cursor__init(struct trace_cursor *c, const struct trace *t)
{
	c->t = t;
	c->next = 0;
	c->pos = c->n = 0;
	c->err = 0;
	c->msg[0] = '\0';
}

const struct cxlt_sample *trace_cursor__peek(struct trace_cursor *c)
{
	const struct trace *t = c->t;
	uint64_t left;
	uint32_t n;

	if (c->pos < c->n)
		return &c->buf[c->pos];
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
	return &c->buf[0];
}
