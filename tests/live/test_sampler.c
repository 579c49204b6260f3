// SPDX-License-Identifier: MIT
/*
 * Live tests of the BPF samplers on this kernel (root): every program loads,
 * and a source attached to a child running tierbench counts the child's
 * buffer pages and nothing of any other process.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kmigrate.skel.h"
#include "marks.skel.h"
#include "sampler.h"
#include "sampler.skel.h"
#include "tracker.h"
#include "util.h"

static char pin_dir[128];

static int setup(void **state)
{
	(void)state;
	snprintf(pin_dir, sizeof(pin_dir), "/sys/fs/bpf/cxltier-test-%d", getpid());
	return sampler__ensure_bpffs(pin_dir);
}

static void every_program_loads(void **state)
{
	struct sampler_bpf *skel;
	struct bpf_program *prog;
	int n = 0;

	(void)state;
	skel = sampler_bpf__open();
	assert_non_null(skel);
	/* No pinning here: only whether the verifier takes every program. */
	bpf_map__set_pin_path(skel->maps.cxlt_heat, NULL);
	bpf_map__set_pin_path(skel->maps.cxlt_targets, NULL);
	bpf_map__set_pin_path(skel->maps.cxlt_cgroups, NULL);
	bpf_map__set_pin_path(skel->maps.cxlt_stats, NULL);
	assert_int_equal(sampler_bpf__load(skel), 0);
	bpf_object__for_each_program(prog, skel->obj) {
		assert_true(bpf_program__fd(prog) >= 0);
		n++;
	}
	assert_int_equal(n, 2);
	sampler_bpf__destroy(skel);
}

/* Bytes of CO-RE relocations in an object's .BTF.ext (its header's core_relo_len). */
static uint32_t core_relo_bytes(const void *obj, size_t size)
{
	const Elf64_Ehdr *eh = obj;
	const Elf64_Shdr *sh = (const void *)((const char *)obj + eh->e_shoff);
	const char *names = (const char *)obj + sh[eh->e_shstrndx].sh_offset;

	assert_true(size > sizeof(*eh) && eh->e_shoff + eh->e_shnum * sizeof(*sh) <= size);
	for (int i = 0; i < eh->e_shnum; i++) {
		const uint32_t *h = (const void *)((const char *)obj + sh[i].sh_offset);

		if (strcmp(names + sh[i].sh_name, ".BTF.ext"))
			continue;
		/* magic+version+flags, hdr_len, func/line info off+len, core_relo off+len */
		return h[1] >= 32 ? h[7] : 0;
	}
	return 0;
}

/*
 * The objects the agent loads on its way to turning the NUMA scanner on
 * make libbpf parse no vmlinux BTF: no CO-RE relocation, no BTF-typed
 * (tp_btf) program.  Each parse costs 0.1-0.25 s natively, more under TCG.
 */
static void no_object_of_the_start_needs_vmlinux_btf(void **state)
{
	struct sampler_bpf *sampler = sampler_bpf__open();
	struct marks_bpf *marks = marks_bpf__open();
	struct kmigrate_bpf *kmigrate = kmigrate_bpf__open();
	struct {
		const char *name;
		const void *(*bytes)(size_t *);
		struct bpf_object *obj;
	} objs[] = {
		{ "sampler", sampler_bpf__elf_bytes, sampler ? sampler->obj : NULL },
		{ "marks", marks_bpf__elf_bytes, marks ? marks->obj : NULL },
		{ "kmigrate", kmigrate_bpf__elf_bytes, kmigrate ? kmigrate->obj : NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		struct bpf_program *prog;
		size_t size;
		const void *elf = objs[i].bytes(&size);

		assert_non_null(objs[i].obj);
		if (core_relo_bytes(elf, size))
			fail_msg("%s has CO-RE relocations", objs[i].name);
		bpf_object__for_each_program(prog, objs[i].obj)
			if (bpf_program__type(prog) == BPF_PROG_TYPE_TRACING)
				fail_msg("%s: %s is BTF-typed", objs[i].name, bpf_program__name(prog));
	}
	sampler_bpf__destroy(sampler);
	marks_bpf__destroy(marks);
	kmigrate_bpf__destroy(kmigrate);
}

struct child {
	pid_t pid;
	int go_fd;	/* write end: releases the child into exec */
	int out_fd;	/* read end of the child's stdout */
};

/* Forks a child that waits for a byte, then execs tierbench with argv. */
static void spawn_waiting(struct child *c, char *const argv[])
{
	int go[2], out[2];

	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(out), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		char b;

		dup2(out[1], 1);
		close(go[1]);
		close(out[0]);
		if (read(go[0], &b, 1) != 1)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	close(out[1]);
	c->go_fd = go[1];
	c->out_fd = out[0];
}

static void release_and_wait(struct child *c, char *info, size_t len)
{
	int status;
	ssize_t n, off = 0;

	assert_int_equal(write(c->go_fd, "g", 1), 1);
	close(c->go_fd);
	while ((n = read(c->out_fd, info + off, len - 1 - off)) > 0)
		off += n;
	info[off] = '\0';
	close(c->out_fd);
	assert_int_equal(waitpid(c->pid, &status, 0), c->pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * The heart of the sampler contract: samples of the target land in the heat
 * map keyed by its tgid and cover its buffer; the test's own faults, taken
 * while the child runs, are filtered out.
 */
static void source_counts_child_buffer_only(const char *source)
{
	char *const argv[] = { "build/tierbench", "--size", "8M", "--duration", "0.5",
			       "--verify", NULL };
	struct sampler_opts o = { .source = source, .pin_dir = pin_dir };
	uint64_t buf = 0, size = 0, stats[CXLT_NR_STATS];
	uint64_t inside = 0, outside = 0, pages;
	struct sampler s;
	struct tracker tr;
	struct child c;
	char info[4096], *p;
	char *mine;

	spawn_waiting(&c, argv);
	assert_int_equal(sampler__open(&s, &o), 0);
	assert_string_equal(s.source, source);
	assert_int_equal(sampler__add_target(&s, c.pid), 0);

	release_and_wait(&c, info, sizeof(info));
	/* Our own faults, after the child is done: must all be filtered. */
	mine = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(mine != MAP_FAILED);
	memset(mine, 1, 4 << 20);
	munmap(mine, 4 << 20);

	p = strstr(info, "buf=0x");
	assert_non_null(p);
	buf = strtoull(p + 6, NULL, 16);
	p = strstr(info, "size=");
	assert_non_null(p);
	size = strtoull(p + 5, NULL, 10);
	assert_int_equal(size, 8 << 20);
	pages = size / 4096;

	tracker__init(&tr, 0.5);
	tr.detail_all = true;	/* a record a sampled page: the keys as drained */
	assert_true(tracker__add_target(&tr, c.pid, 0, "tierbench", ORIGIN_PID) >= 0);
	assert_true(sampler__drain(&s, &tr) > 0);
	assert_int_equal(tr.dropped, 0);	/* every key belongs to the child */
	for (uint32_t i = 0; i < tr.targets[0].pt.nr; i++) {
		uint64_t a = tr.targets[0].pt.pages[i].addr;

		if (a >= buf && a < buf + size)
			inside++;
		else
			outside++;
	}
	print_message("%s: %llu of %llu buffer pages sampled, %llu other pages of the child\n",
		      source, (unsigned long long)inside, (unsigned long long)pages,
		      (unsigned long long)outside);
	assert_true(inside >= pages * 95 / 100);
	/* Text, libc and stacks of the child fault too, but far less than its buffer. */
	assert_true(outside < pages / 4);

	assert_int_equal(sampler__read_stats(s.stats_fd, stats), 0);
	assert_true(stats[CXLT_STAT_KEPT] >= inside);
	assert_true(stats[CXLT_STAT_FILTERED] > 0);	/* our own 1024 faults at least */
	/*
	 * Every event counts seen before kept or filtered, and other processes'
	 * faults go on while the counters are read one by one: seen read
	 * afterwards is at least what kept and filtered were.
	 */
	{
		uint64_t later[CXLT_NR_STATS];

		assert_int_equal(sampler__read_stats(s.stats_fd, later), 0);
		assert_true(later[CXLT_STAT_SEEN] >= stats[CXLT_STAT_KEPT] + stats[CXLT_STAT_FILTERED]);
	}
	tracker__free(&tr);
	sampler__close(&s, false);
	assert_int_equal(access(pin_dir, F_OK), -1);	/* pins and directory gone */
}

static void fault_tracepoint_counts_child_buffer_only(void **state)
{
	(void)state;
	source_counts_child_buffer_only("fault");
}

static void perf_event_program_counts_child_buffer_only(void **state)
{
	(void)state;
	source_counts_child_buffer_only("fault-perf");
}

/*
 * A drain whose buffer's room left is smaller than the next bucket of the
 * heat map (the kernel returns ENOSPC then, taking nothing) ingests what it
 * has and goes on: every entry reaches the tracker and the map is empty.
 * The buffer is made small here (16 entries for 512); live, the map fills
 * while it is drained.
 */
static void drain_goes_on_past_a_bucket_bigger_than_the_room_left(void **state)
{
	struct sampler_opts o = { .source = "fault", .pin_dir = pin_dir, .heat_entries = 512 };
	const uint32_t tgid = 4242, nr = 512;
	struct cxlt_page_key key = { .tgid = tgid }, next;
	struct cxlt_page_val val = { .samples = 1 };
	struct sampler s;
	struct tracker tr;

	(void)state;
	assert_int_equal(sampler__open(&s, &o), 0);
	for (uint32_t i = 0; i < nr; i++) {
		key.vpage = 0x7f0000000ULL + i * 7;
		assert_int_equal(bpf_map_update_elem(s.heat_fd, &key, &val, BPF_NOEXIST), 0);
	}
	s.cap = 16;
	tracker__init(&tr, 0.5);
	tr.detail_all = true;	/* a record a key */
	assert_true(tracker__add_target(&tr, tgid, 0, "t", ORIGIN_PID) >= 0);
	assert_int_equal(sampler__drain(&s, &tr), nr);
	assert_int_equal(tr.targets[0].pt.nr, nr);
	assert_int_equal(bpf_map_get_next_key(s.heat_fd, NULL, &next), -ENOENT);
	tracker__free(&tr);
	sampler__close(&s, false);
}

static void pmu_source_absent_is_an_error_not_a_crash(void **state)
{
	struct sampler_opts o = { .source = "pmu", .pin_dir = pin_dir,
				  .sysfs_root = "tests/fixtures/no-pmu" };
	struct sampler s;

	(void)state;
	assert_int_equal(sampler__open(&s, &o), -ENOENT);
	assert_int_equal(access(pin_dir, F_OK), -1);
}

static void auto_source_falls_back_to_fault_without_pmu(void **state)
{
	struct sampler_opts o = { .source = "auto", .pin_dir = pin_dir,
				  .sysfs_root = "tests/fixtures/no-pmu" };
	struct sampler s;

	(void)state;
	assert_int_equal(sampler__open(&s, &o), 0);
	assert_string_equal(s.source, "fault");
	assert_non_null(strstr(s.source_why, "no memory-sampling PMU"));
	/* Pinned with BTF: bpftool can print typed keys. */
	{
		char path[256];

		snprintf(path, sizeof(path), "%s/cxlt_heat", pin_dir);
		assert_int_equal(access(path, F_OK), 0);
		snprintf(path, sizeof(path), "%s/cxlt_fault", pin_dir);
		assert_int_equal(access(path, F_OK), 0);
	}
	sampler__close(&s, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_program_loads),
		cmocka_unit_test(no_object_of_the_start_needs_vmlinux_btf),
		cmocka_unit_test(fault_tracepoint_counts_child_buffer_only),
		cmocka_unit_test(perf_event_program_counts_child_buffer_only),
		cmocka_unit_test(drain_goes_on_past_a_bucket_bigger_than_the_room_left),
		cmocka_unit_test(pmu_source_absent_is_an_error_not_a_crash),
		cmocka_unit_test(auto_source_falls_back_to_fault_without_pmu),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_sampler: live BPF tests need root\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, setup, NULL);
}
