/* SPDX-License-Identifier: MIT */
/*
 * Which NUMA nodes are fast (DRAM) and which are slow (CXL), read from sysfs
 * under a root path so tests can point it at fixture trees.
 */
#ifndef CXLT_TOPOLOGY_H
#define CXLT_TOPOLOGY_H

#include <stdbool.h>
#include <stdint.h>
#include <limits.h>

#define TOPO_MAX_NODES 64

enum node_role { ROLE_NONE = -1, ROLE_FAST = 0, ROLE_SLOW = 1 };

struct topo_node {
	int id;
	bool has_cpus;
	int tier;		/* memory_tierN's N, -1 when the kernel has no tiers */
	enum node_role role;	/* ROLE_NONE: no memory, not managed */
	uint64_t total_pages;
	uint64_t free_pages;
	uint64_t kernel_high_pages;	/* its zones' high watermarks (/proc/zoneinfo): the kernel's reserve */
	uint8_t distance[TOPO_MAX_NODES];
};

struct topology {
	char root[1024];	/* sysfs root, "" for the real one */
	long page_size;
	int nr_nodes;
	struct topo_node nodes[TOPO_MAX_NODES];	/* in id order */
	uint64_t fast_mask, slow_mask;
	bool tiers_known;
	bool overridden;
};

/*
 * Reads nodes, CPUs, tiers, distances and memory.  fast/slow are node lists
 * from the user (NULL = default rule: nodes with CPUs in the top memory tier
 * are fast; CPU-less or lower-tier nodes with memory are slow).  On error,
 * prints what is wrong and returns -errno.
 */
int topology__load(struct topology *t, const char *root, const char *fast,
		   const char *slow);
/*
 * The same, again under prev's root, for the agent's re-read every epoch:
 * tiers come from prev for nodes that had memory then (see keep_tiers()).
 */
int topology__reload(struct topology *t, const struct topology *prev,
		     const char *fast, const char *slow);
struct topo_node *topology__node(const struct topology *t, int id);
bool topology__has_slow(const struct topology *t);
/* The fast nodes' memory, in pages. */
uint64_t topology__fast_pages(const struct topology *t);
/* The fast nodes' zones' high watermarks, in pages: what the kernel keeps free for itself. */
uint64_t topology__fast_reserve(const struct topology *t);
const char *topology__role_name(enum node_role role);
void topology__log(const struct topology *t);

#endif
