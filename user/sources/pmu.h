/* SPDX-License-Identifier: MIT */
/*
 * Memory-sampling PMU events for the pmu source: discovery from sysfs (Intel
 * PEBS load latency and store sampling, AMD IBS op), the perf_event_attr each
 * event needs, and the sample period that keeps sampling under a CPU share.
 * The rationale and the kernel facts each choice rests on are in pmu.c.
 */
#ifndef CXLT_PMU_H
#define CXLT_PMU_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#define PMU_MAX_EVENTS		4	/* loads + stores, on up to two core PMUs */
#define PMU_LDLAT_DEFAULT	30	/* cycles: past L1/L2, memory-bound loads */
#define PMU_CPU_SHARE_DEFAULT	0.01	/* of one core, for all sampling */
#define PMU_COST_NS_DEFAULT	3000.0	/* per sample: PMI/NMI + PEBS/IBS record + BPF */
#define PMU_IRQ_NS		2000.0	/* the part of it outside the BPF program */
#define PMU_ADAPT_MIN_SEC	0.5	/* rates over shorter spans are too noisy */
#define PMU_PERIOD_START	20000	/* first period, before any rate is known */
#define PMU_PERIOD_MIN		1000
#define PMU_PERIOD_MAX		100000000ULL

struct pmu_opts {
	/* Intel load-latency threshold in core cycles (3..65535); 0 = default. */
	uint32_t ldlat;
	/* AMD: sample every op, not only L3 misses (Zen 4's l3missonly). */
	bool amd_all_ops;
	/* Loads only, even where the PMU also samples stores. */
	bool no_stores;
};

struct pmu_event {
	char name[64];		/* as perf would write it: "cpu_core/mem-loads,ldlat=30/P" */
	char pmu[32];		/* the sysfs PMU directory name */
	char cpus[256];		/* the PMU's "cpus" list (hybrid parts); "" = every CPU */
	bool stores;		/* a store-sampling event (optional: may fail to open) */
	/* Ready for perf_event_open but for the period (the caller's). */
	struct perf_event_attr attr;
	/* What the PMU accepts as a period (IBS: multiples of 16, from 0x90). */
	uint64_t min_period, max_period, period_step;
};

struct pmu_discovery {
	int nr;
	struct pmu_event ev[PMU_MAX_EVENTS];
	/* What was found, or what was looked for and where. */
	char why[512];
};

/*
 * Looks for the memory-sampling events under root (NULL or "" = "/")'s
 * /sys/bus/event_source/devices: Intel cpu (or cpu_core + cpu_atom) with
 * events/mem-loads and, when present, events/mem-stores; else AMD ibs_op.
 * Returns 0 with d->nr >= 1, -ENOENT when the machine has none of them (d->why
 * says what was looked for and what is there), -EINVAL when a sysfs file is
 * malformed (d->why names the file), other -errno on read errors.
 */
int pmu__discover(const char *root, const struct pmu_opts *o, struct pmu_discovery *d);

/*
 * Format file text ("config:0-7", "config1:1,6-10,44") to the field it
 * addresses (0 = config, 1 = config1, 2 = config2) and the bit mask.
 */
int pmu__parse_format(const char *text, int *field, uint64_t *mask);
/* Puts value into the bits of mask, low bits first; -EINVAL if it does not fit. */
int pmu__set_bits(struct perf_event_attr *attr, int field, uint64_t mask, uint64_t value);

/* Whether ev may be opened on cpu (its PMU's cpus list; all when none). */
bool pmu__event_on_cpu(const struct pmu_event *ev, int cpu);

/*
 * The next sample period: the one that brings the samples' cost
 * (samples_per_sec * cost_ns_per_sample) to cpu_share of one core.  A rate
 * over budget is cut at once; under budget the period falls halfway (in log
 * terms) and at most by half an epoch; within 10% it stays.  Always within
 * PMU_PERIOD_MIN..PMU_PERIOD_MAX; bad inputs (NaN, negative, zero cost) never
 * divide by zero: a zero share gives the longest period, a bad rate or cost
 * keeps the current one.
 */
uint64_t pmu__next_period(uint64_t current_period, double samples_per_sec,
			  double cost_ns_per_sample, double cpu_share);
/* Fits period to what every event of d accepts (bounds and step). */
uint64_t pmu__fit_period(const struct pmu_discovery *d, uint64_t period);
/*
 * PERF_EVENT_IOC_PERIOD on every fd; tries all, returns the first -errno.
 * The kernel applies it at the event's next overflow.
 */
int pmu__set_period(const int *fds, int nr_fds, uint64_t period);

#endif
