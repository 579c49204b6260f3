// SPDX-License-Identifier: MIT
/* Design notes live in bpf/sampler.bpf.c. */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler.h"
#include "sources.h"
#include "sampler.skel.h"
#include "util.h"

#define DRAIN_BATCH 8192

const char *const cxlt_stat_names[CXLT_NR_STATS] = {
#define CXLT_STAT(id, name, desc) [CXLT_STAT_##id] = name,
#include "stats.def"
#undef CXLT_STAT
};

const char *const cxlt_stat_descs[CXLT_NR_STATS] = {
#define CXLT_STAT(id, name, desc) [CXLT_STAT_##id] = desc,
#include "stats.def"
#undef CXLT_STAT
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's warnings explain load failures; its chatter only with -vv. */
	if (level != LIBBPF_WARN && log_verbosity <= LOG_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int add_link(struct sampler *s, struct bpf_link *link)
{
	struct bpf_link **l = realloc(s->links, (s->nr_links + 1) * sizeof(*l));

	if (!l) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	s->links = l;
	s->links[s->nr_links++] = link;
	return 0;
}

static int add_fd(int **fds, int *nr, int fd)
{
	int *more = realloc(*fds, (*nr + 1) * sizeof(**fds));

	if (!more)
		return -ENOMEM;
	*fds = more;
	(*fds)[(*nr)++] = fd;
	return 0;
}

void sampler__rollback(struct sampler *s, int nr_links)
{
	while (s->nr_links > nr_links)
		bpf_link__destroy(s->links[--s->nr_links]);	/* closes the perf fd too */
}

int sampler__attach_perf(struct sampler *s, struct perf_event_attr *attr,
			 const struct pmu_event *ev, int **fds, int *nr, int *failed_cpu)
{
	int ncpu = libbpf_num_possible_cpus(), attached = 0, err;

	if (ncpu < 0)
		return ncpu;
	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct bpf_link *link;
		int fd;

		if (ev && !pmu__event_on_cpu(ev, cpu))
			continue;
		*failed_cpu = cpu;
		fd = syscall(__NR_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV || errno == ENOENT)
				continue;	/* CPU offline */
			return -errno;
		}
		link = bpf_program__attach_perf_event(s->skel->progs.cxlt_pmu_sample, fd);
		if (!link) {
			err = -errno;
			close(fd);
			return err;
		}
		if (add_link(s, link))
			return -ENOMEM;
		if (fds && (err = add_fd(fds, nr, fd)))
			return err;
		attached++;
	}
	*failed_cpu = -1;
	return attached ? 0 : -ENODEV;
}

int sampler__attach_fault_tp(struct sampler *s, const struct source_def *d)
{
	struct bpf_link *link = bpf_program__attach(s->skel->progs.cxlt_fault);
	int err;

	if (!link) {
		err = -errno;
		sampler__why_not(s, "cannot attach %s's page-fault tracepoint: %s", d->name,
				 strerror(-err));
		return err;
	}
	sampler__note(s, "tracepoint exceptions:page_fault_user (raw_tp): first touch and NUMA hint faults");
	return add_link(s, link);
}

static void vappend(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t off = strlen(buf);

	if (off && off < size - 2) {
		memcpy(buf + off, "; ", 3);
		off += 2;
	}
	vsnprintf(buf + off, size - off, fmt, ap);
}

static struct btf *kernel_btf;

const struct btf *sampler__kernel_btf(void)
{
	if (!kernel_btf)
		kernel_btf = btf__load_vmlinux_btf();
	return kernel_btf;
}

void sampler__kernel_btf_put(void)
{
	btf__free(kernel_btf);
	kernel_btf = NULL;
}

void sampler__note(struct sampler *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vappend(s->source_why, sizeof(s->source_why), fmt, ap);
	va_end(ap);
}

void sampler__why_not(struct sampler *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->why_not, sizeof(s->why_not), fmt, ap);
	va_end(ap);
}

static int pin_programs(struct sampler *s)
{
	struct bpf_program *prog;
	char path[512];

	bpf_object__for_each_program(prog, s->skel->obj) {
		if (!bpf_program__autoload(prog))
			continue;
		snprintf(path, sizeof(path), "%s/%s", s->pin_dir, bpf_program__name(prog));
		if (bpf_program__pin(prog, path))
			return -errno;
	}
	return 0;
}

int sampler__check_source(const char *src)
{
	struct source_list list;
	char why[400];
	int err = sources__parse(src, &list, why, sizeof(why));

	if (err)
		pr_err("--source '%s': %s", src, why);
	return err;
}

bool sampler__repeats(const struct sampler *s)
{
	for (int i = 0; i < s->nr_attached; i++)
		if (s->attached[i]->repeats)
			return true;
	return false;
}

bool sampler__has_source(const struct sampler *s, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = s->source; (p = strstr(p, name)); p += len)
		if ((p == s->source || p[-1] == ',') && (!p[len] || p[len] == ',' || p[len] == ':'))
			return true;
	return false;
}

static int open_and_load(struct sampler *s, const struct sampler_opts *o,
			 const unsigned weight[CXLT_NR_SOURCES])
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = s->pin_dir);
	int err;

	s->skel = sampler_bpf__open_opts(&oo);
	if (!s->skel)
		return -errno;
	s->skel->rodata->record = o->record;
	for (int i = 0; i < CXLT_NR_SOURCES; i++)
		s->skel->rodata->src_weight[i] = weight[i];
	if (o->ring_bytes)
		bpf_map__set_max_entries(s->skel->maps.cxlt_samples, o->ring_bytes);
	bpf_map__set_max_entries(s->skel->maps.cxlt_heat,
				 o->heat_entries ? o->heat_entries : CXLT_HEAT_ENTRIES);
	err = sampler_bpf__load(s->skel);
	if (err) {
		sampler_bpf__destroy(s->skel);
		s->skel = NULL;
	}
	return err;
}

static int ring_sample(void *ctx, void *data, size_t len)
{
	struct sampler *s = ctx;

	if (len < sizeof(struct cxlt_sample))
		return 0;
	return s->on_sample ? s->on_sample(s->sample_ctx, data) : 0;
}

int sampler__ring_fd(const struct sampler *s)
{
	return s->rb ? ring_buffer__epoll_fd(s->rb) : -1;
}

int sampler__ring_consume(struct sampler *s)
{
	return s->rb ? ring_buffer__consume(s->rb) : 0;
}

static bool usable(const struct source_def *d, const struct sampler_opts *o)
{
	char why[16];

	return !d->usable || !d->usable(o, why, sizeof(why));
}

/* What the machine offers whatever is attached: the advice for unseen pages names it. */
static void probe_env(struct sampler *s, const struct sampler_opts *o)
{
	s->env.pmu = usable(&pmu_source, o);
	s->env.damon = usable(&damon_vaddr_source, o);
	s->env.hint = usable(&hint_source, o);
}

/*
 * Opens one source through its own code; 0, or -errno with why not in
 * s->why_not.  checked: its usable() passed already (a probe may cost: soft-dirty's
 * clears the agent's own bits).
 */
static int open_source(struct sampler *s, const struct sampler_opts *o, const struct source_def *d,
		       bool checked)
{
	int i = s->nr_attached, err;

	s->why_not[0] = '\0';
	if (!checked && d->usable && (err = d->usable(o, s->why_not, sizeof(s->why_not))))
		return err;
	if (i == SOURCES_MAX_LIST)
		return -E2BIG;	/* sources__parse() allows no more */
	/* Its slot while it opens, so that sampler__state() finds its state. */
	s->attached[i] = d;
	if (d->state_size && !(s->state[i] = calloc(1, d->state_size)))
		err = -ENOMEM;
	else
		err = d->open(s, o, d);
	if (err) {
		free(s->state[i]);
		s->state[i] = NULL;
		s->attached[i] = NULL;
		return err;
	}
	s->nr_attached++;
	return 0;
}

void *sampler__state(const struct sampler *s, const struct source_def *d)
{
	for (int i = 0; i <= s->nr_attached && i < SOURCES_MAX_LIST; i++)
		if (s->attached[i] == d)
			return s->state[i];
	return NULL;
}

/*
 * auto: the registry's order (sources__auto_order()), taking the first
 * source that works here and sees all of the targets' memory known at
 * start; when none does, the first that works.  Each step is logged and the
 * source's why says what was passed over and why.
 */
static int open_auto(struct sampler *s, const struct sampler_opts *o)
{
	const struct source_def *order[8], *fallback = NULL, *took = NULL;
	size_t n = sources__auto_order(order, 8);
	unsigned long long skipped = o->need.policy + o->need.hugetlb;
	const char *who = o->need_who ? o->need_who : "the targets";
	int err = -ENOENT;

	if (skipped)
		pr_info("source auto: %llu of the %llu resident pages of %s are under a %s memory policy or in hugetlb mappings, which the NUMA scanner skips: auto takes a source that sees them where one works here",
			skipped, (unsigned long long)o->need.resident, who,
			o->need.policy ? o->need.policy_name : "bind/preferred");
	s->choosing = true;
	for (size_t i = 0; i < n && !took; i++) {
		const struct source_def *d = order[i];

		if (!sources__sees_all(d->sight, skipped, o->need.resident)) {
			if (usable(d, o) && !fallback) {
				fallback = d;
				pr_info("source auto: passing over %s for now: it cannot see %llu of the pages of %s (%s)",
					d->name, d->sight == SIGHT_SCANNED ? skipped :
					(unsigned long long)o->need.resident, who,
					d->sight == SIGHT_SCANNED ? "the kernel's NUMA scanner skips memory under bind/preferred policies" :
					"it sees first touches only");
			}
			continue;
		}
		if (!(err = open_source(s, o, d, false))) {
			took = d;
			if (skipped)
				sampler__note(s, "chosen by auto because it sees the %llu pages under %s that hint cannot",
					      skipped, o->need.policy ? o->need.policy_name : "hugetlb");
			break;
		}
		pr_info("source auto: %s", s->why_not);
		sampler__note(s, "%.*s", (int)strcspn(s->why_not, ":"), s->why_not);
	}
	if (!took && fallback && !(err = open_source(s, o, fallback, true))) {
		took = fallback;
		sampler__note(s, "taken by auto though it cannot see %llu pages of %s: nothing here that works sees them",
			      fallback->sight == SIGHT_SCANNED ? skipped :
			      (unsigned long long)o->need.resident, who);
		pr_warn("source auto: no source here sees all of %s's memory: took %s, which cannot see %llu of its pages (cxltierctl status shows them as unseen_pages)",
			who, fallback->name, fallback->sight == SIGHT_SCANNED ? skipped :
			(unsigned long long)o->need.resident);
	}
	s->choosing = false;
	if (!took) {
		pr_err("source auto: no source works here (the last: %s)", s->why_not);
		return err;
	}
	if (!s->source[0])
		snprintf(s->source, sizeof(s->source), "%s", took->name);
	return 0;
}

/* The sources named: one, or several with weights; 0 or -errno, said. */
static int open_named(struct sampler *s, const struct sampler_opts *o,
		      const struct source_list *list)
{
	size_t off = 0;
	int err;

	for (int i = 0; i < list->n; i++) {
		const struct source_def *d = list->def[i];

		/* usable() ran in sampler__open(), before the load. */
		if ((err = open_source(s, o, d, true))) {
			pr_err("source %s: %s", d->name, s->why_not);
			return err;
		}
		if (list->n > 1)
			off += snprintf(s->source + off, sizeof(s->source) - off, "%s%s:%u",
					i ? "," : "", d->name, list->weight[i]);
		else
			snprintf(s->source, sizeof(s->source), "%s", d->name);
	}
	if (list->n > 1)
		snprintf(s->source_why, sizeof(s->source_why), "%d sources together, samples weighted",
			 list->n);
	return 0;
}

/* Loads the samplers, pins them, and the maps and buffers every source shares. */
static int load(struct sampler *s, const struct sampler_opts *o,
		const unsigned weight[CXLT_NR_SOURCES])
{
	int err;

	if ((err = sampler__ensure_bpffs(s->pin_dir)))
		return err;
	if (mkdir(s->pin_dir, 0700) && errno != EEXIST) {
		err = -errno;
		pr_err("cannot create pin directory %s: %s", s->pin_dir, strerror(errno));
		return err;
	}
	err = open_and_load(s, o, weight);
	if (err == -ENOMEM) {
		pr_err("cannot create the BPF maps: out of memory (the heat map has %u entries; try a smaller --heat-entries)",
		       o->heat_entries ? o->heat_entries : CXLT_HEAT_ENTRIES);
		return err;
	}
	if (err) {
		pr_err("cannot load the BPF samplers: %s (run as root; -v shows the verifier log)",
		       strerror(-err));
		return err;
	}
	if ((err = pin_programs(s))) {
		pr_err("cannot pin programs under %s: %s", s->pin_dir, strerror(-err));
		return err;
	}
	s->heat_fd = bpf_map__fd(s->skel->maps.cxlt_heat);
	s->targets_fd = bpf_map__fd(s->skel->maps.cxlt_targets);
	s->cgroups_fd = bpf_map__fd(s->skel->maps.cxlt_cgroups);
	s->stats_fd = bpf_map__fd(s->skel->maps.cxlt_stats);
	/* Room for the whole map: an epoch's samples reach the tracker together (sampler__drain). */
	s->cap = bpf_map__max_entries(s->skel->maps.cxlt_heat);
	s->keys = calloc(s->cap, sizeof(*s->keys));
	s->vals = calloc(s->cap, sizeof(*s->vals));
	if (!s->keys || !s->vals)
		return -ENOMEM;
	if (o->record) {
		s->on_sample = o->on_sample;
		s->sample_ctx = o->sample_ctx;
		s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.cxlt_samples), ring_sample, s, NULL);
		if (!s->rb) {
			err = -errno;
			pr_err("cannot open the sample ring buffer: %s", strerror(-err));
			return err;
		}
	}
	return 0;
}

int sampler__open(struct sampler *s, const struct sampler_opts *o)
{
	const char *src = o->source ? o->source : "auto";
	unsigned weight[CXLT_NR_SOURCES] = { 0 };
	struct source_list list = { 0 };
	bool choose = false;
	int err;

	memset(s, 0, sizeof(*s));
	snprintf(s->pin_dir, sizeof(s->pin_dir), "%s", o->pin_dir ? o->pin_dir : CXLT_PIN_DIR);
	libbpf_set_print(libbpf_print);

	if (sources__parse(src, &list, s->source_why, sizeof(s->source_why))) {
		pr_err("--source '%s': %s", src, s->source_why);
		return -EINVAL;
	}
	s->source_why[0] = '\0';
	for (int i = 0; i < list.n; i++) {
		const struct source_def *d = list.def[i];

		choose |= !d->open;
		/* Refused before anything is loaded: nothing to undo. */
		if (d->usable && (err = d->usable(o, s->why_not, sizeof(s->why_not)))) {
			pr_err("source %s: %s", d->name, s->why_not);
			return err;
		}
		/* Sources on one hook share its weight: the program cannot tell them apart. */
		if (list.n > 1 && d->hook == HOOK_FAULT_TP)
			weight[CXLT_SRC_FAULT] = weight[CXLT_SRC_HINT] = list.weight[i];
		else if (list.n > 1)
			weight[CXLT_SRC_PMU] = list.weight[i];
	}
	if ((err = load(s, o, weight)))
		goto fail;
	probe_env(s, o);
	if ((err = choose ? open_auto(s, o) : open_named(s, o, &list)))
		goto fail;
	return 0;
fail:
	sampler__close(s, false);
	return err;
}

void sampler__close(struct sampler *s, bool keep_pins)
{
	for (int i = s->nr_attached - 1; i >= 0; i--) {
		if (s->attached[i]->close)
			s->attached[i]->close(s, s->attached[i]);
		free(s->state[i]);
		s->state[i] = NULL;
	}
	s->nr_attached = 0;
	ring_buffer__free(s->rb);
	s->rb = NULL;
	for (int i = 0; i < s->nr_links; i++)
		bpf_link__destroy(s->links[i]);
	free(s->links);
	s->links = NULL;
	s->nr_links = 0;
	if (s->skel) {
		if (!keep_pins) {
			struct bpf_program *prog;
			char path[512];

			bpf_object__for_each_program(prog, s->skel->obj) {
				snprintf(path, sizeof(path), "%s/%s", s->pin_dir,
					 bpf_program__name(prog));
				unlink(path);
			}
			bpf_object__unpin_maps(s->skel->obj, NULL);
			rmdir(s->pin_dir);
		}
		sampler_bpf__destroy(s->skel);
		s->skel = NULL;
	}
	free(s->keys);
	free(s->vals);
	s->keys = NULL;
	s->vals = NULL;
}

int sampler__add_target(struct sampler *s, uint32_t tgid)
{
	uint32_t one = 1;

	return bpf_map_update_elem(s->targets_fd, &tgid, &one, BPF_ANY) ? -errno : 0;
}

int sampler__del_target(struct sampler *s, uint32_t tgid)
{
	if (bpf_map_delete_elem(s->targets_fd, &tgid) && errno != ENOENT)
		return -errno;
	return 0;
}

int sampler__add_cgroup(struct sampler *s, uint64_t cgid)
{
	uint32_t one = 1;

	if (bpf_map_update_elem(s->cgroups_fd, &cgid, &one, BPF_ANY))
		return -errno;
	s->skel->bss->nr_cgroups = ++s->nr_cgroups;
	return 0;
}

int sampler__drain(struct sampler *s, struct tracker *tr)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct cxlt_page_key out_batch;
	void *in = NULL;
	uint32_t n = 0;
	int total = 0, err = 0;

	/*
	 * The whole map, then one ingest: the tracker tells a region's pages
	 * apart by the chunks all of this epoch's samples fall in.
	 */
	for (;;) {
		__u32 count = s->cap - n < DRAIN_BATCH ? s->cap - n : DRAIN_BATCH;

		err = bpf_map_lookup_and_delete_batch(s->heat_fd, in, &out_batch, s->keys + n,
						      s->vals + n, &count, &opts);
		if (err && errno == ENOSPC && n) {
			/*
			 * The next bucket holds more entries than the buffer has
			 * room left (the map filled while it was drained; the
			 * kernel takes a bucket whole or not at all): what is
			 * here goes in now, and the drain goes on from that
			 * bucket with the whole buffer.  Returned as an error,
			 * this left the rest in the map, epoch after epoch: a
			 * tierbench-full run under hint stopped promoting.
			 */
			tracker__ingest(tr, s->keys, s->vals, n);
			total += n;
			n = 0;
			continue;
		}
		if (err && errno != ENOENT) {
			err = -errno;
			break;
		}
		n += count;
		if (err) {
			err = 0;	/* ENOENT: the map is empty */
			break;
		}
		in = &out_batch;
		if (n == s->cap) {	/* entries added while draining */
			tracker__ingest(tr, s->keys, s->vals, n);
			total += n;
			n = 0;
		}
	}
	/* What was deleted from the map is ingested, error or not. */
	tracker__ingest(tr, s->keys, s->vals, n);
	total += n;
	if (err)
		return err;
	s->drained += total;
	for (int i = 0; i < s->nr_attached; i++)
		if (s->attached[i]->drain)
			total += s->attached[i]->drain(s, s->attached[i], tr);
	return total;
}

void sampler__set_targets(struct sampler *s, const struct tracker *tr)
{
	for (int i = 0; i < s->nr_attached; i++)
		if (s->attached[i]->set_targets)
			s->attached[i]->set_targets(s, s->attached[i], tr);
}

void sampler__status(const struct sampler *s, struct json_object *sampler)
{
	for (int i = 0; i < s->nr_attached; i++)
		if (s->attached[i]->status)
			s->attached[i]->status(s, s->attached[i], sampler);
}

int sampler__read_stats(int stats_fd, uint64_t out[CXLT_NR_STATS])
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals;

	if (ncpu <= 0)
		return -EINVAL;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (uint32_t id = 0; id < CXLT_NR_STATS; id++) {
		out[id] = 0;
		if (bpf_map_lookup_elem(stats_fd, &id, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[id] += vals[c];
	}
	free(vals);
	return 0;
}
