// SPDX-License-Identifier: MIT
/*
 * Controller cost, measured (a benchmark, not a test): how fast the tracker
 * folds drained heat-map entries in, how long an epoch's work takes (heat
 * decay, the policy's decision, the end-of-epoch pass) at 1M and 16M tracked
 * pages, and the memory each tracked page costs.  Synthetic input, the real
 * tracker and the real hotcold policy .so; no BPF, no move_pages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "policy_host.h"
#include "tracker.h"
#include "util.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint64_t next_rand(void)
{
	uint64_t z = (rng += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static void machine(void)
{
	char model[256] = "unknown", line[512];
	struct utsname u;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10)) {
			snprintf(model, sizeof(model), "%s", strchr(line, ':') + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	if (f)
		fclose(f);
	uname(&u);
	printf("machine: %s, %ld CPUs, kernel %s\n", model, sysconf(_SC_NPROCESSORS_ONLN), u.release);
}

/* Heat-map entries as a drain returns them: one per page, random order, one tgid. */
static void make_entries(struct cxlt_page_key *k, struct cxlt_page_val *v, uint32_t n,
			 uint64_t pages, uint64_t base_vpage)
{
	for (uint32_t i = 0; i < n; i++) {
		k[i] = (struct cxlt_page_key){ .tgid = 1000, .vpage = base_vpage + next_rand() % pages };
		v[i] = (struct cxlt_page_val){ .samples = 1 + (next_rand() & 3) };
	}
}

static void bench_ingest(void)
{
	const uint32_t n = 4 << 20;
	const uint64_t pages = 1 << 20;
	struct cxlt_page_key *k = malloc(n * sizeof(*k));
	struct cxlt_page_val *v = malloc(n * sizeof(*v));
	struct tracker tr;
	uint64_t samples = 0;
	double t0, t_first, t_steady;

	make_entries(k, v, n, pages, 0x7f0000000ULL);
	tracker__init(&tr, 0.5);
	tracker__add_target(&tr, 1000, 0, "bench", ORIGIN_PID);
	t0 = now_sec();
	tracker__ingest(&tr, k, v, n);	/* first pass: mostly inserts */
	t_first = now_sec() - t0;
	t0 = now_sec();
	for (int r = 0; r < 3; r++)
		tracker__ingest(&tr, k, v, n);	/* steady state: every page known */
	t_steady = (now_sec() - t0) / 3;
	for (uint32_t i = 0; i < n; i++)
		samples += v[i].samples;
	printf("ingest: %.1f M entries/s steady (%.1f M samples/s), %.1f M entries/s while inserting %u pages, one core\n",
	       n / t_steady / 1e6, samples / t_steady / 1e6, n / t_first / 1e6, tr.targets[0].pt.nr);
	tracker__free(&tr);
	free(k);
	free(v);
}

static void bench_epoch(uint64_t npages, struct policy_host *ph)
{
	struct cxlt_node nodes[2] = {
		{ .id = 0, .role = CXLT_NODE_FAST, .tier = 4, .total_pages = npages, .free_pages = npages / 10 },
		{ .id = 1, .role = CXLT_NODE_SLOW, .tier = 22, .total_pages = npages, .free_pages = npages / 2 },
	};
	struct cxlt_move *moves = malloc(65536 * sizeof(*moves));
	struct cxlt_plan plan = { .moves = moves, .cap = 65536 };
	struct cxlt_target_view tv;
	struct cxlt_view view;
	struct tracker tr;
	struct page_table *pt;
	double t0, t_age, t_decide, t_end, best = 1e9;
	bool created;

	tracker__init(&tr, 0.5);
	tracker__add_target(&tr, 1000, 0, "bench", ORIGIN_PID);
	pt = &tr.targets[0].pt;
	for (uint64_t i = 0; i < npages; i++) {
		int idx = page_table__get(pt, 0x7f0000000000ULL + i * 4096, &created);
		struct cxlt_page *p = &pt->pages[idx];

		/* 10% hot, half of them on the slow node; 30% long idle on the fast node. */
		p->node = (i % 10 == 0) ? (i % 20 == 0) : (i % 3 == 0 ? 0 : 1);
		p->samples = (i % 10 == 0) ? 4 : 0;
		p->idle_epochs = (i % 10 == 0) ? 0 : (uint16_t)(i % 100);
		p->flags = (i % 10 == 0) ? CXLT_PAGE_SAMPLED : 0;
	}
	for (int r = 0; r < 3; r++) {
		t0 = now_sec();
		tracker__age(&tr);
		t_age = now_sec() - t0;
		tv = (struct cxlt_target_view){ .pid = 1000, .comm = "bench", .pages = pt->pages, .nr_pages = pt->nr };
		view = (struct cxlt_view){ .sz = sizeof(view), .page_size = 4096, .epoch = tr.epoch,
					   .epoch_ms = 1000, .nr_nodes = 2, .nodes = nodes, .nr_targets = 1,
					   .targets = &tv, .budget_pages = plan.cap };
		plan.nr = 0;
		t0 = now_sec();
		ph->ops->decide(ph->state, &view, &plan);
		t_decide = now_sec() - t0;
		t0 = now_sec();
		tracker__end_epoch(&tr);
		t_end = now_sec() - t0;
		if (t_age + t_decide + t_end < best) {
			best = t_age + t_decide + t_end;
			printf("epoch at %5.1fM pages: %7.1f ms (decay %.1f, %s decides %.1f, end %.1f; plan %u moves), %.1f bytes/page\n",
			       npages / 1048576.0, best * 1e3, t_age * 1e3, ph->ops->name, t_decide * 1e3,
			       t_end * 1e3, plan.nr, (double)tracker__bytes(&tr) / npages);
		}
	}
	tracker__free(&tr);
	free(moves);
}

int main(int argc, char **argv)
{
	const char *policy = argc > 1 ? argv[1] : "build/policies/hotcold.so";
	struct policy_host ph;

	machine();
	bench_ingest();
	if (policy_host__load(&ph, policy, ".", NULL, 0))
		return 1;
	bench_epoch(1 << 20, &ph);
	bench_epoch(16 << 20, &ph);
	policy_host__unload(&ph);
	printf("goals: >= 20 M samples/s ingested per core, <= 32 bytes per tracked page, epoch decision for 16M pages < 200 ms\n");
	return 0;
}
