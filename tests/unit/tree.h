/* SPDX-License-Identifier: MIT */
/*
 * A fixture file tree in a temporary directory, for the modules that take a
 * root prefix (sysfs, /proc): set-up and teardown for cmocka groups, and
 * one-line writes and reads of its files.
 */
#ifndef CXLT_TEST_TREE_H
#define CXLT_TEST_TREE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"

struct tree {
	char root[64];
	char state[128];	/* root/state: where a module keeps its state file */
};

/* Writes val to root/path, making the directories on the way. */
static inline void put(const struct tree *t, const char *path, const char *val)
{
	char full[512], *slash;
	FILE *f;

	snprintf(full, sizeof(full), "%s%s", t->root, path);
	for (slash = strchr(full + strlen(t->root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(full, 0700);
		*slash = '/';
	}
	f = fopen(full, "w");
	assert_non_null(f);
	fputs(val, f);
	fclose(f);
}

/* The first line of root/path, without its newline. */
static inline const char *get(const struct tree *t, const char *path)
{
	static char buf[64];

	assert_int_equal(read_text(t->root, path, buf, sizeof(buf)), 0);
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static int tree_setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));

	snprintf(t->root, sizeof(t->root), "/tmp/cxlt-tree-XXXXXX");
	assert_non_null(mkdtemp(t->root));
	snprintf(t->state, sizeof(t->state), "%s/state", t->root);
	*state = t;
	return 0;
}

static int tree_teardown(void **state)
{
	struct tree *t = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->root);
	assert_int_equal(system(cmd), 0);
	free(t);
	return 0;
}

#endif
