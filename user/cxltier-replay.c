// SPDX-License-Identifier: MIT
/*
 * cxltier-replay: runs tiering policies over a recorded or synthetic trace
 * against a two-tier model, next to an oracle and to no migration.
 *
 * The pipeline is the live agent's own: samples go through the tracker
 * (heat, idle epochs), the engine builds the same view and asks the same
 * policy .so, and the same mover validates and batches the plan.  Only what
 * stands behind move_pages differs: a tier model with a fixed capacity per
 * tier, where a move succeeds while the destination has room.
 *
 * Model: every sample is an access of its weight.  A page appears in the
 * fast tier on first touch while the fast tier is over its low watermark,
 * else in the slow tier.  Accesses of an epoch are served by the placement
 * the page had during that epoch; the policy decides at the end of the
 * epoch.  The oracle places each epoch's most accessed pages in the fast
 * tier with perfect knowledge and no migration cost; "none" never moves.
 * Everything is deterministic: the same inputs give the same output, byte
 * for byte (decision times appear only with --timing).
 *
 * With --sampler, the trace is a full access stream and the policies see
 * what a live source would have sampled of it (replay/sampler.c); the score
 * and the oracle still count every access.  One row per policy and sampler.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "damon.h"
#include "pmu.h"
#include "replay/replay.h"
#include "util.h"

#define MAX_POLICIES 16
#define MAX_SAMPLERS 8
/*
 * A trace's time span is not trusted: every epoch costs a pass over the
 * pages seen, so a gap of years between two samples would be years of
 * empty epochs.  Beyond this many epochs the replay refuses and names the
 * --epoch-ms that fits (the fuzzer builds with fewer to stay fast).
 */
#ifndef REPLAY_MAX_EPOCHS
#define REPLAY_MAX_EPOCHS 1000000
#endif

static const char usage_text[] =
"Usage: cxltier-replay [OPTIONS] TRACE POLICY...\n"
"       cxltier-replay --synth KIND [SYNTH OPTIONS] -O FILE\n"
"       cxltier-replay --to-csv TRACE [-O FILE]\n"
"       cxltier-replay --policy-help POLICY...\n"
"\n"
"Runs each POLICY (a name from the policy directory, or a path to a .so) over\n"
"TRACE against a two-tier model and prints, per policy: the share of accesses\n"
"served by the fast tier, next to an oracle (each epoch's hottest pages in the\n"
"fast tier, perfect knowledge, free migration) and to no migration; the mean\n"
"access latency with and without migration cost; pages promoted and demoted;\n"
"ping-pong moves (a page moved back within the window).\n"
"\n"
"Tier model:\n"
"  -f, --fast-ratio A:B     fast capacity : distinct pages in the trace (default 1:4)\n"
"      --fast-pages N       fast capacity in pages (overrides --fast-ratio)\n"
"      --slow-pages N       slow capacity in pages (default: every page fits)\n"
"  -e, --epoch-ms MS        epoch length in trace time (default 1000)\n"
"      --fast-ns NS         access latency of the fast tier (default 100)\n"
"      --slow-ns NS         access latency of the slow tier (default 250)\n"
"      --migrate-ns NS      cost of migrating one page (default 2000)\n"
"  -r, --rate MBPS          migration budget, MiB/s of trace time (default %g)\n"
"      --low-wmark PCT      fast-tier watermarks as in cxltierd (default %g)\n"
"      --high-wmark PCT     (default %g)\n"
"      --pingpong-epochs N  a moved page is not moved again for N epochs, as in\n"
"                           cxltierd (default %u)\n"
"      --decay F            heat decay per epoch (default 0.5)\n"
"      --pingpong-window N  a page moved back fewer than N epochs after its last\n"
"                           move is a ping-pong: the mover's own test (default %u)\n"
"Policies:\n"
"  -o, --param POLICY:KEY=V1[,V2...]  a parameter for one policy (repeat); a\n"
"                           list of values is a sweep: a row per value, and per\n"
"                           combination when several keys have lists; rows are\n"
"                           labelled NAME(KEY=VALUE,...)\n"
"      --policy-help        print each POLICY's description and parameters\n"
"      --decide-limit-ms MS  a decision that takes longer ends its row, reported\n"
"                           as timed out (default: one epoch, --epoch-ms; 0: none)\n"
"      --policy-dir DIR     where policy names are looked up (default: policies/\n"
"                           beside this binary)\n"
"Samplers (for a trace of every access, such as cxltier-capture writes):\n"
"  -s, --sampler S[,S...]   the policies see the accesses as this live source\n"
"                           would have sampled them, while the score and the\n"
"                           oracle count every access; repeat or list several\n"
"                           for a row per policy and sampler.  S is one of:\n"
"                             none       the trace as recorded (the default)\n"
"                             pmu[:N]    one access in N, at random; without N,\n"
"                                        cxltierd's PMU budget (%g%% of a core at\n"
"                                        %g us a sample) over the trace's accesses\n"
"                                        per second\n"
"                             hint       NUMA hint faults: a page's first touch,\n"
"                                        then its first use after each scanner pass\n"
"                             fault      page faults: first touches only\n"
"                             damon[:M]  DAMON, the agent's own kdamond: at most M\n"
"                                        adaptive regions (default %d), one page\n"
"                                        of each checked every %d ms, the counts\n"
"                                        handed on every %d ms\n"
"      --hint-period-ms MS  the scanner's period for hint (default %u, as\n"
"                           cxltierd's)\n"
"      --seed N             the pmu and damon samplers' draws too (default 1)\n"
"      --time-scale K       stretch the trace's clock K times (default 1): as if\n"
"                           the program ran K times slower, the same accesses\n"
"                           spread over K times the time, so epochs, the\n"
"                           samplers' periods and budgets and --rate see K\n"
"                           times as much time.  A capture's clock is one ns\n"
"                           an instruction, and a short run then ends before\n"
"                           the live agent's first epoch or scanner pass:\n"
"                           --time-scale 1000 makes a million instructions one\n"
"                           second, as for a program whose accesses mostly\n"
"                           miss the cache\n"
"Start:\n"
"      --start trace|first-touch  where pages begin: where the trace's resident\n"
"                           runs put them, unsampled pages included, each process\n"
"                           from its first sample (trace, the default when a\n"
"                           recording has runs); or each page on its first touch,\n"
"                           fast while the fast tier has room (first-touch)\n"
"      --epoch-bounds live|fixed  where epochs end: where the recorded agent's\n"
"                           did, each with the samples that agent epoch took\n"
"                           (live, the default when a recording has epoch\n"
"                           marks); or every --epoch-ms from the first sample\n"
"Output:\n"
"  -j, --json               JSON instead of the table\n"
"      --json-out FILE      the JSON to FILE as well (the table, or --json, on\n"
"                           standard output)\n"
"      --timing             add the policies' decision time per epoch (not\n"
"                           deterministic)\n"
"      --plot DIR           write PNG plots with gnuplot: fast-tier hit ratio\n"
"                           over time per policy, heat map of pages x time\n"
"      --epochs-csv FILE    a line per run and epoch: pages promoted, demoted,\n"
"                           in each tier, and of the --watch range in each\n"
"      --watch START-END    the virtual address range --epochs-csv follows\n"
"\n"
"Synthetic traces (--synth zipf|hotset|shift|scan):\n"
"      --pages N            distinct pages (default 32768)\n"
"      --epochs N           epochs (default 60)\n"
"      --samples N          accesses per epoch (default 500000), written as one\n"
"                           sample per touched page and epoch, weighted\n"
"      --seed N             PRNG seed (default 1)\n"
"      --alpha A            zipf exponent (default 0.99)\n"
"      --hot F              hot fraction of the pages (hotset, shift, scan;\n"
"                           default 0.1)\n"
"      --hot-share F        share of accesses to the hot set (default 0.9)\n"
"      --shift-every N      shift: the hot set moves every N epochs; scan: a\n"
"                           fixed hot set, and every N epochs (from N/2) a\n"
"                           one-off sequential scan of the next quarter of the\n"
"                           pages, 512 accesses a page (default 10)\n"
"  -O, --output FILE        where to write (synth: required; to-csv: default stdout)\n"
"      --to-csv TRACE       the samples as CSV; with one --sampler, those the\n"
"                           sampler reports (with no migration)\n"
"\n"
"Each policy runs in a process of its own and decides on a copy of its view:\n"
"a policy that crashes, aborts, is refused at load or overruns the decision\n"
"time limit gets that as its row's result, the other rows complete, and the\n"
"exit status is 1.\n"
"\n"
"EXAMPLES\n"
"  cxltier-replay --synth zipf --seed 1 -O zipf.trace\n"
"  cxltier-replay zipf.trace hotset hotcold age tpp\n"
"  cxltier-replay --fast-ratio 1:8 -o hotcold:promote_heat=2 shift.trace hotcold ./my.so\n"
"  cxltier-replay -o hotset:headroom=0.01,0.02,0.05 zipf.trace hotset\n"
"  cxltier-replay --policy-help hotset ./my.so\n"
"  cxltier-replay --json --plot plots/ recorded.trace hotset\n"
"  cxltier-replay --to-csv recorded.trace -O recorded.csv\n"
"  cxltier-capture -o gzip.trace -- gzip -6 -c /usr/bin/bash > /dev/null\n"
"  cxltier-replay --time-scale 1000 --sampler pmu,hint,fault,damon gzip.trace hotset tpp\n"
"  cxltier-replay --sampler pmu:100,pmu:1000 --seed 2 zipf.trace hotset\n"
"  cxltier-replay --sampler hint --hint-period-ms 10 --to-csv gzip.trace\n";

/* Returns 2, the exit status of a usage error. */
static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "cxltier-replay: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'cxltier-replay --help'.\n");
	return 2;
}

/* ---- main ---- */

/* -o POLICY:KEY=VALUE names a policy as given on the command line, or by its file's base name. */
static char *param_for(char *param, const char *arg)
{
	const char *base = strrchr(arg, '/') ? strrchr(arg, '/') + 1 : arg;
	size_t len = strlen(arg), blen = strlen(base);

	if (blen > 3 && !strcmp(base + blen - 3, ".so"))
		blen -= 3;
	if (!strncmp(param, arg, len) && param[len] == ':')
		return param + len + 1;
	if (!strncmp(param, base, blen) && param[blen] == ':')
		return param + blen + 1;
	return NULL;
}

/* The command line; bad is set by the first value refused (its message printed). */
struct args {
	struct model_opts o;
	struct synth_opts so;
	char *params[64];
	int nparams;
	struct sampler_spec samplers[MAX_SAMPLERS];
	int nsamplers;
	char policy_dir[1024];
	const char *out;
	uint32_t decide_limit_ms;	/* 0: none */
	uint32_t time_scale;		/* the trace's clock runs this many times slower */
	bool limit_given;		/* else one epoch */
	bool to_csv;
	bool policy_help;
	bool bad;
};

static uint64_t parse_num(struct args *a, const char *opt, const char *arg, uint64_t min, uint64_t max)
{
	uint64_t v;

	if (parse_u64(arg, min, max, &v)) {
		a->bad = usage_error("bad value: %s", opt);
		return 0;
	}
	return v;
}

static double parse_dbl(struct args *a, const char *opt, const char *arg, double min, double max)
{
	double v;

	if (parse_double(arg, min, max, &v)) {
		a->bad = usage_error("bad value: %s", opt);
		return 0;
	}
	return v;
}

/* A:B, both finite numbers with 0 < A <= B: the share A/B, or 0 when arg is none. */
static double parse_ratio(const char *arg)
{
	char a_text[64], *colon = strchr(arg, ':');
	size_t alen = colon ? (size_t)(colon - arg) : 0;
	double a, b;

	if (!colon || alen >= sizeof(a_text))
		return 0;
	memcpy(a_text, arg, alen);
	a_text[alen] = '\0';
	if (parse_double(a_text, 0, 1e15, &a) || parse_double(colon + 1, 0, 1e15, &b) ||
	    a <= 0 || b < a)
		return 0;
	return a / b;
}

enum {
	OPT_FAST_PAGES = 256, OPT_SLOW_PAGES, OPT_FAST_NS, OPT_SLOW_NS, OPT_MIGRATE_NS,
	OPT_LOW, OPT_HIGH, OPT_DECAY, OPT_PINGPONG, OPT_POLICY_DIR, OPT_TIMING, OPT_PLOT, OPT_JSON_OUT,
	OPT_SYNTH, OPT_PAGES, OPT_EPOCHS, OPT_SAMPLES, OPT_SEED, OPT_ALPHA, OPT_HOT,
	OPT_HOT_SHARE, OPT_SHIFT, OPT_TO_CSV, OPT_DECIDE_LIMIT, OPT_PINGPONG_EPOCHS, OPT_POLICY_HELP,
	OPT_HINT_PERIOD, OPT_START, OPT_EPOCHS_CSV, OPT_WATCH, OPT_EPOCH_BOUNDS, OPT_TIME_SCALE,
};

/* One of two words: its value, or 0 (the enums' AUTO) for neither. */
static int pick(const char *arg, const char *a, int va, const char *b, int vb)
{
	return !strcmp(arg, a) ? va : !strcmp(arg, b) ? vb : 0;
}

/* --watch START-END: virtual addresses (hex with 0x, or decimal), as 4 KiB pages [lo, hi). */
static int parse_watch(struct model_opts *o, const char *arg)
{
	char *end;
	unsigned long long lo, hi;

	errno = 0;
	lo = strtoull(arg, &end, 0);
	if (errno || end == arg || *end != '-')
		return -EINVAL;
	arg = end + 1;
	hi = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || hi <= lo)
		return -EINVAL;
	o->watch_lo = lo >> CXLT_PAGE_SHIFT;
	o->watch_hi = (hi + (1ULL << CXLT_PAGE_SHIFT) - 1) >> CXLT_PAGE_SHIFT;
	return 0;
}

/* Returns -1 to go on, else the exit status (help: 0, a usage error: 2). */
static int parse_args(struct args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fast-ratio", required_argument, NULL, 'f' },
		{ "fast-pages", required_argument, NULL, OPT_FAST_PAGES },
		{ "slow-pages", required_argument, NULL, OPT_SLOW_PAGES },
		{ "epoch-ms", required_argument, NULL, 'e' },
		{ "fast-ns", required_argument, NULL, OPT_FAST_NS },
		{ "slow-ns", required_argument, NULL, OPT_SLOW_NS },
		{ "migrate-ns", required_argument, NULL, OPT_MIGRATE_NS },
		{ "rate", required_argument, NULL, 'r' },
		{ "low-wmark", required_argument, NULL, OPT_LOW },
		{ "high-wmark", required_argument, NULL, OPT_HIGH },
		{ "decay", required_argument, NULL, OPT_DECAY },
		{ "pingpong-window", required_argument, NULL, OPT_PINGPONG },
		{ "pingpong-epochs", required_argument, NULL, OPT_PINGPONG_EPOCHS },
		{ "param", required_argument, NULL, 'o' },
		{ "policy-dir", required_argument, NULL, OPT_POLICY_DIR },
		{ "json", no_argument, NULL, 'j' },
		{ "timing", no_argument, NULL, OPT_TIMING },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "json-out", required_argument, NULL, OPT_JSON_OUT },
		{ "synth", required_argument, NULL, OPT_SYNTH },
		{ "pages", required_argument, NULL, OPT_PAGES },
		{ "epochs", required_argument, NULL, OPT_EPOCHS },
		{ "samples", required_argument, NULL, OPT_SAMPLES },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "alpha", required_argument, NULL, OPT_ALPHA },
		{ "hot", required_argument, NULL, OPT_HOT },
		{ "hot-share", required_argument, NULL, OPT_HOT_SHARE },
		{ "shift-every", required_argument, NULL, OPT_SHIFT },
		{ "to-csv", no_argument, NULL, OPT_TO_CSV },
		{ "decide-limit-ms", required_argument, NULL, OPT_DECIDE_LIMIT },
		{ "policy-help", no_argument, NULL, OPT_POLICY_HELP },
		{ "sampler", required_argument, NULL, 's' },
		{ "hint-period-ms", required_argument, NULL, OPT_HINT_PERIOD },
		{ "start", required_argument, NULL, OPT_START },
		{ "epoch-bounds", required_argument, NULL, OPT_EPOCH_BOUNDS },
		{ "epochs-csv", required_argument, NULL, OPT_EPOCHS_CSV },
		{ "watch", required_argument, NULL, OPT_WATCH },
		{ "time-scale", required_argument, NULL, OPT_TIME_SCALE },
		{ "output", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct model_opts *o = &a->o;
	struct synth_opts *so = &a->so;
	int opt;

	/* 0, not 1: getopt starts afresh, for a caller that parses more than once (the fuzzer). */
	optind = 0;
	while ((opt = getopt_long(argc, argv, "f:e:r:o:js:O:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			if (!(o->fast_ratio = parse_ratio(optarg)))
				return usage_error("--fast-ratio '%s': expected A:B with 0 < A <= B, e.g. 1:4", optarg);
			break;
		case OPT_FAST_PAGES: o->fast_pages = parse_num(a, "--fast-pages", optarg, 1, 1ULL << 40); break;
		case OPT_SLOW_PAGES: o->slow_pages = parse_num(a, "--slow-pages", optarg, 1, 1ULL << 40); break;
		case 'e': o->epoch_ms = parse_num(a, "--epoch-ms", optarg, 1, 3600000); break;
		case OPT_FAST_NS: o->fast_ns = parse_dbl(a, "--fast-ns", optarg, 0, 1e9); break;
		case OPT_SLOW_NS: o->slow_ns = parse_dbl(a, "--slow-ns", optarg, 0, 1e9); break;
		case OPT_MIGRATE_NS: o->migrate_ns = parse_dbl(a, "--migrate-ns", optarg, 0, 1e12); break;
		case 'r': o->rate_mbps = parse_dbl(a, "--rate", optarg, 0.001, 1e9); break;
		case OPT_LOW: o->low_pct = parse_dbl(a, "--low-wmark", optarg, 0, 50); break;
		case OPT_HIGH: o->high_pct = parse_dbl(a, "--high-wmark", optarg, 0, 90); break;
		case OPT_DECAY: o->decay = parse_dbl(a, "--decay", optarg, 0, 1); break;
		case OPT_PINGPONG: o->pingpong_window = parse_num(a, "--pingpong-window", optarg, 1, 1000000); break;
		case OPT_PINGPONG_EPOCHS:
			o->pingpong_epochs = parse_num(a, "--pingpong-epochs", optarg, 0, 60000);
			break;
		case 'o':
			if (a->nparams == (int)ARRAY_SIZE(a->params) || !strchr(optarg, ':') || !strchr(optarg, '='))
				return usage_error("--param '%s': expected POLICY:KEY=VALUE", optarg);
			a->params[a->nparams++] = optarg;
			break;
		case OPT_POLICY_DIR: snprintf(a->policy_dir, sizeof(a->policy_dir), "%s", optarg); break;
		case 'j': o->json = true; break;
		case OPT_TIMING: o->timing = true; break;
		case OPT_PLOT: o->plot_dir = optarg; break;
		case OPT_JSON_OUT: o->json_out = optarg; break;
		case OPT_SYNTH:
			if (strcmp(optarg, "zipf") && strcmp(optarg, "hotset") && strcmp(optarg, "shift") &&
			    strcmp(optarg, "scan"))
				return usage_error("--synth '%s': expected zipf, hotset, shift or scan", optarg);
			so->kind = optarg;
			break;
		case OPT_PAGES: so->pages = parse_num(a, "--pages", optarg, 16, 1ULL << 32); break;
		case OPT_EPOCHS: so->epochs = parse_num(a, "--epochs", optarg, 1, 1000000); break;
		case OPT_SAMPLES: so->samples = parse_num(a, "--samples", optarg, 1, 1ULL << 32); break;
		case OPT_SEED: o->sampler_seed = so->seed = parse_num(a, "--seed", optarg, 0, UINT64_MAX); break;
		case 's': {
			char why[160];

			if (sampler_parse(optarg, a->samplers, MAX_SAMPLERS, &a->nsamplers, why, sizeof(why))) {
				fprintf(stderr, "cxltier-replay: --sampler '%s': %s\nTry 'cxltier-replay --help'.\n",
					optarg, why);
				return 2;
			}
			break;
		}
		case OPT_START:
			if (!(o->start = pick(optarg, "trace", START_TRACE, "first-touch", START_FIRST_TOUCH)))
				return usage_error("--start '%s': expected trace or first-touch", optarg);
			break;
		case OPT_EPOCH_BOUNDS:
			if (!(o->bounds = pick(optarg, "live", BOUNDS_LIVE, "fixed", BOUNDS_FIXED)))
				return usage_error("--epoch-bounds '%s': expected live or fixed", optarg);
			break;
		case OPT_EPOCHS_CSV: o->epochs_csv = optarg; break;
		case OPT_WATCH:
			if (parse_watch(o, optarg))
				return usage_error("--watch '%s': expected START-END, addresses with START < END", optarg);
			break;
		case OPT_TIME_SCALE: a->time_scale = parse_num(a, "--time-scale", optarg, 1, 1000000); break;
		case OPT_HINT_PERIOD:
			o->hint_period_ms = parse_num(a, "--hint-period-ms", optarg, 1, 3600000);
			break;
		case OPT_ALPHA: so->alpha = parse_dbl(a, "--alpha", optarg, 0, 10); break;
		case OPT_HOT: so->hot = parse_dbl(a, "--hot", optarg, 1e-6, 1); break;
		case OPT_HOT_SHARE: so->hot_share = parse_dbl(a, "--hot-share", optarg, 0, 1); break;
		case OPT_SHIFT: so->shift_every = parse_num(a, "--shift-every", optarg, 1, 1000000); break;
		case OPT_TO_CSV: a->to_csv = true; break;
		case OPT_POLICY_HELP: a->policy_help = true; break;
		case OPT_DECIDE_LIMIT:
			a->decide_limit_ms = parse_num(a, "--decide-limit-ms", optarg, 0, 3600000);
			a->limit_given = true;
			break;
		case 'O': a->out = optarg; break;
		case 'h': {
			struct mover_opts mo;

			mover__default_opts(&mo);
			printf(usage_text, mo.rate_mbps, mo.low_wmark_pct, mo.high_wmark_pct,
			       mo.pingpong_epochs, mo.pingpong_epochs, PMU_CPU_SHARE_DEFAULT * 100,
			       PMU_COST_NS_DEFAULT / 1000, DAMON_MAX_REGIONS, DAMON_SAMPLE_US / 1000, DAMON_AGGR_US / 1000,
			       o->hint_period_ms);
			return close_output(stdout, "standard output");
		}
		default: fprintf(stderr, "Try 'cxltier-replay --help'.\n"); return 2;
		}
		if (a->bad)
			return 2;
	}
	if (o->high_pct < o->low_pct) {
		fprintf(stderr, "cxltier-replay: --high-wmark %g is below --low-wmark %g\nTry 'cxltier-replay --help'.\n",
			o->high_pct, o->low_pct);
		return 2;
	}
	if (!a->limit_given)
		a->decide_limit_ms = o->epoch_ms;
	if (so->kind) {
		if (!a->out)
			return usage_error("--synth needs -O FILE%s", "");
		if (so->hot >= 1 && strcmp(so->kind, "zipf"))
			return usage_error("--hot must be under 1 for %s traces", so->kind);
		/* Both sets must hold a page: a cold page is picked modulo their count. */
		if (strcmp(so->kind, "zipf") && (uint64_t)ceil(so->hot * so->pages) >= so->pages) {
			fprintf(stderr, "cxltier-replay: --hot %g of %llu pages leaves no cold page: lower --hot or raise --pages\n",
				so->hot, (unsigned long long)so->pages);
			return 2;
		}
	}
	return -1;
}

/* The number of epochs the samples span, or 0 (with a message) when too many. */
static uint64_t count_epochs(const char *path, const struct trace_scan *sc, uint32_t epoch_ms)
{
	uint64_t span = sc->t_last - sc->t_first, epoch_ns = (uint64_t)epoch_ms * 1000000;
	uint64_t nr = span / epoch_ns + 1, fit_ms = span / ((REPLAY_MAX_EPOCHS - 1) * 1000000ULL) + 1;

	if (nr <= REPLAY_MAX_EPOCHS)
		return nr;
	fprintf(stderr, "cxltier-replay: %s: the samples span %.0f s, %llu epochs of %u ms; at most %u epochs are replayed: ",
		path, span / 1e9, (unsigned long long)nr, epoch_ms, REPLAY_MAX_EPOCHS);
	if (fit_ms <= 3600000)
		fprintf(stderr, "use --epoch-ms %llu or more\n", (unsigned long long)fit_ms);
	else
		fprintf(stderr, "its time stamps are not a recording's\n");
	return 0;
}

/* Epochs cut at the recorded agent's marks: one before each, and one after the last for samples there. */
static uint64_t live_epochs(const char *path, const struct trace_scan *sc)
{
	uint64_t nr = sc->nr_marks + (sc->t_last >= sc->marks[sc->nr_marks - 1]);

	if (nr <= REPLAY_MAX_EPOCHS)
		return nr;
	fprintf(stderr, "cxltier-replay: %s: %llu epoch marks; at most %u epochs are replayed: use --epoch-bounds fixed\n",
		path, (unsigned long long)sc->nr_marks, REPLAY_MAX_EPOCHS);
	return 0;
}

#define MAX_ROWS 64

static void free_rows(struct row *rows, int n)
{
	for (int i = 0; rows && i < n; i++)
		free(rows[i].strings);
	free(rows);
}

/* --policy-help: what cxltierd --policy-help prints, for each policy named; the exit status. */
static int policy_help(struct args *a, char **names, int npol)
{
	int rc = 0;

	if (npol < 1)
		return usage_error("--policy-help needs a policy (e.g. hotset, or a path to a .so)%s", "");
	for (int i = 0; i < npol; i++) {
		struct policy_host host;
		char *kv[ROW_MAX_KV];
		int nkv = 0;

		for (int k = 0; k < a->nparams; k++)
			if (param_for(a->params[k], names[i]))
				kv[nkv++] = param_for(a->params[k], names[i]);
		if (policy_host__load(&host, names[i], a->policy_dir, kv, nkv)) {
			rc = 1;
			continue;
		}
		policy_host__describe(&host);
		policy_host__unload(&host);
	}
	return close_output(stdout, "standard output") ? 1 : rc;
}

/* Memory the rows' child processes write their results into; NULL when none is left. */
static void *shared_alloc(size_t size)
{
	void *p = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The file's base name without .so: how a row and -o name a policy. */
static int base_len(const char *arg, const char **base)
{
	size_t blen;

	*base = strrchr(arg, '/') ? strrchr(arg, '/') + 1 : arg;
	blen = strlen(*base);
	if (blen > 3 && !strcmp(*base + blen - 3, ".so"))
		blen -= 3;
	return (int)blen;
}

/* Items in a comma-separated list of values. */
static int list_len(const char *list)
{
	int n = 1;

	for (; *list; list++)
		n += *list == ',';
	return n;
}

/*
 * Adds the rows of one policy: a row per combination of its parameters'
 * values, a value list (KEY=V1,V2,...) being a sweep.  The last list varies
 * fastest.  A row is labelled NAME(KEY=VALUE,...) with the parameters given,
 * NAME being the file's base name (the argument itself when two policies
 * share a base name).  0, or 1 with a message.
 */
static int add_rows(struct row *rows, int *nrows, int max_rows, const char *arg, const char *name,
		    int name_len, char **kv, int nkv)
{
	int combos = 1, pick[ROW_MAX_KV];
	size_t len = 0;

	for (int k = 0; k < nkv; k++) {
		int n = list_len(strchr(kv[k], '=') + 1);

		if (combos > max_rows / n || *nrows + combos * n > max_rows) {
			fprintf(stderr, "cxltier-replay: more than %d rows (policies x parameter values)\n", max_rows);
			return 1;
		}
		combos *= n;
		len += strlen(kv[k]) + 1;
	}
	for (int r = 0; r < combos; r++) {
		struct row *row = &rows[(*nrows)++];
		size_t lab;
		char *out;
		int rest = r;

		if (!(out = row->strings = malloc(len + 1))) {
			fprintf(stderr, "cxltier-replay: out of memory\n");
			return 1;
		}
		for (int k = nkv - 1; k >= 0; k--) {
			int n = list_len(strchr(kv[k], '=') + 1);

			pick[k] = rest % n;
			rest /= n;
		}
		row->policy = arg;
		row->nr_kv = nkv;
		lab = snprintf(row->label, sizeof(row->label), "%.*s", name_len, name);
		for (int k = 0; k < nkv; k++) {
			const char *eq = strchr(kv[k], '='), *v = eq + 1;

			for (int i = 0; i < pick[k]; i++)
				v = strchr(v, ',') + 1;
			row->kv[k] = out;
			out += sprintf(out, "%.*s=%.*s", (int)(eq - kv[k]), kv[k], (int)strcspn(v, ","), v) + 1;
			if (lab < sizeof(row->label))
				lab += snprintf(row->label + lab, sizeof(row->label) - lab, "%c%s",
						k ? ',' : '(', row->kv[k]);
		}
		if (nkv && lab < sizeof(row->label))
			snprintf(row->label + lab, sizeof(row->label) - lab, ")");
	}
	return 0;
}

/* The rows: each policy with the parameters named for it; NULL with a message. */
static struct row *make_rows(struct args *a, char **names, int npol, int *nrows, int *rc)
{
	struct row *rows = calloc(MAX_ROWS, sizeof(*rows));

	*rc = 1;
	*nrows = 0;
	if (!rows) {
		fprintf(stderr, "cxltier-replay: out of memory\n");
		return NULL;
	}
	for (int k = 0; k < a->nparams; k++) {
		bool used = false;

		for (int i = 0; i < npol; i++)
			used |= param_for(a->params[k], names[i]) != NULL;
		if (!used) {
			*rc = usage_error("--param '%s' names no policy on the command line", a->params[k]);
			goto fail;
		}
	}
	for (int i = 0; i < npol; i++) {
		const char *base, *other;
		int blen = base_len(names[i], &base);
		char *kv[ROW_MAX_KV];
		int nkv = 0;

		for (int j = 0; j < npol; j++)
			if (strcmp(names[i], names[j]) && base_len(names[j], &other) == blen &&
			    !strncmp(base, other, blen)) {
				base = names[i];
				blen = (int)strlen(base);
				break;
			}
		for (int k = 0; k < a->nparams; k++)
			if (param_for(a->params[k], names[i]))
				kv[nkv++] = param_for(a->params[k], names[i]);
		if (add_rows(rows, nrows, MAX_ROWS, names[i], base, blen, kv, nkv))
			goto fail;
	}
	return rows;
fail:
	free_rows(rows, *nrows);
	return NULL;
}

/*
 * An option whose value needs something of the trace (has): asked for
 * without it, an error naming what is missing; not given (0), want if the
 * trace has it, else other.  0, or 1 with a message.
 */
static int resolve(const char *path, int *v, int want, int other, bool has, const char *opt,
		   const char *what, const char *alt)
{
	if (*v == want && !has) {
		fprintf(stderr, "cxltier-replay: %s: %s: the trace holds no %s (cxltierd --record writes them from trace version 2); try %s\n",
			path, opt, what, alt);
		return 1;
	}
	if (!*v)
		*v = has ? want : other;
	return 0;
}

/*
 * What every run of a trace shares: its scan, the tiers' capacities, the
 * number of epochs, the samplers' defaults that depend on the trace.  0, or
 * 1 with a message.
 */
static int setup_runs(struct args *a, const char *path, const struct trace *t, struct trace_scan *sc,
		      struct run_in *in)
{
	struct model_opts *o = &a->o;
	char msg[256];

	if (scan_trace(t, sc, o->start != START_FIRST_TOUCH, msg, sizeof(msg))) {
		fprintf(stderr, "cxltier-replay: %s: %s\n", path, msg);
		return 1;
	}
	if (sc->huge_ignored)
		fprintf(stderr, "cxltier-replay: %s: %llu huge-page records not of 2 MiB in 4 KiB pages: their pages are replayed as pages\n",
			path, (unsigned long long)sc->huge_ignored);
	/* What a recording of cxltierd has, by default when the trace has it. */
	if (resolve(path, &o->start, START_TRACE, START_FIRST_TOUCH, sc->runs > 0, "--start trace",
		    "resident runs", "--start first-touch") ||
	    resolve(path, &o->bounds, BOUNDS_LIVE, BOUNDS_FIXED, sc->nr_marks > 0,
		    "--epoch-bounds live", "epoch marks", "--epoch-bounds fixed"))
		return 1;
	/*
	 * Output files must be writable before the replay, which may take long,
	 * not after it; the JSON's old contents stay until the replay succeeds.
	 */
	if (o->json_out) {
		FILE *f = fopen(o->json_out, "a");

		if (!f || fclose(f)) {
			fprintf(stderr, "cxltier-replay: cannot write %s: %s\n", o->json_out, strerror(errno));
			return 1;
		}
	}
	if (o->epochs_csv) {
		FILE *f = fopen(o->epochs_csv, "w");

		if (!f || fputs("run,epoch,end_s,promoted,demoted,fast_pages,slow_pages,watch_fast,watch_slow\n", f) < 0 ||
		    fclose(f)) {
			fprintf(stderr, "cxltier-replay: cannot write %s: %s\n", o->epochs_csv, strerror(errno));
			return 1;
		}
	}
	*in = (struct run_in){ .path = path, .trace = t, .scan = sc, .o = o,
			       .fast_cap = o->fast_pages ? o->fast_pages : (uint64_t)ceil(sc->pages * o->fast_ratio),
			       .slow_cap = o->slow_pages ? o->slow_pages : sc->pages,
			       .nr_epochs = o->bounds == BOUNDS_LIVE ? live_epochs(path, sc) :
					    count_epochs(path, sc, o->epoch_ms) };
	for (int i = 0; i < a->nsamplers; i++)
		sampler_resolve(&a->samplers[i], sc);
	return in->nr_epochs ? 0 : 1;
}

/* --to-csv with one --sampler: the samples it reports, with no policy; the exit status. */
static int sampled_csv(struct args *a, const char *path, const struct trace *t)
{
	struct result res = { .name = "none" };
	struct trace_scan sc;
	struct run_in in;
	FILE *f;
	int rc;

	if (a->nsamplers != 1)
		return usage_error("--to-csv takes one --sampler at most%s", "");
	if (a->o.json_out)
		return usage_error("--json-out is for a replay's rows, not --to-csv%s", "");
	if (!t->nr_samples) {
		fprintf(stderr, "cxltier-replay: %s: the trace holds no samples\n", path);
		return 1;
	}
	if (setup_runs(a, path, t, &sc, &in)) {
		trace_scan__free(&sc);
		return 1;
	}
	if (!(f = a->out ? fopen(a->out, "w") : stdout)) {
		fprintf(stderr, "cxltier-replay: cannot create %s: %s\n", a->out, strerror(errno));
		trace_scan__free(&sc);
		return 1;
	}
	in.sampler = &a->samplers[0];
	in.csv = f;
	csv_header(f);
	rc = run_policy(&in, &res) ? 1 : 0;
	trace_scan__free(&sc);
	errno = 0;
	return close_output(f, a->out ? a->out : "standard output") || rc;
}

/* Runs "none" (with the oracle) and each row under each sampler, then prints; the exit status. */
static int replay(struct args *a, const char *path, const struct trace *t, char **names, int npol)
{
	struct model_opts *o = &a->o;
	struct result *res = NULL;
	struct row *rows;
	struct trace_scan sc = { 0 };
	uint64_t *heat = NULL;
	double *ratios = NULL;
	size_t ratios_size = 0;
	struct run_in in;
	int rc, nrows, nres = 0, failed = 0, ns = a->nsamplers ? a->nsamplers : 1;
	double t0;

	if (!(rows = make_rows(a, names, npol, &nrows, &rc)))
		return rc;
	rc = 1;
	if (nrows * ns > MAX_ROWS) {
		fprintf(stderr, "cxltier-replay: more than %d rows (policies x parameter values x samplers)\n",
			MAX_ROWS);
		goto out;
	}
	nres = 2 + nrows * ns;
	if (!(res = shared_alloc(nres * sizeof(*res)))) {
		fprintf(stderr, "cxltier-replay: out of memory\n");
		goto out;
	}
	if (setup_runs(a, path, t, &sc, &in))
		goto out;
	o->progress = isatty(2) && !o->json;
	snprintf(res[0].name, sizeof(res[0].name), "oracle");
	snprintf(res[1].name, sizeof(res[1].name), "none");
	for (int i = 0; i < nrows * ns; i++) {
		snprintf(res[2 + i].name, sizeof(res[2 + i].name), "%s", rows[i / ns].label);
		res[2 + i].row = &rows[i / ns];
		res[2 + i].sampler = a->nsamplers ? a->samplers[i % ns].label : NULL;
	}
	/* Per-epoch ratios are for the plot only: memory by time span otherwise stays nil. */
	if (o->plot_dir) {
		ratios_size = nres * in.nr_epochs * sizeof(double);
		if (!(ratios = shared_alloc(ratios_size)))
			goto nomem;
		for (int i = 0; i < nres; i++)
			res[i].epoch_ratio = ratios + i * in.nr_epochs;
		in.heat_w = in.nr_epochs < 200 ? (uint32_t)in.nr_epochs : 200;
		in.heat_h = 128;
		heat = in.heat_bins = calloc((size_t)in.heat_w * in.heat_h, sizeof(*heat));
		if (!heat)
			goto nomem;
	}
	in.oracle = &res[0];
	t0 = now_sec();
	if (run_policy(&in, &res[1]))
		goto out;
	in.oracle = NULL;
	in.heat_bins = NULL;
	for (int i = 0; i < nrows * ns; i++) {
		int r;

		in.sampler = a->nsamplers ? &a->samplers[i % ns] : NULL;
		r = run_isolated(&in, &rows[i / ns], a->policy_dir, a->decide_limit_ms, &res[2 + i]);
		if (r < 0)
			goto out;
		failed += r;
	}
	if (o->timing) {
		double epochs = 0, isolate = 0, fork = 0;

		for (int i = 2; i < nres; i++) {
			epochs += res[i].epochs;
			isolate += res[i].isolate_ms;
			fork += res[i].fork_ms;
		}
		double secs = now_sec() - t0;

		/* A record of weight w stands for w samples (a capture's: w accesses). */
		fprintf(stderr, "replayed %llu samples x %d runs in %.2f s: %.1f M samples/s "
			"(%llu weighted: %.1f M weighted samples/s)\n",
			(unsigned long long)t->nr_samples, nres - 1, secs,
			t->nr_samples * (nres - 1) / secs / 1e6, (unsigned long long)sc.accesses,
			(double)sc.accesses * (nres - 1) / secs / 1e6);
		fprintf(stderr, "isolation: %.3f ms per epoch (view and plan copies, time limit), %.1f ms per row (child process)\n",
			epochs ? isolate / epochs : 0, nres > 2 ? fork / (nres - 2) : 0);
	}
	rc = 0;
	if (o->json_out) {
		FILE *f = fopen(o->json_out, "w");

		if (!f) {
			fprintf(stderr, "cxltier-replay: cannot write %s: %s\n", o->json_out, strerror(errno));
			rc = 1;
		} else {
			print_json(f, o, &sc, in.fast_cap, res, nres);
			rc = close_output(f, o->json_out);
		}
	}
	if (o->json)
		print_json(stdout, o, &sc, in.fast_cap, res, nres);
	else {
		if (o->start == START_TRACE)
			printf("start: as recorded, %llu resident pages in %llu runs\n",
			       (unsigned long long)sc.run_pages, (unsigned long long)sc.runs);
		if (sc.nr_huge)
			printf("huge pages: %llu of 2 MiB, each placed and moved whole\n",
			       (unsigned long long)sc.nr_huge);
		print_table(o, &sc, in.fast_cap, res, nres);
	}
	errno = 0;
	rc = close_output(stdout, "standard output") || rc;
	if (!rc && o->plot_dir)
		rc = write_plots(o->plot_dir, res, nres, heat, in.heat_w, in.heat_h);
	if (!rc && failed)
		rc = 1;
	goto out;
nomem:
	fprintf(stderr, "cxltier-replay: %s: out of memory for the plots of %llu epochs\n", path,
		(unsigned long long)in.nr_epochs);
out:
	if (ratios)
		munmap(ratios, ratios_size);
	if (res)
		munmap(res, nres * sizeof(*res));
	free_rows(rows, nrows);
	free(heat);
	trace_scan__free(&sc);
	return rc;
}

int main(int argc, char **argv)
{
	struct args a = {
		.time_scale = 1,
		.o = { .fast_ratio = 0.25, .epoch_ms = 1000, .fast_ns = 100, .slow_ns = 250,
		       .migrate_ns = 2000, .decay = 0.5, .sampler_seed = 1 },
		.so = { .pages = 32768, .epochs = 60, .samples = 500000, .seed = 1, .alpha = 0.99,
			.hot = 0.1, .hot_share = 0.9, .shift_every = 10 },
	};
	struct agent_config cfg;
	struct mover_opts mo;
	const char *path;
	char msg[256];
	struct trace t;
	int rc, npol;

	/* The mover's settings are the agent's own defaults: one place, mover.c. */
	mover__default_opts(&mo);
	a.o.rate_mbps = mo.rate_mbps;
	a.o.low_pct = mo.low_wmark_pct;
	a.o.high_pct = mo.high_wmark_pct;
	a.o.pingpong_epochs = mo.pingpong_epochs;
	a.o.pingpong_window = mo.pingpong_epochs;
	/* The hint sampler's period is the agent's: one place, config.c. */
	if (config__defaults(&cfg)) {
		fprintf(stderr, "cxltier-replay: out of memory\n");
		return 1;
	}
	a.o.hint_period_ms = cfg.hint_period_ms;
	config__free(&cfg);

	default_policy_dir(a.policy_dir, sizeof(a.policy_dir));
	if ((rc = parse_args(&a, argc, argv)) >= 0)
		return rc;
	if (a.so.kind)
		return synth(&a.so, &a.o, a.out) ? 1 : 0;
	if (a.policy_help)
		return policy_help(&a, argv + optind, argc - optind);
	if (optind >= argc)
		return usage_error("no trace given%s", "");
	path = argv[optind];
	if (trace__open(&t, path, msg, sizeof(msg))) {
		fprintf(stderr, "cxltier-replay: %s: %s\n", path, msg);
		return 1;
	}
	t.time_scale = a.time_scale;
	npol = argc - optind - 1;
	if (a.to_csv && a.nsamplers) {
		rc = sampled_csv(&a, path, &t);
	} else if (a.to_csv) {
		rc = to_csv(path, &t, a.out);
	} else if (!t.nr_samples) {
		fprintf(stderr, "cxltier-replay: %s: the trace holds no samples\n", path);
		rc = 1;
	} else if (npol < 1) {
		rc = usage_error("no policy given (e.g. hotset, or a path to a .so)%s", "");
	} else if (npol > MAX_POLICIES) {
		rc = usage_error("too many policies (at most %s)", "16");
	} else {
		rc = replay(&a, path, &t, argv + optind + 1, npol);
	}
	trace__close(&t);
	return rc;
}
