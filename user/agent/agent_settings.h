/* SPDX-License-Identifier: MIT */
/*
 * cxltierd's settings: its command line and --help, the configuration file
 * under it (config.c's key table), and the checks a start makes before it
 * changes anything (what --check-config calls valid).
 */
#ifndef CXLT_AGENT_SETTINGS_H
#define CXLT_AGENT_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "targets.h"

/* A run: every setting (the file, then the flags) and what to do with them. */
struct config {
	struct agent_config k;
	struct target_specs specs; /* from k's pid, comm, cgroup and target_user */
	const char *config_path;
	bool policy_help;
	bool check_config;
};

/*
 * Defaults, then the --config file, then the flags (config.c's key table).
 * Exits 2 on a bad flag or file unless reloading (then -EINVAL, message in
 * err); exits 0 after --help.
 */
int read_settings(int argc, char **argv, struct config *c, bool reloading, char *err,
		  size_t errlen);
/* The target specs point into the settings' strings. */
void fill_specs(struct config *c);
/* Every check a start makes before it changes anything; 0 or -errno, each reason logged. */
int preflight(struct config *c);

#endif
