// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxltier/policy.h"
#include "pfn_nodes.h"
#include "util.h"

int pfn_nodes__load(struct pfn_nodes *pn, const char *root)
{
	char path[1024], text[64];
	uint64_t block_bytes, max_block = 0;
	struct dirent *de;
	DIR *d;
	int err;

	pfn_nodes__free(pn);
	if (!root)
		root = "";
	if ((err = read_text(root, "/sys/devices/system/memory/block_size_bytes", text, sizeof(text))))
		return err;
	block_bytes = strtoull(text, NULL, 16);
	if (!block_bytes || (block_bytes & (block_bytes - 1)) || block_bytes < 4096)
		return -EINVAL;
	pn->block_shift = __builtin_ctzll(block_bytes) - 12;
	for (int pass = 0; pass < 2; pass++) {
		for (int node = 0; node < 64; node++) {
			snprintf(path, sizeof(path), "%s/sys/devices/system/node/node%d", root, node);
			d = opendir(path);
			if (!d)
				continue;
			while ((de = readdir(d))) {
				unsigned long long b;

				if (sscanf(de->d_name, "memory%llu", &b) != 1)
					continue;
				if (pass == 0 && b + 1 > max_block)
					max_block = b + 1;
				else if (pass == 1 && b < pn->nr_blocks)
					pn->block_node[b] = (int8_t)node;
			}
			closedir(d);
		}
		if (pass == 0) {
			if (!max_block)
				return -ENOENT;
			pn->block_node = malloc(max_block);
			if (!pn->block_node)
				return -ENOMEM;
			memset(pn->block_node, -1, max_block);
			pn->nr_blocks = max_block;
		}
	}
	return 0;
}

void pfn_nodes__free(struct pfn_nodes *pn)
{
	free(pn->block_node);
	memset(pn, 0, sizeof(*pn));
}

int pfn_nodes__node(const struct pfn_nodes *pn, uint64_t pfn)
{
	uint64_t b = pfn >> pn->block_shift;

	return pfn && b < pn->nr_blocks ? pn->block_node[b] : CXLT_NODE_UNKNOWN;
}
