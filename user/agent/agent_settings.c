// SPDX-License-Identifier: MIT
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_settings.h"
#include "sampler.h"
#include "status.h"
#include "topology.h"
#include "util.h"

static const char usage_text[] =
"Usage: cxltierd [OPTIONS] TARGET...\n"
"\n"
"Keeps the hot pages of the target processes in fast memory (DRAM) and their\n"
"cold pages in slow memory (CXL): BPF samplers count page accesses, a policy\n"
"decides, and move_pages(2) moves the pages. Runs as root.\n"
"\n"
"Targets (at least one; each may repeat):\n"
"  -p, --pid PID            a process (dropped when it exits)\n"
"  -c, --comm NAME          every process with this command name, also new ones\n"
"  -g, --cgroup PATH        every process in this cgroup v2 directory\n"
"      --target-user LIST   comm and cgroup adopt only processes of these users\n"
"                           (names or ids, comma list; default: any user's)\n"
"      --fast-share LIST    caps of fast memory by command name, such as\n"
"                           redis:60%,memcached:30% (default: none, all targets'\n"
"                           memory ranked on one scale)\n"
"\n"
"Policy:\n"
"  -P, --policy NAME|PATH   policy to run (default hotset); a bare NAME is\n"
"                           looked up in the policy directory\n"
"      --policy-dir DIR     where bare policy names live (default: the\n"
"                           policies/ folder beside this binary)\n"
"  -o, --param KEY=VALUE    a policy parameter (repeat); see --policy-help\n"
"      --policy-help        print the policy's parameters and exit\n"
"      --decide-limit-ms MS the longest a decision may take (default: one epoch);\n"
"                           a policy that overruns it, crashes or makes a system\n"
"                           call policies may not make is stopped: no page\n"
"                           moves until a reload or another policy\n"
"\n"
"Sampling and tracking:\n"
"  -s, --source SRC         auto (default: pmu, else our own DAMON vaddr kdamond\n"
"                           when no one else uses DAMON, else hint where the\n"
"                           kernel has NUMA balancing, else fault; for targets\n"
"                           under bind/preferred, which hint cannot see, a\n"
"                           running paddr kdamond before hint), pmu, hint,\n"
"                           fault, fault-perf, or several with weights:\n"
"                           pmu:4,hint:1; or damon (observes a running paddr\n"
"                           kdamond, or starts our own when none is set up),\n"
"                           damon-vaddr or damon-paddr (our own only, that kind);\n"
"                           or soft-dirty (pages written, from the soft-dirty\n"
"                           bits: any memory policy, not reads; 6.7+)\n"
"  -e, --epoch-ms MS        epoch length (default 1000); with source hint the\n"
"                           epochs follow the scanner's passes, each 1/2 to 1\n"
"                           length after the last\n"
"      --decay F            heat decay per epoch, 0..1 (default 0.5)\n"
"      --scan-epochs N      start a sweep of a target's resident memory at most\n"
"                           every N epochs (default 5); a sweep goes on a bounded\n"
"                           slice an epoch\n"
"      --tracker-mb MB      the tracker's memory budget: per-page detail beyond\n"
"                           it folds into 2 MiB regions (default 128)\n"
"      --heat-entries N     capacity of the BPF heat map (default: RAM pages / 16,\n"
"                           at least 16384, at most 262144; ~80 bytes each)\n"
"      --hint-period-ms MS  source hint: longest period of the kernel's NUMA\n"
"                           scanner, i.e. how often a page can report (default 1000)\n"
"      --hint-cpu PCT       source hint: CPU the hint faults may cost, in percent of\n"
"                           one core (default 1; about 5000 faults/s); over it the\n"
"                           kernel marks only slow-tier pages until credit returns\n"
"\n"
"Topology:\n"
"      --fast-nodes LIST    fast (DRAM) nodes, numactl syntax: 0-1,4\n"
"      --slow-nodes LIST    slow (CXL) nodes; default: CPU-less or lower-tier nodes\n"
"      --sysfs-root DIR     read sysfs under DIR (tests)\n"
"\n"
"Mover:\n"
"  -r, --rate MBPS          migration budget in MiB/s (default 256)\n"
"      --batch N            pages per move_pages call (default 1024, min 1)\n"
"      --low-wmark PCT      free fast memory under PCT% of its size: demote\n"
"                           first, promote nothing (default 2)\n"
"      --high-wmark PCT     demote until free fast memory is over PCT% (default 5)\n"
"      --pingpong-epochs N  a moved page is not moved again for N epochs (default 10)\n"
"      --keep-huge          promote huge pages whole; by default one is split\n"
"                           first so that its cold pages stay on the slow tier\n"
"      --observe            sample and report, never move a page\n"
"      --record FILE        also write every raw sample to FILE, a trace for\n"
"                           cxltier-replay (ring-buffer drops are counted)\n"
"      --ring-kb KIB        the recording ring buffer, a power of 2 (default 4096)\n"
"\n"
"Configuration:\n"
"      --config FILE        read settings from an INI file first (flags win);\n"
"                           the unit uses " CXLT_CONFIG_PATH "\n"
"      --check-config       validate the file and flags (and load the policy),\n"
"                           print the effective configuration, exit\n"
"\n"
"Run:\n"
"  -d, --duration SEC       stop after SEC seconds (default: until SIGINT/SIGTERM)\n"
"      --pin-dir DIR        where maps and programs are pinned (default " CXLT_PIN_DIR ")\n"
"      --run-dir DIR        status and lock files (default " CXLT_RUN_DIR ")\n"
"      --keep-pins          leave the pins in place at exit\n"
"      --metrics-port PORT  serve Prometheus metrics at http://ADDR:PORT/metrics\n"
"      --metrics-addr ADDR  address for --metrics-port (default 127.0.0.1)\n"
"      --metrics-textfile DIR  write the metrics to DIR/cxltier.prom each epoch\n"
"                           (node_exporter's textfile collector; no port)\n"
"      --take-over          run even if the kernel's own memory tiering is on\n"
"                           (kernel.numa_balancing & 2), restoring it at exit\n"
"  -v, --verbose            more log: debug lines, each stamped with the seconds\n"
"                           since the first (twice: libbpf's too)\n"
"  -q, --quiet              errors and warnings only\n"
"  -h, --help               this text\n"
"\n"
"EXAMPLES\n"
"  sudo cxltierd --pid $(pidof tierbench) --duration 10\n"
"  sudo cxltierd --comm redis-server --policy hotcold -o promote_heat=2 -o demote_idle=120\n"
"  sudo cxltierd --pid 1234 -o headroom=0.05     # hotset with more free DRAM kept\n"
"  sudo cxltierd --cgroup /sys/fs/cgroup/app.slice --fast-nodes 0 --slow-nodes 2 --rate 512\n"
"  cxltierd --policy hotset --policy-help\n"
"  sudo cxltierctl status       # what the running agent sees and did\n";

static void usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "cxltierd: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'cxltierd --help'.\n");
	exit(2);
}

/* Flags that are not settings: what to do with the settings, and the log. */
enum { OPT_CONFIG = 0x100, OPT_CHECK_CONFIG, OPT_POLICY_HELP };

/*
 * Defaults, then the --config file, then the flags, each flag through the
 * key it sets (config__set_option), so a flag and its key accept the same.
 * Called again on SIGHUP: the flags still win over the edited file.
 * Exits 2 on a bad flag or file unless reloading (then -EINVAL, message in err).
 */
int read_settings(int argc, char **argv, struct config *c, bool reloading, char *err,
			 size_t errlen)
{
	static const struct option own[] = {
		{ "param", required_argument, NULL, 'o' },
		{ "policy-help", no_argument, NULL, OPT_POLICY_HELP },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
	};
	struct option opts[64];
	char letters[64] = "o:vqh", why[512];
	int n, opt;

	/* The file goes first whatever its place on the command line. */
	c->config_path = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			c->config_path = argv[i + 1];
		else if (!strncmp(argv[i], "--config=", 9))
			c->config_path = argv[i] + 9;
	}
	if (config__defaults(&c->k))
		return -ENOMEM;
	if (c->config_path && config__load(&c->k, c->config_path, err, errlen)) {
		config__free(&c->k);
		if (reloading)
			return -EINVAL;
		fprintf(stderr, "cxltierd: %s\n", err);
		exit(2);
	}
	n = config__options(opts, ARRAY_SIZE(opts) - ARRAY_SIZE(own) - 1, letters, sizeof(letters));
	memcpy(opts + n, own, sizeof(own));
	memset(&opts[n + ARRAY_SIZE(own)], 0, sizeof(opts[0]));
	optind = 0; /* glibc: start over (SIGHUP reads the flags again) */
	opterr = !reloading;
	while ((opt = getopt_long(argc, argv, letters, opts, NULL)) != -1) {
		switch (opt) {
		case 'o': {
			char key[128];
			const char *eq = strchr(optarg, '=');

			if (!eq || eq == optarg || (size_t)(eq - optarg) >= sizeof(key))
				usage_error("--param '%s': expected KEY=VALUE", optarg);
			snprintf(key, sizeof(key), "%.*s", (int)(eq - optarg), optarg);
			if (config__set(&c->k, "policy", key, eq + 1, why, sizeof(why))) {
				fprintf(stderr, "cxltierd: --param '%s': %s\n", optarg, why);
				exit(2);
			}
			break;
		}
		case OPT_POLICY_HELP: c->policy_help = true; break;
		case OPT_CONFIG: break;
		case OPT_CHECK_CONFIG: c->check_config = true; break;
		case 'v': c->k.log_level++; break;
		case 'q': c->k.log_level = LOG_WARN; break;
		case 'h': fputs(usage_text, stdout); exit(0);
		case '?': fprintf(stderr, "Try 'cxltierd --help'.\n"); exit(2);
		default:
			if (config__set_option(&c->k, opt, optarg, why, sizeof(why))) {
				fprintf(stderr, "cxltierd: %s\n", why);
				fprintf(stderr, "Try 'cxltierd --help'.\n");
				exit(2);
			}
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s' (targets are given with --pid, --comm or --cgroup)",
			    argv[optind]);
	if (config__check(&c->k, err, errlen)) {
		if (reloading) {
			config__free(&c->k);
			return -EINVAL;
		}
		fprintf(stderr, "cxltierd: %s\nTry 'cxltierd --help'.\n", err);
		exit(2);
	}
	if (!c->policy_help && !c->check_config && !c->k.nr_pids && !c->k.nr_comms &&
	    !c->k.nr_cgroups)
		usage_error("no target: give at least one --pid, --comm or --cgroup%s", "");
	return 0;
}

/* The target specs point into the settings' strings. */
void fill_specs(struct config *c)
{
	struct target_specs *ts = &c->specs;

	memset(ts, 0, sizeof(*ts));
	memcpy(ts->pids, c->k.pids, c->k.nr_pids * sizeof(ts->pids[0]));
	ts->nr_pids = c->k.nr_pids;
	for (int i = 0; i < c->k.nr_comms; i++)
		ts->comms[ts->nr_comms++] = c->k.comms[i];
	for (int i = 0; i < c->k.nr_cgroups; i++)
		ts->cgroups[ts->nr_cgroups++] = c->k.cgroups[i];
}

/* Bytes a heat map entry costs in the kernel (key, value, LRU and hash overhead). */
#define HEAT_ENTRY_BYTES 80

/*
 * Every check a start makes before it changes anything, in one place: what
 * --check-config calls valid is what starts (the unit runs it before each
 * reload).  Reads sysfs and /proc, changes nothing; logs each reason.
 */
int preflight(struct config *c)
{
	struct topology topo;
	uint64_t ram = 0;
	int err;

	if ((err = sampler__check_source(c->k.source)))
		return err;
	if ((err = topology__load(&topo, c->k.sysfs_root, c->k.fast_nodes, c->k.slow_nodes)))
		return err;
	for (int i = 0; i < topo.nr_nodes; i++)
		ram += topo.nodes[i].total_pages * (uint64_t)topo.page_size;
	if (c->k.heat_entries && (uint64_t)c->k.heat_entries * HEAT_ENTRY_BYTES > ram / 4) {
		pr_err("--heat-entries %u: the heat map would take %llu MiB, more than a quarter of this machine's %llu MiB",
		       c->k.heat_entries,
		       (unsigned long long)((uint64_t)c->k.heat_entries * HEAT_ENTRY_BYTES >> 20),
		       (unsigned long long)(ram >> 20));
		return -EINVAL;
	}
	if (c->k.target_user && (err = targets__parse_users(&c->specs, c->k.target_user)))
		return err;
	return targets__init(&c->specs, NULL);
}

