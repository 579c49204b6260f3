// SPDX-License-Identifier: MIT
/*
 * pageset: which pages of a running program hold which data, and where they sit.
 *
 *   pageset scan PID HOTMARK COLDMARK > FILE   one line per page: "h ADDR" or "c ADDR"
 *   pageset range ADDR PAGES [STEP] > FILE     "c ADDR" for each (STEP-th) page from ADDR on
 *   pageset where PID FILE [STATE]              "hot0=N hot1=N cold0=N cold1=N other=N
 *                                                pingpong=N"
 *   pageset watch PID FILE T0 LIMIT             "SECONDS LOOK SYS": when 90% of FILE's
 *                                                hot pages were on node 0, in seconds
 *                                                since T0 (/proc/uptime's clock), or
 *                                                "never" by LIMIT seconds or the
 *                                                program's end
 *
 * scan reads the program's writable private mappings through /proc/PID/mem and
 * names a page hot if HOTMARK starts in it (else cold if COLDMARK does); pages
 * with neither are left out.  where asks move_pages(2) (nodes = NULL) where each
 * listed page is now.  The compare workloads use it to follow a real program's
 * hot set (redis values carry the marks) without touching the program.
 *
 * With STATE (a file kept between calls, removed for a new run), where also
 * counts ping-pong, whoever moves the pages: each return of a listed page to
 * the node it left less than PINGPONG_SEC before (cxltierd's default window,
 * 10 epochs of 1 s).  A move and its return between two calls go unseen.
 *
 * watch looks again and again, in one process, so that the time to 90% is
 * resolved to a tenth of a second or so where the once-a-second series of
 * `where` calls (a process each, under TCG) saw 1.2-1.5 s apart.  A look
 * asks about WATCH_PAGES of the hot pages at most, evenly spread; it sleeps
 * 4 times a look's length (at least WATCH_MIN_SEC) between looks, so it
 * takes a fifth of a CPU at most.  It prints the mean time from look to look
 * as LOOK and its own system time (seconds) as SYS, for the caller to take
 * out of the kernel's CPU time it counts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <numaif.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#define PAGE 4096UL
#define PINGPONG_SEC 10.0
#define WATCH_MIN_SEC 0.1
#define WATCH_PAGES 512

/* STATE: this header, then one of these per listed page, in FILE's order. */
struct pp_head {
	uint64_t pages, pingpong;
};
struct pp_page {
	int8_t node, left;	/* where it is; the node it left last (-1: none) */
	double moved_at;	/* CLOCK_MONOTONIC seconds of that move */
};

/* Counts the pages of status[0, n) back where they were; -1 when STATE is unusable. */
static long pingpong(const char *state, const int *status, size_t n)
{
	struct pp_head h = { 0 };
	struct pp_page *pp = calloc(n ? n : 1, sizeof(*pp));
	struct timespec ts;
	FILE *f = fopen(state, "r");
	double now;

	if (!pp)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (double)ts.tv_sec + ts.tv_nsec / 1e9;
	if (f && (fread(&h, sizeof(h), 1, f) != 1 || h.pages != n ||
		  fread(pp, sizeof(*pp), n, f) != n)) {
		fprintf(stderr, "pageset: %s is not the state of this page list\n", state);
		fclose(f);
		free(pp);
		return -1;
	}
	if (f)
		fclose(f);
	for (size_t i = 0; i < n; i++) {
		struct pp_page *p = &pp[i];

		if (!f) {
			p->node = (int8_t)(status[i] >= 0 ? status[i] : -1);
			p->left = -1;
			continue;
		}
		if (status[i] < 0 || status[i] == p->node)
			continue;
		if (p->node >= 0 && status[i] == p->left && now - p->moved_at < PINGPONG_SEC)
			h.pingpong++;
		if (p->node >= 0) {
			p->left = p->node;
			p->moved_at = now;
		}
		p->node = (int8_t)status[i];
	}
	h.pages = n;
	if (!(f = fopen(state, "w")) || fwrite(&h, sizeof(h), 1, f) != 1 ||
	    fwrite(pp, sizeof(*pp), n, f) != n) {
		perror(state);
		if (f)
			fclose(f);
		free(pp);
		return -1;
	}
	fclose(f);
	free(pp);
	return (long)h.pingpong;
}

static int scan(int pid, const char *hot, const char *cold)
{
	char path[64], line[512];
	size_t hl = strlen(hot), cl = strlen(cold);
	FILE *maps;
	int mem;
	char *buf = malloc(1 << 20);

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (!buf || !(maps = fopen(path, "r")))
		return perror(path), 3;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	if ((mem = open(path, O_RDONLY)) < 0)
		return perror(path), 3;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long a, b;
		char perm[8];

		if (sscanf(line, "%lx-%lx %7s", &a, &b, perm) != 3 || perm[0] != 'r' ||
		    perm[1] != 'w' || perm[3] != 'p')
			continue;
		for (unsigned long off = a; off < b; off += 1 << 20) {
			size_t want = b - off < (1UL << 20) ? b - off : 1UL << 20;
			ssize_t got = pread(mem, buf, want, (off_t)off);

			if (got <= 0)
				break;
			for (size_t p = 0; p < (size_t)got; p += PAGE) {
				size_t n = (size_t)got - p < PAGE ? (size_t)got - p : PAGE;
				/* a mark that starts in this page, even if it runs on */
				size_t hn = n + hl - 1 > (size_t)got - p ? (size_t)got - p : n + hl - 1;
				size_t cn = n + cl - 1 > (size_t)got - p ? (size_t)got - p : n + cl - 1;

				if (memmem(buf + p, hn, hot, hl))
					printf("h %lx\n", off + p);
				else if (memmem(buf + p, cn, cold, cl))
					printf("c %lx\n", off + p);
			}
		}
	}
	close(mem);
	fclose(maps);
	free(buf);
	return 0;
}

/* Where pages[0, n) are, into status (move_pages, nodes = NULL), 4 Ki at a time; -1 and errno. */
static int nodes_of(int pid, void **pages, int *status, size_t n)
{
	for (size_t i = 0; i < n; i += 4096) {
		size_t c = n - i < 4096 ? n - i : 4096;

		if (move_pages(pid, c, pages + i, NULL, status + i, 0) < 0)
			return -1;
	}
	return 0;
}

static int where(int pid, const char *file, const char *state)
{
	FILE *f = fopen(file, "r");
	size_t n = 0, cap = 1024;
	void **pages = malloc(cap * sizeof(*pages));
	char *kind = malloc(cap);
	int *status = malloc(cap * sizeof(int));
	unsigned long a;
	char k;
	long hot0 = 0, hot1 = 0, cold0 = 0, cold1 = 0, other = 0, pp;

	if (!f)
		return perror(file), 3;
	while (fscanf(f, " %c %lx", &k, &a) == 2) {
		if (n == cap) {
			cap *= 2;
			pages = realloc(pages, cap * sizeof(*pages));
			kind = realloc(kind, cap);
			status = realloc(status, cap * sizeof(int));
		}
		pages[n] = (void *)a;
		kind[n++] = k;
	}
	fclose(f);
	for (size_t i = 0; i < n; i++)
		status[i] = -12345;
	if (nodes_of(pid, pages, status, n))
		return perror("move_pages"), 3;
	/*
	 * A page the NUMA scanner has just made PROT_NONE reads as -ENOENT or
	 * -EFAULT on 6.1 until it is touched again; a hot page soon is.  Ask
	 * again for those, a few times, rather than count them as elsewhere.
	 */
	for (int round = 0; round < 50; round++) {
		size_t left = 0;

		for (size_t i = 0; i < n; i++) {
			if (status[i] >= 0)
				continue;
			left++;
			if (round && move_pages(pid, 1, pages + i, NULL, status + i, 0) < 0)
				return perror("move_pages"), 3;
		}
		if (!left)
			break;
		usleep(20000);
	}
	for (size_t i = 0; i < n; i++) {
		int h = kind[i] == 'h';

		if (status[i] == 0)
			h ? hot0++ : cold0++;
		else if (status[i] == 1)
			h ? hot1++ : cold1++;
		else
			other++;
	}
	pp = state ? pingpong(state, status, n) : 0;
	if (pp < 0)
		return 3;
	printf("hot0=%ld hot1=%ld cold0=%ld cold1=%ld other=%ld", hot0, hot1, cold0, cold1, other);
	if (state)
		printf(" pingpong=%ld", pp);
	printf("\n");
	return 0;
}

static double boot_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double sys_sec(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int watch(int pid, const char *file, double t0, double limit)
{
	FILE *f = fopen(file, "r");
	size_t n = 0, cap = 1024, on0;
	void **pages = malloc(cap * sizeof(*pages));
	int *status;
	unsigned long a;
	unsigned looks = 0;
	double first = boot_sec(), start, took;
	char k;

	if (!f)
		return perror(file), 3;
	while (fscanf(f, " %c %lx", &k, &a) == 2) {
		if (k != 'h')
			continue;
		if (n == cap && !(pages = realloc(pages, (cap *= 2) * sizeof(*pages))))
			return perror("realloc"), 3;
		pages[n++] = (void *)a;
	}
	fclose(f);
	if (!n || !(status = malloc(n * sizeof(*status)))) {
		fprintf(stderr, "pageset: %s lists no hot page\n", file);
		return 3;
	}
	if (n > WATCH_PAGES) {	/* every (n / WATCH_PAGES)-th, in place */
		size_t step = (n + WATCH_PAGES - 1) / WATCH_PAGES, m = 0;

		for (size_t i = 0; i < n; i += step)
			pages[m++] = pages[i];
		n = m;
	}
	for (;;) {
		start = boot_sec();
		on0 = 0;
		if (nodes_of(pid, pages, status, n)) {
			if (errno != ESRCH)
				return perror("move_pages"), 3;
			printf("never %.2f %.2f\n", looks ? (start - first) / looks : 0, sys_sec());
			return 0;
		}
		for (size_t i = 0; i < n; i++)
			on0 += status[i] == 0;
		looks++;
		took = boot_sec() - start;
		if (on0 * 10 >= n * 9 || boot_sec() - t0 >= limit) {
			if (on0 * 10 >= n * 9)
				printf("%.2f", boot_sec() - t0);
			else
				printf("never");
			printf(" %.2f %.2f\n", (boot_sec() - first) / looks, sys_sec());
			return 0;
		}
		usleep((useconds_t)((4 * took > WATCH_MIN_SEC ? 4 * took : WATCH_MIN_SEC) * 1e6));
	}
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "scan"))
		return scan(atoi(argv[2]), argv[3], argv[4]);
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "range")) {
		unsigned long a = strtoul(argv[2], NULL, 0), n = strtoul(argv[3], NULL, 0);
		unsigned long step = argc == 5 ? strtoul(argv[4], NULL, 0) : 1;

		for (unsigned long i = 0; i < n; i += step ? step : 1)
			printf("c %lx\n", a + i * PAGE);
		return 0;
	}
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "where"))
		return where(atoi(argv[2]), argv[3], argc == 5 ? argv[4] : NULL);
	if (argc == 6 && !strcmp(argv[1], "watch"))
		return watch(atoi(argv[2]), argv[3], strtod(argv[4], NULL), strtod(argv[5], NULL));
	fprintf(stderr, "usage: pageset scan PID HOTMARK COLDMARK | range ADDR PAGES [STEP] | where PID FILE [STATE] | watch PID FILE T0 LIMIT\n");
	return 2;
}
