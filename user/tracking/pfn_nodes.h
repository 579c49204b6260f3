/* SPDX-License-Identifier: MIT */
#ifndef CXLT_PFN_NODES_H
#define CXLT_PFN_NODES_H

#include <stdint.h>

/*
 * Which node a physical page frame sits on, from the memory blocks listed
 * under /sys/devices/system/node/nodeN/memoryM.  Lets a pagemap scan place
 * pages that move_pages cannot see (PROT_NONE under NUMA scanning, < 6.5).
 */
struct pfn_nodes {
	int8_t *block_node;	/* -1: unknown */
	uint64_t nr_blocks;
	unsigned int block_shift;	/* log2(pages per memory block) */
};

int pfn_nodes__load(struct pfn_nodes *pn, const char *root);
void pfn_nodes__free(struct pfn_nodes *pn);
int pfn_nodes__node(const struct pfn_nodes *pn, uint64_t pfn);

#endif
