// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay.h"
#include "sources.h"
#include "util.h"

/*
 * Ends a write to f (stdout: flushed, else closed), named for messages.  A
 * write error may have been latched by any earlier flush, so ferror counts
 * as much as the last flush: no output is lost with exit status 0.
 */
int close_output(FILE *f, const char *name)
{
	int bad = ferror(f), err = errno;

	if (f == stdout ? fflush(f) : fclose(f)) {
		bad = 1;
		err = errno;
	}
	if (!bad)
		return 0;
	fprintf(stderr, "cxltier-replay: cannot write %s: %s\n", name, err ? strerror(err) : "I/O error");
	return 1;
}

void csv_header(FILE *f)
{
	fprintf(f, "time_ns,tgid,vaddr,source,weight\n");
}

void csv_sample(FILE *f, uint64_t time_ns, uint32_t tgid, uint64_t vaddr, const char *source,
		uint32_t weight)
{
	fprintf(f, "%llu,%u,0x%llx,%s,%u\n", (unsigned long long)time_ns, tgid,
		(unsigned long long)vaddr, source, weight);
}

int to_csv(const char *path, const struct trace *t, const char *out)
{
	FILE *f = out ? fopen(out, "w") : stdout;
	struct trace_cursor *c = malloc(sizeof(*c));
	const struct cxlt_sample *s;
	int rc;

	if (!f || !c) {
		fprintf(stderr, "cxltier-replay: cannot create %s: %s\n", out ? out : "the CSV",
			strerror(errno));
		if (f && f != stdout)
			fclose(f);
		free(c);
		return 1;
	}
	trace_cursor__init(c, t);
	csv_header(f);
	while ((s = trace_cursor__next(c)))
		csv_sample(f, s->time_ns, s->tgid, s->vpage * t->hdr.page_size,
			   sources__by_kind(s->source) ? sources__by_kind(s->source)->name : "?",
			   s->weight);
	errno = 0;
	rc = close_output(f, out ? out : "standard output");
	if (c->err) {
		fprintf(stderr, "cxltier-replay: %s: %s\n", path, c->msg);
		rc = 1;
	}
	free(c);
	return rc;
}

/* ---- output ---- */

static double lat(const struct model_opts *o, const struct result *r, bool with_migration)
{
	double total = r->fast_hits * o->fast_ns + (r->accesses - r->fast_hits) * o->slow_ns;

	if (with_migration)
		total += (r->promoted + r->demoted) * o->migrate_ns;
	return r->accesses ? total / r->accesses : 0;
}

void print_table(const struct model_opts *o, const struct trace_scan *sc,
		 uint64_t fast_cap, struct result *r, int n)
{
	const struct result *oracle = &r[0];
	double oracle_ratio = oracle->accesses ? (double)oracle->fast_hits / oracle->accesses : 0;

	printf("trace: %llu samples, %llu distinct pages, %llu epochs of %u ms\n",
	       (unsigned long long)sc->samples, (unsigned long long)sc->pages,
	       (unsigned long long)r[1].epochs, o->epoch_ms);
	printf("model: fast tier %llu pages (%.1f%%), access %.0f/%.0f ns, migration %.0f ns/page, budget %.0f MiB/s\n",
	       (unsigned long long)fast_cap, 100.0 * fast_cap / sc->pages, o->fast_ns, o->slow_ns,
	       o->migrate_ns, o->rate_mbps);
	int w = 14, ws = 0;
	bool hint = false;

	printf("lagged oracle (each epoch, the last epoch's hottest pages, moved for free): %.3f of the oracle\n\n",
	       oracle->fast_hits ? (double)oracle->lag_hits / oracle->fast_hits : 0);

	for (int i = 0; i < n; i++) {
		if ((int)strlen(r[i].name) > w)
			w = (int)strlen(r[i].name);
		/* A sampler column when the policies saw a sampler's samples (--sampler). */
		if (r[i].sampler && (int)strlen(r[i].sampler) > ws)
			ws = (int)strlen(r[i].sampler) > 7 ? (int)strlen(r[i].sampler) : 7;
		hint |= r[i].sampler && !strcmp(r[i].sampler, "hint");
	}
	if (ws) {
		printf("sampled: each policy sees what its sampler reports; every access is scored");
		if (hint)
			printf(" (hint: a scanner pass every %u ms)", o->hint_period_ms);
		printf("\n\n");
	}
	printf("%-*s", w, "policy");
	if (ws)
		printf(" %-*s", ws, "sampler");
	printf(" %9s %9s %9s %9s %10s %10s %10s", "fast-hit", "/oracle", "lat ns",
	       "+migr ns", "promoted", "demoted", "ping-pong");
	if (o->timing)
		printf(" %11s", "decide ms");
	printf("\n");
	for (int i = 0; i < n; i++) {
		double ratio = r[i].accesses ? (double)r[i].fast_hits / r[i].accesses : 0;

		printf("%-*s", w, r[i].name);
		if (ws)
			printf(" %-*s", ws, r[i].sampler ? r[i].sampler : "-");
		if (r[i].error[0]) {
			printf(" %s\n", r[i].error);
			continue;
		}
		printf(" %8.1f%% %9.3f %9.1f %9.1f %10llu %10llu %10llu", 100 * ratio,
		       oracle_ratio ? ratio / oracle_ratio : 0, lat(o, &r[i], false),
		       lat(o, &r[i], i > 0), (unsigned long long)r[i].promoted,
		       (unsigned long long)r[i].demoted, (unsigned long long)r[i].pingpong);
		if (o->timing)
			printf(" %11.3f", r[i].epochs ? r[i].decide_ms / r[i].epochs : 0);
		printf("\n");
	}
}

void print_json(FILE *f, const struct model_opts *o, const struct trace_scan *sc,
		uint64_t fast_cap, struct result *r, int n)
{
	struct json_object *root = json_object_new_object(), *arr = json_object_new_array();
	double oracle_ratio = r[0].accesses ? (double)r[0].fast_hits / r[0].accesses : 0;

	json_object_object_add(root, "samples", json_object_new_uint64(sc->samples));
	json_object_object_add(root, "pages", json_object_new_uint64(sc->pages));
	json_object_object_add(root, "huge_pages", json_object_new_uint64(sc->nr_huge));
	json_object_object_add(root, "epochs", json_object_new_uint64(r[1].epochs));
	json_object_object_add(root, "epoch_ms", json_object_new_int(o->epoch_ms));
	json_object_object_add(root, "fast_pages", json_object_new_uint64(fast_cap));
	json_object_object_add(root, "lagged_oracle_fast_hits", json_object_new_uint64(r[0].lag_hits));
	json_object_object_add(root, "lagged_oracle_vs_oracle",
			       json_object_new_double(r[0].fast_hits ? (double)r[0].lag_hits / r[0].fast_hits : 0));
	for (int i = 0; i < n; i++) {
		struct json_object *p = json_object_new_object();
		double ratio = r[i].accesses ? (double)r[i].fast_hits / r[i].accesses : 0;

		json_object_object_add(p, "policy", json_object_new_string(r[i].name));
		if (r[i].sampler)
			json_object_object_add(p, "sampler", json_object_new_string(r[i].sampler));
		if (r[i].row) {
			struct json_object *params = json_object_new_object();

			json_object_object_add(p, "file", json_object_new_string(r[i].row->policy));
			for (int k = 0; k < r[i].row->nr_kv; k++) {
				const char *kv = r[i].row->kv[k], *eq = strchr(kv, '=');
				char key[128];

				snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
				json_object_object_add(params, key, json_object_new_string(eq + 1));
			}
			json_object_object_add(p, "params", params);
		}
		if (r[i].error[0]) {
			json_object_object_add(p, "error", json_object_new_string(r[i].error));
			json_object_array_add(arr, p);
			continue;
		}
		json_object_object_add(p, "accesses", json_object_new_uint64(r[i].accesses));
		json_object_object_add(p, "fast_hits", json_object_new_uint64(r[i].fast_hits));
		json_object_object_add(p, "fast_hit_ratio", json_object_new_double(ratio));
		json_object_object_add(p, "vs_oracle", json_object_new_double(oracle_ratio ? ratio / oracle_ratio : 0));
		json_object_object_add(p, "latency_ns", json_object_new_double(lat(o, &r[i], false)));
		json_object_object_add(p, "latency_with_migration_ns", json_object_new_double(lat(o, &r[i], i > 0)));
		json_object_object_add(p, "promoted", json_object_new_uint64(r[i].promoted));
		json_object_object_add(p, "demoted", json_object_new_uint64(r[i].demoted));
		json_object_object_add(p, "pingpong", json_object_new_uint64(r[i].pingpong));
		if (o->timing)
			json_object_object_add(p, "decide_ms_per_epoch",
					       json_object_new_double(r[i].epochs ? r[i].decide_ms / r[i].epochs : 0));
		json_object_array_add(arr, p);
	}
	json_object_object_add(root, "policies", arr);
	fprintf(f, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
								JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
}

/* Opens dir/name for writing into path; NULL with a message. */
static FILE *plot_file(char *path, size_t len, const char *dir, const char *name)
{
	FILE *f;

	if ((size_t)snprintf(path, len, "%s/%s", dir, name) >= len) {
		fprintf(stderr, "cxltier-replay: --plot %s: path too long\n", dir);
		return NULL;
	}
	if (!(f = fopen(path, "w")))
		fprintf(stderr, "cxltier-replay: cannot create %s: %s\n", path, strerror(errno));
	return f;
}

/* gnuplot in dir, as a child with its own working directory: no shell sees dir. */
static int run_gnuplot(const char *dir)
{
#ifdef REPLAY_NO_GNUPLOT
	(void)dir;
	return 0;
#else
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (chdir(dir) == 0)
			execlp("gnuplot", "gnuplot", "plots.gp", (char *)NULL);
		fprintf(stderr, "cxltier-replay: cannot run gnuplot in %s: %s\n", dir, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
#endif
}

int write_plots(const char *dir, struct result *r, int n, const uint64_t *heat,
		uint32_t w, uint32_t h)
{
	char path[1024];
	FILE *f;
	int rc;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "cxltier-replay: cannot create %s: %s\n", dir, strerror(errno));
		return 1;
	}
	if (!(f = plot_file(path, sizeof(path), dir, "hit-ratio.dat")))
		return 1;
	fprintf(f, "epoch");
	for (int i = 0; i < n; i++)
		fprintf(f, " %s%s%s", r[i].name, r[i].sampler ? "/" : "", r[i].sampler ? r[i].sampler : "");
	fprintf(f, "\n");
	for (uint64_t e = 0; e < r[1].epochs; e++) {
		fprintf(f, "%llu", (unsigned long long)e);
		for (int i = 0; i < n; i++)
			fprintf(f, " %.5f", r[i].epoch_ratio[e]);
		fprintf(f, "\n");
	}
	if (close_output(f, path) || !(f = plot_file(path, sizeof(path), dir, "heatmap.dat")))
		return 1;
	for (uint32_t y = 0; y < h; y++) {
		for (uint32_t x = 0; x < w; x++)
			fprintf(f, "%llu ", (unsigned long long)heat[(uint64_t)y * w + x]);
		fprintf(f, "\n");
	}
	if (close_output(f, path) || !(f = plot_file(path, sizeof(path), dir, "plots.gp")))
		return 1;
	fprintf(f, "set terminal pngcairo size 1000,500 noenhanced\n"
		   "set output 'hit-ratio.png'\nset title 'fast-tier hit ratio per epoch'\n"
		   "set xlabel 'epoch'\nset ylabel 'share of accesses served by the fast tier'\n"
		   "set yrange [0:1.05]\nset key outside right\n"
		   "plot for [i=2:%d] 'hit-ratio.dat' using 1:i with lines lw 2 title columnheader(i)\n"
		   "set output 'heatmap.png'\nset title 'accesses: pages (address order) x time'\n"
		   "set xlabel 'epoch bin'\nset ylabel 'page bin (low to high address)'\nunset key\n"
		   "set xrange [-0.5:%u.5]\nset yrange [-0.5:%u.5]\n"
		   "set logscale cb\nplot 'heatmap.dat' matrix with image\n", n + 1, w - 1, h - 1);
	if (close_output(f, path))
		return 1;
	rc = run_gnuplot(dir);
	if (rc) {
		fprintf(stderr, "cxltier-replay: gnuplot failed (exit %d); the data files are in %s (install gnuplot-nox: make deps)\n",
			rc, dir);
		return 1;
	}
	fprintf(stderr, "plots: %s/hit-ratio.png, %s/heatmap.png\n", dir, dir);
	return 0;
}
