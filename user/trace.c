// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"
#include "util.h"

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
	int fd;

	memset(w, 0, sizeof(*w));
	snprintf(w->path, sizeof(w->path), "%s", path);
	if (nr_nodes > TRACE_MAX_NODES)
		return -E2BIG;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		int err = -errno;

		pr_err("cannot create trace %s: %s", path, strerror(errno));
		return err;
	}
	w->f = fdopen(fd, "w");
	if (!w->f) {
		close(fd);
		return -ENOMEM;
	}
	setvbuf(w->f, NULL, _IOFBF, 1 << 20);
	if (fwrite(&h, sizeof(h), 1, w->f) != 1 ||
	    (nr_nodes && fwrite(nodes, sizeof(*nodes), nr_nodes, w->f) != nr_nodes)) {
		w->err = -EIO;
		pr_err("cannot write trace %s: %s", path, strerror(errno));
	}
	return w->err;
}

int trace_writer__add(struct trace_writer *w, const struct cxlt_sample *s, uint32_t n)
{
	if (w->err)
		return w->err;
	if (fwrite(s, sizeof(*s), n, w->f) != n) {
		w->err = errno ? -errno : -EIO;
		pr_err("cannot write trace %s: %s; recording stops", w->path, strerror(-w->err));
		return w->err;
	}
	w->samples += n;
	return 0;
}

int trace_writer__close(struct trace_writer *w)
{
	if (!w->f)
		return w->err;
	if (fclose(w->f) && !w->err)
		w->err = -errno;
	w->f = NULL;
	return w->err;
}

int trace__parse(struct trace *t, const void *buf, size_t len, char *msg, size_t msglen)
{
	const struct trace_header *h = buf;
	size_t off, body;

	memset(t, 0, sizeof(*t));
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
	if (len - off < (size_t)t->hdr.nr_nodes * sizeof(struct trace_node)) {
		snprintf(msg, msglen, "truncated: the header names %u nodes, the file ends first",
			 t->hdr.nr_nodes);
		return -EINVAL;
	}
	memcpy(t->nodes, (const char *)buf + off, t->hdr.nr_nodes * sizeof(struct trace_node));
	off += t->hdr.nr_nodes * sizeof(struct trace_node);
	body = len - off;
	if (body % sizeof(struct cxlt_sample)) {
		snprintf(msg, msglen, "truncated: %zu stray bytes after the last whole sample",
			 body % sizeof(struct cxlt_sample));
		return -EINVAL;
	}
	t->samples = (const struct cxlt_sample *)((const char *)buf + off);
	t->nr_samples = body / sizeof(struct cxlt_sample);
	return 0;
}

int trace__open(struct trace *t, const char *path, char *msg, size_t msglen)
{
	struct stat st;
	void *map;
	int fd, err;

	memset(t, 0, sizeof(*t));
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
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		err = -errno;
		snprintf(msg, msglen, "cannot map: %s", strerror(errno));
		return err;
	}
	err = trace__parse(t, map, st.st_size, msg, msglen);
	if (err) {
		munmap(map, st.st_size);
		return err;
	}
	t->map = map;
	t->map_len = st.st_size;
	return 0;
}

void trace__close(struct trace *t)
{
	if (t->map)
		munmap(t->map, t->map_len);
	memset(t, 0, sizeof(*t));
}
