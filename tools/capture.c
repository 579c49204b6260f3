// SPDX-License-Identifier: MIT
/*
 * cxltier-capture: a real program's every load and store as a cxltier trace.
 *
 * Runs the program under valgrind with cxltier's own tool
 * (tools/capture-valgrind.c), which counts the accesses per page inside
 * valgrind and sends each window's counts through a pipe.  Where that tool
 * is not built, or with --lackey, it runs valgrind's lackey
 * (--trace-mem=yes) instead, whose lines ("I  0401000,3", " L 7ff000a08,8",
 * " S ...", " M ...") come through a pipe and are counted as they come:
 * the same counts, many times slower (a write(2) per line).  The lackey
 * reader also imports lackey text from a file or stdin (--import), the
 * format public tiering trace sets use.
 *
 * Time is the instruction count (one instruction is one nanosecond in the
 * trace).  Accesses are counted per page over a window of instructions
 * (--window, default 1,000,000: one trace epoch of 1 ms); at the end of each
 * window every page touched becomes samples whose weights sum to its count,
 * split at 65,535, so no access is dropped.  A modify (M) is a load and a
 * store: two accesses.  An access that straddles a page counts on its first.
 * Samples are recorded as source pmu: sampled accesses at a rate of one.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture-wire.h"
#include "trace.h"
#include "util.h"

static const char usage_text[] =
"Usage: cxltier-capture [OPTIONS] -o TRACE -- PROGRAM [ARGS...]\n"
"       cxltier-capture [OPTIONS] -o TRACE --import LACKEY.txt|-\n"
"\n"
"Writes every load and store of PROGRAM (run under valgrind with cxltier's\n"
"tool, built beside this program in valgrind/) as a cxltier trace for\n"
"cxltier-replay: accesses per 4 KiB page, summed over windows of\n"
"instructions, streamed from a pipe. --import reads valgrind lackey's text\n"
"(--tool=lackey --trace-mem=yes) from a file (or - for stdin) instead.\n"
"\n"
"Options:\n"
"  -o, --output TRACE     the trace to write (required)\n"
"  -w, --window N         instructions per window, one trace epoch of N ns\n"
"                         (default 1000000)\n"
"      --import FILE|-    read lackey text instead of running a program\n"
"      --lackey           run PROGRAM under valgrind's lackey, not cxltier's\n"
"                         tool: the same counts, 100 or more times slower\n"
"      --tgid N           the process id the samples carry (default 1000)\n"
"  -q, --quiet            no progress line\n"
"  -h, --help             this text\n"
"\n"
"EXAMPLES\n"
"  cxltier-capture -o dict.trace -- python3 -c 'd = {i: i for i in range(10**6)}'\n"
"  cxltier-capture -o xz.trace -- xz -9 -k -c /usr/bin/bash > /dev/null\n"
"  cxltier-replay --time-scale 1000 dict.trace hotset tpp\n";

#define PAGE_SHIFT 12

/* Accesses per page in the window: open addressing on the page number. */
struct counts {
	uint64_t *page;	/* UINT64_MAX: empty */
	uint64_t *n;
	size_t cap, used;
};

static int counts_grow(struct counts *c)
{
	struct counts bigger = { .cap = c->cap ? c->cap * 2 : 1 << 16 };

	bigger.page = malloc(bigger.cap * sizeof(*bigger.page));
	bigger.n = calloc(bigger.cap, sizeof(*bigger.n));
	if (!bigger.page || !bigger.n) {
		free(bigger.page);
		free(bigger.n);
		return -ENOMEM;
	}
	memset(bigger.page, 0xff, bigger.cap * sizeof(*bigger.page));
	for (size_t i = 0; i < c->cap; i++) {
		size_t j;

		if (c->page[i] == UINT64_MAX)
			continue;
		for (j = (c->page[i] * 0x9E3779B97F4A7C15ULL) & (bigger.cap - 1);
		     bigger.page[j] != UINT64_MAX; j = (j + 1) & (bigger.cap - 1))
			;
		bigger.page[j] = c->page[i];
		bigger.n[j] = c->n[i];
	}
	bigger.used = c->used;
	free(c->page);
	free(c->n);
	*c = bigger;
	return 0;
}

static int count(struct counts *c, uint64_t page, uint64_t n)
{
	size_t j;

	if ((c->used + 1) * 2 > c->cap && counts_grow(c))
		return -ENOMEM;
	for (j = (page * 0x9E3779B97F4A7C15ULL) & (c->cap - 1); c->page[j] != UINT64_MAX;
	     j = (j + 1) & (c->cap - 1))
		if (c->page[j] == page) {
			c->n[j] += n;
			return 0;
		}
	c->page[j] = page;
	c->n[j] = n;
	c->used++;
	return 0;
}

struct capture {
	struct trace_writer w;
	struct counts c;
	uint64_t window, instr, window_end, accesses, samples, lines, bad;
	uint32_t tgid;
	bool quiet;
	bool exited;	/* the tool's exit record came: the program ended under valgrind */
};

/* The window's counts as samples at its end time; weights split at 65535. */
static int flush(struct capture *x)
{
	struct cxlt_sample buf[1024];
	uint32_t nb = 0;
	int err = 0;

	for (size_t i = 0; i < x->c.cap && !err; i++) {
		uint64_t left;

		if (x->c.page[i] == UINT64_MAX)
			continue;
		for (left = x->c.n[i]; left && !err; left -= buf[nb - 1].weight) {
			if (nb == 1024) {
				err = trace_writer__add(&x->w, buf, nb);
				x->samples += nb;
				nb = 0;
			}
			buf[nb++] = (struct cxlt_sample){ .time_ns = x->window_end, .tgid = x->tgid,
							  .source = CXLT_SRC_PMU,
							  .weight = left > 65535 ? 65535 : (uint16_t)left,
							  .vpage = x->c.page[i] };
		}
		x->c.page[i] = UINT64_MAX;
	}
	if (nb && !err) {
		err = trace_writer__add(&x->w, buf, nb);
		x->samples += nb;
	}
	x->c.used = 0;
	return err;
}

/* One line of lackey text; anything else (valgrind's own "==PID==" lines) is skipped. */
static int line(struct capture *x, const char *s)
{
	unsigned long long addr;
	char kind;
	int err;

	x->lines++;
	if (s[0] == 'I' && s[1] == ' ') {
		if (++x->instr >= x->window_end) {
			if ((err = flush(x)))
				return err;
			x->window_end += x->window;
		}
		return 0;
	}
	if (s[0] != ' ' || !strchr("LSM", s[1]) || s[2] != ' ')
		return 0;
	kind = s[1];
	if (sscanf(s + 3, "%llx,", &addr) != 1) {
		x->bad++;
		return 0;
	}
	x->accesses += kind == 'M' ? 2 : 1;
	return count(&x->c, addr >> PAGE_SHIFT, kind == 'M' ? 2 : 1);
}

static void progress(struct capture *x, double *next)
{
	if (x->quiet || now_sec() < *next)
		return;
	fprintf(stderr, "\rcxltier-capture: %" PRIu64 " M instructions, %" PRIu64
		" M accesses, %" PRIu64 " samples", x->instr >> 20, x->accesses >> 20, x->samples);
	*next = now_sec() + 1;
}

/* Lackey's text, a line at a time. */
static int read_stream(struct capture *x, FILE *in)
{
	char buf[512];
	double next = now_sec() + 1;
	int err = 0;

	while (!err && fgets(buf, sizeof(buf), in)) {
		err = line(x, buf);
		if (!(x->lines & 0xfffff))
			progress(x, &next);
	}
	if (!err && ferror(in))
		err = -EIO;
	if (!err && x->c.used)
		err = flush(x);
	if (!x->quiet)
		fputc('\n', stderr);
	return err;
}

/* The cxltier tool's records (capture-wire.h): a window's pages, then its end. */
static int read_wire(struct capture *x, FILE *in)
{
	struct capture_rec r[4096];
	double next = now_sec() + 1;
	size_t n;
	int err = 0;

	while (!err && (n = fread(r, sizeof(r[0]), sizeof(r) / sizeof(r[0]), in))) {
		for (size_t i = 0; i < n && !err; i++) {
			if (x->exited) {
				err = -EPROTO;
			} else if (r[i].page == CAPTURE_WINDOW_END) {
				x->window_end = x->instr = r[i].n;
				err = flush(x);
			} else if (r[i].page == CAPTURE_EXIT || r[i].page == CAPTURE_SO_FAR) {
				x->instr = r[i].n;
				x->exited = r[i].page == CAPTURE_EXIT;
			} else {
				x->accesses += r[i].n;
				err = count(&x->c, r[i].page, r[i].n);
			}
		}
		progress(x, &next);
	}
	if (!err && ferror(in))
		err = -EIO;
	if (!x->quiet)
		fputc('\n', stderr);
	return err;
}

/*
 * Where cxltier's valgrind tool was built: valgrind/ beside this program,
 * holding the tool and links to valgrind's own files (VALGRIND_LIB wants
 * them in one directory).  NULL when it is not there.
 */
static const char *tool_dir(void)
{
	static char dir[PATH_MAX];
	char tool[PATH_MAX + 64];

	if (exe_dir_entry("valgrind", dir, sizeof(dir)))
		return NULL;
	snprintf(tool, sizeof(tool), "%s/cxltier-%s", dir, VG_PLATFORM);
	return access(tool, X_OK) ? NULL : dir;
}

/*
 * valgrind PROGRAM with cxltier's tool (dir) or lackey (dir NULL), its
 * output on a pipe, read as it comes.
 */
static int run_valgrind(struct capture *x, char **argv, const char *dir, int *status)
{
	int p[2], err;
	pid_t pid;
	FILE *in;

	if (pipe(p))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		char fdarg[32], winarg[48];
		char *args[72] = { "valgrind" };
		int n = 1;

		close(p[0]);
		if (dir) {
			snprintf(fdarg, sizeof(fdarg), "--cxlt-fd=%d", p[1]);
			snprintf(winarg, sizeof(winarg), "--cxlt-window=%" PRIu64, x->window);
			args[n++] = "-q";
			args[n++] = "--tool=cxltier";
			args[n++] = winarg;
			setenv("VALGRIND_LIB", dir, 1);
		} else {
			snprintf(fdarg, sizeof(fdarg), "--log-fd=%d", p[1]);
			args[n++] = "--tool=lackey";
			args[n++] = "--trace-mem=yes";
		}
		args[n++] = fdarg;
		for (int i = 0; argv[i] && n < 71; i++)
			args[n++] = argv[i];
		args[n] = NULL;
		execvp("valgrind", args);
		fprintf(stderr, "cxltier-capture: cannot run valgrind: %s (Debian: apt-get install valgrind)\n",
			strerror(errno));
		_exit(127);
	}
	close(p[1]);
	/* A large pipe: lackey writes a line per access, and every wake-up costs. */
	fcntl(p[0], F_SETPIPE_SZ, 1 << 20);
	in = fdopen(p[0], "r");
	err = !in ? -errno : dir ? read_wire(x, in) : read_stream(x, in);
	if (in)
		fclose(in);
	if (err)
		kill(pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return err;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' }, { "window", required_argument, NULL, 'w' },
		{ "import", required_argument, NULL, 'I' }, { "tgid", required_argument, NULL, 'T' },
		{ "quiet", no_argument, NULL, 'q' },	    { "help", no_argument, NULL, 'h' },
		{ "lackey", no_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	struct trace_node nodes[2] = {
		{ .id = 0, .role = CXLT_NODE_FAST, .tier = 4 },
		{ .id = 1, .role = CXLT_NODE_SLOW, .tier = 22 },
	};
	static struct capture x = { .window = 1000000, .tgid = 1000 };
	const char *out = NULL, *import = NULL, *dir = NULL;
	bool lackey = false;
	int opt, err, status = 0;
	uint64_t u;

	while ((opt = getopt_long(argc, argv, "+o:w:qh", opts, NULL)) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 'w':
			if (parse_u64(optarg, 1, 1ULL << 40, &x.window)) {
				fprintf(stderr, "cxltier-capture: --window '%s': expected instructions from 1 to 2^40\n", optarg);
				return 2;
			}
			break;
		case 'I': import = optarg; break;
		case 'T':
			if (parse_u64(optarg, 1, 1 << 30, &u)) {
				fprintf(stderr, "cxltier-capture: --tgid '%s': expected a process id\n", optarg);
				return 2;
			}
			x.tgid = (uint32_t)u;
			break;
		case 'q': x.quiet = true; break;
		case 'L': lackey = true; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: fprintf(stderr, "Try 'cxltier-capture --help'.\n"); return 2;
		}
	}
	if (!out || (!import && optind >= argc) || (import && optind < argc)) {
		fprintf(stderr, "cxltier-capture: give -o TRACE and either -- PROGRAM or --import FILE\n"
				"Try 'cxltier-capture --help'.\n");
		return 2;
	}
	if ((err = trace_writer__open(&x.w, out, 1 << PAGE_SHIFT, nodes, 2)))
		return 1;
	x.window_end = x.window;
	if (import) {
		FILE *in = strcmp(import, "-") ? fopen(import, "r") : stdin;

		if (!in) {
			fprintf(stderr, "cxltier-capture: cannot read %s: %s\n", import, strerror(errno));
			trace_writer__close(&x.w);
			return 1;
		}
		err = read_stream(&x, in);
		if (in != stdin)
			fclose(in);
	} else {
		dir = lackey ? NULL : tool_dir();
		if (!dir && !lackey)
			fprintf(stderr, "cxltier-capture: cxltier's valgrind tool is not built beside this program "
					"(make builds it where valgrind's libcoregrind is installed): running lackey, "
					"100 or more times slower\n");
		err = run_valgrind(&x, argv + optind, dir, &status);
	}
	if ((opt = trace_writer__close(&x.w)) && !err)
		err = opt;
	if (err) {
		fprintf(stderr, "cxltier-capture: %s: %s\n", out, strerror(-err));
		return 1;
	}
	if (dir && !x.exited && WIFEXITED(status))
		fprintf(stderr, "cxltier-capture: the program replaced itself with exec(2), which valgrind does "
				"not follow: the trace holds what ran before it (capture the program it ran "
				"directly, not through a shell's exec)\n");
	if (!import && (!WIFEXITED(status) || WEXITSTATUS(status))) {
		fprintf(stderr, "cxltier-capture: the program under valgrind did not exit 0 (status %d); the trace holds what it did\n",
			status);
		return 1;
	}
	if (!x.quiet)
		fprintf(stderr, "cxltier-capture: %s: %" PRIu64 " instructions, %" PRIu64
			" accesses on %s pages in %" PRIu64 " samples%s\n", out, x.instr, x.accesses,
			"4 KiB", x.samples, x.bad ? " (some lines unreadable: skipped)" : "");
	return 0;
}
