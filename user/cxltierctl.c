// SPDX-License-Identifier: MIT
/*
 * cxltierctl: shows what the running agent sees and did.  It reads the
 * status the agent publishes (RUN_DIR/status.json) and the sampler counters
 * straight from the pinned per-CPU stats map.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sampler.h"
#include "status.h"
#include "util.h"

static const char usage_text[] =
"Usage: cxltierctl [OPTIONS] COMMAND\n"
"\n"
"Commands:\n"
"  status        nodes, sampler, policy, per-target placement and counters\n"
"\n"
"Options:\n"
"  -j, --json           machine-readable output\n"
"      --run-dir DIR    where the agent publishes its status (default " CXLT_RUN_DIR ")\n"
"      --pin-dir DIR    where the agent pins its maps (default " CXLT_PIN_DIR ")\n"
"  -h, --help           this text\n"
"\n"
"EXAMPLES\n"
"  sudo cxltierctl status\n"
"  sudo cxltierctl status --json | jq '.targets[] | {pid, pages_fast, pages_slow}'\n"
"  sudo bpftool map dump pinned " CXLT_PIN_DIR "/cxlt_heat   # raw heat map\n";

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "?";
}

static uint64_t get_u64(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_uint64(v) : 0;
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *human(uint64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = bytes;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
	return buf;
}

/* Sampler counters from the pinned map: present even if status.json lags. */
static struct json_object *pinned_stats(const char *pin_dir)
{
	uint64_t stats[CXLT_NR_STATS];
	struct json_object *o;
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/cxlt_stats", pin_dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return NULL;
	if (sampler__read_stats(fd, stats)) {
		close(fd);
		return NULL;
	}
	close(fd);
	o = json_object_new_object();
	for (int i = 0; i < CXLT_NR_STATS; i++)
		json_object_object_add(o, cxlt_stat_names[i], json_object_new_uint64(stats[i]));
	return o;
}

static void print_text(struct json_object *st, struct json_object *pinned)
{
	struct json_object *agent = get(st, "agent"), *sampler = get(st, "sampler"),
			   *policy = get(st, "policy"), *nodes = get(st, "nodes"),
			   *targets = get(st, "targets"), *mover = get(st, "mover"),
			   *params = policy ? get(policy, "params") : NULL;
	char a[32], b[32];

	printf("cxltierd pid %s, up %.0f s, epoch %s of %s ms, mode %s (%s)\n",
	       get_str(agent, "pid"),
	       difftime(time(NULL), (time_t)json_object_get_double(get(agent, "started"))),
	       get_str(agent, "epoch"), get_str(agent, "epoch_ms"), get_str(agent, "mode"),
	       get_str(agent, "mode_why"));
	printf("sampler: %s — %s\n", get_str(sampler, "source"), get_str(sampler, "why"));
	printf("policy:  %s (%s)", get_str(policy, "name"), get_str(policy, "path"));
	if (params) {
		json_object_object_foreach(params, k, v)
			printf(" %s=%s", k, json_object_get_string(v));
	}
	printf("; last plan %s moves\n", get_str(policy, "last_plan"));
	printf("tracker: %s pages in %s\n\n", get_str(agent, "tracked_pages"),
	       human(get_u64(agent, "tracker_bytes"), a, sizeof(a)));

	printf("%-5s %-5s %-5s %-5s %12s %12s\n", "NODE", "ROLE", "TIER", "CPUS", "TOTAL", "FREE");
	for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++) {
		struct json_object *n = json_object_array_get_idx(nodes, i);

		printf("%-5s %-5s %-5s %-5s %12s %12s\n", get_str(n, "id"), get_str(n, "role"),
		       get_str(n, "tier"), json_object_get_boolean(get(n, "cpus")) ? "yes" : "no",
		       human(get_u64(n, "total_bytes"), a, sizeof(a)),
		       human(get_u64(n, "free_bytes"), b, sizeof(b)));
	}
	printf("\n%-8s %-16s %10s %10s %10s %10s %10s %10s %10s\n", "PID", "COMM", "TRACKED",
	       "SAMPLED", "FAST", "SLOW", "SAMPLES", "PROMOTED", "DEMOTED");
	for (size_t i = 0; targets && i < json_object_array_length(targets); i++) {
		struct json_object *t = json_object_array_get_idx(targets, i);

		printf("%-8s %-16s %10s %10s %10s %10s %10s %10s %10s\n", get_str(t, "pid"),
		       get_str(t, "comm"), get_str(t, "pages_tracked"), get_str(t, "pages_sampled"),
		       get_str(t, "pages_fast"), get_str(t, "pages_slow"), get_str(t, "samples"),
		       get_str(t, "promoted"), get_str(t, "demoted"));
	}
	printf("\nsampler counters (pinned %s):\n", pinned ? "map" : "map not found, from status");
	json_object_object_foreach(pinned ? pinned : sampler, k, v) {
		if (json_object_is_type(v, json_type_int))
			printf("  %-20s %s\n", k, json_object_get_string(v));
	}
	printf("\nkernel migrations since the agent started (move_pages counts as syscall):\n");
	if (get(st, "kernel_migrations")) {
		struct json_object *km = get(st, "kernel_migrations");

		if (!json_object_object_length(km))
			printf("  none\n");
		json_object_object_foreach(km, k3, v3)
			printf("  %-20s %s pages, %s failed\n", k3, get_str(v3, "pages"), get_str(v3, "failed"));
	}
	printf("\nmover counters:\n");
	if (mover) {
		json_object_object_foreach(mover, k2, v2)
			if (json_object_get_uint64(v2))
				printf("  %-20s %s\n", k2, json_object_get_string(v2));
	}
}

static int cmd_status(const char *run_dir, const char *pin_dir, bool json)
{
	struct json_object *st, *pinned;
	char path[512];

	snprintf(path, sizeof(path), "%s/status.json", run_dir);
	if (access(path, F_OK)) {
		fprintf(stderr, "cxltierctl: no running cxltierd (%s: %s)\n", path, strerror(errno));
		return 1;
	}
	st = json_object_from_file(path);
	if (!st) {
		fprintf(stderr, "cxltierctl: cannot read %s: %s\n", path, json_util_get_last_err());
		return 1;
	}
	pinned = pinned_stats(pin_dir);
	if (json) {
		if (pinned)
			json_object_object_add(st, "sampler_pinned", json_object_get(pinned));
		puts(json_object_to_json_string_ext(st, JSON_C_TO_STRING_PRETTY |
							JSON_C_TO_STRING_NOSLASHESCAPE));
	} else {
		print_text(st, pinned);
	}
	json_object_put(pinned);
	json_object_put(st);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "run-dir", required_argument, NULL, 'R' },
		{ "pin-dir", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *run_dir = CXLT_RUN_DIR, *pin_dir = CXLT_PIN_DIR;
	bool json = false;
	int opt;

	while ((opt = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (opt) {
		case 'j': json = true; break;
		case 'R': run_dir = optarg; break;
		case 'B': pin_dir = optarg; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: fprintf(stderr, "Try 'cxltierctl --help'.\n"); return 2;
		}
	}
	if (optind >= argc) {
		fputs(usage_text, stderr);
		return 2;
	}
	if (!strcmp(argv[optind], "status"))
		return cmd_status(run_dir, pin_dir, json);
	fprintf(stderr, "cxltierctl: unknown command '%s'\nTry 'cxltierctl --help'.\n", argv[optind]);
	return 2;
}
