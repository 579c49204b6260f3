// SPDX-License-Identifier: MIT
/*
 * Memory-sampling PMU events, found in sysfs the way the kernel documents
 * them (Documentation/ABI/testing/sysfs-bus-event_source-devices-{events,format}):
 *
 *  - <pmu>/type is the perf_event_attr.type to open the PMU with;
 *  - <pmu>/events/<name> is "term[=value],..." where each term names a file in
 *    <pmu>/format/, a term alone means 1 and "term=?" is a parameter the user
 *    must supply;
 *  - <pmu>/format/<term> is "configN:bits" with bits a list of bits and
 *    ranges ("config1:1,6-10,44"); a value fills those bits low bit first.
 *
 * Intel: the core PMU is "cpu", or "cpu_core" and "cpu_atom" on hybrid parts
 * (each with a "cpus" list: an event opens only on its own CPUs).  mem-loads
 * is the PEBS load-latency event; its ldlat term (format config1:0-15) is the
 * threshold in cycles.  The alias says ldlat=3, which samples L1 hits too; the
 * default here is 30 cycles, past L2, so samples go to memory-bound loads.
 * mem-stores is PEBS store sampling.  Both need PEBS: precise_ip 2 (zero skid
 * requested), lowered to caps/max_precise when that is smaller; 0 there means
 * no PEBS (a VM whose vPMU lacks it), so the event is not usable.  Not 3: on
 * Golden Cove that pins an event to counter 0 (PDIST), which the load-latency
 * event cannot use.  Sapphire Rapids and Alder Lake want mem-loads-aux as
 * group leader only when PERF_SAMPLE_DATA_SRC is asked for; it is not, so
 * mem-loads opens alone.  PERF_SAMPLE_WEIGHT carries the load latency.
 *
 * AMD: ibs_op samples one op in every period; a load or store comes with its
 * data address (PERF_SAMPLE_ADDR, since Linux 6.1).  cnt_ctl=1 counts
 * dispatched ops instead of cycles; l3missonly=1 (Zen 4) keeps only ops that
 * missed the L3, the memory-bound ones.  IBS has no privilege filter in
 * hardware: exclude_kernel is refused unless the swfilt term (config2:0,
 * Linux 6.14) asks the kernel to filter in software, so it is set only when
 * format/swfilt exists.  The period is counted in 16s: a multiple of 16, at
 * least 0x90 (the kernel refuses others in PERF_EVENT_IOC_PERIOD), at most
 * 0xffff0, or 0x7fffff0 with the wider counter Zen 4 reports in
 * caps/zen4_ibs_extensions.
 *
 * The sample period then adapts (pmu__next_period): the cost of sampling is
 * samples per second times the cost of one sample, and the period moves to
 * keep that under a share of one core.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "pmu.h"
#include "util.h"

#define DEVICES "/sys/bus/event_source/devices"

/* Reads root/DEVICES/pmu/file without trailing white space. */
static int read_pmu_file(const char *root, const char *pmu, const char *file,
			 char *buf, size_t len)
{
	char path[512];
	size_t n;
	int err;

	snprintf(path, sizeof(path), DEVICES "/%s/%s", pmu, file);
	if ((err = read_text(root, path, buf, len)))
		return err;
	n = strlen(buf);
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return 0;
}

/* "0x1f" or "31", nothing else; the whole string must be the number. */
static int parse_number(const char *s, uint64_t *out)
{
	int base = 10;
	char *end;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!isxdigit((unsigned char)s[0]) || (base == 10 && !isdigit((unsigned char)s[0])))
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, base);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

static int parse_bit(const char **p, unsigned *bit)
{
	unsigned v = 0;
	const char *s = *p;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (*s++ - '0');
		if (v > 63)
			return -EINVAL;
	}
	*bit = v;
	*p = s;
	return 0;
}

int pmu__parse_format(const char *text, int *field, uint64_t *mask)
{
	static const char *const fields[] = { "config", "config1", "config2" };
	const char *colon = strchr(text, ':'), *p;
	size_t n;

	if (!colon)
		return -EINVAL;
	n = colon - text;
	*field = -1;
	for (int i = 0; i < (int)ARRAY_SIZE(fields); i++)
		if (n == strlen(fields[i]) && !strncmp(text, fields[i], n))
			*field = i;
	if (*field < 0)
		return -EINVAL;	/* config3 and beyond: not in this uapi header */
	*mask = 0;
	p = colon + 1;
	for (;;) {
		unsigned lo, hi;

		if (parse_bit(&p, &lo))
			return -EINVAL;
		hi = lo;
		if (*p == '-') {
			p++;
			if (parse_bit(&p, &hi) || hi < lo)
				return -EINVAL;
		}
		*mask |= (hi == 63 ? ~0ULL : (1ULL << (hi + 1)) - 1) & ~((1ULL << lo) - 1);
		if (*p != ',')
			break;
		p++;
	}
	while (isspace((unsigned char)*p))
		p++;
	return *p ? -EINVAL : 0;
}

static __u64 *attr_field(struct perf_event_attr *attr, int field)
{
	switch (field) {
	case 0:
		return &attr->config;
	case 1:
		return &attr->config1;
	case 2:
		return &attr->config2;
	}
	return NULL;
}

int pmu__set_bits(struct perf_event_attr *attr, int field, uint64_t mask, uint64_t value)
{
	__u64 *cfg = attr_field(attr, field);
	uint64_t out = 0;
	int width = __builtin_popcountll(mask);

	if (!cfg || !mask || (width < 64 && value >> width))
		return -EINVAL;
	for (int bit = 0; bit < 64; bit++) {
		if (!(mask >> bit & 1))
			continue;
		out |= (value & 1) << bit;
		value >>= 1;
	}
	*cfg = (*cfg & ~mask) | out;
	return 0;
}

/* Sets term (a file in pmu/format/) to value; -EINVAL with d->why if it cannot. */
static int set_term(const char *root, const char *pmu, const char *term, uint64_t value,
		    struct perf_event_attr *attr, struct pmu_discovery *d)
{
	char file[128], fmt[256];
	uint64_t mask;
	int field, err;

	snprintf(file, sizeof(file), "format/%s", term);
	err = read_pmu_file(root, pmu, file, fmt, sizeof(fmt));
	if (err) {
		snprintf(d->why, sizeof(d->why), "%s%s/%s/%s: %s", root ? root : "", DEVICES,
			 pmu, file, err == -ENOENT ? "no such format term" : strerror(-err));
		return err == -ENOENT ? -EINVAL : err;
	}
	if (pmu__parse_format(fmt, &field, &mask)) {
		snprintf(d->why, sizeof(d->why),
			 "%s%s/%s/%s: '%s' is not a format ('configN:bits', e.g. 'config:0-7')",
			 root ? root : "", DEVICES, pmu, file, fmt);
		return -EINVAL;
	}
	if (pmu__set_bits(attr, field, mask, value)) {
		snprintf(d->why, sizeof(d->why), "%s%s/%s/%s: value 0x%llx does not fit in '%s'",
			 root ? root : "", DEVICES, pmu, file, (unsigned long long)value, fmt);
		return -EINVAL;
	}
	return 0;
}

static bool term_name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/*
 * Builds attr's config words from pmu/events/alias.  A "ldlat" term gets
 * ldlat instead of the alias' own value when ldlat is not 0; *has_ldlat says
 * whether the alias had one.  -ENOENT if there is no such alias.
 */
static int parse_event(const char *root, const char *pmu, const char *alias, uint32_t ldlat,
		       struct perf_event_attr *attr, bool *has_ldlat, struct pmu_discovery *d)
{
	char file[128], text[512], *term, *save = NULL;
	int err;

	*has_ldlat = false;
	snprintf(file, sizeof(file), "events/%s", alias);
	if ((err = read_pmu_file(root, pmu, file, text, sizeof(text))))
		return err;
	if (!text[0] || text[strlen(text) - 1] == ',' || strstr(text, ",,") || text[0] == ',')
		goto bad;
	for (term = strtok_r(text, ",", &save); term; term = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(term, '=');
		uint64_t v = 1;

		if (eq)
			*eq = '\0';
		if (!term_name_ok(term))
			goto bad;
		if (!strcmp(term, "ldlat")) {
			*has_ldlat = true;
			if (ldlat) {
				v = ldlat;
				eq = NULL;
			}
		}
		if (eq && parse_number(eq + 1, &v)) {
			snprintf(d->why, sizeof(d->why),
				 "%s%s/%s/%s: term '%s' has value '%s', not a number%s",
				 root ? root : "", DEVICES, pmu, file, term, eq + 1,
				 strcmp(eq + 1, "?") ? "" : " (a parameter this agent cannot fill)");
			return -EINVAL;
		}
		if ((err = set_term(root, pmu, term, v, attr, d)))
			return err;
	}
	return 0;
bad:
	snprintf(d->why, sizeof(d->why),
		 "%s%s/%s/%s: '%s' is not a list of 'term[=value]'", root ? root : "",
		 DEVICES, pmu, file, text);
	return -EINVAL;
}

static int read_u64(const char *root, const char *pmu, const char *file, uint64_t *v,
		    struct pmu_discovery *d)
{
	char text[64];
	int err = read_pmu_file(root, pmu, file, text, sizeof(text));

	if (err)
		return err;
	if (parse_number(text, v)) {
		snprintf(d->why, sizeof(d->why), "%s%s/%s/%s: '%s' is not a number",
			 root ? root : "", DEVICES, pmu, file, text);
		return -EINVAL;
	}
	return 0;
}

/* Walks a CPU list ("0-15,32-47"); -EINVAL if malformed, else whether cpu is in it. */
static int cpulist_has(const char *list, int cpu)
{
	const char *p = list;
	bool found = false;

	if (!*p)
		return -EINVAL;
	for (;;) {
		char *end;
		long lo, hi;

		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		lo = hi = strtol(p, &end, 10);
		p = end;
		if (*p == '-') {
			if (!isdigit((unsigned char)p[1]))
				return -EINVAL;
			hi = strtol(p + 1, &end, 10);
			p = end;
			if (hi < lo)
				return -EINVAL;
		}
		if (cpu >= lo && cpu <= hi)
			found = true;
		if (*p != ',')
			break;
		p++;
	}
	return *p ? -EINVAL : found;
}

bool pmu__event_on_cpu(const struct pmu_event *ev, int cpu)
{
	return !ev->cpus[0] || cpulist_has(ev->cpus, cpu) == 1;
}

static struct pmu_event *new_event(struct pmu_discovery *d, const char *pmu, uint32_t type)
{
	struct pmu_event *ev = &d->ev[d->nr];

	memset(ev, 0, sizeof(*ev));
	snprintf(ev->pmu, sizeof(ev->pmu), "%s", pmu);
	ev->attr.size = sizeof(ev->attr);
	ev->attr.type = type;
	ev->attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR;
	ev->min_period = 1;
	ev->max_period = (1ULL << 47) - 1;	/* 48-bit counters */
	ev->period_step = 1;
	return ev;
}

/*
 * One Intel core PMU: mem-loads, and mem-stores when it has them.  -ENOENT
 * (with a reason appended to *absent) when the PMU or its mem-loads is not
 * there or cannot do PEBS.
 */
static int discover_intel(const char *root, const char *pmu, const struct pmu_opts *o,
			  struct pmu_discovery *d, char *absent, size_t absent_len)
{
	uint32_t ldlat = o->ldlat ? o->ldlat : PMU_LDLAT_DEFAULT;
	uint64_t type, max_precise = 2;
	char cpus[256] = "";
	struct pmu_event *ev;
	bool has_ldlat;
	int err, first = d->nr;

	if ((err = read_u64(root, pmu, "type", &type, d)))
		return err;
	err = read_pmu_file(root, pmu, "cpus", cpus, sizeof(cpus));
	if (err && err != -ENOENT)
		return err;
	if (!err && cpulist_has(cpus, 0) < 0) {
		snprintf(d->why, sizeof(d->why), "%s%s/%s/cpus: '%s' is not a CPU list",
			 root ? root : "", DEVICES, pmu, cpus);
		return -EINVAL;
	}

	ev = new_event(d, pmu, type);
	err = parse_event(root, pmu, "mem-loads", ldlat, &ev->attr, &has_ldlat, d);
	if (err == -ENOENT) {
		snprintf(absent + strlen(absent), absent_len - strlen(absent),
			 "; %s has no events/mem-loads", pmu);
		return -ENOENT;
	}
	if (err)
		return err;
	err = read_u64(root, pmu, "caps/max_precise", &max_precise, d);
	if (err && err != -ENOENT)
		return err;
	if (max_precise == 0) {
		snprintf(absent + strlen(absent), absent_len - strlen(absent),
			 "; %s/caps/max_precise is 0 (no PEBS: mem-loads cannot sample addresses)",
			 pmu);
		return -ENOENT;
	}
	ev->attr.precise_ip = max_precise < 2 ? max_precise : 2;
	ev->attr.sample_type |= PERF_SAMPLE_WEIGHT;	/* the load's latency */
	ev->attr.exclude_kernel = 1;
	ev->attr.exclude_hv = 1;
	snprintf(ev->cpus, sizeof(ev->cpus), "%s", cpus);
	if (has_ldlat)
		snprintf(ev->name, sizeof(ev->name), "%s/mem-loads,ldlat=%u/%s", pmu, ldlat,
			 ev->attr.precise_ip == 2 ? "pp" : "p");
	else
		snprintf(ev->name, sizeof(ev->name), "%s/mem-loads/%s", pmu,
			 ev->attr.precise_ip == 2 ? "pp" : "p");
	d->nr++;

	if (o->no_stores || d->nr == PMU_MAX_EVENTS)
		return 0;
	ev = new_event(d, pmu, type);
	err = parse_event(root, pmu, "mem-stores", 0, &ev->attr, &has_ldlat, d);
	if (err == -ENOENT)
		return 0;
	if (err) {
		d->nr = first;
		return err;
	}
	ev->stores = true;
	ev->attr.precise_ip = d->ev[first].attr.precise_ip;
	ev->attr.exclude_kernel = 1;
	ev->attr.exclude_hv = 1;
	snprintf(ev->cpus, sizeof(ev->cpus), "%s", cpus);
	snprintf(ev->name, sizeof(ev->name), "%s/mem-stores/%s", pmu,
		 ev->attr.precise_ip == 2 ? "pp" : "p");
	d->nr++;
	return 0;
}

static int has_format(const char *root, const char *pmu, const char *term)
{
	char file[128], text[256];
	int err;

	snprintf(file, sizeof(file), "format/%s", term);
	err = read_pmu_file(root, pmu, file, text, sizeof(text));
	return err == -ENOENT ? 0 : err ? err : 1;
}

/* Sets term to 1 when pmu has it; returns 1 if set, 0 if absent, or -errno. */
static int set_if_present(const char *root, const char *pmu, const char *term,
			  struct perf_event_attr *attr, struct pmu_discovery *d)
{
	int err = has_format(root, pmu, term);

	if (err <= 0)
		return err;
	return (err = set_term(root, pmu, term, 1, attr, d)) ? err : 1;
}

static int discover_amd(const char *root, const struct pmu_opts *o, struct pmu_discovery *d)
{
	static const char *const pmu = "ibs_op";
	uint64_t type, zen4 = 0;
	struct pmu_event *ev;
	int cnt_ctl, l3miss = 0, swfilt, err;

	if ((err = read_u64(root, pmu, "type", &type, d)))
		return err;
	err = read_u64(root, pmu, "caps/zen4_ibs_extensions", &zen4, d);
	if (err && err != -ENOENT)
		return err;
	ev = new_event(d, pmu, type);
	if ((cnt_ctl = set_if_present(root, pmu, "cnt_ctl", &ev->attr, d)) < 0)
		return cnt_ctl;
	if (!o->amd_all_ops && (l3miss = set_if_present(root, pmu, "l3missonly", &ev->attr, d)) < 0)
		return l3miss;
	if ((swfilt = set_if_present(root, pmu, "swfilt", &ev->attr, d)) < 0)
		return swfilt;
	if (swfilt) {
		ev->attr.exclude_kernel = 1;
		ev->attr.exclude_hv = 1;
	}
	ev->attr.sample_type |= PERF_SAMPLE_WEIGHT;	/* data cache miss latency of loads */
	ev->min_period = 0x90;
	ev->max_period = zen4 ? 0x7fffff0 : 0xffff0;
	ev->period_step = 16;
	snprintf(ev->name, sizeof(ev->name), "ibs_op/%s%s%s%s%s/", cnt_ctl ? "cnt_ctl=1" : "",
		 cnt_ctl && l3miss ? "," : "", l3miss ? "l3missonly=1" : "",
		 (cnt_ctl || l3miss) && swfilt ? "," : "", swfilt ? "swfilt=1" : "");
	d->nr++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Appends the PMUs under root's DEVICES, sorted, to buf. */
static void list_pmus(const char *root, char *buf, size_t len)
{
	char path[4096], names[64][64];
	const char *sorted[64];
	struct dirent *de;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "%s%s", root ? root : "", DEVICES);
	dir = opendir(path);
	if (!dir) {
		snprintf(buf + strlen(buf), len - strlen(buf), "; %s: %s", path, strerror(errno));
		return;
	}
	while ((de = readdir(dir)) && n < 64) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(names[n], sizeof(names[n]), "%.63s", de->d_name);
		sorted[n] = names[n];
		n++;
	}
	closedir(dir);
	qsort(sorted, n, sizeof(sorted[0]), cmp_str);
	snprintf(buf + strlen(buf), len - strlen(buf), "; PMUs there:%s", n ? "" : " none");
	for (int i = 0; i < n; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), " %s", sorted[i]);
}

int pmu__discover(const char *root, const struct pmu_opts *o, struct pmu_discovery *d)
{
	static const struct pmu_opts defaults;
	char absent[256] = "";
	int err;

	memset(d, 0, sizeof(*d));
	if (!o)
		o = &defaults;
	if (o->ldlat > 0xffff) {
		snprintf(d->why, sizeof(d->why),
			 "load latency threshold %u cycles: the PEBS threshold is 16 bits (1..65535)",
			 o->ldlat);
		return -EINVAL;
	}
	/* Intel, one core PMU; then hybrid: big cores, and small ones when they can. */
	err = discover_intel(root, "cpu", o, d, absent, sizeof(absent));
	if (err == -ENOENT) {
		err = discover_intel(root, "cpu_core", o, d, absent, sizeof(absent));
		if (!err) {
			int atom = discover_intel(root, "cpu_atom", o, d, absent, sizeof(absent));

			if (atom && atom != -ENOENT)
				err = atom;
		}
	}
	if (err == -ENOENT)
		err = discover_amd(root, o, d);
	if (err == -ENOENT) {
		snprintf(d->why, sizeof(d->why),
			 "no memory-sampling PMU under %s%s: looked for cpu/events/mem-loads and cpu_core/events/mem-loads (Intel PEBS), ibs_op/type (AMD IBS)%s",
			 root ? root : "", DEVICES, absent);
		list_pmus(root, d->why, sizeof(d->why));
		d->nr = 0;
		return -ENOENT;
	}
	if (err) {
		if (!d->why[0])
			snprintf(d->why, sizeof(d->why), "reading %s%s: %s", root ? root : "",
				 DEVICES, strerror(-err));
		d->nr = 0;
		return err;
	}
	snprintf(d->why, sizeof(d->why), "memory-sampling event%s", d->nr > 1 ? "s" : "");
	for (int i = 0; i < d->nr; i++)
		snprintf(d->why + strlen(d->why), sizeof(d->why) - strlen(d->why), "%s %s%s%s%s",
			 i ? "," : "", d->ev[i].name, d->ev[i].cpus[0] ? " (CPUs " : "",
			 d->ev[i].cpus, d->ev[i].cpus[0] ? ")" : "");
	return 0;
}

uint64_t pmu__next_period(uint64_t current_period, double samples_per_sec,
			  double cost_ns_per_sample, double cpu_share)
{
	double cur = current_period, budget, ratio, next;

	if (cur < PMU_PERIOD_MIN)
		cur = PMU_PERIOD_MIN;
	if (cur > PMU_PERIOD_MAX)
		cur = PMU_PERIOD_MAX;
	if (!(cpu_share > 0))	/* also NaN */
		return PMU_PERIOD_MAX;
	if (!(samples_per_sec >= 0) || !(cost_ns_per_sample > 0) ||
	    isinf(samples_per_sec) || isinf(cost_ns_per_sample))
		return cur;
	/* Samples per second the share pays for; > 0 and finite here. */
	budget = cpu_share * 1e9 / cost_ns_per_sample;
	if (!(budget > 0) || isinf(budget))
		return isinf(budget) ? PMU_PERIOD_MIN : PMU_PERIOD_MAX;
	/* The rate falls as the period grows: the ideal period is cur * ratio. */
	ratio = samples_per_sec / budget;
	if (ratio > 0.9 && ratio < 1.1)
		return cur;
	if (ratio >= 1.1)
		next = cur * ratio;	/* over budget: cut at once */
	else
		next = cur * fmax(sqrt(ratio), 0.5);	/* halfway, at most halved */
	if (next < PMU_PERIOD_MIN)
		next = PMU_PERIOD_MIN;
	if (next > PMU_PERIOD_MAX)
		next = PMU_PERIOD_MAX;
	return (uint64_t)next;
}

uint64_t pmu__fit_period(const struct pmu_discovery *d, uint64_t period)
{
	uint64_t lo = 1, hi = UINT64_MAX, step = 1;

	for (int i = 0; i < d->nr; i++) {
		if (d->ev[i].min_period > lo)
			lo = d->ev[i].min_period;
		if (d->ev[i].max_period && d->ev[i].max_period < hi)
			hi = d->ev[i].max_period;
		if (d->ev[i].period_step > step)
			step = d->ev[i].period_step;
	}
	if (period > hi)
		period = hi;
	period -= period % step;
	if (period < lo)
		period = lo + (step - lo % step) % step;
	return period;
}

int pmu__set_period(const int *fds, int nr_fds, uint64_t period)
{
	int err = 0;

	for (int i = 0; i < nr_fds; i++)
		if (fds[i] >= 0 && ioctl(fds[i], PERF_EVENT_IOC_PERIOD, &period) && !err)
			err = -errno;
	return err;
}
