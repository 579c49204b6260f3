// SPDX-License-Identifier: MIT
/*
 * Source pmu: hardware memory samples (Intel PEBS mem-loads, AMD IBS op),
 * one perf event per CPU with the perf_event program attached.  pmu.c finds
 * the events; this file opens them and keeps the sample period at a share of
 * one core (sampling's cost follows the rate it sees, not a guess).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "sampler.h"
#include "sampler.skel.h"
#include "util.h"

/* The events, their per-CPU fds (owned by the sampler's links) and the period. */
struct pmu_state {
	struct pmu_discovery d;
	int *fds;
	int nr_fds;
	uint64_t period;	/* current sample period, for status */
	double cpu_share, cost_ns;
	double adapted_at;	/* when the period was last looked at */
	uint64_t seen_at;	/* samples seen then */
	uint64_t run_ns, run_cnt;	/* BPF program run time then (bpf_stats) */
};

static int pmu_usable(const struct sampler_opts *o, char *why, size_t len)
{
	struct pmu_discovery *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return -ENOMEM;
	err = pmu__discover(o->sysfs_root, &o->pmu, d);
	if (!err && !d->nr)
		err = -ENOENT;
	if (err == -ENOENT)
		snprintf(why, len, "no memory-sampling PMU (no PEBS mem-loads or IBS op event here): %s",
			 d->why);
	else if (err)
		snprintf(why, len, "memory-sampling PMU not usable (%s): %s", strerror(-err), d->why);
	free(d);
	return err;
}

/*
 * The first event found (loads on the big or only cores) must open; the
 * others (stores, the small cores of a hybrid part) are a bonus: one that
 * fails is left out, with a warning.
 */
static int pmu_open(struct sampler *s, const struct sampler_opts *o, const struct source_def *d)
{
	struct pmu_state *p = sampler__state(s, d);
	uint64_t stats[CXLT_NR_STATS] = { 0 };
	int err = pmu__discover(o->sysfs_root, &o->pmu, &p->d), opened = 0;

	if (err) {
		sampler__why_not(s, "no memory-sampling PMU: %s", p->d.why);
		return err;
	}
	p->cpu_share = o->pmu_cpu_share > 0 ? o->pmu_cpu_share : PMU_CPU_SHARE_DEFAULT;
	p->cost_ns = o->pmu_cost_ns > 0 ? o->pmu_cost_ns : PMU_COST_NS_DEFAULT;
	p->period = pmu__fit_period(&p->d, o->pmu_period ? o->pmu_period : PMU_PERIOD_START);
	for (int i = 0; i < p->d.nr; i++) {
		struct pmu_event *ev = &p->d.ev[i];
		int nr_links = s->nr_links, nr_fds = p->nr_fds, cpu = -1;

		ev->attr.sample_period = p->period;
		err = sampler__attach_perf(s, &ev->attr, ev, &p->fds, &p->nr_fds, &cpu);
		if (!err) {
			opened++;
			continue;
		}
		if (i == 0) {
			char where[64];

			/* Every event opened so far goes with the first: nothing of pmu is left. */
			sampler__rollback(s, nr_links);
			p->nr_fds = nr_fds;
			if (cpu >= 0)
				snprintf(where, sizeof(where), "on CPU %d: %s", cpu, strerror(-err));
			else
				snprintf(where, sizeof(where), "failed on every CPU (no such PMU or event)");
			sampler__why_not(s, "memory-sampling PMU not usable (perf_event_open failed): %s (type %u, config 0x%llx, config1 0x%llx, config2 0x%llx) %s",
					 ev->name, ev->attr.type, (unsigned long long)ev->attr.config,
					 (unsigned long long)ev->attr.config1,
					 (unsigned long long)ev->attr.config2, where);
			p->d.nr = 0;
			free(p->fds);	/* no close() for a source that did not open */
			return err;
		}
		sampler__rollback(s, nr_links);
		p->nr_fds = nr_fds;
		pr_warn("pmu: leaving out %s: perf_event_open %s%d: %s", ev->name,
			cpu >= 0 ? "on CPU " : "failed on every CPU", cpu >= 0 ? cpu : 0,
			strerror(-err));
	}
	sampler__read_stats(s->stats_fd, stats);	/* pinned maps may hold counts already */
	p->seen_at = stats[CXLT_STAT_SEEN];
	p->adapted_at = now_sec();
	sampler__note(s, "%.220s; one per CPU, period %llu adapting to %.3g%% of one core",
		      p->d.why, (unsigned long long)p->period, p->cpu_share * 100);
	pr_info("pmu: %d of %d events open: %s", opened, p->d.nr, p->d.why);
	return 0;
}

/*
 * At most once per drain (once per epoch), and not on less than
 * PMU_ADAPT_MIN_SEC of samples: the samples' own rate since the last look,
 * their cost, and the next period.  The cost is the configured one, or the
 * BPF program's measured run time plus the interrupt when bpf_stats is on
 * and that is more.
 */
static int pmu_drain(struct sampler *s, const struct source_def *d, struct tracker *tr)
{
	struct pmu_state *p = sampler__state(s, d);
	uint64_t stats[CXLT_NR_STATS], next;
	double now = now_sec(), dt = now - p->adapted_at, cost = p->cost_ns, rate;
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int err;

	(void)tr;
	if (dt < PMU_ADAPT_MIN_SEC || sampler__read_stats(s->stats_fd, stats))
		return 0;
	rate = (stats[CXLT_STAT_SEEN] - p->seen_at) / dt;
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(bpf_program__fd(s->skel->progs.cxlt_pmu_sample), &info, &len)) {
		if (info.run_cnt > p->run_cnt && info.run_time_ns >= p->run_ns) {
			double measured = (double)(info.run_time_ns - p->run_ns) /
					  (info.run_cnt - p->run_cnt) + PMU_IRQ_NS;

			if (measured > cost)
				cost = measured;
		}
		p->run_ns = info.run_time_ns;
		p->run_cnt = info.run_cnt;
	}
	p->seen_at = stats[CXLT_STAT_SEEN];
	p->adapted_at = now;
	next = pmu__fit_period(&p->d, pmu__next_period(p->period, rate, cost,
							  p->cpu_share));
	if (next == p->period)
		return 0;
	if ((err = pmu__set_period(p->fds, p->nr_fds, next))) {
		pr_warn("pmu: cannot change the sample period of %d events from %llu to %llu: %s",
			p->nr_fds, (unsigned long long)p->period,
			(unsigned long long)next, strerror(-err));
		return 0;
	}
	pr_debug("pmu: %.0f samples/s at %.0f ns = %.2f%% of a core (target %.2f%%): period %llu -> %llu",
		 rate, cost, rate * cost / 1e7, p->cpu_share * 100,
		 (unsigned long long)p->period, (unsigned long long)next);
	p->period = next;
	return 0;
}

static void pmu_status(const struct sampler *s, const struct source_def *d,
		       struct json_object *sampler)
{
	const struct pmu_state *p = sampler__state(s, d);

	json_object_object_add(sampler, "pmu_period", json_object_new_uint64(p->period));
}

static void pmu_close(struct sampler *s, const struct source_def *d)
{
	struct pmu_state *p = sampler__state(s, d);

	free(p->fds);
}

const struct source_def pmu_source = {
	.name = "pmu",
	.kind = CXLT_SRC_PMU,
	.hook = HOOK_PERF,
	.repeats = true,
	.listable = true,
	.help = "hardware memory samples: Intel PEBS mem-loads, AMD IBS op",
	.sight = SIGHT_ALL,
	.auto_rank = 1,
	.usable = pmu_usable,
	.open = pmu_open,
	.drain = pmu_drain,
	.status = pmu_status,
	.close = pmu_close,
	.state_size = sizeof(struct pmu_state),
};
