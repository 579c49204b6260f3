// SPDX-License-Identifier: MIT
/*
 * cxltierctl: talks to the running agent over its control socket (status,
 * top, targets, pause/resume, rate, policy, metrics) and reads the sampler
 * counters straight from the pinned per-CPU stats map.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <termios.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "sampler.h"
#include "status.h"
#include "util.h"

static const char usage_head[] =
"Usage: cxltierctl [OPTIONS] COMMAND [ARGS]\n"
"\n"
"Talks to the running cxltierd over its control socket (root only).\n"
"\n"
"Commands:\n";

static const char usage_tail[] =
"\n"
"Options:\n"
"  -j, --json           machine-readable output\n"
"      --run-dir DIR    where the agent publishes its status (default " CXLT_RUN_DIR ")\n"
"      --pin-dir DIR    where the agent pins its maps (default " CXLT_PIN_DIR ")\n"
"  -h, --help           this text\n"
"\n"
"EXAMPLES\n"
"  sudo cxltierctl status\n"
"  sudo cxltierctl top\n"
"  sudo cxltierctl policy hotcold promote_heat=2\n"
"  sudo cxltierctl rate 128\n"
"  sudo cxltierctl status --json | jq '.targets[] | {pid, pages_fast, pages_slow}'\n"
"  sudo bpftool map dump pinned " CXLT_PIN_DIR "/cxlt_heat   # raw heat map\n";

/* The agent's requests from its table, and top, which is this client's own. */
static void usage(FILE *f)
{
	fputs(usage_head, f);
	for (int i = 0; i < CTL_NR_CMDS; i++) {
		const struct control_command *c = &control__commands[i];
		char words[64];

		snprintf(words, sizeof(words), "%s%s%s", c->name, *c->args ? " " : "", c->args);
		/* A long synopsis gets a line of its own. */
		if (strlen(words) > 20)
			fprintf(f, "  %s\n  %-20s %s\n", words, "", c->help);
		else
			fprintf(f, "  %-20s %s\n", words, c->help);
		if (c->cmd == CTL_STATUS)
			fprintf(f, "  %-20s %s\n", "top", "status, refreshed every second (q or Ctrl-C quits)");
	}
	fputs(usage_tail, f);
}

/*
 * Every string of a reply is printed through here: names come from the
 * processes the agent manages (a comm can hold escape sequences), and the
 * reply itself is not trusted to be the shape this client expects.  A ring
 * of buffers lets one printf take several.
 */
static const char *safe(const char *s)
{
	static char ring[16][1024];
	static unsigned next;

	return str_escape(s, ring[next++ % ARRAY_SIZE(ring)], sizeof(ring[0]));
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v;

	/* json-c answers false for a non-object: any shape is safe to ask. */
	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* Only a member of that type, or NULL: json-c aborts on an array call on a non-array. */
static struct json_object *get_typed(struct json_object *o, const char *key, enum json_type type)
{
	struct json_object *v = get(o, key);

	return json_object_is_type(v, type) ? v : NULL;
}

#define get_obj(o, key) get_typed(o, key, json_type_object)
#define get_arr(o, key) get_typed(o, key, json_type_array)

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	if (!v || json_object_is_type(v, json_type_object) || json_object_is_type(v, json_type_array))
		return "?";
	return safe(json_object_get_string(v));
}

static uint64_t get_u64(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return json_object_is_type(v, json_type_int) ? json_object_get_uint64(v) : 0;
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
	struct json_object *agent = get_obj(st, "agent"), *sampler = get_obj(st, "sampler"),
			   *policy = get_obj(st, "policy"), *nodes = get_arr(st, "nodes"),
			   *targets = get_arr(st, "targets"), *mover = get_obj(st, "mover"),
			   *params = get_obj(policy, "params"), *counters = pinned ? pinned : sampler;
	char a[32], b[32];

	printf("cxltierd pid %s, up %.0f s, epoch %s of %s ms, mode %s (%s)\n",
	       get_str(agent, "pid"),
	       difftime(time(NULL), (time_t)json_object_get_double(get(agent, "started"))),
	       get_str(agent, "epoch"), get_str(agent, "epoch_ms"), get_str(agent, "mode"),
	       get_str(agent, "mode_why"));
	printf("sampler: %s — %s\n", get_str(sampler, "source"), get_str(sampler, "why"));
	if (get_obj(sampler, "damon")) {
		struct json_object *d = get_obj(sampler, "damon");

		printf("damon:   kdamond pid %s (%s, %s), %s regions seen, %s pages sampled\n",
		       get_str(d, "kdamond_pid"), get_str(d, "operations"),
		       strcmp(get_str(d, "owner"), "agent") ? "someone else's, observed only" : "ours",
		       get_str(d, "regions_seen"), get_str(d, "pages_sampled"));
	}
	if (get_obj(sampler, "hint")) {
		struct json_object *h = get_obj(sampler, "hint");

		printf("hint:    %.0f faults/s of a %.0f budget; fast-tier pages %s, %.0f%% of epochs; %lld passes in debt for hot pages waiting on slow memory\n",
		       json_object_get_double(get(h, "faults_per_sec")),
		       json_object_get_double(get(h, "budget_faults_per_sec")),
		       json_object_get_boolean(get(h, "fast_tier_marked")) ? "marked" :
		       "not marked (over budget)",
		       100 * json_object_get_double(get(h, "open_share")),
		       (long long)json_object_get_int64(get(h, "starved_wakes")));
	}
	printf("policy:  %s (%s)", get_str(policy, "name"), get_str(policy, "path"));
	if (params) {
		json_object_object_foreach(params, k, v)
			printf(" %s=%s", safe(k), safe(json_object_get_string(v)));
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
	printf("\n%-8s %-16s %10s %10s %10s %10s %10s %10s %10s %10s\n", "PID", "COMM", "TRACKED",
	       "SAMPLED", "FAST", "SLOW", "UNSEEN", "SAMPLES", "PROMOTED", "DEMOTED");
	for (size_t i = 0; targets && i < json_object_array_length(targets); i++) {
		struct json_object *t = json_object_array_get_idx(targets, i);

		char fast[48];

		/* Beside its cap when it has a share: "FAST/CAP". */
		snprintf(fast, sizeof(fast), "%s%s%s", get_str(t, "pages_fast"),
			 get(t, "fast_cap_pages") ? "/" : "",
			 get(t, "fast_cap_pages") ? get_str(t, "fast_cap_pages") : "");
		printf("%-8s %-16s %10s %10s %10s %10s %10s %10s %10s %10s\n", get_str(t, "pid"),
		       get_str(t, "comm"), get_str(t, "pages_tracked"), get_str(t, "pages_sampled"),
		       fast, get_str(t, "pages_slow"), get_str(t, "unseen_pages"),
		       get_str(t, "samples"), get_str(t, "promoted"), get_str(t, "demoted"));
	}
	/* Memory the source cannot see (issue 18): why, and what would see it. */
	for (size_t i = 0; targets && i < json_object_array_length(targets); i++) {
		struct json_object *t = json_object_array_get_idx(targets, i);

		if (get_u64(t, "unseen_pages"))
			printf("  pid %s: %s pages unseen: %s; %s\n", get_str(t, "pid"),
			       get_str(t, "unseen_pages"), get_str(t, "unseen_reason"),
			       get_str(t, "unseen_suggestion"));
	}
	printf("\nsampler counters (pinned %s):\n", pinned ? "map" : "map not found, from status");
	if (counters) {
		json_object_object_foreach(counters, k, v) {
			if (json_object_is_type(v, json_type_int))
				printf("  %-20s %s\n", safe(k), json_object_get_string(v));
		}
	}
	printf("\nkernel migrations since the agent started (move_pages counts as syscall):\n");
	if (get_obj(st, "kernel_migrations")) {
		struct json_object *km = get_obj(st, "kernel_migrations");

		if (!json_object_object_length(km))
			printf("  none\n");
		json_object_object_foreach(km, k3, v3)
			printf("  %-20s %s pages, %s failed\n", safe(k3), get_str(v3, "pages"),
			       get_str(v3, "failed"));
	}
	printf("\nmover counters:\n");
	if (mover) {
		json_object_object_foreach(mover, k2, v2)
			if (json_object_is_type(v2, json_type_int) && json_object_get_uint64(v2))
				printf("  %-20s %s\n", safe(k2), json_object_get_string(v2));
	}
}

#define REPLY_MAX (64 << 20)

/* One request over the control socket; the reply in a malloc'd string. */
static char *request(const char *run_dir, const char *line)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/" CONTROL_SOCKET, run_dir);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "cxltierctl: no running cxltierd to talk to (%s: %s)\n", sa.sun_path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	/* One send, no SIGPIPE: an agent that answers and closes early is not a crash. */
	char msg[CONTROL_MAX_LINE + 2];

	snprintf(msg, sizeof(msg), "%s\n", line);
	if (send(fd, msg, strlen(msg), MSG_NOSIGNAL) < 0 && errno != EPIPE) {
		fprintf(stderr, "cxltierctl: cannot send to %s: %s\n", sa.sun_path, strerror(errno));
		close(fd);
		return NULL;
	}
	/* A stuck or runaway agent gets an error, not a hung or swapping client. */
	struct timeval tv = { .tv_sec = 10 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	do {
		if (len + 4096 + 1 > cap) {
			if (cap >= REPLY_MAX) {
				fprintf(stderr, "cxltierctl: the agent's reply is over %d MiB: refused\n",
					REPLY_MAX >> 20);
				free(buf);
				close(fd);
				return NULL;
			}
			char *nb = realloc(buf, cap = cap ? cap * 2 : 65536);

			if (!nb) {
				free(buf);
				close(fd);
				return NULL;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n > 0)
			len += n;
	} while (n > 0);
	if (n < 0) {
		fprintf(stderr, "cxltierctl: no reply from %s: %s\n", sa.sun_path, strerror(errno));
		free(buf);
		close(fd);
		return NULL;
	}
	close(fd);
	if (!buf)
		return NULL;
	buf[len] = '\0';
	return buf;
}

/*
 * Prints a JSON reply's error, if it is one; returns the exit status.  A
 * reply of another shape than `want` (an old or foreign agent, a corrupt
 * reply) is an error too, said plainly, never an abort in json-c.
 */
static int check_reply(struct json_object *o, enum json_type want, const char *what)
{
	struct json_object *ok;

	if (!json_object_is_type(o, json_type_object) && !json_object_is_type(o, want)) {
		fprintf(stderr, "cxltierctl: the agent's reply is not %s (a JSON %s, not %s)\n", what,
			json_type_to_name(want), json_type_to_name(json_object_get_type(o)));
		return 1;
	}
	if (json_object_object_get_ex(o, "ok", &ok) && !json_object_get_boolean(ok)) {
		fprintf(stderr, "cxltierctl: %s\n", get_str(o, "error"));
		return 1;
	}
	return 0;
}

static int cmd_status(const char *run_dir, const char *pin_dir, bool json, bool clear)
{
	struct json_object *st, *pinned;
	char *reply = request(run_dir, "status");

	if (!reply)
		return 1;
	st = json_tokener_parse(reply);
	free(reply);
	if (!st) {
		fprintf(stderr, "cxltierctl: the agent's reply is not JSON\n");
		return 1;
	}
	if (check_reply(st, json_type_object, "a status document") ||
	    !get_obj(st, "agent")) {
		if (json_object_is_type(st, json_type_object) && !get(st, "error"))
			fprintf(stderr, "cxltierctl: the agent's reply is not a status document (no \"agent\" object)\n");
		json_object_put(st);
		return 1;
	}
	pinned = pinned_stats(pin_dir);
	if (clear)
		printf("\033[H\033[2J");
	if (json) {
		if (pinned)
			json_object_object_add(st, "sampler_pinned", json_object_get(pinned));
		puts(json_object_to_json_string_ext(st, JSON_C_TO_STRING_PRETTY |
							JSON_C_TO_STRING_NOSLASHESCAPE));
	} else {
		print_text(st, pinned);
	}
	fflush(stdout);
	json_object_put(pinned);
	json_object_put(st);
	return 0;
}

/* A live view: status every second until q, Ctrl-C or the agent goes away. */
static int cmd_top(const char *run_dir, const char *pin_dir)
{
	struct termios old, raw;
	bool tty = isatty(0) && !tcgetattr(0, &old);
	int rc = 0;

	if (tty) {
		raw = old;
		raw.c_lflag &= ~(ICANON | ECHO);
		tcsetattr(0, TCSANOW, &raw);
	}
	for (;;) {
		struct pollfd pfd = { .fd = 0, .events = POLLIN };
		char c;

		if ((rc = cmd_status(run_dir, pin_dir, false, true)))
			break;
		printf("\n(refreshing every second; q quits)\n");
		fflush(stdout);
		if (poll(&pfd, 1, 1000) > 0 && (read(0, &c, 1) <= 0 || c == 'q'))
			break;
	}
	if (tty)
		tcsetattr(0, TCSANOW, &old);
	return rc;
}

/* The other commands: one request, print the reply. */
static int cmd_simple(const char *run_dir, const struct control_command *c, int argc, char **argv,
		      bool json)
{
	char line[CONTROL_MAX_LINE + 1] = "";
	struct json_object *o;
	char *reply;
	int rc;

	for (int i = 0; i < argc; i++) {
		if (strlen(line) + strlen(argv[i]) + 2 > sizeof(line)) {
			fprintf(stderr, "cxltierctl: request too long\n");
			return 2;
		}
		if (i)
			strcat(line, " ");
		strcat(line, argv[i]);
	}
	reply = request(run_dir, line);
	if (!reply)
		return 1;
	if (c->reply == CTL_REPLY_TEXT) {
		/* Text lines as they come; any other byte escaped, as str_escape does. */
		for (const unsigned char *p = (const unsigned char *)reply; *p; p++) {
			if (*p == '\n' || (*p >= 0x20 && *p <= 0x7e))
				putchar(*p);
			else
				printf("\\x%02x", *p);
		}
		free(reply);
		return 0;
	}
	o = json_tokener_parse(reply);
	free(reply);
	if (!o) {
		fprintf(stderr, "cxltierctl: the agent's reply is not JSON\n");
		return 1;
	}
	rc = check_reply(o, c->reply == CTL_REPLY_ARRAY ? json_type_array : json_type_object,
			 c->reply == CTL_REPLY_ARRAY ? "a list" : "an answer");
	if (!rc) {
		if (json || !json_object_object_get_ex(o, "done", NULL))
			puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
		else
			printf("%s\n", get_str(o, "done"));
	}
	json_object_put(o);
	return rc;
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
	const struct control_command *c;
	const char *run_dir = CXLT_RUN_DIR, *pin_dir = CXLT_PIN_DIR;
	bool json = false;
	int opt;

	while ((opt = getopt_long(argc, argv, "+jh", opts, NULL)) != -1) {
		switch (opt) {
		case 'j': json = true; break;
		case 'R': run_dir = optarg; break;
		case 'B': pin_dir = optarg; break;
		case 'h': usage(stdout); return 0;
		default: fprintf(stderr, "Try 'cxltierctl --help'.\n"); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	/* Options may also follow the command (cxltierctl status --json). */
	for (int i = optind + 1; i < argc; i++)
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j")) {
			json = true;
			memmove(&argv[i], &argv[i + 1], (argc - i - 1) * sizeof(*argv));
			argc--;
			i--;
		}
	if (!strcmp(argv[optind], "status"))
		return cmd_status(run_dir, pin_dir, json, false);
	if (!strcmp(argv[optind], "top"))
		return cmd_top(run_dir, pin_dir);
	if ((c = control__command(argv[optind])))
		return cmd_simple(run_dir, c, argc - optind, argv + optind, json);
	fprintf(stderr, "cxltierctl: unknown command '%s'\nTry 'cxltierctl --help'.\n", argv[optind]);
	return 2;
}
