/*
 * tierbench - a workload with a known hot set that checks its own data.
 *
 * Used by the tests, demos and benchmarks of cxltier: a tiering agent moves this
 * process's pages between NUMA nodes with move_pages(2) while it runs, and tierbench
 * says whether any data was lost or corrupted on the way.
 *
 * Access pattern. One anonymous private buffer of `pages` pages (4 KiB each unless
 * --thp). The hot set is a window of hot_pages = ceil(hot * pages) contiguous pages
 * starting at page 0; with --shift the window moves forward by its own length every
 * period, wrapping around. Page i is owned by thread i % threads: only its owner
 * touches it, so there is no data race and verification is exact. An operation goes
 * to one of the thread's hot pages with probability --skew, else to one of its cold
 * pages, each picked uniformly (splitmix64 PRNG per thread, seeded from --seed); a
 * thread that owns no page of the window (fewer hot pages than threads) works on
 * its cold pages only.
 *
 * Content scheme. A page is 64-byte lines of eight 64-bit words, L lines per page.
 *   line 0:  word 0 = MAGIC, word 1 = page index, word 2 = version v,
 *            words 3..7 = body(idx, v, word)
 *   line k (1 <= k < L): word w = body(idx, lv(k, v), w), where lv(k, v) is the last
 *            version <= v that rewrote line k: version u >= 1 rewrites line
 *            1 + u % (L - 1) (a rotating line); 0 if none (the set-up fill).
 * body() is a splitmix64-style mix of (idx, version, word), so every word of every
 * page is a known function of the page's version. An operation on a page with
 * version v (kept outside the buffer too, per owner thread, so a lost write is
 * caught and not only a garbled one) writes version v + 1 into line 0 and rewrites
 * the rotating line of v + 1: two to three cache lines per operation. With --verify
 * it first checks line 0, the line it is about to rewrite and one random word
 * elsewhere, so no corrupted word is overwritten unseen; the final check recomputes
 * every word of every page. A page found wrong during the run is checked whole,
 * then rewritten, so each corruption is counted once: "mismatches" counts the
 * 64-bit words found wrong.
 *
 * Placement. --hot-node / --cold-node bind the first touch of the hot / cold pages
 * with set_mempolicy(MPOL_BIND), then restore MPOL_DEFAULT so nothing pins the pages
 * afterwards; move_pages(nodes = NULL) then reports where the pages ended up. With
 * --thp a huge page straddling the hot/cold boundary lands wholly on one node.
 *
 * Layout. With --spread K the hot set starts spread over 2 MiB blocks, K pages at
 * the start of each (the buffer is then 2 MiB aligned): a huge page that holds a few
 * hot pages among cold ones, the case a tiering agent must decide on. Page indices
 * above are the workload's; page_at() maps them to the buffer: hot page i to block
 * i / K, page i % K; the cold pages fill the rest of the buffer in order.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <numa.h>
#include <numaif.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "pfn_nodes.h"

/* System time of the whole process, in ms: the kernel's work on its behalf (faults, NUMA scans). */
static double sys_ms(void)
{
	struct rusage r;

	getrusage(RUSAGE_SELF, &r);
	return r.ru_stime.tv_sec * 1e3 + r.ru_stime.tv_usec / 1e3;
}

#define TB_MAGIC 0x74696572626e6368ULL /* "tierbnch" */
#define WORDS_PER_LINE 8
#define MAX_THREADS 256
#define MAX_SHOWN 8 /* mismatches printed in detail */
#define THP_SIZE (2UL << 20)
#define BLOCK_PAGES 512 /* 4 KiB pages a 2 MiB block (--spread) */

enum { EXIT_VERIFY = 1, EXIT_USAGE = 2, EXIT_SYSERR = 3 };

struct options {
	size_t size;
	double hot, skew, duration, shift, report_interval;
	unsigned long threads, spread;
	unsigned long long seed;
	long hot_node, cold_node;
	bool verify, wait_start, thp, quiet, placement;
	const char *hot_list;
};

struct mismatch {
	size_t page, word;
	uint64_t expected, found;
};

struct worker {
	_Alignas(64) atomic_ullong ops; /* read by the main thread for reports */
	struct bench *b;
	pthread_t tid;
	size_t id;
	uint64_t rng, sink;
	/* version[j] of page id + j * threads: per thread, so no false sharing */
	uint64_t *version;
	size_t *owned; /* owned[0, nhot) hot pages, owned[nhot, nowned) cold pages */
	size_t nowned, nhot;
	unsigned long epoch;
};

struct bench {
	struct options opt;
	uint64_t *buf;
	size_t page_size, words_per_page, lines_per_page, pages, hot_pages;
	struct worker *workers;
	atomic_ulong shift_epoch, mismatches;
	atomic_bool stop;
	pthread_mutex_t lock; /* guards shown[] */
	struct mismatch shown[MAX_SHOWN];
	size_t nshown;
};

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

static inline uint64_t mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static inline uint64_t body_word(size_t idx, uint64_t ver, size_t word)
{
	return mix64(idx * 0x9e3779b97f4a7c15ULL ^ ver * 0xd1b54a32d192ed03ULL ^
		     word * 0xaef17502108ef2d9ULL);
}

static inline uint64_t next_rand(struct worker *w)
{
	return mix64(w->rng += 0x9e3779b97f4a7c15ULL);
}

/* uniform in [0, n) (Lemire's multiply-shift) */
static inline size_t bounded(uint64_t r, size_t n)
{
	return (size_t)(((unsigned __int128)r * n) >> 64);
}

static inline uint64_t *page_version(struct bench *b, size_t idx)
{
	return &b->workers[idx % b->opt.threads].version[idx / b->opt.threads];
}

/* the last version <= v that rewrote line k (k >= 1); 0 = the set-up fill */
static inline uint64_t line_version(const struct bench *b, size_t k, uint64_t v)
{
	uint64_t c;

	if (v < k - 1)
		return 0;
	c = v - (v - (k - 1)) % (b->lines_per_page - 1);
	return c >= 1 ? c : 0;
}

static inline uint64_t expected_word(const struct bench *b, size_t idx, uint64_t v,
				     size_t word)
{
	if (word == 0)
		return TB_MAGIC;
	if (word == 1)
		return idx;
	if (word == 2)
		return v;
	if (word < WORDS_PER_LINE)
		return body_word(idx, v, word);
	return body_word(idx, line_version(b, word / WORDS_PER_LINE, v), word);
}

/* The buffer page that holds workload page idx (see "Layout"). */
static uint64_t *page_at(const struct bench *b, size_t idx)
{
	size_t k = b->opt.spread, per = BLOCK_PAGES - k, nb, last, phys;

	if (!k || k == BLOCK_PAGES) {
		phys = idx;
	} else if (idx < b->hot_pages) {
		phys = idx / k * BLOCK_PAGES + idx % k;
	} else {
		idx -= b->hot_pages;
		nb = (b->hot_pages + k - 1) / k;	/* blocks with hot pages */
		last = b->hot_pages - (nb - 1) * k;	/* hot pages in the last of them */
		if (idx < (nb - 1) * per)
			phys = idx / per * BLOCK_PAGES + k + idx % per;
		else if ((idx -= (nb - 1) * per) < BLOCK_PAGES - last)
			phys = (nb - 1) * BLOCK_PAGES + last + idx;
		else
			phys = nb * BLOCK_PAGES + idx - (BLOCK_PAGES - last);
	}
	return b->buf + phys * b->words_per_page;
}

static void check_word(struct bench *b, size_t idx, uint64_t v, size_t word)
{
	uint64_t want = expected_word(b, idx, v, word);
	uint64_t found = page_at(b, idx)[word];

	if (found == want)
		return;
	atomic_fetch_add(&b->mismatches, 1);
	pthread_mutex_lock(&b->lock);
	if (b->nshown < MAX_SHOWN)
		b->shown[b->nshown++] = (struct mismatch){ idx, word, want, found };
	pthread_mutex_unlock(&b->lock);
}

static void page_fill(struct bench *b, size_t idx, uint64_t v)
{
	uint64_t *page = page_at(b, idx);

	for (size_t word = 0; word < b->words_per_page; word++)
		page[word] = expected_word(b, idx, v, word);
}

static void page_op(struct worker *w, size_t idx)
{
	struct bench *b = w->b;
	uint64_t *page = page_at(b, idx);
	uint64_t *version = &w->version[idx / b->opt.threads], nv = *version + 1;
	size_t probe = WORDS_PER_LINE +
		       bounded(next_rand(w), b->words_per_page - WORDS_PER_LINE);
	size_t first = (1 + nv % (b->lines_per_page - 1)) * WORDS_PER_LINE;
	bool ok = true;

	if (b->opt.verify) {
		/* line 0, the probe, and the line about to be rewritten */
		for (size_t word = 0; word < WORDS_PER_LINE; word++) {
			ok &= page[word] == expected_word(b, idx, *version, word);
			ok &= page[first + word] ==
			      expected_word(b, idx, *version, first + word);
		}
		ok &= page[probe] == expected_word(b, idx, *version, probe);
	} else {
		w->sink += page[2] + page[probe];
	}
	*version = nv;
	if (!ok) { /* count every wrong word, then repair: counted once */
		for (size_t word = 0; word < b->words_per_page; word++)
			check_word(b, idx, nv - 1, word);
		page_fill(b, idx, nv);
		return;
	}
	page[2] = nv;
	for (size_t word = 3; word < WORDS_PER_LINE; word++)
		page[word] = body_word(idx, nv, word);
	for (size_t word = first; word < first + WORDS_PER_LINE; word++)
		page[word] = body_word(idx, nv, word);
}

static size_t hot_start_page(const struct bench *b, unsigned long epoch)
{
	return (size_t)(((unsigned __int128)epoch * b->hot_pages) % b->pages);
}

/* sort the pages this thread owns into hot (this epoch's window) and cold */
static void worker_split(struct worker *w, unsigned long epoch)
{
	struct bench *b = w->b;
	size_t start = hot_start_page(b, epoch), cold = w->nowned;

	w->nhot = 0;
	for (size_t idx = w->id; idx < b->pages; idx += b->opt.threads) {
		if ((idx + b->pages - start) % b->pages < b->hot_pages)
			w->owned[w->nhot++] = idx;
		else
			w->owned[--cold] = idx;
	}
	w->epoch = epoch;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct bench *b = w->b;
	unsigned long long ops = 0;

	worker_split(w, 0);
	while (!atomic_load_explicit(&b->stop, memory_order_relaxed)) {
		unsigned long epoch =
			atomic_load_explicit(&b->shift_epoch, memory_order_relaxed);
		size_t ncold, idx;

		if (epoch != w->epoch)
			worker_split(w, epoch);
		ncold = w->nowned - w->nhot;
		if (w->nhot && (!ncold || (next_rand(w) >> 11) * 0x1.0p-53 < b->opt.skew))
			idx = w->owned[bounded(next_rand(w), w->nhot)];
		else
			idx = w->owned[w->nhot + bounded(next_rand(w), ncold)];
		page_op(w, idx);
		atomic_store_explicit(&w->ops, ++ops, memory_order_relaxed);
	}
	return NULL;
}

static void verify_all(struct bench *b)
{
	for (size_t idx = 0; idx < b->pages; idx++)
		for (size_t word = 0; word < b->words_per_page; word++)
			check_word(b, idx, *page_version(b, idx), word);
}

/* first touch of pages [first, first + count), bound to node if node >= 0 */
static int place_pages(struct bench *b, size_t first, size_t count, long node)
{
	struct bitmask *mask;
	int err = 0;

	if (node >= 0) {
		mask = numa_allocate_nodemask();
		numa_bitmask_setbit(mask, (unsigned int)node);
		if (set_mempolicy(MPOL_BIND, mask->maskp, mask->size + 1))
			err = -errno;
		numa_free_nodemask(mask);
		if (err) {
			fprintf(stderr, "tierbench: cannot bind memory to node %ld: %s\n",
				node, strerror(-err));
			return err;
		}
	}
	for (size_t idx = first; idx < first + count; idx++)
		page_fill(b, idx, 0);
	/* MPOL_DEFAULT again: nothing may pin the pages to the node afterwards */
	if (node >= 0 && set_mempolicy(MPOL_DEFAULT, NULL, 0)) {
		err = -errno;
		fprintf(stderr, "tierbench: cannot restore the default memory policy: %s\n",
			strerror(-err));
	}
	return err;
}

/*
 * Before Linux 6.5 move_pages reports -ENOENT for a page that the NUMA
 * scanner made PROT_NONE, though it is there.  As root, pagemap gives its
 * page frame and the frame's memory block gives the node.
 */
static void resolve_protnone(struct bench *b, int *status)
{
	struct pfn_nodes pn = { 0 };
	int fd = -1;

	for (size_t idx = 0; idx < b->pages; idx++) {
		uint64_t ent;

		if (status[idx] != -ENOENT)
			continue;
		if (fd < 0 && (pfn_nodes__load(&pn, NULL) ||
			       (fd = open("/proc/self/pagemap", O_RDONLY)) < 0))
			break;
		if (pread(fd, &ent, sizeof(ent), (off_t)((uintptr_t)page_at(b, idx) /
							 b->page_size * sizeof(ent))) == sizeof(ent) &&
		    (ent >> 63) && pfn_nodes__node(&pn, ent & ((1ULL << 55) - 1)) >= 0)
			status[idx] = pfn_nodes__node(&pn, ent & ((1ULL << 55) - 1));
	}
	if (fd >= 0)
		close(fd);
	pfn_nodes__free(&pn);
}

/* The hot window as it starts (epoch 0: pages 0 .. hot_pages - 1), "h ADDRESS" a line. */
static int write_hot_list(const struct bench *b, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "tierbench: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (size_t idx = 0; idx < b->hot_pages; idx++)
		fprintf(f, "h %lx\n", (unsigned long)(uintptr_t)page_at(b, idx));
	if (fclose(f)) {
		fprintf(stderr, "tierbench: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* "tierbench: placement hot: nodeN=<pages>... err=<pages> cold: ..." */
static int report_placement(struct bench *b)
{
	int max_node = numa_max_node(), *status = malloc(b->pages * sizeof(*status));
	size_t *per_node = calloc(2 * ((size_t)max_node + 2), sizeof(*per_node));
	void **addrs = malloc(b->pages * sizeof(*addrs));
	size_t start = hot_start_page(b, atomic_load(&b->shift_epoch));
	int err = 0;

	if (!status || !per_node || !addrs) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t idx = 0; idx < b->pages; idx++) {
		addrs[idx] = page_at(b, idx);
		status[idx] = INT_MIN; /* sentinel: catches an entry left unset */
	}
	if (move_pages(0, b->pages, addrs, NULL, status, 0) < 0) {
		err = -errno;
		goto out;
	}
	resolve_protnone(b, status);
	/* per_node[set * (max_node + 2) + node]; node max_node + 1: negative status */
	for (size_t idx = 0; idx < b->pages; idx++) {
		int node = status[idx] >= 0 && status[idx] <= max_node ? status[idx] : max_node + 1;

		/* Hot: the window as it is now (it moves with --shift). */
		bool cold = (idx + b->pages - start) % b->pages >= b->hot_pages;

		per_node[cold * ((size_t)max_node + 2) + (size_t)node]++;
	}
	if (b->opt.quiet)
		goto out;
	printf("tierbench: placement");
	for (int set = 0; set < 2; set++) {
		size_t *count = per_node + set * ((size_t)max_node + 2);

		printf(" %s:", set ? "cold" : "hot");
		for (int node = 0; node <= max_node; node++)
			if (count[node])
				printf(" node%d=%zu", node, count[node]);
		printf(" err=%zu", count[max_node + 1]);
	}
	printf("\n");
out:
	if (err)
		fprintf(stderr, "tierbench: cannot query page placement with move_pages: %s\n",
			strerror(-err));
	free(addrs);
	free(per_node);
	free(status);
	return err;
}

static bool node_has_memory(long node)
{
	return node <= numa_max_node() &&
	       numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned int)node) &&
	       numa_node_size64((int)node, NULL) > 0;
}

static int check_node(const char *opt, long node)
{
	if (node < 0 || node_has_memory(node))
		return 0;
	fprintf(stderr, "tierbench: invalid %s value '%ld': node %ld does not exist or has no memory this process may use (nodes with memory:",
		opt, node, node);
	for (int n = 0; n <= numa_max_node(); n++)
		if (node_has_memory(n))
			fprintf(stderr, " %d", n);
	fprintf(stderr, "); pick one of those\n");
	return -EINVAL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* --wait-start: return on a newline, EOF, a read error or SIGINT/SIGTERM */
static void wait_for_start(void)
{
	char c;

	for (;;) {
		ssize_t n = read(STDIN_FILENO, &c, 1);

		if (n < 0 && errno == EINTR && !got_signal)
			continue;
		if (n <= 0 || c == '\n')
			return;
	}
}

static unsigned long long total_ops(struct bench *b)
{
	unsigned long long sum = 0;

	for (size_t i = 0; i < b->opt.threads; i++)
		sum += atomic_load_explicit(&b->workers[i].ops, memory_order_relaxed);
	return sum;
}

static int parse_double(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return errno || end == s || *end || !isfinite(*v) ? -EINVAL : 0;
}

/* a whole number, checked against [lo, hi] unless end is wanted (a suffix follows) */
static int parse_ull(const char *s, unsigned long long lo, unsigned long long hi,
		     unsigned long long *v, char **end)
{
	char *stop;

	if (strchr(s, '-')) /* strtoull would quietly wrap a negative number */
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &stop, 10);
	if (errno || stop == s || (!end && (*stop || *v < lo || *v > hi)))
		return -EINVAL;
	if (end)
		*end = stop;
	return 0;
}

static int parse_size(const char *s, size_t *size)
{
	static const char units[] = "KMG";
	unsigned long long v, mult = 1;
	const char *unit;
	char *end;

	if (parse_ull(s, 0, 0, &v, &end))
		return -EINVAL;
	if (*end && (unit = strchr(units, toupper((unsigned char)*end)))) {
		mult <<= 10 * (unit - units + 1);
		end++;
	}
	if (*end || v > SIZE_MAX / mult)
		return -EINVAL;
	*size = v * mult;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: tierbench [OPTION]...\n"
"A workload with a known hot set that checks its data while a tiering agent\n"
"migrates its pages between NUMA nodes.\n\n"
"  -s, --size SIZE            buffer size, K/M/G suffixes, rounded up to whole\n"
"                             pages (default 64M)\n"
"      --hot FRACTION         hot share of the buffer, 0 < f <= 1 (default 0.25);\n"
"                             the hot set is the first ceil(f * pages) pages\n"
"      --skew FRACTION        share of operations on the hot set, 0..1 (default 0.95)\n"
"  -t, --threads N            worker threads, 1..256 (default 1); page i belongs\n"
"                             to thread i %% N\n"
"  -d, --duration SECONDS     run time (default 10); 0: set up, report, exit\n"
"      --shift SECONDS        move the hot window forward by its length every\n"
"                             SECONDS, wrapping around (default 0: never)\n"
"  -v, --verify               check each page an operation touches, and every\n"
"                             page at the end; exit 1 on any mismatch\n"
"      --hot-node N           place the hot pages on node N at set-up\n"
"      --cold-node N          place the cold pages on node N at set-up\n"
"      --thp                  allow transparent huge pages (default: 4 KiB pages)\n"
"      --spread K             start the hot set K pages to a 2 MiB block, 1..512:\n"
"                             huge pages with a few hot pages among cold ones\n"
"                             (default 512: the hot set is contiguous)\n"
"      --seed N               PRNG seed (default 1)\n"
"      --wait-start           after set-up and the info line, wait for a line (or\n"
"                             EOF) on stdin before running\n"
"      --report-interval SECONDS  print ops/s every SECONDS, and as the hot\n"
"                             window moves (default 0: off)\n"
"      --placement            with each progress line and at the end, print how\n"
"                             many hot and cold pages sit on each node (hot: the\n"
"                             window as it is then, moved by --shift)\n"
"      --hot-list FILE        after set-up, write the hot set's pages to FILE, one\n"
"                             \"h ADDRESS\" line each (as it starts, before any\n"
"                             --shift): what a watcher asks move_pages about\n"
"  -q, --quiet                print only the end report (and, with --wait-start,\n"
"                             the info line)\n"
"  -h, --help                 show this text\n\n"
"Exit status: 0 ok, 1 verification failed, 2 bad usage, 3 system error.\n\n"
"EXAMPLES\n"
"  tierbench --verify -t 4 -d 3          # 4 threads, 3 s, check all data\n"
"  tierbench --size 1G --hot 0.1 --hot-node 0 --cold-node 1 --verify\n"
"  tierbench --shift 5 --report-interval 1 -d 30   # moving hot set\n"
"  tierbench --thp --hot 0.0625 --spread 64 -d 30  # 64 hot pages in each of\n"
"                                        # 16 huge pages, 16 wholly cold ones\n"
"  echo | tierbench --wait-start -d 5    # start when a sampler is attached\n");
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "hot", required_argument, NULL, 'H' },
		{ "skew", required_argument, NULL, 'k' },
		{ "threads", required_argument, NULL, 't' },
		{ "duration", required_argument, NULL, 'd' },
		{ "shift", required_argument, NULL, 'S' },
		{ "verify", no_argument, NULL, 'v' },
		{ "hot-node", required_argument, NULL, 'N' },
		{ "cold-node", required_argument, NULL, 'C' },
		{ "thp", no_argument, NULL, 'T' },
		{ "spread", required_argument, NULL, 'B' },
		{ "seed", required_argument, NULL, 'r' },
		{ "wait-start", no_argument, NULL, 'w' },
		{ "report-interval", required_argument, NULL, 'i' },
		{ "placement", no_argument, NULL, 'L' },
		{ "hot-list", required_argument, NULL, 'l' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	unsigned long long v;
	const char *why = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "s:t:d:vqh", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_size(optarg, &o->size))
				why = "expected a size such as 4096, 512K, 64M or 2G";
			break;
		case 'H':
			if (parse_double(optarg, &o->hot) || o->hot <= 0 || o->hot > 1)
				why = "expected a fraction with 0 < f <= 1";
			break;
		case 'k':
			if (parse_double(optarg, &o->skew) || o->skew < 0 || o->skew > 1)
				why = "expected a fraction from 0 to 1";
			break;
		case 't':
			if (parse_ull(optarg, 1, MAX_THREADS, &v, NULL))
				why = "expected a whole number from 1 to 256";
			o->threads = (unsigned long)v;
			break;
		case 'd': case 'S': case 'i': {
			double *dst = c == 'd' ? &o->duration :
				      c == 'S' ? &o->shift : &o->report_interval;

			if (parse_double(optarg, dst) || *dst < 0)
				why = "expected a number of seconds >= 0";
			break;
		}
		case 'N': case 'C':
			if (parse_ull(optarg, 0, INT_MAX, &v, NULL))
				why = "expected a node number >= 0";
			*(c == 'N' ? &o->hot_node : &o->cold_node) = (long)v;
			break;
		case 'r':
			if (parse_ull(optarg, 0, ULLONG_MAX, &o->seed, NULL))
				why = "expected a whole number >= 0";
			break;
		case 'v': o->verify = true; break;
		case 'T': o->thp = true; break;
		case 'B':
			if (parse_ull(optarg, 1, BLOCK_PAGES, &v, NULL))
				why = "expected a number of pages from 1 to 512";
			o->spread = (unsigned long)v;
			break;
		case 'w': o->wait_start = true; break;
		case 'q': o->quiet = true; break;
		case 'L': o->placement = true; break;
		case 'l': o->hot_list = optarg; break;
		case 'h': usage(stdout); exit(0);
		default: goto bad;
		}
		if (why) {
			const struct option *l = longopts;

			while (l->val != c)
				l++;
			fprintf(stderr, "tierbench: invalid --%s value '%s': %s\n", l->name,
				optarg, why);
			goto bad;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tierbench: unexpected argument '%s'\n", argv[optind]);
		goto bad;
	}
	return 0;
bad:
	fprintf(stderr, "Try 'tierbench --help'.\n");
	return -EINVAL;
}

static int map_buffer(struct bench *b)
{
	size_t len = b->pages * b->page_size, extra = b->opt.thp || b->opt.spread ? THP_SIZE : 0;
	char *map = mmap(NULL, len + extra, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *start = map;
	int err;

	if (map == MAP_FAILED) {
		err = -errno;
		fprintf(stderr, "tierbench: cannot map a %zu-byte buffer: %s; try a smaller --size\n",
			len, strerror(-err));
		return err;
	}
	if (extra) { /* align to a huge page so THP can back all of it */
		start = (char *)(((uintptr_t)map + THP_SIZE - 1) & ~(THP_SIZE - 1));
		if (start > map)
			munmap(map, (size_t)(start - map));
		if (start < map + extra)
			munmap(start + len, (size_t)(map + extra - start));
	}
	b->buf = (uint64_t *)start;
	/* EINVAL: a kernel without THP, where pages are small anyway */
	if (madvise(start, len, b->opt.thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) &&
	    errno != EINVAL) {
		err = -errno;
		fprintf(stderr, "tierbench: cannot set the huge page advice on the buffer: %s\n",
			strerror(-err));
		return err;
	}
	return 0;
}

/* run the workers until --duration passes or a signal comes; returns the seconds run */
static double run(struct bench *b)
{
	const struct options *o = &b->opt;
	double t0 = now(), end = t0 + o->duration, t = t0, last_t = t0;
	double next_shift = t0 + o->shift, next_report = t0 + o->report_interval;
	unsigned long long last_ops = 0;

	while (!got_signal && (t = now()) < end) {
		double wake = end, left;

		if (o->shift > 0) {
			if (t >= next_shift) {
				atomic_fetch_add(&b->shift_epoch, 1);
				next_shift += o->shift;
				/* report the new window as it starts: what a
				 * watcher counts the pages placed in it from */
				next_report = t;
			}
			wake = next_shift < wake ? next_shift : wake;
		}
		if (o->report_interval > 0) {
			if (t >= next_report) {
				unsigned long long ops = total_ops(b);
				size_t start = hot_start_page(b, atomic_load(&b->shift_epoch));

				if (!o->quiet)
					printf("tierbench: progress seconds=%.3f ops=%llu ops_per_sec=%.0f hot_start=%p sys_ms=%.0f\n",
					       t - t0, ops, (double)(ops - last_ops) / (t - last_t),
					       (void *)page_at(b, start), sys_ms());
				if (o->placement)
					report_placement(b);
				fflush(stdout);
				last_ops = ops;
				last_t = t;
				next_report += o->report_interval;
				/* a report slower than the interval (move_pages on a big
				 * buffer under emulation) skips the reports it overran */
				if (next_report <= t)
					next_report = t + o->report_interval;
			}
			wake = next_report < wake ? next_report : wake;
		}
		/* t is from before the report: wake may have passed (a shift behind
		 * catches up at once). Capped: a signal landing after the check
		 * waits at most 0.1 s; one landing during the sleep cuts it short. */
		left = wake - now();
		if (!got_signal && left > 0)
			usleep((useconds_t)((left < 0.1 ? left : 0.1) * 1e6));
	}
	atomic_store(&b->stop, true);
	return (t < end ? now() : t) - t0;
}

int main(int argc, char **argv)
{
	struct bench b = {
		.opt = { .size = 64UL << 20, .hot = 0.25, .skew = 0.95, .duration = 10,
			 .threads = 1, .seed = 1, .hot_node = -1, .cold_node = -1 },
		.lock = PTHREAD_MUTEX_INITIALIZER,
	};
	const struct options *o = &b.opt;
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART */
	size_t started = 0, nthreads = 0;
	unsigned long long ops = 0;
	unsigned long mismatches;
	double hot, seconds = 0;
	sigset_t sigs, old;
	int ret = EXIT_SYSERR, err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (parse_options(argc, argv, &b.opt))
		return EXIT_USAGE;
	b.page_size = (size_t)sysconf(_SC_PAGESIZE);
	b.pages = (o->size + b.page_size - 1) / b.page_size;
	if (o->size < b.page_size || b.pages < o->threads) {
		fprintf(stderr, "tierbench: invalid --size value '%zu': need at least one page (%zu bytes) per thread (%lu)\n",
			o->size, b.page_size, o->threads);
		return EXIT_USAGE;
	}
	b.words_per_page = b.page_size / sizeof(uint64_t);
	b.lines_per_page = b.words_per_page / WORDS_PER_LINE;
	hot = o->hot * (double)b.pages;
	b.hot_pages = (size_t)hot + ((double)(size_t)hot < hot); /* ceil */
	b.hot_pages = b.hot_pages < 1 ? 1 : b.hot_pages > b.pages ? b.pages : b.hot_pages;
	if (o->spread && b.page_size * BLOCK_PAGES != THP_SIZE) {
		fprintf(stderr, "tierbench: --spread needs 4 KiB pages (this system's are %zu bytes)\n",
			b.page_size);
		return EXIT_USAGE;
	}
	if (o->spread && (b.hot_pages + o->spread - 1) / o->spread * BLOCK_PAGES > b.pages) {
		fprintf(stderr, "tierbench: --spread %lu: %zu hot pages need %zu blocks of 2 MiB, more than --size holds\n",
			o->spread, b.hot_pages, (b.hot_pages + o->spread - 1) / o->spread);
		return EXIT_USAGE;
	}
	if ((o->hot_node >= 0 || o->cold_node >= 0) && numa_available() < 0) {
		fprintf(stderr, "tierbench: NUMA is not available on this system; drop --hot-node and --cold-node\n");
		return EXIT_USAGE;
	}
	if (check_node("--hot-node", o->hot_node) || check_node("--cold-node", o->cold_node))
		return EXIT_USAGE;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (map_buffer(&b))
		goto cleanup;
	b.workers = aligned_alloc(_Alignof(struct worker), o->threads * sizeof(*b.workers));
	if (!b.workers)
		goto nomem;
	for (; nthreads < o->threads; nthreads++) {
		struct worker *w = &b.workers[nthreads];

		*w = (struct worker){ .b = &b, .id = nthreads,
				      .rng = mix64(o->seed ^ mix64(nthreads + 1)) };
		w->nowned = (b.pages - nthreads + o->threads - 1) / o->threads;
		w->owned = malloc(w->nowned * sizeof(*w->owned));
		w->version = calloc(w->nowned, sizeof(*w->version));
		if (!w->owned || !w->version) {
			nthreads++;
			goto nomem;
		}
	}
	if (place_pages(&b, 0, b.hot_pages, o->hot_node) ||
	    place_pages(&b, b.hot_pages, b.pages - b.hot_pages, o->cold_node))
		goto cleanup;
	if (!o->quiet || o->wait_start)
		printf("tierbench: pid=%d buf=%p size=%zu pages=%zu hot_start=%p hot_pages=%zu page_size=%zu threads=%lu\n",
		       (int)getpid(), (void *)b.buf, b.pages * b.page_size, b.pages,
		       (void *)b.buf, b.hot_pages, b.page_size, o->threads);
	if (o->hot_list && write_hot_list(&b, o->hot_list))
		goto cleanup;
	if ((o->hot_node >= 0 || o->cold_node >= 0) && report_placement(&b))
		goto cleanup;
	fflush(stdout);
	if (o->wait_start)
		wait_for_start();

	if (o->duration > 0 && !got_signal) {
		/* workers leave SIGINT/SIGTERM to the main thread */
		sigemptyset(&sigs);
		sigaddset(&sigs, SIGINT);
		sigaddset(&sigs, SIGTERM);
		pthread_sigmask(SIG_BLOCK, &sigs, &old);
		for (; started < o->threads; started++) {
			struct worker *w = &b.workers[started];

			err = pthread_create(&w->tid, NULL, worker_main, w);
			if (err) {
				fprintf(stderr, "tierbench: cannot start worker thread %zu: %s\n",
					started, strerror(err));
				break;
			}
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (started == o->threads)
			seconds = run(&b);
		atomic_store(&b.stop, true);
		for (size_t i = 0; i < started; i++)
			pthread_join(b.workers[i].tid, NULL);
		if (started < o->threads)
			goto cleanup;
		ops = total_ops(&b);
	}
	if (o->verify)
		verify_all(&b);
	/* After verify: it touched every page, so none is PROT_NONE to move_pages. */
	if (o->placement)
		report_placement(&b);

	mismatches = atomic_load(&b.mismatches);
	for (size_t i = 0; i < b.nshown; i++) {
		const struct mismatch *m = &b.shown[i];

		fprintf(stderr, "tierbench: mismatch page=%zu addr=%p word=%zu expected=0x%016" PRIx64 " found=0x%016" PRIx64 "\n",
			m->page, (void *)(b.buf + m->page * b.words_per_page + m->word),
			m->word, m->expected, m->found);
	}
	if (mismatches > b.nshown)
		fprintf(stderr, "tierbench: ... and %lu more mismatched words\n",
			mismatches - (unsigned long)b.nshown);
	printf("tierbench: ops=%llu seconds=%.3f ops_per_sec=%.0f verify=%s mismatches=%lu sys_ms=%.0f\n",
	       ops, seconds, seconds > 0 ? (double)ops / seconds : 0.0,
	       !o->verify ? "off" : mismatches ? "FAILED" : "ok", mismatches, sys_ms());
	ret = mismatches ? EXIT_VERIFY : 0;
	goto cleanup;
nomem:
	fprintf(stderr, "tierbench: out of memory for the bookkeeping of %zu pages; try a smaller --size\n",
		b.pages);
cleanup:
	for (size_t i = 0; i < nthreads; i++) {
		free(b.workers[i].owned);
		free(b.workers[i].version);
	}
	free(b.workers);
	if (b.buf)
		munmap(b.buf, b.pages * b.page_size);
	return ret;
}
