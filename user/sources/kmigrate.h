/* SPDX-License-Identifier: MIT */
/* Userspace twin of bpf/kmigrate.bpf.c: the kernel's own migrations by reason. */
#ifndef CXLT_KMIGRATE_H
#define CXLT_KMIGRATE_H

#include <stdbool.h>
#include <stdint.h>

#include "cxltier.h"

struct kmigrate {
	struct kmigrate_bpf *skel;
	struct bpf_link *link;
	char pin_dir[256];
	int map_fd;
	struct cxlt_kmigrate base[CXLT_MIGRATE_REASONS];	/* at open: report deltas */
	char names[CXLT_MIGRATE_REASONS][32];	/* "compaction", "syscall", ... */
};

/* Whether name is one of the pins kmigrate__open() makes. */
bool kmigrate__pins(const char *name);
int kmigrate__open(struct kmigrate *k, const char *pin_dir);
void kmigrate__close(struct kmigrate *k);
/* Counts since open (sums over CPUs). */
int kmigrate__read(const struct kmigrate *k, struct cxlt_kmigrate out[CXLT_MIGRATE_REASONS]);
/* Sums a pinned map (cxltierctl); raw totals since the agent loaded it. */
int kmigrate__read_fd(int fd, struct cxlt_kmigrate out[CXLT_MIGRATE_REASONS]);
/* Logs what the kernel migrated while the agent ran, by reason (move_pages is "syscall"). */
void kmigrate__log(const struct kmigrate *km);

#endif
