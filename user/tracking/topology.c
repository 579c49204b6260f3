// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topology.h"
#include "util.h"

#define NODE_DIR "/sys/devices/system/node"
#define TIER_DIR "/sys/devices/virtual/memory_tiering"

/* Like strchr(): a const topology in, a node the caller may change out. */
struct topo_node *topology__node(const struct topology *t, int id)
{
	for (int i = 0; i < t->nr_nodes; i++)
		if (t->nodes[i].id == id)
			return (struct topo_node *)&t->nodes[i];
	return NULL;
}

bool topology__has_slow(const struct topology *t)
{
	return t->slow_mask && t->fast_mask;
}

uint64_t topology__fast_pages(const struct topology *t)
{
	uint64_t n = 0;

	for (int i = 0; i < t->nr_nodes; i++)
		if (t->nodes[i].role == ROLE_FAST)
			n += t->nodes[i].total_pages;
	return n;
}

uint64_t topology__fast_reserve(const struct topology *t)
{
	uint64_t n = 0;

	for (int i = 0; i < t->nr_nodes; i++)
		if (t->nodes[i].role == ROLE_FAST)
			n += t->nodes[i].kernel_high_pages;
	return n;
}

const char *topology__role_name(enum node_role role)
{
	return role == ROLE_FAST ? "fast" : role == ROLE_SLOW ? "slow" : "none";
}

static uint64_t meminfo_kb(const char *text, const char *field)
{
	const char *p = strstr(text, field);

	if (!p)
		return 0;
	p += strlen(field);
	while (*p == ' ' || *p == ':')
		p++;
	return strtoull(p, NULL, 10);
}

static int read_node_memory(struct topology *t, struct topo_node *n)
{
	char path[128], text[4096];
	int err;

	snprintf(path, sizeof(path), NODE_DIR "/node%d/meminfo", n->id);
	err = read_text(t->root, path, text, sizeof(text));
	if (err) {
		pr_err("cannot read %s%s: %s", t->root, path, strerror(-err));
		return err;
	}
	n->total_pages = meminfo_kb(text, "MemTotal") * 1024 / t->page_size;
	n->free_pages = meminfo_kb(text, "MemFree") * 1024 / t->page_size;
	return 0;
}

/*
 * Each node's zones' high watermarks, from /proc/zoneinfo (pages).  Free
 * memory under them wakes kswapd, and under min the kernel's own
 * allocations fail: with no swap, the OOM killer comes.  Watermarks change
 * with memory (hotplug) or min_free_kbytes: re-read when a node's size
 * changed, else kept from prev.  A tree without zoneinfo (a test fixture)
 * has no reserve.
 */
static void read_reserves(struct topology *t, const struct topology *prev)
{
	char path[PATH_MAX], line[256];
	struct topo_node *n = NULL;
	bool same = prev && prev->nr_nodes == t->nr_nodes;
	FILE *f;

	for (int i = 0; same && i < t->nr_nodes; i++)
		same = t->nodes[i].id == prev->nodes[i].id &&
		       t->nodes[i].total_pages == prev->nodes[i].total_pages;
	for (int i = 0; i < t->nr_nodes; i++)
		t->nodes[i].kernel_high_pages = same ? prev->nodes[i].kernel_high_pages : 0;
	if (same)
		return;
	snprintf(path, sizeof(path), "%s/proc/zoneinfo", t->root);
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		int id;

		if (sscanf(line, "Node %d, zone", &id) == 1)
			n = topology__node(t, id);
		else if (n && sscanf(line, " high %llu", &v) == 1)	/* not the pagesets' "high:" */
			n->kernel_high_pages += v;
	}
	fclose(f);
}

static int read_node(struct topology *t, struct topo_node *n)
{
	char path[128], text[4096];
	char *p;
	int err, i = 0;

	snprintf(path, sizeof(path), NODE_DIR "/node%d/cpulist", n->id);
	err = read_text(t->root, path, text, sizeof(text));
	n->has_cpus = !err && text[0] >= '0' && text[0] <= '9';

	snprintf(path, sizeof(path), NODE_DIR "/node%d/distance", n->id);
	if (!read_text(t->root, path, text, sizeof(text))) {
		for (p = text; i < TOPO_MAX_NODES && *p && *p != '\n'; i++) {
			long d = strtol(p, &p, 10);

			n->distance[i] = d > 255 ? 255 : (uint8_t)d;
		}
	}
	n->tier = -1;
	return read_node_memory(t, n);
}

static int read_tiers(struct topology *t)
{
	char dirpath[PATH_MAX], path[PATH_MAX], text[512];
	struct dirent *de;
	DIR *d;

	snprintf(dirpath, sizeof(dirpath), "%s" TIER_DIR, t->root);
	d = opendir(dirpath);
	if (!d)
		return 0;	/* kernel without memory tiers: fall back to CPUs */
	while ((de = readdir(d))) {
		uint64_t mask;
		int tier;

		if (sscanf(de->d_name, "memory_tier%d", &tier) != 1)
			continue;
		snprintf(path, sizeof(path), TIER_DIR "/%s/nodelist", de->d_name);
		if (read_text(t->root, path, text, sizeof(text)) ||
		    parse_nodelist(text, &mask)) {
			pr_warn("cannot parse %s%s: ignoring memory tiers", t->root, path);
			closedir(d);
			return 0;
		}
		for (int i = 0; i < t->nr_nodes; i++)
			if (mask & (1ULL << t->nodes[i].id))
				t->nodes[i].tier = tier;
		t->tiers_known = true;
	}
	closedir(d);
	return 0;
}

/*
 * Re-reads keep each node's tier from the last read while it keeps its
 * memory, and read the tiers' nodelist files only when a node gained memory.
 * Reading them while the kernel removes a tier deadlocks the machine (6.1 up
 * to at least 6.12): nodelist_show() waits for memory_tier_lock, which the
 * memory-offline path holds while it waits for every reader of the tier's
 * files to leave.  A tier is removed when the last memory of its last node
 * goes offline, just when the agent sees that node's memory change; a node
 * keeps its tier while it has memory, so skipping the read there loses nothing.
 */
static bool keep_tiers(struct topology *t, const struct topology *prev)
{
	for (int i = 0; i < t->nr_nodes; i++) {
		struct topo_node *n = &t->nodes[i];
		const struct topo_node *was = topology__node(prev, n->id);

		if (n->total_pages && (!was || !was->total_pages))
			return false;
		if (was)
			n->tier = was->tier;
	}
	t->tiers_known = prev->tiers_known;
	return true;
}

static int cmp_node(const void *a, const void *b)
{
	return ((const struct topo_node *)a)->id - ((const struct topo_node *)b)->id;
}

static uint64_t memory_nodes(const struct topology *t)
{
	uint64_t m = 0;

	for (int i = 0; i < t->nr_nodes; i++)
		if (t->nodes[i].total_pages)
			m |= 1ULL << t->nodes[i].id;
	return m;
}

static void default_roles(struct topology *t)
{
	int top = -1;

	for (int i = 0; i < t->nr_nodes; i++) {
		struct topo_node *n = &t->nodes[i];

		if (n->total_pages && n->tier >= 0 && (top < 0 || n->tier < top))
			top = n->tier;
	}
	for (int i = 0; i < t->nr_nodes; i++) {
		struct topo_node *n = &t->nodes[i];
		bool top_tier = !t->tiers_known || n->tier == top;

		if (!n->total_pages)
			continue;
		if (n->has_cpus && top_tier)
			t->fast_mask |= 1ULL << n->id;
		else
			t->slow_mask |= 1ULL << n->id;
	}
}

static int parse_override(const struct topology *t, const char *opt,
			  const char *list, uint64_t *mask)
{
	char buf[256];
	uint64_t bad;

	if (parse_nodelist(list, mask) || !*mask) {
		pr_err("%s '%s': not a node list (write it as numactl does, e.g. 0-1,4)",
		       opt, list);
		return -EINVAL;
	}
	bad = *mask & ~memory_nodes(t);
	if (bad) {
		pr_err("%s '%s': node %s has no memory or does not exist here",
		       opt, list, format_nodelist(bad, buf, sizeof(buf)));
		return -EINVAL;
	}
	return 0;
}

static int load(struct topology *t, const char *root, const char *fast,
		const char *slow, const struct topology *prev)
{
	char dirpath[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int err = 0;

	memset(t, 0, sizeof(*t));
	if (root && strlen(root) >= sizeof(t->root)) {
		pr_err("sysfs root path too long: %s", root);
		return -ENAMETOOLONG;
	}
	snprintf(t->root, sizeof(t->root), "%s", root && strcmp(root, "/") ? root : "");
	t->page_size = sysconf(_SC_PAGESIZE);

	snprintf(dirpath, sizeof(dirpath), "%s" NODE_DIR, t->root);
	d = opendir(dirpath);
	if (!d) {
		err = -errno;
		pr_err("cannot list NUMA nodes in %s: %s", dirpath, strerror(errno));
		return err;
	}
	while ((de = readdir(d))) {
		int id;

		if (sscanf(de->d_name, "node%d", &id) != 1 || id < 0 ||
		    id >= TOPO_MAX_NODES || t->nr_nodes == TOPO_MAX_NODES)
			continue;
		t->nodes[t->nr_nodes++].id = id;
	}
	closedir(d);
	if (!t->nr_nodes) {
		pr_err("no NUMA nodes under %s", dirpath);
		return -ENOENT;
	}
	qsort(t->nodes, t->nr_nodes, sizeof(t->nodes[0]), cmp_node);
	for (int i = 0; i < t->nr_nodes; i++) {
		err = read_node(t, &t->nodes[i]);
		if (err)
			return err;
	}
	read_reserves(t, prev);
	if (!prev || !keep_tiers(t, prev))
		read_tiers(t);

	if (fast || slow) {
		uint64_t mem = memory_nodes(t);

		t->overridden = true;
		if (fast && (err = parse_override(t, "--fast-nodes", fast, &t->fast_mask)))
			return err;
		if (slow && (err = parse_override(t, "--slow-nodes", slow, &t->slow_mask)))
			return err;
		if (t->fast_mask & t->slow_mask) {
			pr_err("--fast-nodes '%s' and --slow-nodes '%s' overlap: a node is either fast or slow",
			       fast, slow);
			return -EINVAL;
		}
		if (!fast)
			t->fast_mask = mem & ~t->slow_mask;
		if (!slow)
			t->slow_mask = mem & ~t->fast_mask;
	} else {
		default_roles(t);
	}
	for (int i = 0; i < t->nr_nodes; i++) {
		struct topo_node *n = &t->nodes[i];

		n->role = (t->fast_mask >> n->id) & 1 ? ROLE_FAST :
			  (t->slow_mask >> n->id) & 1 ? ROLE_SLOW : ROLE_NONE;
	}
	if (!t->fast_mask) {
		pr_err("no fast memory node found; name them with --fast-nodes");
		return -ENOENT;
	}
	return 0;
}

int topology__load(struct topology *t, const char *root, const char *fast,
		   const char *slow)
{
	return load(t, root, fast, slow, NULL);
}

int topology__reload(struct topology *t, const struct topology *prev,
		     const char *fast, const char *slow)
{
	return load(t, prev->root, fast, slow, prev);
}

void topology__log(const struct topology *t)
{
	char fast[64], slow[64];

	for (int i = 0; i < t->nr_nodes; i++) {
		const struct topo_node *n = &t->nodes[i];

		pr_info("node %d: %s, %s, tier %d, %llu MiB total, %llu MiB free, %llu MiB the kernel keeps free (zone high watermarks)",
			n->id, topology__role_name(n->role),
			n->has_cpus ? "CPUs" : "no CPUs", n->tier,
			(unsigned long long)(n->total_pages * t->page_size >> 20),
			(unsigned long long)(n->free_pages * t->page_size >> 20),
			(unsigned long long)(n->kernel_high_pages * t->page_size >> 20));
	}
	pr_info("fast nodes %s, slow nodes %s (%s)",
		format_nodelist(t->fast_mask, fast, sizeof(fast)),
		t->slow_mask ? format_nodelist(t->slow_mask, slow, sizeof(slow)) : "none",
		t->overridden ? "from the command line" :
		t->tiers_known ? "from memory tiers and CPUs" : "from CPUs (no memory tiers)");
}
