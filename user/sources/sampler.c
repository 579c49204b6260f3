// SPDX-License-Identifier: MIT
/* Design notes live in bpf/sampler.bpf.c. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kmigrate.h"
#include "sampler.h"
#include "sources.h"
#include "sampler.skel.h"
#include "util.h"

#define BPF_FS_MAGIC_NR 0xcafe4a11
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

int sampler__ensure_bpffs(const char *pin_dir)
{
	struct statfs st;

	if (strncmp(pin_dir, "/sys/fs/bpf", 11))
		return 0;	/* a custom pin dir is the caller's business */
	if (!statfs("/sys/fs/bpf", &st) && st.f_type == BPF_FS_MAGIC_NR)
		return 0;
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
		int err = -errno;

		pr_err("/sys/fs/bpf is not a bpf file system and mounting one failed: %s",
		       strerror(errno));
		return err;
	}
	pr_info("mounted a bpf file system at /sys/fs/bpf");
	return 0;
}

/* The pin dir's file system: the dir's own, or its nearest ancestor's that we may see. */
static int pin_fs_magic(const char *dir, long *magic)
{
	char buf[PATH_MAX];
	struct statfs st;

	snprintf(buf, sizeof(buf), "%s", dir);
	while (statfs(buf, &st)) {
		char *slash = strrchr(buf, '/');

		if ((errno != ENOENT && errno != EACCES) || !slash || slash == buf)
			return -errno;
		*slash = '\0';
	}
	*magic = st.f_type;
	return 0;
}

int sampler__check_pin_dir(const char *dir, char *why, size_t len)
{
	long magic = 0;
	int err;

	if (dir[0] != '/') {
		snprintf(why, len, "pin directory %s: not an absolute path", dir);
		return -EINVAL;
	}
	if ((err = pin_fs_magic(dir, &magic))) {
		snprintf(why, len, "cannot check pin directory %s: %s", dir, strerror(-err));
		return err;
	}
	if (magic != BPF_FS_MAGIC_NR) {
		snprintf(why, len,
			 "pin directory %s is not on a bpf file system (file system magic 0x%lx): pins only live on bpffs; use a directory under /sys/fs/bpf",
			 dir, (unsigned long)magic);
		return -EINVAL;
	}
	return 0;
}

int sampler__prepare_pin_dir(const char *dir)
{
	char why[2 * PATH_MAX + 256];
	int err;

	if ((err = sampler__ensure_bpffs(dir)) || (err = sampler__check_pin_dir(dir, why, sizeof(why))))
		goto refuse;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = -errno;
		snprintf(why, sizeof(why), "cannot create pin directory %s: %s", dir, strerror(errno));
		goto refuse;
	}
	/* Whoever could write here could plant maps that the agent would adopt. */
	if ((err = sampler__check_pin_dir(dir, why, sizeof(why))) || (err = trust_dir(dir, why, sizeof(why))))
		goto refuse;
	return 0;
refuse:
	if (err != -EPERM || why[0])
		pr_err("%s", why);
	return err;
}

/* Names the object pins: its maps pinned by name and, with programs, every program. */
bool sampler__obj_pins(struct bpf_object *obj, const char *name, bool programs)
{
	struct bpf_program *prog;
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj)
		if (bpf_map__pin_path(map) && !strcmp(bpf_map__name(map), name))
			return true;
	if (programs)
		bpf_object__for_each_program(prog, obj)
			if (!strcmp(bpf_program__name(prog), name))
				return true;
	return false;
}

static bool own_pin(const char *name)
{
	struct sampler_bpf *skel = sampler_bpf__open();
	bool mine;

	if (!skel)
		return false;
	mine = sampler__obj_pins(skel->obj, name, true) || kmigrate__pins(name);
	sampler_bpf__destroy(skel);
	return mine;
}

int sampler__remove_pins(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	int n = 0, others = 0;
	DIR *d = opendir(dir);

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	/* Only names this agent pins: the directory may hold other tools' pins too. */
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (!own_pin(de->d_name)) {
			others++;
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!unlink(path))
			n++;
	}
	closedir(d);
	if (others)
		pr_info("%s holds %d entries that are not this agent's pins: left alone", dir, others);
	return n;
}

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

static int add_pmu_fd(struct sampler *s, int fd)
{
	int *fds = realloc(s->pmu_fds, (s->nr_pmu_fds + 1) * sizeof(*fds));

	if (!fds)
		return -ENOMEM;
	s->pmu_fds = fds;
	s->pmu_fds[s->nr_pmu_fds++] = fd;
	return 0;
}

/* Detaches what was attached after the marks (an optional event that failed). */
static void rollback_links(struct sampler *s, int nr_links, int nr_pmu_fds)
{
	while (s->nr_links > nr_links)
		bpf_link__destroy(s->links[--s->nr_links]);	/* closes the perf fd too */
	s->nr_pmu_fds = nr_pmu_fds;
}

/*
 * Opens one event per online CPU (for a PMU event: per CPU of its PMU) and
 * attaches the perf_event program to each.  *failed_cpu names the CPU whose
 * open failed.  A PMU event's fds are kept for PERF_EVENT_IOC_PERIOD; the
 * links own them.
 */
static int attach_perf(struct sampler *s, struct perf_event_attr *attr,
		       const struct pmu_event *ev, int *failed_cpu)
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
		if (ev && (err = add_pmu_fd(s, fd)))
			return err;
		attached++;
	}
	*failed_cpu = -1;
	return attached ? 0 : -ENODEV;
}

/*
 * The first event found (loads on the big or only cores) must open; the
 * others (stores, the small cores of a hybrid part) are a bonus: one that
 * fails is left out, with a warning.
 */
static int attach_pmu(struct sampler *s, const struct sampler_opts *o)
{
	uint64_t stats[CXLT_NR_STATS] = { 0 };
	int err = pmu__discover(o->sysfs_root, &o->pmu, &s->pmu), opened = 0;

	if (err)
		return err;
	s->pmu_cpu_share = o->pmu_cpu_share > 0 ? o->pmu_cpu_share : PMU_CPU_SHARE_DEFAULT;
	s->pmu_cost_ns = o->pmu_cost_ns > 0 ? o->pmu_cost_ns : PMU_COST_NS_DEFAULT;
	s->pmu_period = pmu__fit_period(&s->pmu, o->pmu_period ? o->pmu_period : PMU_PERIOD_START);
	for (int i = 0; i < s->pmu.nr; i++) {
		struct pmu_event *ev = &s->pmu.ev[i];
		int nr_links = s->nr_links, nr_fds = s->nr_pmu_fds, cpu = -1;

		ev->attr.sample_period = s->pmu_period;
		err = attach_perf(s, &ev->attr, ev, &cpu);
		if (!err) {
			opened++;
			continue;
		}
		rollback_links(s, nr_links, nr_fds);
		if (i == 0) {
			char where[64];

			if (cpu >= 0)
				snprintf(where, sizeof(where), "on CPU %d: %s", cpu, strerror(-err));
			else
				snprintf(where, sizeof(where), "failed on every CPU (no such PMU or event)");
			snprintf(s->pmu.why, sizeof(s->pmu.why),
				 "perf_event_open of %s (type %u, config 0x%llx, config1 0x%llx, config2 0x%llx) %s",
				 ev->name, ev->attr.type, (unsigned long long)ev->attr.config,
				 (unsigned long long)ev->attr.config1,
				 (unsigned long long)ev->attr.config2, where);
			return err;
		}
		pr_warn("pmu: leaving out %s: perf_event_open %s%d: %s", ev->name,
			cpu >= 0 ? "on CPU " : "failed on every CPU", cpu >= 0 ? cpu : 0,
			strerror(-err));
	}
	sampler__read_stats(s->stats_fd, stats);	/* pinned maps may hold counts already */
	s->pmu_seen_at = stats[CXLT_STAT_SEEN];
	s->pmu_adapted_at = now_sec();
	snprintf(s->source_why, sizeof(s->source_why),
		 "%.220s; one per CPU, period %llu adapting to %.3g%% of one core", s->pmu.why,
		 (unsigned long long)s->pmu_period, s->pmu_cpu_share * 100);
	pr_info("pmu: %d of %d events open: %s", opened, s->pmu.nr, s->pmu.why);
	return 0;
}

/*
 * At most once per drain (once per epoch), and not on less than
 * PMU_ADAPT_MIN_SEC of samples: the samples' own rate since the last look,
 * their cost, and the next period.  The cost is the configured one, or the
 * BPF program's measured run time plus the interrupt when bpf_stats is on
 * and that is more.
 */
static void adapt_pmu_period(struct sampler *s)
{
	uint64_t stats[CXLT_NR_STATS], next;
	double now = now_sec(), dt = now - s->pmu_adapted_at, cost = s->pmu_cost_ns, rate;
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int err;

	if (dt < PMU_ADAPT_MIN_SEC || sampler__read_stats(s->stats_fd, stats))
		return;
	rate = (stats[CXLT_STAT_SEEN] - s->pmu_seen_at) / dt;
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(bpf_program__fd(s->skel->progs.cxlt_pmu_sample), &info, &len)) {
		if (info.run_cnt > s->pmu_run_cnt && info.run_time_ns >= s->pmu_run_ns) {
			double measured = (double)(info.run_time_ns - s->pmu_run_ns) /
					  (info.run_cnt - s->pmu_run_cnt) + PMU_IRQ_NS;

			if (measured > cost)
				cost = measured;
		}
		s->pmu_run_ns = info.run_time_ns;
		s->pmu_run_cnt = info.run_cnt;
	}
	s->pmu_seen_at = stats[CXLT_STAT_SEEN];
	s->pmu_adapted_at = now;
	next = pmu__fit_period(&s->pmu, pmu__next_period(s->pmu_period, rate, cost,
							  s->pmu_cpu_share));
	if (next == s->pmu_period)
		return;
	if ((err = pmu__set_period(s->pmu_fds, s->nr_pmu_fds, next))) {
		pr_warn("pmu: cannot change the sample period of %d events from %llu to %llu: %s",
			s->nr_pmu_fds, (unsigned long long)s->pmu_period,
			(unsigned long long)next, strerror(-err));
		return;
	}
	pr_debug("pmu: %.0f samples/s at %.0f ns = %.2f%% of a core (target %.2f%%): period %llu -> %llu",
		 rate, cost, rate * cost / 1e7, s->pmu_cpu_share * 100,
		 (unsigned long long)s->pmu_period, (unsigned long long)next);
	s->pmu_period = next;
}

static int attach_fault_perf(struct sampler *s)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.sample_type = PERF_SAMPLE_ADDR,
		.sample_period = 1,
		.exclude_kernel = 1,
	};

	int cpu;

	snprintf(s->source_why, sizeof(s->source_why),
		 "software page-fault perf event, one per CPU");
	return attach_perf(s, &attr, NULL, &cpu);
}

static int attach_fault(struct sampler *s)
{
	struct bpf_link *link;
	bool btf = bpf_program__autoload(s->skel->progs.cxlt_fault_btf);

	link = bpf_program__attach(btf ? s->skel->progs.cxlt_fault_btf :
					 s->skel->progs.cxlt_fault_raw);
	if (!link)
		return -errno;
	snprintf(s->source_why + strlen(s->source_why),
		 sizeof(s->source_why) - strlen(s->source_why),
		 "%stracepoint exceptions:page_fault_user (%s): first touch and NUMA hint faults",
		 s->source_why[0] ? "; " : "", btf ? "tp_btf" : "raw_tp");
	return add_link(s, link);
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

/* The attach of each source, by its hook (and, on the perf hook, its kind). */
static int attach_source(struct sampler *s, const struct sampler_opts *o,
			 const struct source_def *d)
{
	if (d->hook == HOOK_PERF)
		return d->kind == CXLT_SRC_PMU ? attach_pmu(s, o) : attach_fault_perf(s);
	return attach_fault(s);
}

static void attached(struct sampler *s, const char *name)
{
	if (s->nr_attached < SOURCES_MAX_LIST)
		s->attached[s->nr_attached++] = sources__find(name);
}

bool sampler__repeats(const struct sampler *s)
{
	for (int i = 0; i < s->nr_attached; i++)
		if (s->attached[i] && s->attached[i]->repeats)
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

static int open_and_load(struct sampler *s, const struct sampler_opts *o, bool use_btf,
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
	bpf_program__set_autoload(s->skel->progs.cxlt_fault_btf, use_btf);
	bpf_program__set_autoload(s->skel->progs.cxlt_fault_raw, !use_btf);
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

/* What the machine offers whatever is attached: the advice for unseen pages names it. */
static void probe_env(struct sampler *s, const struct sampler_opts *o)
{
	struct pmu_discovery *d = calloc(1, sizeof(*d));
	char path[PATH_MAX];

	s->env.pmu = d && !pmu__discover(o->sysfs_root, &o->pmu, d) && d->nr > 0;
	free(d);
	snprintf(path, sizeof(path), "%s/sys/kernel/mm/damon/admin/kdamonds",
		 o->sysfs_root ? o->sysfs_root : "");
	s->env.damon = !access(path, F_OK);
	s->env.hint = o->allow_hint;
}

static void note(struct sampler *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct sampler *s, const char *fmt, ...)
{
	size_t off = strlen(s->source_why);
	va_list ap;

	if (off && off < sizeof(s->source_why) - 2) {
		memcpy(s->source_why + off, "; ", 3);
		off += 2;
	}
	va_start(ap, fmt);
	vsnprintf(s->source_why + off, sizeof(s->source_why) - off, fmt, ap);
	va_end(ap);
}

/* A DAMON row of the table: our own kdamond or someone else's, observed; -errno, why in s->damon.why. */
static int open_damon(struct sampler *s, const struct sampler_opts *o, const char *name)
{
	int err = damon__open(&s->damon, o->sysfs_root, o->damon_state,
			      !strcmp(name, "damon-vaddr") ? DAMON_OWN_VADDR :
			      !strcmp(name, "damon-paddr") ? DAMON_OWN_PADDR : DAMON_ANY);

	s->use_damon = !err;
	return err;
}

/*
 * One row of auto's order, attached if it can be; 0, or -errno with a note
 * of why not (*fatal: it was half set up, try nothing else).
 */
static int take(struct sampler *s, const struct sampler_opts *o, const struct source_def *d,
		bool *fatal)
{
	int err;

	if (d->hook == HOOK_PERF) {	/* pmu: fault-perf is no auto row */
		if (!(err = attach_pmu(s, o))) {
			snprintf(s->source, sizeof(s->source), "pmu");
			attached(s, "pmu");
			return 0;
		}
		pr_info("source auto: %s", s->pmu.why);
		if (err == -ENOENT)
			note(s, "no memory-sampling PMU (no PEBS mem-loads or IBS op event here)");
		else
			note(s, "memory-sampling PMU not usable (%s)", strerror(-err));
		s->pmu.nr = 0;
		return err;
	}
	if (d->hook == HOOK_DAMON) {
		if ((err = open_damon(s, o, d->name))) {
			if (!strcmp(d->name, "damon-vaddr"))
				pr_info("source auto: no DAMON of our own: %s", s->damon.why);
			else
				pr_info("source auto: no DAMON to observe or own: %s", s->damon.why);
			return err;
		}
		note(s, "%s; first touches from the page-fault tracepoint", s->damon.why);
		snprintf(s->source, sizeof(s->source), "damon");
		attached(s, d->name);
		if ((err = attach_fault(s))) {
			pr_err("cannot attach the page-fault hook: %s", strerror(-err));
			*fatal = true;
		}
		return err;
	}
	if (d->sight == SIGHT_SCANNED) {	/* hint */
		if (!o->allow_hint) {
			note(s, "no NUMA balancing in this kernel for hint faults");
			return -ENOTSUP;
		}
		note(s, "NUMA hint faults from the kernel's scanner");
	}
	snprintf(s->source, sizeof(s->source), "%s", d->name);
	attached(s, d->name);
	err = attach_fault(s);
	if (err) {
		pr_err("cannot attach source %s: %s", d->name, strerror(-err));
		*fatal = true;
	}
	return err;
}

/*
 * auto: the table's order (sources__auto_order()), taking the first source
 * that works here and sees all of the targets' memory known at start; when
 * none does, the first that works.  Each step is logged and the source's
 * why says what was passed over and why.
 */
static int open_auto(struct sampler *s, const struct sampler_opts *o)
{
	const struct source_def *order[8], *fallback = NULL;
	size_t n = sources__auto_order(order, 8);
	unsigned long long skipped = o->need.policy + o->need.hugetlb;
	const char *who = o->need_who ? o->need_who : "the targets";
	bool fatal = false;
	int err = -ENOENT;

	if (skipped)
		pr_info("source auto: %llu of the %llu resident pages of %s are under a %s memory policy or in hugetlb mappings, which the NUMA scanner skips: auto takes a source that sees them where one works here",
			skipped, (unsigned long long)o->need.resident, who,
			o->need.policy ? o->need.policy_name : "bind/preferred");
	for (size_t i = 0; i < n; i++) {
		const struct source_def *d = order[i];

		if (!sources__sees_all(d->sight, skipped, o->need.resident)) {
			bool works = d->sight != SIGHT_SCANNED || o->allow_hint;

			if (works && !fallback) {
				fallback = d;
				pr_info("source auto: passing over %s for now: it cannot see %llu of the pages of %s (%s)",
					d->name, d->sight == SIGHT_SCANNED ? skipped :
					(unsigned long long)o->need.resident, who,
					d->sight == SIGHT_SCANNED ? "the kernel's NUMA scanner skips memory under bind/preferred policies" :
					"it sees first touches only");
			}
			continue;
		}
		if (!(err = take(s, o, d, &fatal))) {
			if (skipped)
				note(s, "chosen by auto because it sees the %llu pages under %s that hint cannot",
				     skipped, o->need.policy ? o->need.policy_name : "hugetlb");
			return 0;
		}
		if (fatal)
			return err;
	}
	if (!fallback)
		return err;
	if ((err = take(s, o, fallback, &fatal)))
		return err;
	note(s, "taken by auto though it cannot see %llu pages of %s: nothing here that works sees them",
	     fallback->sight == SIGHT_SCANNED ? skipped : (unsigned long long)o->need.resident, who);
	pr_warn("source auto: no source here sees all of %s's memory: took %s, which cannot see %llu of its pages (cxltierctl status shows them as unseen_pages)",
		who, fallback->name, fallback->sight == SIGHT_SCANNED ? skipped :
		(unsigned long long)o->need.resident);
	return 0;
}

int sampler__open(struct sampler *s, const struct sampler_opts *o)
{
	const char *src = o->source ? o->source : "auto";
	bool many = strchr(src, ',') || strchr(src, ':');
	unsigned weight[CXLT_NR_SOURCES] = { 0 };
	struct source_list list = { 0 };
	int err;

	memset(s, 0, sizeof(*s));
	snprintf(s->pin_dir, sizeof(s->pin_dir), "%s", o->pin_dir ? o->pin_dir : CXLT_PIN_DIR);
	libbpf_set_print(libbpf_print);

	if (sources__parse(src, &list, s->source_why, sizeof(s->source_why))) {
		pr_err("--source '%s': %s", src, s->source_why);
		return -EINVAL;
	}
	s->source_why[0] = '\0';
	/* Sources on one hook share its weight: the program cannot tell them apart. */
	for (int i = 0; many && i < list.n; i++) {
		if (list.def[i]->hook == HOOK_FAULT_TP)
			weight[CXLT_SRC_FAULT] = weight[CXLT_SRC_HINT] = list.weight[i];
		else
			weight[CXLT_SRC_PMU] = list.weight[i];
	}
	if ((err = sampler__ensure_bpffs(s->pin_dir)))
		return err;
	if (mkdir(s->pin_dir, 0700) && errno != EEXIST) {
		err = -errno;
		pr_err("cannot create pin directory %s: %s", s->pin_dir, strerror(errno));
		return err;
	}
	err = open_and_load(s, o, true, weight);
	if (err && err != -ENOMEM) {
		pr_info("tp_btf programs do not load here (%s): using raw_tp", strerror(-err));
		err = open_and_load(s, o, false, weight);
	}
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
		goto fail;
	}
	s->heat_fd = bpf_map__fd(s->skel->maps.cxlt_heat);
	s->targets_fd = bpf_map__fd(s->skel->maps.cxlt_targets);
	s->cgroups_fd = bpf_map__fd(s->skel->maps.cxlt_cgroups);
	s->stats_fd = bpf_map__fd(s->skel->maps.cxlt_stats);
	s->batch = DRAIN_BATCH;
	s->keys = calloc(s->batch, sizeof(*s->keys));
	s->vals = calloc(s->batch, sizeof(*s->vals));
	if (!s->keys || !s->vals) {
		err = -ENOMEM;
		goto fail;
	}

	if (o->record) {
		s->on_sample = o->on_sample;
		s->sample_ctx = o->sample_ctx;
		s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.cxlt_samples), ring_sample, s, NULL);
		if (!s->rb) {
			err = -errno;
			pr_err("cannot open the sample ring buffer: %s", strerror(-err));
			goto fail;
		}
	}
	probe_env(s, o);
	if (many) {
		size_t off = 0;

		for (int i = 0; i < list.n; i++) {
			const struct source_def *d = list.def[i];

			if ((err = attach_source(s, o, d))) {
				pr_err("cannot attach source %s: %s", d->name,
				       d->kind == CXLT_SRC_PMU ? s->pmu.why : strerror(-err));
				goto fail;
			}
			attached(s, d->name);
			off += snprintf(s->source + off, sizeof(s->source) - off, "%s%s:%u",
					i ? "," : "", d->name, list.weight[i]);
		}
		snprintf(s->source_why, sizeof(s->source_why), "%d sources together, samples weighted", list.n);
		return 0;
	}
	if (!strcmp(src, "auto")) {
		if ((err = open_auto(s, o)))
			goto fail;
		return 0;
	}
	if (list.def[0]->hook == HOOK_DAMON) {
		if ((err = open_damon(s, o, src))) {
			pr_err("source %s: %s", src, s->damon.why);
			goto fail;
		}
		if ((err = attach_fault(s))) {
			pr_err("cannot attach the page-fault hook for source %s: %s", src, strerror(-err));
			goto fail;
		}
		snprintf(s->source, sizeof(s->source), "%s", src);
		snprintf(s->source_why, sizeof(s->source_why),
			 "%s; first touches from the page-fault tracepoint", s->damon.why);
		attached(s, src);
		return 0;
	}
	if (!strcmp(src, "pmu")) {
		if ((err = attach_pmu(s, o))) {
			pr_err("source pmu: %s", s->pmu.why);
			goto fail;
		}
		snprintf(s->source, sizeof(s->source), "pmu");
		attached(s, "pmu");
		return 0;
	}
	if (!strcmp(src, "fault-perf")) {
		err = attach_fault_perf(s);
		snprintf(s->source, sizeof(s->source), "fault-perf");
	} else if (!strcmp(src, "hint")) {
		/* Same hook: the kernel's scanner makes the faults repeat. */
		snprintf(s->source_why, sizeof(s->source_why), "NUMA hint faults from the kernel's scanner");
		err = attach_fault(s);
		snprintf(s->source, sizeof(s->source), "hint");
	} else {
		err = attach_fault(s);
		snprintf(s->source, sizeof(s->source), "fault");
	}
	if (err) {
		pr_err("cannot attach source %s: %s", s->source, strerror(-err));
		goto fail;
	}
	attached(s, s->source);
	return 0;
fail:
	sampler__close(s, false);
	return err;
}

void sampler__close(struct sampler *s, bool keep_pins)
{
	if (s->use_damon)
		damon__close(&s->damon);
	s->use_damon = false;
	ring_buffer__free(s->rb);
	s->rb = NULL;
	for (int i = 0; i < s->nr_links; i++)
		bpf_link__destroy(s->links[i]);
	free(s->links);
	s->links = NULL;
	s->nr_links = 0;
	free(s->pmu_fds);
	s->pmu_fds = NULL;
	s->nr_pmu_fds = 0;
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
	int total = 0;

	for (;;) {
		__u32 count = s->batch;
		int err = bpf_map_lookup_and_delete_batch(s->heat_fd, in, &out_batch,
							  s->keys, s->vals, &count, &opts);

		if (err && errno != ENOENT)
			return -errno;
		tracker__ingest(tr, s->keys, s->vals, count);
		total += count;
		if (err)
			break;	/* ENOENT: the map is empty */
		in = &out_batch;
	}
	s->drained += total;
	if (s->nr_pmu_fds)
		adapt_pmu_period(s);
	if (s->use_damon) {
		total += damon__drain(&s->damon, tr);
		damon__set_targets(&s->damon, tr);
	}
	return total;
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
