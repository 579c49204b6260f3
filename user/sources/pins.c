// SPDX-License-Identifier: MIT
/*
 * The pin directory: a bpf file system at /sys/fs/bpf, a directory there
 * that is root's alone, and the removal of the pins an agent that did not
 * stop cleanly left (only this agent's names, never anything else there).
 */
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "kmigrate.h"
#include "sampler.h"
#include "sampler.skel.h"
#include "util.h"

#define BPF_FS_MAGIC_NR 0xcafe4a11

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
