// SPDX-License-Identifier: MIT
/*
 * Topology: which nodes are fast and which are slow, read from fixture sysfs
 * trees (tests/fixtures/topology/<case>/sys/...), and the node-list and
 * number parsers from util.c that the options go through.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "topology.h"
#include "util.h"

#define FIX "tests/fixtures/topology/"

/* kB in the fixture's meminfo -> pages of this machine */
static uint64_t kb_pages(uint64_t kb)
{
	return kb * 1024 / (uint64_t)sysconf(_SC_PAGESIZE);
}

static struct topology topo;	/* 20 KiB: keep it off the stack */

static void dram_cxl_fast_dram_slow_cxl(void **state)
{
	struct topology *t = &topo;
	struct topo_node *n0, *n1;

	(void)state;
	assert_int_equal(topology__load(t, FIX "dram_cxl", NULL, NULL), 0);
	assert_int_equal(t->nr_nodes, 2);
	assert_int_equal(t->fast_mask, 0x1);
	assert_int_equal(t->slow_mask, 0x2);
	assert_true(topology__has_slow(t));
	assert_true(t->tiers_known);
	assert_false(t->overridden);

	n0 = topology__node(t, 0);
	n1 = topology__node(t, 1);
	assert_non_null(n0);
	assert_non_null(n1);
	assert_null(topology__node(t, 2));
	assert_true(n0->has_cpus);
	assert_false(n1->has_cpus);
	assert_int_equal(n0->tier, 4);
	assert_int_equal(n1->tier, 22);
	assert_int_equal(n0->role, ROLE_FAST);
	assert_int_equal(n1->role, ROLE_SLOW);
	assert_int_equal(n0->total_pages, kb_pages(16384000));
	assert_int_equal(n0->free_pages, kb_pages(8192000));
	assert_int_equal(n1->total_pages, kb_pages(8388608));
	assert_int_equal(n1->free_pages, kb_pages(8000000));
	assert_int_equal(n0->distance[0], 10);
	assert_int_equal(n0->distance[1], 20);
	assert_int_equal(n1->distance[0], 20);
	assert_string_equal(topology__role_name(n0->role), "fast");
	assert_string_equal(topology__role_name(n1->role), "slow");
}

static void root_with_trailing_slash_is_the_same_tree(void **state)
{
	(void)state;
	assert_int_equal(topology__load(&topo, FIX "dram_cxl/", NULL, NULL), 0);
	assert_int_equal(topo.fast_mask, 0x1);
	assert_int_equal(topo.slow_mask, 0x2);
}

static void same_tier_default_cpuless_node_is_slow(void **state)
{
	struct topology *t = &topo;

	(void)state;
	assert_int_equal(topology__load(t, FIX "same_tier", NULL, NULL), 0);
	assert_int_equal(topology__node(t, 0)->tier, 4);
	assert_int_equal(topology__node(t, 1)->tier, 4);
	assert_int_equal(t->fast_mask, 0x1);
	assert_int_equal(t->slow_mask, 0x2);
	assert_true(topology__has_slow(t));
}

static void same_tier_override_all_fast_leaves_no_slow(void **state)
{
	struct topology *t = &topo;

	(void)state;
	assert_int_equal(topology__load(t, FIX "same_tier", "0,1", NULL), 0);
	assert_true(t->overridden);
	assert_int_equal(t->fast_mask, 0x3);
	assert_int_equal(t->slow_mask, 0);
	assert_false(topology__has_slow(t));
	assert_int_equal(topology__node(t, 1)->role, ROLE_FAST);
}

static void same_tier_override_fast_and_slow(void **state)
{
	struct topology *t = &topo;

	(void)state;
	assert_int_equal(topology__load(t, FIX "same_tier", "0", "1"), 0);
	assert_int_equal(t->fast_mask, 0x1);
	assert_int_equal(t->slow_mask, 0x2);
	assert_true(topology__has_slow(t));
	assert_int_equal(topology__node(t, 0)->role, ROLE_FAST);
	assert_int_equal(topology__node(t, 1)->role, ROLE_SLOW);
}

static void same_tier_override_slow_only_makes_the_rest_fast(void **state)
{
	struct topology *t = &topo;

	(void)state;
	assert_int_equal(topology__load(t, FIX "same_tier", NULL, "1"), 0);
	assert_int_equal(t->fast_mask, 0x1);
	assert_int_equal(t->slow_mask, 0x2);
}

static void override_overlap_is_rejected(void **state)
{
	(void)state;
	assert_int_equal(topology__load(&topo, FIX "same_tier", "0-1", "1"), -EINVAL);
}

static void override_nonexistent_node_is_rejected(void **state)
{
	(void)state;
	assert_int_equal(topology__load(&topo, FIX "same_tier", "5", NULL), -EINVAL);
	assert_int_equal(topology__load(&topo, FIX "same_tier", "0", "5"), -EINVAL);
}

static void override_bad_syntax_is_rejected(void **state)
{
	(void)state;
	assert_int_equal(topology__load(&topo, FIX "same_tier", "0-", NULL), -EINVAL);
	assert_int_equal(topology__load(&topo, FIX "same_tier", "zero", NULL), -EINVAL);
	assert_int_equal(topology__load(&topo, FIX "same_tier", "", NULL), -EINVAL);
}

static void two_cxl_two_fast_two_slow_with_distances(void **state)
{
	struct topology *t = &topo;
	static const uint8_t dist[4][4] = {
		{ 10, 21, 14, 24 }, { 21, 10, 24, 14 },
		{ 14, 24, 10, 26 }, { 24, 14, 26, 10 },
	};

	(void)state;
	assert_int_equal(topology__load(t, FIX "two_cxl", NULL, NULL), 0);
	assert_int_equal(t->nr_nodes, 4);
	assert_int_equal(t->fast_mask, 0x3);
	assert_int_equal(t->slow_mask, 0xc);
	for (int i = 0; i < 4; i++) {
		struct topo_node *n = topology__node(t, i);

		assert_non_null(n);
		assert_int_equal(n->id, i);
		assert_int_equal(n->tier, i < 2 ? 4 : 22);
		assert_int_equal(n->has_cpus, i < 2);
		for (int j = 0; j < 4; j++)
			assert_int_equal(n->distance[j], dist[i][j]);
	}
	assert_int_equal(topology__node(t, 3)->free_pages, kb_pages(15000000));
}

static void no_slow_single_node_has_no_slow_tier(void **state)
{
	struct topology *t = &topo;

	(void)state;
	assert_int_equal(topology__load(t, FIX "no_slow", NULL, NULL), 0);
	assert_int_equal(t->nr_nodes, 1);
	assert_int_equal(t->fast_mask, 0x1);
	assert_int_equal(t->slow_mask, 0);
	assert_false(topology__has_slow(t));
}

static void no_tiers_cpus_decide_and_tiers_are_unknown(void **state)
{
	struct topology *t = &topo;

	(void)state;
	assert_int_equal(topology__load(t, FIX "no_tiers", NULL, NULL), 0);
	assert_false(t->tiers_known);
	assert_int_equal(topology__node(t, 0)->tier, -1);
	assert_int_equal(topology__node(t, 1)->tier, -1);
	assert_int_equal(t->fast_mask, 0x1);
	assert_int_equal(t->slow_mask, 0x2);
	assert_true(topology__has_slow(t));
}

/* A writable copy of a fixture tree in dir (a mkdtemp template). */
static void copy_fixture(char *dir, const char *name)
{
	char cmd[512];

	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp -r " FIX "%s/sys %s/", name, dir);
	assert_int_equal(system(cmd), 0);
}

static void refresh_picks_up_changed_free_memory(void **state)
{
	char dir[] = "/tmp/cxlt-topo-XXXXXX", cmd[512], path[512];
	struct topology *t = &topo;
	FILE *f;

	(void)state;
	copy_fixture(dir, "dram_cxl");
	assert_int_equal(topology__load(t, dir, NULL, NULL), 0);
	assert_int_equal(topology__node(t, 1)->free_pages, kb_pages(8000000));

	snprintf(path, sizeof(path), "%s/sys/devices/system/node/node1/meminfo", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "Node 1 MemTotal:        8388608 kB\n"
		   "Node 1 MemFree:          524288 kB\n"
		   "Node 1 MemUsed:         7864320 kB\n");
	fclose(f);
	/* Before the re-read (the agent does one every epoch): the old numbers. */
	assert_int_equal(topology__node(t, 1)->free_pages, kb_pages(8000000));
	assert_int_equal(topology__load(t, dir, NULL, NULL), 0);
	assert_int_equal(topology__node(t, 1)->free_pages, kb_pages(524288));
	assert_int_equal(topology__node(t, 1)->total_pages, kb_pages(8388608));
	/* Node 0 unchanged, roles unchanged. */
	assert_int_equal(topology__node(t, 0)->free_pages, kb_pages(8192000));
	assert_int_equal(t->slow_mask, 0x2);

	/* A node's meminfo vanishing (memory hot-removed) is an error, not a silent 0. */
	assert_int_equal(unlink(path), 0);
	assert_true(topology__load(t, dir, NULL, NULL) < 0);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* Writes REL (a path under the tree DIR), its directory made if need be. */
static void write_under(const char *dir, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	*strrchr(path, '/') = '\0';
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void put(const char *dir, const char *file, const char *text)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "sys/devices/%s", file);
	write_under(dir, rel, text);
}

#define TIERS "virtual/memory_tiering/memory_tier"
#define NODE1 "system/node/node1/meminfo"

/*
 * The agent's re-reads must not read a tier's nodelist while a node loses
 * memory (the kernel can deadlock there, see keep_tiers()).  Garbage in the
 * nodelist files shows whether a re-read looked at them: it would make the
 * tiers unknown.
 */
static void reload_reads_tiers_only_when_a_node_gains_memory(void **state)
{
	static struct topology t0, t1, t2, t3;
	char dir[] = "/tmp/cxlt-topo-XXXXXX", cmd[512];

	(void)state;
	copy_fixture(dir, "dram_cxl");
	assert_int_equal(topology__load(&t0, dir, NULL, NULL), 0);
	put(dir, TIERS "4/nodelist", "garbage\n");
	put(dir, TIERS "22/nodelist", "garbage\n");

	/* Node 1 shrinks (a block offline): same tier, new size. */
	put(dir, NODE1, "Node 1 MemTotal: 4194304 kB\nNode 1 MemFree: 4000000 kB\n");
	assert_int_equal(topology__reload(&t1, &t0, NULL, NULL), 0);
	assert_true(t1.tiers_known);
	assert_int_equal(topology__node(&t1, 1)->tier, 22);
	assert_int_equal(topology__node(&t1, 1)->total_pages, kb_pages(4194304));
	assert_int_equal(t1.slow_mask, 0x2);

	/* Node 1's last memory goes: no role, and still no read. */
	put(dir, NODE1, "Node 1 MemTotal: 0 kB\nNode 1 MemFree: 0 kB\n");
	assert_int_equal(topology__reload(&t2, &t1, NULL, NULL), 0);
	assert_true(t2.tiers_known);
	assert_int_equal(topology__node(&t2, 0)->tier, 4);
	assert_int_equal(topology__node(&t2, 1)->role, ROLE_NONE);
	assert_int_equal(t2.slow_mask, 0);

	/* It comes back in another tier: now the tiers are read. */
	put(dir, TIERS "4/nodelist", "0-1\n");
	put(dir, TIERS "22/nodelist", "\n");
	put(dir, NODE1, "Node 1 MemTotal: 8388608 kB\nNode 1 MemFree: 8000000 kB\n");
	assert_int_equal(topology__reload(&t3, &t2, NULL, NULL), 0);
	assert_true(t3.tiers_known);
	assert_int_equal(topology__node(&t3, 1)->tier, 4);
	assert_int_equal(topology__node(&t3, 1)->role, ROLE_SLOW);	/* no CPUs */

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* A node's zones as /proc/zoneinfo shows them, pagesets' "high:" included. */
#define ZONE(node, name, high) \
	"Node " #node ", zone " name "\n  pages free     1000\n        boost    0\n" \
	"        min      10\n        low      20\n        high     " #high "\n" \
	"  pagesets\n    cpu: 0\n              count: 5\n              high:  378\n"

/*
 * The kernel's reserve on each node is its zones' high watermarks; a
 * re-read keeps it while no node changed size, and reads it again when
 * one did.  Without zoneinfo there is none.
 */
static void reserve_is_the_zones_high_watermarks(void **state)
{
	static struct topology t0, t1, t2;
	char dir[] = "/tmp/cxlt-topo-XXXXXX", cmd[512];

	(void)state;
	copy_fixture(dir, "dram_cxl");
	assert_int_equal(topology__load(&t0, dir, NULL, NULL), 0);
	assert_int_equal(topology__fast_reserve(&t0), 0);

	write_under(dir, "proc/zoneinfo", ZONE(0, "DMA", 7) ZONE(0, "DMA32", 8000) ZONE(0, "Normal", 1000)
				  ZONE(1, "Movable", 500));
	assert_int_equal(topology__load(&t0, dir, NULL, NULL), 0);
	assert_int_equal(topology__node(&t0, 0)->kernel_high_pages, 9007);
	assert_int_equal(topology__node(&t0, 1)->kernel_high_pages, 500);
	assert_int_equal(topology__fast_reserve(&t0), 9007);

	/* No node changed size: kept, not read (the file now says otherwise). */
	write_under(dir, "proc/zoneinfo", ZONE(0, "DMA32", 1));
	assert_int_equal(topology__reload(&t1, &t0, NULL, NULL), 0);
	assert_int_equal(topology__fast_reserve(&t1), 9007);

	/* Node 1 shrinks: read again. */
	put(dir, NODE1, "Node 1 MemTotal: 4194304 kB\nNode 1 MemFree: 4000000 kB\n");
	assert_int_equal(topology__reload(&t2, &t1, NULL, NULL), 0);
	assert_int_equal(topology__fast_reserve(&t2), 1);
	assert_int_equal(topology__node(&t2, 1)->kernel_high_pages, 0);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void missing_root_is_an_error(void **state)
{
	(void)state;
	assert_int_equal(topology__load(&topo, FIX "does-not-exist", NULL, NULL), -ENOENT);
}

/* ---- util.c parsers ---- */

static void parse_nodelist_ranges_and_lists(void **state)
{
	uint64_t m = 0xdead;

	(void)state;
	assert_int_equal(parse_nodelist("0-2,4", &m), 0);
	assert_int_equal(m, 0x17);
	assert_int_equal(parse_nodelist("3", &m), 0);
	assert_int_equal(m, 0x8);
	assert_int_equal(parse_nodelist("0-1\n", &m), 0);	/* sysfs files end in \n */
	assert_int_equal(m, 0x3);
	assert_int_equal(parse_nodelist("63", &m), 0);
	assert_true(m == 1ULL << 63);
	assert_int_equal(parse_nodelist("all", &m), 0);
	assert_true(m == ~0ULL);
	/* An empty list (a CPU-less node's cpulist, an empty tier) is the empty set. */
	assert_int_equal(parse_nodelist("", &m), 0);
	assert_int_equal(m, 0);
	assert_int_equal(parse_nodelist("\n", &m), 0);
	assert_int_equal(m, 0);
}

static void parse_nodelist_rejects_bad_lists(void **state)
{
	uint64_t m = 0x5a;

	(void)state;
	assert_int_equal(parse_nodelist("3-1", &m), -EINVAL);
	assert_int_equal(parse_nodelist("64", &m), -EINVAL);
	assert_int_equal(parse_nodelist("0-64", &m), -EINVAL);
	assert_int_equal(parse_nodelist("0-", &m), -EINVAL);
	assert_int_equal(parse_nodelist("-1", &m), -EINVAL);
	assert_int_equal(parse_nodelist("1;2", &m), -EINVAL);
	assert_int_equal(parse_nodelist("a", &m), -EINVAL);
	assert_int_equal(parse_nodelist(NULL, &m), -EINVAL);
	assert_int_equal(m, 0x5a);	/* untouched on error */
}

static void format_nodelist_round_trips(void **state)
{
	static const char *const lists[] = { "0-2,4", "0", "1,3,5", "0-63", "62-63", "7-9,20-22" };
	char buf[256], small[4];
	uint64_t m;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(lists); i++) {
		assert_int_equal(parse_nodelist(lists[i], &m), 0);
		assert_string_equal(format_nodelist(m, buf, sizeof(buf)), lists[i]);
	}
	assert_string_equal(format_nodelist(0, buf, sizeof(buf)), "");
	assert_string_equal(format_nodelist(0x17, buf, sizeof(buf)), "0-2,4");
	/* A short buffer is cut, never overrun, and stays a string. */
	format_nodelist(0x15555, small, sizeof(small));
	assert_true(strlen(small) < sizeof(small));
	assert_memory_equal(small, "0,2", 4);
}

static void parse_size_suffixes(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(parse_size("64M", &v), 0);
	assert_int_equal(v, 64ULL << 20);
	assert_int_equal(parse_size("2G", &v), 0);
	assert_int_equal(v, 2ULL << 30);
	assert_int_equal(parse_size("1.5G", &v), 0);
	assert_int_equal(v, 3ULL << 29);
	assert_int_equal(parse_size("4k", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(parse_size("1T", &v), 0);
	assert_int_equal(v, 1ULL << 40);
	assert_int_equal(parse_size("8MiB", &v), 0);
	assert_int_equal(v, 8ULL << 20);
	assert_int_equal(parse_size("0", &v), 0);
	assert_int_equal(v, 0);
}

static void parse_size_rejects_garbage(void **state)
{
	uint64_t v = 77;

	(void)state;
	assert_int_equal(parse_size("10x", &v), -EINVAL);
	assert_int_equal(parse_size("-1", &v), -EINVAL);
	assert_int_equal(parse_size("", &v), -EINVAL);
	assert_int_equal(parse_size("M", &v), -EINVAL);
	assert_int_equal(parse_size("1GG", &v), -EINVAL);
	assert_int_equal(parse_size("nan", &v), -EINVAL);
	assert_int_equal(parse_size("inf", &v), -EINVAL);
	assert_int_equal(parse_size("100000000T", &v), -EINVAL);	/* > 2^64 */
	assert_int_equal(parse_size(NULL, &v), -EINVAL);
	assert_int_equal(v, 77);
}

static void parse_u64_bounds_and_garbage(void **state)
{
	uint64_t v = 5;

	(void)state;
	assert_int_equal(parse_u64("64", 0, 100, &v), 0);
	assert_int_equal(v, 64);
	assert_int_equal(parse_u64("0x10", 0, 100, &v), 0);
	assert_int_equal(v, 16);
	assert_int_equal(parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	v = 5;
	assert_int_equal(parse_u64("101", 0, 100, &v), -ERANGE);
	assert_int_equal(parse_u64("0", 1, 100, &v), -ERANGE);
	assert_int_equal(parse_u64("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	assert_int_equal(parse_u64("-1", 0, UINT64_MAX, &v), -EINVAL);
	assert_int_equal(parse_u64("10x", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_u64("", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_u64(NULL, 0, 100, &v), -EINVAL);
	assert_int_equal(v, 5);
}

/*
 * parse_u64 refuses "-1" because strtoull would turn it into 2^64-1; a blank
 * before the sign must not get around that (strtoull skips blanks).
 */
static void parse_u64_rejects_negative_after_blanks(void **state)
{
	uint64_t v = 5;

	(void)state;
	assert_int_equal(parse_u64(" -1", 0, UINT64_MAX, &v), -EINVAL);
	assert_int_equal(parse_u64("\t-2", 0, UINT64_MAX, &v), -EINVAL);
	assert_int_equal(v, 5);
}

static void parse_double_bounds_and_garbage(void **state)
{
	double v = 9;

	(void)state;
	assert_int_equal(parse_double("0.5", 0, 1, &v), 0);
	assert_true(v == 0.5);
	assert_int_equal(parse_double("1e-1", 0, 1, &v), 0);
	assert_true(v == 0.1);
	v = 9;
	assert_int_equal(parse_double("1.5", 0, 1, &v), -ERANGE);
	assert_int_equal(parse_double("-1", 0, 1, &v), -ERANGE);
	assert_int_equal(parse_double("abc", 0, 1, &v), -EINVAL);
	assert_int_equal(parse_double("0.5x", 0, 1, &v), -EINVAL);
	assert_int_equal(parse_double("nan", 0, 1, &v), -EINVAL);
	assert_int_equal(parse_double("", 0, 1, &v), -EINVAL);
	assert_true(v == 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dram_cxl_fast_dram_slow_cxl),
		cmocka_unit_test(root_with_trailing_slash_is_the_same_tree),
		cmocka_unit_test(same_tier_default_cpuless_node_is_slow),
		cmocka_unit_test(same_tier_override_all_fast_leaves_no_slow),
		cmocka_unit_test(same_tier_override_fast_and_slow),
		cmocka_unit_test(same_tier_override_slow_only_makes_the_rest_fast),
		cmocka_unit_test(override_overlap_is_rejected),
		cmocka_unit_test(override_nonexistent_node_is_rejected),
		cmocka_unit_test(override_bad_syntax_is_rejected),
		cmocka_unit_test(two_cxl_two_fast_two_slow_with_distances),
		cmocka_unit_test(no_slow_single_node_has_no_slow_tier),
		cmocka_unit_test(no_tiers_cpus_decide_and_tiers_are_unknown),
		cmocka_unit_test(refresh_picks_up_changed_free_memory),
		cmocka_unit_test(reload_reads_tiers_only_when_a_node_gains_memory),
		cmocka_unit_test(reserve_is_the_zones_high_watermarks),
		cmocka_unit_test(missing_root_is_an_error),
		cmocka_unit_test(parse_nodelist_ranges_and_lists),
		cmocka_unit_test(parse_nodelist_rejects_bad_lists),
		cmocka_unit_test(format_nodelist_round_trips),
		cmocka_unit_test(parse_size_suffixes),
		cmocka_unit_test(parse_size_rejects_garbage),
		cmocka_unit_test(parse_u64_bounds_and_garbage),
		cmocka_unit_test(parse_u64_rejects_negative_after_blanks),
		cmocka_unit_test(parse_double_bounds_and_garbage),
	};

	log_verbosity = LOG_ERR - 1;	/* the error paths print on purpose */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
