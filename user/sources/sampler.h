/* SPDX-License-Identifier: MIT */
/*
 * Userspace twin of bpf/sampler.bpf.c: loads the samplers, pins the maps and
 * programs under the pin directory, picks the sources (sources.h) and opens
 * them through their own code, keeps the target maps, and drains the heat
 * map and each source into the tracker.
 */
#ifndef CXLT_SAMPLER_H
#define CXLT_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "cxltier.h"
#include "pmu.h"
#include "sight.h"
#include "sources.h"
#include "tracker.h"

#define CXLT_PIN_DIR "/sys/fs/bpf/cxltier"

extern const char *const cxlt_stat_names[CXLT_NR_STATS];
extern const char *const cxlt_stat_descs[CXLT_NR_STATS];

struct sampler_opts {
	/*
	 * "auto", or one of "pmu", "hint", "fault", "fault-perf", or several
	 * with weights: "pmu:4,hint:1" (fault and hint share one hook, as do
	 * pmu and fault-perf: at most one of each pair).
	 */
	const char *source;
	bool allow_hint;	/* auto may pick hint (the caller will set the kernel up) */
	/*
	 * The DAMON rows ("damon": observe a running kdamond, else our own;
	 * "damon-vaddr", "damon-paddr": our own) keep our kdamond's settings
	 * here, for a later start to recover (damon__recover()).
	 */
	const char *damon_state;
	/*
	 * The targets known at start (their census, summed) and who they are:
	 * auto prefers a source that sees all of it (sources__sees_all()).
	 */
	struct mem_census need;
	const char *need_who;
	const char *pin_dir;
	const char *sysfs_root;	/* for PMU discovery */
	uint32_t heat_entries;
	uint32_t ring_bytes;	/* recording ring buffer: a power of 2, >= the page size; 0 = 4 MiB */
	uint64_t pmu_period;	/* first period; 0 = PMU_PERIOD_START, then it adapts */
	struct pmu_opts pmu;	/* load-latency threshold, stores, AMD filter */
	double pmu_cpu_share;	/* of one core; 0 = PMU_CPU_SHARE_DEFAULT */
	double pmu_cost_ns;	/* per sample; 0 = PMU_COST_NS_DEFAULT (or measured if more) */
	bool record;
	/* With record: called for every raw sample from the ring buffer. */
	int (*on_sample)(void *ctx, const struct cxlt_sample *s);
	void *sample_ctx;
};

struct sampler {
	struct sampler_bpf *skel;
	struct bpf_link **links;
	int nr_links;
	char pin_dir[256];
	char source[64];	/* what is attached: a name, or "name:weight,..." */
	char source_why[1024];	/* why that one: auto's reasons run long */
	char why_not[400];	/* why the last source tried could not open */
	bool choosing;		/* auto is trying the sources in turn */
	const struct source_def *attached[SOURCES_MAX_LIST];
	void *state[SOURCES_MAX_LIST];	/* each one's own, state_size bytes */
	int nr_attached;
	struct sight_env env;	/* what else this machine offers, for the unseen pages' advice */
	int heat_fd, targets_fd, cgroups_fd, stats_fd;
	uint32_t nr_cgroups;
	struct cxlt_page_key *keys;
	struct cxlt_page_val *vals;
	uint32_t cap;		/* keys and vals: the heat map's size */
	uint64_t drained;	/* heat map entries drained, all time */
	struct ring_buffer *rb;	/* recording only */
	int (*on_sample)(void *ctx, const struct cxlt_sample *s);
	void *sample_ctx;
};

int sampler__open(struct sampler *s, const struct sampler_opts *o);
/* Whether --source SRC names sources this agent knows, as a start checks it; logs why not. */
int sampler__check_source(const char *src);
/* Whether an attached source samples pages again and again (not first touches only). */
bool sampler__repeats(const struct sampler *s);
/* Whether the named source is among those attached. */
bool sampler__has_source(const struct sampler *s, const char *name);
void sampler__close(struct sampler *s, bool keep_pins);
int sampler__add_target(struct sampler *s, uint32_t tgid);
int sampler__del_target(struct sampler *s, uint32_t tgid);
int sampler__add_cgroup(struct sampler *s, uint64_t cgid);
/*
 * Drains the heat map into the tracker, then each open source's own samples
 * (a DAMON row's regions); entries drained or -errno.
 */
int sampler__drain(struct sampler *s, struct tracker *tr);
/* Tells the open sources the tracker's targets (a kdamond follows them). */
void sampler__set_targets(struct sampler *s, const struct tracker *tr);
/* Each open source's own fields in the status's "sampler" object. */
struct json_object;
void sampler__status(const struct sampler *s, struct json_object *sampler);

/* Recording: the ring buffer's epoll fd (or -1), and a drain of what is in it. */
int sampler__ring_fd(const struct sampler *s);
int sampler__ring_consume(struct sampler *s);

/* Sums the per-CPU stats map (also used by cxltierctl on the pinned map). */
int sampler__read_stats(int stats_fd, uint64_t out[CXLT_NR_STATS]);
/* Makes sure a bpf file system is mounted at /sys/fs/bpf. */
int sampler__ensure_bpffs(const char *pin_dir);
/*
 * Whether dir (or, while it does not exist, its nearest ancestor) is on a
 * bpf file system; -EINVAL and a message in why if not.
 */
int sampler__check_pin_dir(const char *dir, char *why, size_t len);
/* Mounts bpffs if needed, creates dir (0700) and checks it: on bpffs, root's alone. */
int sampler__prepare_pin_dir(const char *dir);
/*
 * Removes pins left under dir by an agent that did not stop cleanly: only
 * the names this agent pins, never anything else there.  Returns how many.
 */
int sampler__remove_pins(const char *dir);
struct bpf_object;
bool sampler__obj_pins(struct bpf_object *obj, const char *name, bool programs);

/* For the sources' own files (*_source.c): the hooks they attach through. */
/* The page-fault tracepoint (raw_tp); says why not for source d. */
int sampler__attach_fault_tp(struct sampler *s, const struct source_def *d);
/*
 * A perf event per online CPU (per CPU of its PMU for a PMU event) with the
 * perf_event program attached; the links own the fds, and with fds each is
 * also added to *fds (*nr of them), for period changes.  *failed_cpu names
 * the CPU whose open failed.
 */
struct perf_event_attr;
int sampler__attach_perf(struct sampler *s, struct perf_event_attr *attr,
			 const struct pmu_event *ev, int **fds, int *nr, int *failed_cpu);
/* Detaches the links attached after the first nr_links. */
void sampler__rollback(struct sampler *s, int nr_links);
/* An open (or opening) source's own state: state_size zeroed bytes, or NULL. */
void *sampler__state(const struct sampler *s, const struct source_def *d);
/*
 * The kernel's BTF for the set-up's probes, parsed once (about 50 ms here,
 * ten times that under TCG); NULL when the kernel has none.  Dropped with
 * sampler__kernel_btf_put() once the set-up is done.
 */
struct btf;
const struct btf *sampler__kernel_btf(void);
void sampler__kernel_btf_put(void);
/* Adds "; what" to source_why, and sets why_not. */
void sampler__note(struct sampler *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sampler__why_not(struct sampler *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
