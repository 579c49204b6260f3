// SPDX-License-Identifier: GPL-2.0
/*
 * thpprobe: what userspace can do with a transparent huge page that holds a
 * few hot 4 KiB pages among cold ones (docs/design.md, "Huge pages").
 *
 * For each way in, a fresh THP on the fast node (node 0), data written,
 * then move_pages of one 4 KiB subpage to the slow node (node 1):
 *
 *   pmd     the THP mapped whole (PMD)
 *   pte     the THP PTE-mapped first (mprotect of its last 4 KiB)
 *   split   the THP split first through debugfs split_huge_pages
 *   cold    the THP split first by MADV_COLD of its last 4 KiB (what the
 *           agent does with process_madvise(2))
 *
 * and it prints how many of the 512 pages moved, the move's status for the
 * subpage, whether the range is still a huge page (smaps AnonHugePages), and
 * whether every byte survived.  Static, libc only: move_pages via syscall(2).
 *
 *   thpprobe [-f FAST_NODE] [-s SLOW_NODE]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MPOL_MF_MOVE (1 << 1)
#define HPAGE (2UL << 20)
#define PAGES 512
#define PG 4096UL

static long sys_move_pages(unsigned long count, void **pages, const int *nodes, int *status,
			   int flags)
{
	return syscall(SYS_move_pages, 0, count, pages, nodes, status, flags);
}

/* kB of AnonHugePages in the smaps entry that holds addr. */
static long anon_huge_kb(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	unsigned long lo, hi, a = (unsigned long)addr;
	int in = 0;
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/* Pages of [buf, buf + 2 MiB) on node, by query. */
static int on_node(char *buf, int node)
{
	void *addrs[PAGES];
	int status[PAGES], n = 0;

	for (int i = 0; i < PAGES; i++)
		addrs[i] = buf + i * PG;
	if (sys_move_pages(PAGES, addrs, NULL, status, 0))
		return -1;
	for (int i = 0; i < PAGES; i++)
		n += status[i] == node;
	return n;
}

static int split_debugfs(char *buf)
{
	FILE *f = fopen("/sys/kernel/debug/split_huge_pages", "w");
	int err;

	if (!f)
		return -errno;
	fprintf(f, "%d,0x%lx,0x%lx", getpid(), (unsigned long)buf, (unsigned long)buf + HPAGE);
	err = fclose(f) ? -errno : 0;
	return err;
}

static void probe(const char *how, int fast, int slow)
{
	char *raw = mmap(NULL, 2 * HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *buf = (char *)(((uintptr_t)raw + HPAGE - 1) & ~(HPAGE - 1));
	void *one[1];
	int node[1] = { slow }, st[1] = { -12345 }, moved, ok = 1;
	long huge_before, huge_after;
	int nodes0[1] = { fast };

	if (raw == MAP_FAILED) {
		printf("thpprobe_%s=mmap-failed\n", how);
		return;
	}
	madvise(buf, HPAGE, MADV_HUGEPAGE);
	for (unsigned long i = 0; i < HPAGE; i += PG)
		memset(buf + i, (int)(i / PG) & 0xff, PG);
	/* On the fast node first, whole. */
	one[0] = buf;
	sys_move_pages(1, one, nodes0, st, MPOL_MF_MOVE);
	if (!strcmp(how, "pte"))
		mprotect(buf + HPAGE - PG, PG, PROT_READ);
	else if (!strcmp(how, "split") && split_debugfs(buf))
		printf("thpprobe_split_debugfs=%s\n", strerror(errno));
	else if (!strcmp(how, "cold") && madvise(buf + HPAGE - PG, PG, MADV_COLD))
		printf("thpprobe_cold_madvise=%s\n", strerror(errno));
	huge_before = anon_huge_kb(buf);
	one[0] = buf + 5 * PG;	/* one hot subpage */
	st[0] = -12345;
	if (sys_move_pages(1, one, node, st, MPOL_MF_MOVE))
		printf("thpprobe_%s_call=%s\n", how, strerror(errno));
	moved = on_node(buf, slow);
	huge_after = anon_huge_kb(buf);
	for (unsigned long i = 0; i < HPAGE; i++)
		if (buf[i] != (char)((i / PG) & 0xff) && (ok = 0) == 0)
			break;
	printf("thpprobe_%s: huge_kb_before=%ld subpage_status=%d pages_on_slow=%d huge_kb_after=%ld data=%s\n",
	       how, huge_before, st[0], moved, huge_after, ok ? "ok" : "BAD");
	munmap(raw, 2 * HPAGE);
}

int main(int argc, char **argv)
{
	int fast = 0, slow = 1, c;

	while ((c = getopt(argc, argv, "f:s:")) != -1) {
		if (c == 'f')
			fast = atoi(optarg);
		else if (c == 's')
			slow = atoi(optarg);
		else
			return 2;
	}
	probe("pmd", fast, slow);
	probe("pte", fast, slow);
	probe("split", fast, slow);
	probe("cold", fast, slow);
	return 0;
}
