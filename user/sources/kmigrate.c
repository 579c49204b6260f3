// SPDX-License-Identifier: MIT
/* Design notes live in bpf/kmigrate.bpf.c. */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmigrate.h"
#include "kmigrate.skel.h"
#include "sampler.h"
#include "util.h"

/*
 * From the kernel's BTF: how many arguments the tracepoint has (without
 * the leading context pointer), and the names of enum migrate_reason.
 */
static int probe_btf(struct kmigrate *k, int *nargs)
{
	const struct btf *btf = sampler__kernel_btf();
	const struct btf_type *t;
	int id;

	if (!btf)
		return -errno;
	*nargs = -1;
	id = btf__find_by_name_kind(btf, "btf_trace_mm_migrate_pages", BTF_KIND_TYPEDEF);
	if (id > 0) {
		t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);	/* pointer */
		t = t ? btf__type_by_id(btf, t->type) : NULL;			/* func proto */
		if (t && btf_is_func_proto(t))
			*nargs = btf_vlen(t) - 1;
	}
	id = btf__find_by_name_kind(btf, "migrate_reason", BTF_KIND_ENUM);
	if (id > 0) {
		const struct btf_enum *e;

		t = btf__type_by_id(btf, id);
		e = btf_enum(t);
		for (int i = 0; i < btf_vlen(t); i++, e++) {
			const char *name = btf__name_by_offset(btf, e->name_off);

			if (e->val < 0 || e->val >= CXLT_MIGRATE_REASONS || strncmp(name, "MR_", 3) ||
			    !strcmp(name, "MR_TYPES"))
				continue;
			for (size_t c = 0; name[3 + c] && c < sizeof(k->names[0]) - 1; c++)
				k->names[e->val][c] = (char)tolower((unsigned char)name[3 + c]);
		}
	}
	return 0;
}

bool kmigrate__pins(const char *name)
{
	struct kmigrate_bpf *skel = kmigrate_bpf__open();
	bool mine;

	if (!skel)
		return false;
	mine = sampler__obj_pins(skel->obj, name, false);
	kmigrate_bpf__destroy(skel);
	return mine;
}

int kmigrate__open(struct kmigrate *k, const char *pin_dir)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = pin_dir);
	int nargs = -1, err;

	memset(k, 0, sizeof(*k));
	for (int i = 0; i < CXLT_MIGRATE_REASONS; i++)
		snprintf(k->names[i], sizeof(k->names[i]), "reason%d", i);
	snprintf(k->pin_dir, sizeof(k->pin_dir), "%s", pin_dir);
	if ((err = probe_btf(k, &nargs)))
		return err;
	if (nargs != 7 && nargs != 8) {
		pr_warn("kernel migration accounting off: migrate:mm_migrate_pages has %d arguments here, not 7 or 8",
			nargs);
		return -ENOTSUP;
	}
	k->skel = kmigrate_bpf__open_opts(&oo);
	if (!k->skel)
		return -errno;
	bpf_program__set_autoload(k->skel->progs.cxlt_kmigrate7, nargs == 7);
	bpf_program__set_autoload(k->skel->progs.cxlt_kmigrate8, nargs == 8);
	if ((err = kmigrate_bpf__load(k->skel)))
		goto fail;
	k->link = bpf_program__attach(nargs == 7 ? k->skel->progs.cxlt_kmigrate7 :
						   k->skel->progs.cxlt_kmigrate8);
	if (!k->link) {
		err = -errno;
		goto fail;
	}
	k->map_fd = bpf_map__fd(k->skel->maps.cxlt_kmigrate);
	return kmigrate__read_fd(k->map_fd, k->base);
fail:
	kmigrate__close(k);
	return err;
}

void kmigrate__close(struct kmigrate *k)
{
	bpf_link__destroy(k->link);
	k->link = NULL;
	if (k->skel) {
		bpf_object__unpin_maps(k->skel->obj, NULL);
		kmigrate_bpf__destroy(k->skel);
		k->skel = NULL;
	}
}

int kmigrate__read_fd(int fd, struct cxlt_kmigrate out[CXLT_MIGRATE_REASONS])
{
	int ncpu = libbpf_num_possible_cpus();
	struct cxlt_kmigrate *vals;

	if (ncpu <= 0)
		return -EINVAL;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (uint32_t r = 0; r < CXLT_MIGRATE_REASONS; r++) {
		memset(&out[r], 0, sizeof(out[r]));
		if (bpf_map_lookup_elem(fd, &r, vals))
			continue;
		for (int c = 0; c < ncpu; c++) {
			out[r].succeeded += vals[c].succeeded;
			out[r].failed += vals[c].failed;
			out[r].batches += vals[c].batches;
		}
	}
	free(vals);
	return 0;
}

int kmigrate__read(const struct kmigrate *k, struct cxlt_kmigrate out[CXLT_MIGRATE_REASONS])
{
	int err;

	if (!k->skel)
		return -ENOENT;
	if ((err = kmigrate__read_fd(k->map_fd, out)))
		return err;
	for (int r = 0; r < CXLT_MIGRATE_REASONS; r++) {
		out[r].succeeded -= k->base[r].succeeded;
		out[r].failed -= k->base[r].failed;
		out[r].batches -= k->base[r].batches;
	}
	return 0;
}

/* Says what the kernel migrated itself while the agent ran (move_pages is reason "syscall"). */
void kmigrate__log(const struct kmigrate *km)
{
	struct cxlt_kmigrate k[CXLT_MIGRATE_REASONS];
	char text[512] = "";
	size_t off = 0;

	if (kmigrate__read(km, k))
		return;
	for (int r = 0; r < CXLT_MIGRATE_REASONS && off < sizeof(text); r++)
		if (k[r].batches)
			off += snprintf(text + off, sizeof(text) - off, "%s%s %llu (%llu failed)",
					off ? ", " : "", km->names[r],
					(unsigned long long)k[r].succeeded,
					(unsigned long long)k[r].failed);
	pr_info("pages the kernel migrated while the agent ran, by reason: %s",
		off ? text : "none");
}
