/* SPDX-License-Identifier: MIT */
/*
 * The cxltier trace format: a recorded (or synthetic) sample stream that
 * cxltier-replay runs policies over; its specification, every field, unit,
 * order and the version rule, is docs/trace-format.md.  Little-endian,
 * versioned:
 *
 *   struct trace_header   magic "CXLTTRC\0", version, header size, page
 *                         size, node count, sample size, flags
 *   struct trace_node     x node count: id, role, tier, capacity in pages
 *   struct cxlt_sample    x until the end of the file (24 bytes each:
 *                         time_ns, tgid, source, weight, vpage); from
 *                         version 2, a record whose source has bit 15 set
 *                         is not a sample but an event of the same size
 *                         (TRACE_RESIDENT: a run of resident pages)
 *
 * Readers check every length against the file size before trusting it: a
 * trace may come from anyone.  Nothing in it is trusted beyond its layout:
 * times, processes and pages are whatever the samples say.  This reader
 * reads versions 1 and 2 and refuses any other with a message naming both.
 */
#ifndef CXLT_TRACE_H
#define CXLT_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cxltier.h"
#include "cxltier/policy.h"	/* node roles */

#define TRACE_MAGIC "CXLTTRC"	/* 8 bytes with the NUL */
#define TRACE_VERSION 2		/* written */
#define TRACE_VERSION_MIN 1	/* the oldest read */
#define TRACE_MAX_NODES 64

/*
 * Version 2: a record whose source has this bit is an event, not a sample
 * (a reader skips the events it does not know).
 */
#define TRACE_EVENT 0x8000
/*
 * A run of resident pages: source TRACE_RESIDENT + n, pages [vpage, vpage +
 * weight) of tgid were resident on the node of node record n (n = 0xff:
 * unknown) when the agent's sweep found them at time_ns.
 */
#define TRACE_RESIDENT 0x8100
#define TRACE_RESIDENT_UNKNOWN 0xff
#define TRACE_RUN_MAX 65535u
/*
 * An epoch mark: the live agent's epoch vpage took its samples at time_ns;
 * the samples before it in time were that epoch's (or earlier ones').
 */
#define TRACE_EPOCH 0x8001
/*
 * Huge pages: source TRACE_HUGE + order, pages [vpage, vpage + weight) of
 * tgid lay in huge pages of 2^order pages each (vpage and weight multiples
 * of it) when the agent's sweep found them at time_ns.
 */
#define TRACE_HUGE 0x8200

enum trace_kind { TRACE_SAMPLE, TRACE_RUN, TRACE_MARK, TRACE_HUGE_RUN, TRACE_OTHER };

struct target;

struct trace_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;	/* sizeof(struct trace_header) as written */
	uint32_t page_size;
	uint32_t nr_nodes;
	uint32_t sample_size;	/* sizeof(struct cxlt_sample) as written */
	uint32_t flags;
	uint64_t start_ns;	/* time of the first sample, for display */
	uint64_t reserved[2];
};

struct trace_node {
	int32_t id;
	int32_t role;		/* enum cxlt_node_role */
	int32_t tier;
	uint32_t reserved;
	uint64_t capacity_pages;
};

_Static_assert(sizeof(struct trace_header) == 56, "trace header layout");
_Static_assert(sizeof(struct trace_node) == 24, "trace node layout");
_Static_assert(sizeof(struct cxlt_sample) == 24, "trace sample layout");

struct trace_writer {
	int fd;
	bool open;
	char path[512];
	char *buf;		/* whole samples waiting to be written */
	size_t used;
	uint64_t bytes;		/* in the file */
	uint64_t header_bytes;	/* header and nodes */
	uint64_t samples;	/* records in the file */
	uint64_t runs;		/* resident runs handed to it */
	uint64_t marks;		/* epoch marks handed to it */
	int err;		/* first write error, -errno */
	int32_t node_ids[TRACE_MAX_NODES];	/* the node records' ids, for runs */
	uint32_t nr_nodes;
	uint32_t page_size;
	struct cxlt_sample run;	/* the run being extended; weight 0: none */
};

/*
 * Creates path (0600), or truncates a regular file of root's there (never a
 * link, FIFO or device: open_output_file() in util.c), and writes the
 * header and nodes; -errno with a message.  After a write error (a full
 * disk) the file is cut back to the last whole sample, so it still reads.
 */
int trace_writer__open(struct trace_writer *w, const char *path, uint32_t page_size,
		       const struct trace_node *nodes, uint32_t nr_nodes);
int trace_writer__add(struct trace_writer *w, const struct cxlt_sample *s, uint32_t n);
/*
 * The resident memory of target t as its last sweep found it, as runs
 * (TRACE_RESIDENT records) stamped time_ns: per 2 MiB region, its resident
 * count spread over its resident 32 KiB chunks from each chunk's start, the
 * pages of its first node first (the tracker keeps counts per region, not
 * each page's node).  A region split between nodes or with partly resident
 * chunks is asked page by page (pagemap's page frames and tr's pfn_nodes,
 * else tr's move_pages with no nodes), for up to 1024 regions a target; tr
 * NULL: never.  Runs of one node continue across regions.  Then the huge
 * pages among them (TRACE_HUGE records).  0, or the write error, or -ENOMEM.
 */
struct tracker;
int trace_writer__add_target(struct trace_writer *w, uint64_t time_ns, const struct target *t,
			     const struct tracker *tr);
/* An epoch mark (TRACE_EPOCH): epoch took its samples at time_ns. */
int trace_writer__add_mark(struct trace_writer *w, uint64_t time_ns, uint64_t epoch);
/* Flushes and closes; returns the first error seen (samples then says how many the file kept). */
int trace_writer__close(struct trace_writer *w);

/*
 * An open trace.  Samples are read (pread), never mapped: a file truncated
 * while a replay reads it is an error the reader reports, where a mapping
 * would take SIGBUS.  Only what was there at open is read; a file that grows
 * meanwhile is read up to its old end.
 */
struct trace {
	struct trace_header hdr;
	struct trace_node nodes[TRACE_MAX_NODES];
	uint64_t nr_samples;	/* records: samples and (version 2) events */
	uint64_t samples_off;	/* file offset of the first record */
	int fd;			/* -1 for a trace parsed from a buffer */
	const struct cxlt_sample *samples;	/* a buffer's samples; NULL for a file */
	/*
	 * Cursors stretch the clock by this (0 or 1, as after open: not at all): a record at t
	 * reads as t0 + (t - t0) * time_scale, t0 the first record's time.
	 */
	uint32_t time_scale;
};

/*
 * Opens a trace and validates its header and nodes.  On error, msg says
 * what is wrong, in words a user can act on ("not a cxltier trace",
 * "truncated: ..."), and -errno comes back.
 */
int trace__open(struct trace *t, const char *path, char *msg, size_t msglen);
/* The same on a buffer (the fuzzer's entry point); t points into buf. */
int trace__parse(struct trace *t, const void *buf, size_t len, char *msg, size_t msglen);
void trace__close(struct trace *t);

/* What a record is: a sample, a resident run, or an event this reader skips. */
static inline enum trace_kind trace__kind(const struct trace *t, const struct cxlt_sample *s)
{
	if (t->hdr.version < 2 || !(s->source & TRACE_EVENT))
		return TRACE_SAMPLE;
	return (s->source & 0xff00) == TRACE_RESIDENT ? TRACE_RUN :
	       (s->source & 0xff00) == TRACE_HUGE ? TRACE_HUGE_RUN :
	       s->source == TRACE_EPOCH ? TRACE_MARK : TRACE_OTHER;
}

/* A resident run's node: its role (CXLT_NODE_FAST or _SLOW), or -1 when unknown. */
int trace__run_role(const struct trace *t, const struct cxlt_sample *s);

/*
 * Reads the samples in file order, a buffer at a time: memory stays fixed.
 * Events are skipped unless events is set (then every record comes).
 */
struct trace_cursor {
	const struct trace *t;
	bool events;
	uint64_t next;		/* index of buf[n] in the trace */
	uint32_t pos, n;
	uint64_t t0;		/* the first record's time, for time_scale */
	int err;		/* -errno once reading failed; msg says why */
	char msg[128];
	struct cxlt_sample buf[4096];
};

void trace_cursor__init(struct trace_cursor *c, const struct trace *t);
/* The next sample, or NULL at the end or on an error (c->err, c->msg). */
const struct cxlt_sample *trace_cursor__peek(struct trace_cursor *c);
/* Every record, events too. */
void trace_cursor__init_all(struct trace_cursor *c, const struct trace *t);
static inline const struct cxlt_sample *trace_cursor__next(struct trace_cursor *c)
{
	const struct cxlt_sample *s = trace_cursor__peek(c);

	c->pos += s != NULL;
	return s;
}

#endif
