// SPDX-License-Identifier: MIT
/* Design notes live in bpf/damon.bpf.c and damon.h. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "damon.h"
#include "damon.skel.h"
#include "pagemap.h"
#include "util.h"

#define ADMIN "/sys/kernel/mm/damon/admin/kdamonds"
#define CTX ADMIN "/0/contexts/0"
#define MAX_RAM_RANGES 16

static int read_trim(const char *root, const char *path, char *buf, size_t len)
{
	int err = read_text(root, path, buf, len);

	if (!err)
		buf[strcspn(buf, "\n")] = '\0';
	return err;
}

static int read_int(const char *root, const char *path, long *out)
{
	char buf[32];
	int err = read_trim(root, path, buf, sizeof(buf));

	if (!err && sscanf(buf, "%ld", out) != 1)
		err = -EINVAL;
	return err;
}

static int write_int(const char *root, const char *path, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	return write_text(root, path, buf);
}

static int on_region(void *ctx, void *data, size_t len)
{
	struct damon_src *d = ctx;

	if (len < sizeof(struct cxlt_damon_region))
		return 0;
	if (d->nr == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 1024;
		struct cxlt_damon_region *r = realloc(d->regions, cap * sizeof(*r));

		if (!r)
			return 0;	/* dropped: the next aggregation brings it again */
		d->regions = r;
		d->cap = cap;
	}
	d->regions[d->nr++] = *(struct cxlt_damon_region *)data;
	d->regions_seen++;
	return 0;
}

/*
 * The state file names what we started, with enough of its configuration that
 * the next start can tell it from a kdamond someone set up after we died.
 */
static void save_state(const struct damon_src *d)
{
	char tmp[520], why[800];
	FILE *f;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", d->state_path);
	fd = create_private_file(tmp, why, sizeof(why));
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		pr_warn("%s (a SIGKILLed agent's kdamond would stay behind)",
			fd < 0 ? why : "cannot write the DAMON state: out of memory");
		if (fd >= 0)
			close(fd);
		return;
	}
	fprintf(f, "pid %d ops %s nr_targets %u first %d\n", d->kdamond_pid, d->ops, d->written_nr,
		d->written_first);
	if (fflush(f) || fsync(fileno(f)) || fclose(f) || rename(tmp, d->state_path))
		pr_warn("cannot write %s: %s", d->state_path, strerror(errno));
}

static void remove_own(const char *root)
{
	char state[16] = "";

	if (!read_trim(root, ADMIN "/0/state", state, sizeof(state)) && !strcmp(state, "on"))
		write_text(root, ADMIN "/0/state", "off");
	write_text(root, ADMIN "/nr_kdamonds", "0");
}

/*
 * Whether kdamond 0 is still the one we set up: running, the very thread we
 * started; stopped (its targets all exited, or never started), the
 * configuration we last wrote.  Anything else is someone else's now.
 */
static bool looks_ours(const char *root, int pid, const char *ops, long nr_targets, long first)
{
	char state[16] = "", cur_ops[16] = "";
	long nr = 0, cur_pid = -1, cur_nr_targets = -1, cur_first = 0;

	if (read_int(root, ADMIN "/nr_kdamonds", &nr) || nr != 1)
		return false;
	read_trim(root, ADMIN "/0/state", state, sizeof(state));
	if (!strcmp(state, "on"))
		return !read_int(root, ADMIN "/0/pid", &cur_pid) && cur_pid == pid && pid > 0;
	read_trim(root, CTX "/operations", cur_ops, sizeof(cur_ops));
	read_int(root, CTX "/targets/nr_targets", &cur_nr_targets);
	if (cur_nr_targets > 0)
		read_int(root, CTX "/targets/0/pid_target", &cur_first);
	if (!strcmp(ops, "-"))	/* created, not configured yet: still empty */
		return cur_nr_targets <= 0;
	return !strcmp(cur_ops, ops) && cur_nr_targets == nr_targets && (!nr_targets || cur_first == first);
}

int damon__recover(const char *root, const char *state_path)
{
	char line[200], ops[16];
	int pid, first, mine;
	unsigned int nr_targets;
	char why[2 * PATH_MAX + 256];
	FILE *f;
	int open_err;

	/* It makes the agent stop and remove a kdamond: only a file root alone could write counts. */
	f = fopen_trusted(state_path, "make the agent stop someone else's kdamond", why, sizeof(why), &open_err);
	if (!f) {
		if (open_err)
			pr_err("DAMON state left by an earlier agent: %s", why);
		return open_err;
	}
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "pid %d ops %15s nr_targets %u first %d", &pid, ops, &nr_targets, &first) != 4) {
		pr_warn("%s: not a state file this agent wrote; ignoring it", state_path);
		fclose(f);
		unlink(state_path);
		return 0;
	}
	fclose(f);
	mine = looks_ours(root, pid, ops, nr_targets, first);
	if (mine) {
		remove_own(root);
		pr_info("stopped and removed the kdamond (pid %d) an agent that did not stop cleanly left running", pid);
	} else {
		pr_info("%s: the kdamond it names is gone or is no longer ours: leaving DAMON alone", state_path);
	}
	unlink(state_path);
	return mine;
}

/* Ours still?  If not, we let go of it for good: never touch it again. */
static bool still_ours(struct damon_src *d)
{
	if (looks_ours(d->root, d->kdamond_pid, d->ops, d->written_nr, d->written_first))
		return true;
	pr_warn("damon: kdamond 0 is no longer the one we set up (someone set DAMON up after ours stopped): leaving it alone; no more DAMON samples");
	d->own = false;
	unlink(d->state_path);
	return false;
}

static int attach_bpf(struct damon_src *d)
{
	int err;

	d->skel = damon_bpf__open_and_load();
	if (!d->skel) {
		err = -errno;
		snprintf(d->why, sizeof(d->why), "cannot load the DAMON observer: %s (no damon:damon_aggregated tracepoint?)",
			 strerror(-err));
		return err;
	}
	d->skel->bss->kdamond_pid = d->kdamond_pid;
	d->link = bpf_program__attach(d->skel->progs.cxlt_damon_region);
	if (!d->link) {
		err = -errno;
		snprintf(d->why, sizeof(d->why), "cannot attach to damon:damon_aggregated: %s", strerror(-err));
		return err;
	}
	d->rb = ring_buffer__new(bpf_map__fd(d->skel->maps.cxlt_damon_regions), on_region, d, NULL);
	if (!d->rb)
		return -errno;
	return 0;
}

static int observe(struct damon_src *d)
{
	long pid = -1;

	read_trim(d->root, CTX "/operations", d->ops, sizeof(d->ops));
	if (strcmp(d->ops, "paddr")) {
		snprintf(d->why, sizeof(d->why), "the running kdamond (someone else's) monitors '%s'; only a paddr context can be mapped to the targets' pages",
			 d->ops);
		return -ENOTSUP;
	}
	read_int(d->root, ADMIN "/0/pid", &pid);
	d->kdamond_pid = (int)pid;
	snprintf(d->why, sizeof(d->why), "regions of the running kdamond (pid %d, %s), observed only: it is not ours",
		 d->kdamond_pid, d->ops);
	return attach_bpf(d);
}

/*
 * The top-level System RAM ranges of /proc/iomem, the regions a paddr
 * context of ours monitors; their number, or -errno.
 */
static int ram_ranges(uint64_t (*r)[2], int max)
{
	char line[256];
	int n = 0;
	FILE *f = fopen("/proc/iomem", "re");

	if (!f)
		return -errno;
	while (n < max && fgets(line, sizeof(line), f)) {
		uint64_t s, e;

		if (line[0] == ' ' || !strstr(line, ": System RAM") ||
		    sscanf(line, "%" SCNx64 "-%" SCNx64, &s, &e) != 2 || e <= s)
			continue;
		r[n][0] = s;
		r[n][1] = e + 1;
		n++;
	}
	fclose(f);
	return n ? n : -ENOENT;
}

static int configure_paddr(struct damon_src *d)
{
	uint64_t r[MAX_RAM_RANGES][2];
	int n = ram_ranges(r, MAX_RAM_RANGES), err;
	char path[200];

	if (n < 0)
		return n;
	d->written_nr = 1;
	d->written_first = 0;
	if ((err = write_int(d->root, CTX "/targets/nr_targets", 1)) ||
	    (err = write_int(d->root, CTX "/targets/0/regions/nr_regions", n)))
		return err;
	for (int i = 0; i < n; i++) {
		char v[32];

		snprintf(path, sizeof(path), CTX "/targets/0/regions/%d/start", i);
		snprintf(v, sizeof(v), "%" PRIu64, r[i][0]);
		if ((err = write_text(d->root, path, v)))
			return err;
		snprintf(path, sizeof(path), CTX "/targets/0/regions/%d/end", i);
		snprintf(v, sizeof(v), "%" PRIu64, r[i][1]);
		if ((err = write_text(d->root, path, v)))
			return err;
	}
	return 0;
}

/* Sets up kdamond 0, which we have just created; the caller removes it on failure. */
static int configure_own(struct damon_src *d, enum damon_mode mode)
{
	char avail[128] = "";
	int err;

	if ((err = write_text(d->root, ADMIN "/0/contexts/nr_contexts", "1"))) {
		snprintf(d->why, sizeof(d->why), "cannot create a DAMON context: %s", strerror(-err));
		return err;
	}
	read_text(d->root, CTX "/avail_operations", avail, sizeof(avail));	/* one per line */
	/* Without avail_operations (before 5.19) vaddr is the one every DAMON kernel has. */
	if (mode == DAMON_OWN_PADDR)
		snprintf(d->ops, sizeof(d->ops), "%s", strstr(avail, "paddr") ? "paddr" : "");
	else
		snprintf(d->ops, sizeof(d->ops), "%s",
			 !avail[0] || strstr(avail, "vaddr") ? "vaddr" :
			 mode == DAMON_ANY && strstr(avail, "paddr") ? "paddr" : "");
	if (!d->ops[0]) {
		for (char *c = avail; *c; c++)
			if (*c == '\n')
				*c = c[1] ? ' ' : '\0';
		snprintf(d->why, sizeof(d->why), "this kernel's DAMON has no %s operations (it has: %s)",
			 mode == DAMON_OWN_PADDR ? "paddr" : "vaddr", avail[0] ? avail : "none");
		return -ENOTSUP;
	}
	save_state(d);
	if ((err = write_text(d->root, CTX "/operations", d->ops)) ||
	    (err = write_int(d->root, CTX "/monitoring_attrs/intervals/sample_us", DAMON_SAMPLE_US)) ||
	    (err = write_int(d->root, CTX "/monitoring_attrs/intervals/aggr_us", DAMON_AGGR_US)) ||
	    (err = write_int(d->root, CTX "/monitoring_attrs/nr_regions/min", 10)) ||
	    (err = write_int(d->root, CTX "/monitoring_attrs/nr_regions/max", 1000))) {
		snprintf(d->why, sizeof(d->why), "cannot configure our kdamond: %s", strerror(-err));
		return err;
	}
	if (!strcmp(d->ops, "paddr")) {
		long pid = -1;

		/* One target for the whole machine: it starts now and runs until we stop. */
		if ((err = configure_paddr(d)) || (err = write_text(d->root, ADMIN "/0/state", "on"))) {
			snprintf(d->why, sizeof(d->why), "cannot start our paddr kdamond: %s", strerror(-err));
			return err;
		}
		read_int(d->root, ADMIN "/0/pid", &pid);
		d->kdamond_pid = (int)pid;
		save_state(d);
	}
	if ((err = attach_bpf(d)))
		return err;
	return 0;
}

static int start_own(struct damon_src *d, enum damon_mode mode)
{
	int err;

	snprintf(d->ops, sizeof(d->ops), "-");
	save_state(d);	/* before the first change: SIGKILL may come at any point */
	if ((err = write_text(d->root, ADMIN "/nr_kdamonds", "1"))) {
		snprintf(d->why, sizeof(d->why), "cannot create a kdamond: %s (someone else took DAMON?)",
			 strerror(-err));
		unlink(d->state_path);
		return err;
	}
	if ((err = configure_own(d, mode))) {
		remove_own(d->root);
		unlink(d->state_path);
		return err;
	}
	d->own = true;
	snprintf(d->why, sizeof(d->why), "the agent's own kdamond (%s, sampling every %d ms, aggregating every %d ms)%s",
		 d->ops, DAMON_SAMPLE_US / 1000, DAMON_AGGR_US / 1000,
		 strcmp(d->ops, "vaddr") ? "; regions mapped to pages through page frames" : "");
	return 0;
}

int damon__open(struct damon_src *d, const char *root, const char *state_path, enum damon_mode mode)
{
	long nr;
	int err;

	memset(d, 0, sizeof(*d));
	d->root = root;
	snprintf(d->state_path, sizeof(d->state_path), "%s", state_path);
	if (read_int(root, ADMIN "/nr_kdamonds", &nr)) {
		snprintf(d->why, sizeof(d->why), "this kernel has no DAMON sysfs interface (%s%s)",
			 root ? root : "", ADMIN);
		return -ENOENT;
	}
	if (nr > 0) {
		char state[16] = "";

		read_trim(root, ADMIN "/0/state", state, sizeof(state));
		if (mode == DAMON_ANY && !strcmp(state, "on")) {
			err = observe(d);
		} else {
			snprintf(d->why, sizeof(d->why), "DAMON is someone else's (%ld kdamond%s set up, kdamond 0 %s): the agent never changes it%s",
				 nr, nr == 1 ? "" : "s", !strcmp(state, "on") ? "running" : "stopped",
				 !strcmp(state, "on") ? "; --source damon observes it" : "");
			return -EBUSY;
		}
	} else {
		err = start_own(d, mode);
	}
	if (err) {
		char why[sizeof(d->why)];

		memcpy(why, d->why, sizeof(why));
		damon__close(d);
		memcpy(d->why, why, sizeof(why));
	}
	return err;
}

/* The live targets, in the tracker's order; true when they differ from what DAMON has. */
static bool targets_changed(struct damon_src *d, const struct tracker *tr, pid_t *want, uint32_t *n)
{
	*n = 0;
	for (uint32_t i = 0; i < tr->nr_targets; i++)
		if (!tr->targets[i].gone)
			want[(*n)++] = tr->targets[i].pid;
	return *n != d->nr_pids || memcmp(want, d->pids, *n * sizeof(*want));
}

int damon__set_targets(struct damon_src *d, const struct tracker *tr)
{
	char state[16] = "", path[200];
	bool running;
	uint32_t n;
	pid_t *want;
	long pid = -1;
	int err = 0;

	if (!d->own || strcmp(d->ops, "vaddr"))
		return 0;
	if (!still_ours(d))
		return -EBUSY;
	read_trim(d->root, ADMIN "/0/state", state, sizeof(state));
	running = !strcmp(state, "on");
	want = calloc(tr->nr_targets + 1, sizeof(*want));
	if (!want)
		return -ENOMEM;
	/* A kdamond whose targets all exited stops by itself: start it again if any are left. */
	if (!targets_changed(d, tr, want, &n) && running == (n > 0))
		goto out;
	if (n > d->cap_pids) {
		pid_t *p = realloc(d->pids, n * sizeof(*p));

		if (!p) {
			err = -ENOMEM;
			goto out;
		}
		d->pids = p;
		d->cap_pids = n;
	}
	d->nr_pids = 0;	/* until DAMON has taken the list: retried next epoch on failure */
	if (!n) {
		if (running)
			err = write_text(d->root, ADMIN "/0/state", "off");
		goto saved;
	}
	/* What we write is our fingerprint, recorded first: SIGKILL may come at any point. */
	d->written_nr = n;
	d->written_first = want[0];
	save_state(d);
	if ((err = write_int(d->root, CTX "/targets/nr_targets", n)))
		goto fail;
	for (uint32_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), CTX "/targets/%u/pid_target", i);
		if ((err = write_int(d->root, path, want[i])))
			goto fail;
	}
	/* A target that exits right now makes DAMON refuse the list: next epoch retries. */
	if ((err = write_text(d->root, ADMIN "/0/state", running ? "commit" : "on")))
		goto fail;
	memcpy(d->pids, want, n * sizeof(*want));
	d->nr_pids = n;
	d->commits++;
	read_int(d->root, ADMIN "/0/pid", &pid);
	if (pid != d->kdamond_pid) {
		d->kdamond_pid = (int)pid;
		if (d->skel)
			d->skel->bss->kdamond_pid = d->kdamond_pid;
		pr_info("damon: our kdamond (pid %d) monitors %u target%s", d->kdamond_pid, n, n == 1 ? "" : "s");
	}
saved:
	save_state(d);
	goto out;
fail:
	pr_warn("damon: cannot give our kdamond its %u targets: %s (retrying next epoch)", n, strerror(-err));
out:
	free(want);
	return err;
}

void damon__close(struct damon_src *d)
{
	if (d->own && still_ours(d)) {
		remove_own(d->root);
		unlink(d->state_path);
		pr_info("damon: stopped and removed our kdamond");
	}
	ring_buffer__free(d->rb);
	bpf_link__destroy(d->link);
	if (d->skel)
		damon_bpf__destroy(d->skel);
	free(d->regions);
	free(d->pids);
	memset(d, 0, sizeof(*d));
}

static int cmp_region(const void *a, const void *b)
{
	const struct cxlt_damon_region *x = a, *y = b;

	if (x->target_id != y->target_id)
		return x->target_id < y->target_id ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The accesses of the region in r[lo, hi) (sorted, disjoint) holding addr, or 0. */
static uint32_t accesses_at(const struct cxlt_damon_region *r, size_t lo, size_t hi, uint64_t addr)
{
	size_t end = hi;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (r[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < end && r[lo].start <= addr ? r[lo].nr_accesses : 0;
}

/* Regions r[*lo, *hi) of one target id. */
static void target_span(const struct damon_src *d, uint32_t id, size_t *lo, size_t *hi)
{
	size_t a = 0, b = d->nr;

	while (a < b) {
		size_t mid = (a + b) / 2;

		if (d->regions[mid].target_id < id)
			a = mid + 1;
		else
			b = mid;
	}
	*lo = a;
	while (a < d->nr && d->regions[a].target_id == id)
		a++;
	*hi = a;
}

struct batch {
	struct tracker *tr;
	struct cxlt_page_key keys[1024];
	struct cxlt_page_val vals[1024];
	uint32_t n;
	int sampled;
};

static void batch_add(struct batch *b, pid_t pid, uint64_t addr, uint32_t acc)
{
	b->keys[b->n] = (struct cxlt_page_key){ .tgid = pid, .vpage = addr >> CXLT_PAGE_SHIFT };
	b->vals[b->n++] = (struct cxlt_page_val){ .samples = acc };
	if (b->n == ARRAY_SIZE(b->keys)) {
		tracker__ingest(b->tr, b->keys, b->vals, b->n);
		b->sampled += b->n;
		b->n = 0;
	}
}

/* vaddr: a target's regions hold its virtual addresses. */
static void drain_vaddr(struct damon_src *d, struct target *t, struct batch *b)
{
	size_t lo, hi;
	uint32_t id;

	for (id = 0; id < d->nr_pids && d->pids[id] != t->pid; id++)
		;
	if (id == d->nr_pids)
		return;
	target_span(d, id, &lo, &hi);
	for (size_t i = lo; i < hi; i++) {
		const struct cxlt_damon_region *r = &d->regions[i];

		if (!r->nr_accesses)
			continue;
		tracker__ingest_range(b->tr, t, r->start, r->end, r->nr_accesses);
		b->sampled += (int)((r->end - r->start) >> CXLT_PAGE_SHIFT);
	}
}

/*
 * paddr: a page's frame says which region holds it.  The tracker's regions
 * are read whole from pagemap (4 KiB of it per 2 MiB): the cost follows the
 * target's resident memory, which is why auto prefers vaddr.
 */
static void drain_paddr(struct damon_src *d, struct target *t, struct batch *b)
{
	uint64_t ents[REGION_PAGES];
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", t->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (uint32_t i = 0; i < t->rt.nr; i++) {
		uint64_t base = t->rt.rg[i].base;
		ssize_t got = pread(fd, ents, sizeof(ents), (off_t)(base >> CXLT_PAGE_SHIFT) * 8);

		for (ssize_t k = 0; k < got / 8; k++) {
			uint32_t acc;

			if (!(ents[k] & PM_PRESENT) || !(ents[k] & PM_PFN_MASK))
				continue;
			acc = accesses_at(d->regions, 0, d->nr, (ents[k] & PM_PFN_MASK) << CXLT_PAGE_SHIFT);
			if (acc)
				batch_add(b, t->pid, base + ((uint64_t)k << CXLT_PAGE_SHIFT), acc);
		}
	}
	close(fd);
}

int damon__drain(struct damon_src *d, struct tracker *tr)
{
	struct batch b = { .tr = tr };
	bool vaddr = !strcmp(d->ops, "vaddr");

	ring_buffer__consume(d->rb);
	if (!d->nr)
		return 0;
	qsort(d->regions, d->nr, sizeof(*d->regions), cmp_region);
	for (uint32_t ti = 0; ti < tr->nr_targets; ti++) {
		if (vaddr)
			drain_vaddr(d, &tr->targets[ti], &b);
		else
			drain_paddr(d, &tr->targets[ti], &b);
	}
	tracker__ingest(tr, b.keys, b.vals, b.n);
	b.sampled += b.n;
	d->pages_matched += b.sampled;
	d->nr = 0;
	return b.sampled;
}
