// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: cxltier-replay end to end, as a hostile user drives it
 * (issue 15, #10).  The input chooses a mode (replay a trace, --synth then
 * replay what it wrote, or --to-csv), up to 12 options from the replay's own
 * list with values taken from the input, and the policies; what is left is
 * the trace.  The replay's main is built as replay_main (-Dmain=replay_main),
 * with gnuplot left out (REPLAY_NO_GNUPLOT: --plot writes its data files and
 * stops there) and a cap of 10000 epochs, so that an input runs in
 * milliseconds.
 *
 * Besides what ASan and UBSan catch, each run must end in 0, 1 or 2, and a
 * non-zero end must have said why on stderr (captured through a memstream):
 * a silent exit 1 was one of the findings.
 *
 * The harness, not the input, picks every path written (a private temp
 * directory) and the policy directory (the sanitized shipped policies in
 * $BUILD/fuzz/policies/, beside this binary).  It caps the synthetic sizes
 * (--pages, --samples, --epochs) the way a user's patience would: the work
 * a user asks for is not a finding.
 */
#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

int replay_main(int argc, char **argv);

struct opt {
	const char *name;
	bool value;
	uint64_t cap;		/* a larger number is replaced by cap; 0: none */
};

static const struct opt opts[] = {
	{ "--fast-ratio", true, 0 }, { "--fast-pages", true, 0 }, { "--slow-pages", true, 0 },
	{ "--epoch-ms", true, 0 }, { "--fast-ns", true, 0 }, { "--slow-ns", true, 0 },
	{ "--migrate-ns", true, 0 }, { "--rate", true, 0 }, { "--low-wmark", true, 0 },
	{ "--high-wmark", true, 0 }, { "--decay", true, 0 }, { "--pingpong-window", true, 0 },
	{ "--param", true, 0 }, { "--json", false, 0 }, { "--plot", false, 0 },
	{ "--pages", true, 4096 }, { "--epochs", true, 16 }, { "--samples", true, 20000 },
	{ "--seed", true, 0 }, { "--alpha", true, 0 }, { "--hot", true, 0 },
	{ "--hot-share", true, 0 }, { "--shift-every", true, 0 }, { "--timing", false, 0 },
	{ "--start", true, 0 }, { "--epoch-bounds", true, 0 }, { "--watch", true, 0 },
};

static const char *const policies[] = { "hotset", "hotcold", "age", "tpp" };
static const char *const kinds[] = { "zipf", "hotset", "shift" };

static char dir[64], policy_dir[PATH_MAX], trace_path[128], synth_path[128], csv_path[128],
	    plot_dir[128];

struct input {
	const uint8_t *p;
	size_t n;
};

static uint8_t take(struct input *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

/* A value of up to 31 bytes from the input, NUL-terminated in buf. */
static char *take_value(struct input *in, char *buf, const struct opt *o)
{
	size_t len = take(in) % 32, i;
	uint64_t v;

	for (i = 0; i < len && in->n; i++)
		buf[i] = (char)take(in);
	buf[i] = '\0';
	if (o->cap && !parse_u64(buf, 0, UINT64_MAX, &v) && v > o->cap)
		snprintf(buf, 32, "%llu", (unsigned long long)o->cap);
	return buf;
}

static void cleanup(void)
{
	const char *files[] = { trace_path, synth_path, csv_path };
	char path[256];
	DIR *d;
	struct dirent *e;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(files[i]);
	if ((d = opendir(plot_dir))) {
		while ((e = readdir(d)))
			if (e->d_name[0] != '.' &&
			    (size_t)snprintf(path, sizeof(path), "%s/%s", plot_dir, e->d_name) < sizeof(path))
				unlink(path);
		closedir(d);
	}
	rmdir(plot_dir);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char self[PATH_MAX];

	(void)argc;
	snprintf(dir, sizeof(dir), "/tmp/cxlt-fuzz-replay-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("fuzz_replay: mkdtemp");
		exit(1);
	}
	snprintf(trace_path, sizeof(trace_path), "%s/in.trace", dir);
	snprintf(synth_path, sizeof(synth_path), "%s/synth.trace", dir);
	snprintf(csv_path, sizeof(csv_path), "%s/out.csv", dir);
	snprintf(plot_dir, sizeof(plot_dir), "%s/plots", dir);
	snprintf(self, sizeof(self), "%s", (*argv)[0]);
	snprintf(policy_dir, sizeof(policy_dir), "%s/policies", dirname(self));
	atexit(cleanup);
	/* The tables and CSVs are not checked here: only that nothing is lost silently. */
	if (!freopen("/dev/null", "w", stdout))
		exit(1);
	return 0;
}

/* Runs the replay with stderr captured; aborts on a bad or silent end. */
static int run(int argc, char **argv)
{
	FILE *saved = stderr, *capture;
	char *text = NULL;
	size_t len = 0;
	int rc;

	capture = open_memstream(&text, &len);
	if (!capture)
		abort();
	stderr = capture;
	rc = replay_main(argc, argv);
	stderr = saved;
	fclose(capture);
	if (rc < 0 || rc > 2 || (rc && !len)) {
		fprintf(stderr, "fuzz_replay: exit %d with %s:", rc, len ? "this message" : "no message");
		for (int i = 0; i < argc; i++)
			fprintf(stderr, " '%s'", argv[i]);
		fprintf(stderr, "\n%s", text ? text : "");
		abort();
	}
	free(text);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	char values[16][32], *argv[64];
	int argc = 0, nopts, mode, synth_argc;
	uint8_t mask;
	FILE *f;

	argv[argc++] = "cxltier-replay";
	mode = take(&in) % 3;
	if (mode == 1) {
		/* The defaults make 30M samples: small sizes first, the input's own (capped) after. */
		static char *const small[] = { "--pages", "4096", "--samples", "20000", "--epochs", "16" };

		for (size_t i = 0; i < sizeof(small) / sizeof(small[0]); i++)
			argv[argc++] = small[i];
	}
	nopts = take(&in) % 13;
	for (int i = 0; i < nopts; i++) {
		const struct opt *o = &opts[take(&in) % (sizeof(opts) / sizeof(opts[0]))];

		argv[argc++] = (char *)o->name;
		if (!strcmp(o->name, "--plot"))
			argv[argc++] = plot_dir;
		else if (o->value)
			argv[argc++] = take_value(&in, values[i], o);
	}
	argv[argc++] = "--policy-dir";
	argv[argc++] = policy_dir;
	mask = take(&in);
	if (mode == 1) {
		synth_argc = argc;
		argv[synth_argc++] = "--synth";
		argv[synth_argc++] = (char *)kinds[mask % 3];
		argv[synth_argc++] = "-O";
		argv[synth_argc++] = synth_path;
		argv[synth_argc] = NULL;
		if (run(synth_argc, argv))
			return 0;
	} else if (mode == 2) {
		argv[argc++] = "--to-csv";
		argv[argc++] = "-O";
		argv[argc++] = csv_path;
	}
	/* The rest of the input is the trace (mode 1 replays the synthetic one). */
	if (mode != 1) {
		if (!(f = fopen(trace_path, "w")) || fwrite(in.p, 1, in.n, f) != in.n || fclose(f))
			abort();
	}
	argv[argc++] = mode == 1 ? synth_path : trace_path;
	if (mode != 2)
		for (int i = 0; i < 4; i++)
			if (mask & (8 << i))
				argv[argc++] = (char *)policies[i];
	argv[argc] = NULL;
	run(argc, argv);
	return 0;
}
