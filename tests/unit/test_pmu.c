// SPDX-License-Identifier: MIT
/*
 * PMU discovery against fixture sysfs trees (tests/fixtures/pmu, run from the
 * repository root), the format and event parsers on malformed input, and the
 * adaptive sample period.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "pmu.h"

#define FIX "tests/fixtures/pmu/"
#define LOADS_SAMPLE (PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT)
#define STORES_SAMPLE (PERF_SAMPLE_TID | PERF_SAMPLE_ADDR)

static void intel_spr_gives_pebs_loads_and_stores(void **state)
{
	struct pmu_discovery d;
	const struct pmu_event *ld = &d.ev[0], *st = &d.ev[1];

	(void)state;
	assert_int_equal(pmu__discover(FIX "intel-spr", NULL, &d), 0);
	assert_int_equal(d.nr, 2);

	assert_string_equal(ld->name, "cpu/mem-loads,ldlat=30/pp");
	assert_string_equal(ld->pmu, "cpu");
	assert_int_equal(ld->attr.type, 4);
	assert_int_equal(ld->attr.config, 0x1cd);	/* event 0xcd, umask 0x1 */
	assert_int_equal(ld->attr.config1, 30);	/* ldlat: the default, not the alias' 3 */
	assert_int_equal(ld->attr.config2, 0);
	assert_int_equal(ld->attr.precise_ip, 2);	/* max_precise is 3: 2 is asked */
	assert_int_equal(ld->attr.sample_type, LOADS_SAMPLE);
	assert_int_equal(ld->attr.size, sizeof(struct perf_event_attr));
	assert_true(ld->attr.exclude_kernel && ld->attr.exclude_hv);
	assert_false(ld->stores);
	assert_string_equal(ld->cpus, "");
	assert_true(pmu__event_on_cpu(ld, 0) && pmu__event_on_cpu(ld, 111));

	assert_string_equal(st->name, "cpu/mem-stores/pp");
	assert_int_equal(st->attr.type, 4);
	assert_int_equal(st->attr.config, 0x2cd);
	assert_int_equal(st->attr.config1, 0);
	assert_int_equal(st->attr.precise_ip, 2);
	assert_int_equal(st->attr.sample_type, STORES_SAMPLE);
	assert_true(st->stores);
	assert_non_null(strstr(d.why, "cpu/mem-loads,ldlat=30/pp"));
}

static void intel_latency_threshold_and_loads_only(void **state)
{
	struct pmu_opts o = { .ldlat = 100, .no_stores = true };
	struct pmu_discovery d;

	(void)state;
	assert_int_equal(pmu__discover(FIX "intel-spr", &o, &d), 0);
	assert_int_equal(d.nr, 1);
	assert_int_equal(d.ev[0].attr.config1, 100);
	assert_string_equal(d.ev[0].name, "cpu/mem-loads,ldlat=100/pp");

	o.ldlat = 70000;	/* wider than the 16-bit threshold */
	assert_int_equal(pmu__discover(FIX "intel-spr", &o, &d), -EINVAL);
	assert_non_null(strstr(d.why, "70000"));
	assert_int_equal(d.nr, 0);
}

static void intel_hybrid_gives_both_core_types_on_their_cpus(void **state)
{
	struct pmu_discovery d;

	(void)state;
	assert_int_equal(pmu__discover(FIX "intel-hybrid", NULL, &d), 0);
	assert_int_equal(d.nr, 4);

	assert_string_equal(d.ev[0].name, "cpu_core/mem-loads,ldlat=30/pp");
	assert_int_equal(d.ev[0].attr.type, 4);
	assert_int_equal(d.ev[0].attr.config, 0x1cd);
	assert_int_equal(d.ev[0].attr.config1, 30);
	assert_int_equal(d.ev[0].attr.precise_ip, 2);
	assert_string_equal(d.ev[0].cpus, "0-15");
	assert_true(pmu__event_on_cpu(&d.ev[0], 0));
	assert_true(pmu__event_on_cpu(&d.ev[0], 15));
	assert_false(pmu__event_on_cpu(&d.ev[0], 16));

	assert_string_equal(d.ev[1].name, "cpu_core/mem-stores/pp");
	assert_int_equal(d.ev[1].attr.config, 0x2cd);

	assert_string_equal(d.ev[2].name, "cpu_atom/mem-loads,ldlat=30/pp");
	assert_int_equal(d.ev[2].attr.type, 8);
	assert_int_equal(d.ev[2].attr.config, 0x5d0);	/* event 0xd0, umask 0x5 */
	assert_int_equal(d.ev[2].attr.config1, 30);
	assert_false(pmu__event_on_cpu(&d.ev[2], 15));
	assert_true(pmu__event_on_cpu(&d.ev[2], 16));
	assert_true(pmu__event_on_cpu(&d.ev[2], 23));
	assert_false(pmu__event_on_cpu(&d.ev[2], 24));

	assert_string_equal(d.ev[3].name, "cpu_atom/mem-stores/pp");
	assert_int_equal(d.ev[3].attr.config, 0x6d0);
	assert_true(d.ev[3].stores);
}

static void amd_genoa_gives_ibs_op(void **state)
{
	struct pmu_opts all = { .amd_all_ops = true };
	struct pmu_discovery d;
	const struct pmu_event *ev = &d.ev[0];

	(void)state;
	assert_int_equal(pmu__discover(FIX "amd-genoa", NULL, &d), 0);
	assert_int_equal(d.nr, 1);
	assert_string_equal(ev->name, "ibs_op/cnt_ctl=1,l3missonly=1,swfilt=1/");
	assert_int_equal(ev->attr.type, 11);
	assert_int_equal(ev->attr.config, (1ULL << 19) | (1ULL << 16));
	assert_int_equal(ev->attr.config1, 0);
	assert_int_equal(ev->attr.config2, 1);	/* swfilt: the kernel filters privilege */
	assert_true(ev->attr.exclude_kernel && ev->attr.exclude_hv);
	assert_int_equal(ev->attr.precise_ip, 0);
	assert_int_equal(ev->attr.sample_type, LOADS_SAMPLE);
	assert_int_equal(ev->min_period, 0x90);
	assert_int_equal(ev->max_period, 0x7fffff0);
	assert_int_equal(ev->period_step, 16);

	assert_int_equal(pmu__discover(FIX "amd-genoa", &all, &d), 0);
	assert_int_equal(ev->attr.config, 1ULL << 19);
	assert_string_equal(ev->name, "ibs_op/cnt_ctl=1,swfilt=1/");
}

static void vm_without_pmu_is_enoent_saying_what_was_looked_for(void **state)
{
	struct pmu_discovery d;

	(void)state;
	assert_int_equal(pmu__discover(FIX "vm-no-pmu", NULL, &d), -ENOENT);
	assert_int_equal(d.nr, 0);
	print_message("%s\n", d.why);
	assert_non_null(strstr(d.why, FIX "vm-no-pmu/sys/bus/event_source/devices"));
	assert_non_null(strstr(d.why, "cpu/events/mem-loads"));
	assert_non_null(strstr(d.why, "ibs_op"));
	assert_non_null(strstr(d.why, "PMUs there: breakpoint msr software tracepoint uprobe"));

	assert_int_equal(pmu__discover(FIX "no-such-root", NULL, &d), -ENOENT);
	assert_non_null(strstr(d.why, "no-such-root"));
}

static void malformed_trees_are_refused_not_misparsed(void **state)
{
	static const struct {
		const char *root, *names;
	} cases[] = {
		{ FIX "bad-format", "format/umask" },
		{ FIX "bad-event", "events/mem-loads" },
		{ FIX "bad-term", "format/nosuchterm" },
	};
	struct pmu_discovery d;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(pmu__discover(cases[i].root, NULL, &d), -EINVAL);
		assert_int_equal(d.nr, 0);
		print_message("%s\n", d.why);
		assert_non_null(strstr(d.why, cases[i].root));
		assert_non_null(strstr(d.why, cases[i].names));
	}
}

static void format_files_parse_as_documented(void **state)
{
	int field;
	uint64_t mask;

	(void)state;
	assert_int_equal(pmu__parse_format("config:0-7\n", &field, &mask), 0);
	assert_int_equal(field, 0);
	assert_int_equal(mask, 0xff);
	assert_int_equal(pmu__parse_format("config1:0-15", &field, &mask), 0);
	assert_int_equal(field, 1);
	assert_int_equal(mask, 0xffff);
	assert_int_equal(pmu__parse_format("config2:0", &field, &mask), 0);
	assert_int_equal(field, 2);
	assert_int_equal(mask, 1);
	/* The ABI document's own example. */
	assert_int_equal(pmu__parse_format("config1:1,6-10,44", &field, &mask), 0);
	assert_int_equal(mask, (1ULL << 1) | (0x1fULL << 6) | (1ULL << 44));
	assert_int_equal(pmu__parse_format("config:0-63", &field, &mask), 0);
	assert_int_equal(mask, ~0ULL);
	assert_int_equal(pmu__parse_format("config:0-7,32-35", &field, &mask), 0);
	assert_int_equal(mask, 0xf000000ffULL);
}

static void malformed_formats_are_einval(void **state)
{
	static const char *const bad[] = {
		"", "config", "config:", "config:8-", "config:15-8", "config:64",
		"config:0-64", "cfg:0-7", "config3:0", "config0:1", "config:0-7x",
		"config:-1", "config:0,,1", "config:0,", "config:1 2", "config1:0-15,a",
		"config:99999999999999999999",
	};
	int field;
	uint64_t mask;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (pmu__parse_format(bad[i], &field, &mask) != -EINVAL)
			fail_msg("format '%s' was accepted", bad[i]);
	}
}

static void values_fill_scattered_bits_and_must_fit(void **state)
{
	struct perf_event_attr attr = { .config = 0xff00 };
	uint64_t mask = 0xf000000ffULL;	/* AMD's "config:0-7,32-35" */

	(void)state;
	assert_int_equal(pmu__set_bits(&attr, 0, mask, 0x1ab), 0);
	assert_int_equal(attr.config, 0xff00 | 0xab | (1ULL << 32));
	/* Setting again replaces, not ORs. */
	assert_int_equal(pmu__set_bits(&attr, 0, mask, 0x2), 0);
	assert_int_equal(attr.config, 0xff00 | 0x2);
	assert_int_equal(pmu__set_bits(&attr, 0, mask, 0x1000), -EINVAL);	/* 13 bits into 12 */
	assert_int_equal(pmu__set_bits(&attr, 1, 0xffff, 0x10000), -EINVAL);
	assert_int_equal(pmu__set_bits(&attr, 3, 0xff, 1), -EINVAL);
	assert_int_equal(pmu__set_bits(&attr, 1, ~0ULL, ~0ULL), 0);
	assert_int_equal(attr.config1, ~0ULL);
}

/* A workload of events_per_sec events: the sampler sees events / period. */
static uint64_t run_epochs(uint64_t period, double events_per_sec, int epochs)
{
	for (int i = 0; i < epochs; i++)
		period = pmu__next_period(period, events_per_sec / period, 3000, 0.01);
	return period;
}

static void period_converges_to_the_share(void **state)
{
	/* 1% of a core at 3 us a sample pays for 3333 samples/s. */
	static const double workloads[] = { 5e7, 5e8, 3e9, 2e10 };

	(void)state;
	for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++) {
		uint64_t starts[] = { PMU_PERIOD_START, PMU_PERIOD_MIN, PMU_PERIOD_MAX };

		for (size_t k = 0; k < 3; k++) {
			uint64_t p = run_epochs(starts[k], workloads[i], 30);
			double share = workloads[i] / p * 3000 / 1e9;

			if (share < 0.01 * 0.85 || share > 0.01 * 1.15)
				fail_msg("%.0e events/s from period %llu: period %llu costs %.4f of a core",
					 workloads[i], (unsigned long long)starts[k],
					 (unsigned long long)p, share);
		}
	}
	/* Over budget, one step is enough to get under it. */
	assert_true(5e8 / pmu__next_period(1000, 5e8 / 1000, 3000, 0.01) * 3000 / 1e9 <= 0.0101);
}

static void period_respects_its_bounds(void **state)
{
	(void)state;
	/* More events than the longest period can tame: stays at the maximum. */
	assert_int_equal(run_epochs(PMU_PERIOD_START, 1e16, 10), PMU_PERIOD_MAX);
	/* Almost no events: goes down to the minimum, not below. */
	assert_int_equal(run_epochs(PMU_PERIOD_START, 10, 40), PMU_PERIOD_MIN);
	assert_int_equal(pmu__next_period(PMU_PERIOD_MIN, 0, 3000, 0.01), PMU_PERIOD_MIN);
	/* Out-of-range current periods are brought in first. */
	assert_true(pmu__next_period(0, 3333, 3000, 0.01) >= PMU_PERIOD_MIN);
	assert_true(pmu__next_period(UINT64_MAX, 3333, 3000, 0.01) <= PMU_PERIOD_MAX);
	assert_int_equal(pmu__next_period(50000, 1e300, 3000, 0.01), PMU_PERIOD_MAX);
}

static void period_never_divides_by_zero(void **state)
{
	(void)state;
	/* No share: sample as little as possible. */
	assert_int_equal(pmu__next_period(50000, 1000, 3000, 0), PMU_PERIOD_MAX);
	assert_int_equal(pmu__next_period(50000, 1000, 3000, -1), PMU_PERIOD_MAX);
	assert_int_equal(pmu__next_period(50000, 1000, 3000, NAN), PMU_PERIOD_MAX);
	/* Unknown cost or rate: keep the period. */
	assert_int_equal(pmu__next_period(50000, 1000, 0, 0.01), 50000);
	assert_int_equal(pmu__next_period(50000, 1000, -5, 0.01), 50000);
	assert_int_equal(pmu__next_period(50000, 1000, NAN, 0.01), 50000);
	assert_int_equal(pmu__next_period(50000, 1000, INFINITY, 0.01), 50000);
	assert_int_equal(pmu__next_period(50000, NAN, 3000, 0.01), 50000);
	assert_int_equal(pmu__next_period(50000, -1, 3000, 0.01), 50000);
	assert_int_equal(pmu__next_period(50000, INFINITY, 3000, 0.01), 50000);
	/* A cost so small the budget is huge: more samples, within bounds. */
	assert_true(pmu__next_period(50000, 1000, 1e-300, 0.01) < 50000);
	assert_true(pmu__next_period(50000, 1000, 1e-300, 0.01) >= PMU_PERIOD_MIN);
	/* Zero samples: halve the period (more samples), never below the minimum. */
	assert_int_equal(pmu__next_period(50000, 0, 3000, 0.01), 25000);
}

static void sampling_rises_when_the_rate_drops(void **state)
{
	uint64_t p = run_epochs(PMU_PERIOD_START, 5e8, 30), lower, higher;

	(void)state;
	/* In the dead band the period stays: no ioctl every epoch. */
	assert_int_equal(pmu__next_period(p, 3333 * 1.05, 3000, 0.01), p);
	assert_int_equal(pmu__next_period(p, 3333 * 0.95, 3000, 0.01), p);
	/* The workload calms down: shorter period, more samples, but at most halved. */
	lower = pmu__next_period(p, 5e7 / p, 3000, 0.01);
	assert_true(lower < p);
	assert_true(lower >= p / 2);
	/* And back up when it gets busy. */
	higher = pmu__next_period(p, 5e9 / p, 3000, 0.01);
	assert_true(higher > p);
	/* A larger share buys more samples. */
	assert_true(pmu__next_period(p, 5e8 / p, 3000, 0.05) < p);
}

static void period_fits_what_the_pmu_accepts(void **state)
{
	struct pmu_discovery amd, intel;

	(void)state;
	assert_int_equal(pmu__discover(FIX "amd-genoa", NULL, &amd), 0);
	assert_int_equal(pmu__fit_period(&amd, 20000), 20000);
	assert_int_equal(pmu__fit_period(&amd, 1001), 992);
	assert_int_equal(pmu__fit_period(&amd, 5), 0x90);
	assert_int_equal(pmu__fit_period(&amd, 0), 0x90);
	assert_int_equal(pmu__fit_period(&amd, PMU_PERIOD_MAX), PMU_PERIOD_MAX);
	assert_int_equal(pmu__fit_period(&amd, 1ULL << 40), 0x7fffff0);
	assert_int_equal(pmu__discover(FIX "intel-spr", NULL, &intel), 0);
	assert_int_equal(pmu__fit_period(&intel, 20011), 20011);
	assert_int_equal(pmu__fit_period(&intel, PMU_PERIOD_MAX), PMU_PERIOD_MAX);
}

static void set_period_reports_the_first_error(void **state)
{
	int p[2], fds[3];

	(void)state;
	assert_int_equal(pipe(p), 0);
	fds[0] = -1;	/* skipped */
	fds[1] = p[0];	/* not a perf event: ENOTTY */
	fds[2] = p[1];
	assert_int_equal(pmu__set_period(fds, 1, 1000), 0);
	assert_int_equal(pmu__set_period(fds, 3, 1000), -ENOTTY);
	assert_int_equal(pmu__set_period(NULL, 0, 1000), 0);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(intel_spr_gives_pebs_loads_and_stores),
		cmocka_unit_test(intel_latency_threshold_and_loads_only),
		cmocka_unit_test(intel_hybrid_gives_both_core_types_on_their_cpus),
		cmocka_unit_test(amd_genoa_gives_ibs_op),
		cmocka_unit_test(vm_without_pmu_is_enoent_saying_what_was_looked_for),
		cmocka_unit_test(malformed_trees_are_refused_not_misparsed),
		cmocka_unit_test(format_files_parse_as_documented),
		cmocka_unit_test(malformed_formats_are_einval),
		cmocka_unit_test(values_fill_scattered_bits_and_must_fit),
		cmocka_unit_test(period_converges_to_the_share),
		cmocka_unit_test(period_respects_its_bounds),
		cmocka_unit_test(period_never_divides_by_zero),
		cmocka_unit_test(sampling_rises_when_the_rate_drops),
		cmocka_unit_test(period_fits_what_the_pmu_accepts),
		cmocka_unit_test(set_period_reports_the_first_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
