// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksettings.h"
#include "util.h"

#define NUMA_BALANCING "/proc/sys/kernel/numa_balancing"
#define PROMOTE_RATE "/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps"
/* Since 5.13 the scanner's tunables live in debugfs (if mounted). */
#define SCAN_PERIOD_MAX "/sys/kernel/debug/sched/numa_balancing/scan_period_max_ms"
#define SCAN_PERIOD_MIN "/sys/kernel/debug/sched/numa_balancing/scan_period_min_ms"
#define VMSTAT "/proc/vmstat"

bool ksettings__hint_capable(const char *root)
{
	char full[512];

	snprintf(full, sizeof(full), "%s" NUMA_BALANCING, root ? root : "");
	return access(full, W_OK) == 0;
}

/* The state file: "path<TAB>old value" lines; written in full before every change. */
static int save_state(const struct ksettings *k, const char *pending_path, const char *pending_old)
{
	char tmp[600], why[800];
	FILE *f;
	int fd;

	if (!k->state[0])
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp", k->state);
	fd = create_private_file(tmp, why, sizeof(why));
	if (fd < 0) {
		pr_err("%s", why);
		return fd;
	}
	if (!(f = fdopen(fd, "w"))) {
		close(fd);
		return -ENOMEM;
	}
	for (int i = 0; i < k->nr; i++)
		if (k->set[i].changed)
			fprintf(f, "%s\t%s\n", k->set[i].path, k->set[i].old);
	if (pending_path)
		fprintf(f, "%s\t%s\n", pending_path, pending_old);
	if (fflush(f) || fsync(fileno(f)) || fclose(f) || rename(tmp, k->state)) {
		int err = -errno;

		pr_err("cannot write %s: %s", k->state, strerror(-err));
		return err;
	}
	return 0;
}

/* Only these may be written back from a state file: it is root's, but be strict. */
static bool known_setting(const char *path)
{
	static const char *const known[] = { NUMA_BALANCING, PROMOTE_RATE, SCAN_PERIOD_MAX,
					     SCAN_PERIOD_MIN };

	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (!strcmp(path, known[i]))
			return true;
	return false;
}

int ksettings__recover(const char *root, const char *state_path)
{
	char line[640], why[2 * PATH_MAX + 256];
	int n = 0, open_err;
	FILE *f;

	/* Its lines are written to sysctls as root: only a file root alone could write counts. */
	f = fopen_trusted(state_path, "make the agent write kernel settings", why, sizeof(why), &open_err);
	if (!f) {
		if (open_err)
			pr_err("kernel settings left by an earlier agent: %s; the settings it names are not restored",
			       why);
		return open_err;
	}
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t'), *val;
		int err;

		if (!tab)
			continue;
		*tab = '\0';
		val = tab + 1;
		val[strcspn(val, "\n")] = '\0';
		if (!known_setting(line) || !*val || strlen(val) > 32) {
			pr_warn("%s: ignoring unexpected entry '%s'", state_path, line);
			continue;
		}
		err = write_text(root ? root : "", line, val);
		if (err) {
			pr_err("cannot restore %s to %s: %s", line, val, strerror(-err));
			continue;
		}
		pr_info("restored %s to %s, left changed by an agent that did not stop cleanly", line, val);
		n++;
	}
	fclose(f);
	unlink(state_path);
	return n;
}

static int apply(struct ksettings *k, const char *path, const char *val, bool optional)
{
	struct ksetting *s = &k->set[k->nr];
	int err;

	if (k->nr == KSET_MAX)
		return -E2BIG;
	s->path = path;
	if ((err = read_text(k->root, path, s->old, sizeof(s->old)))) {
		if (optional) {
			pr_info("cannot read %s%s (%s): leaving it alone", k->root, path,
				strerror(-err));
			return 0;
		}
		pr_err("cannot read %s%s: %s", k->root, path, strerror(-err));
		return err;
	}
	s->old[strcspn(s->old, "\n")] = '\0';
	k->nr++;
	if (!strcmp(s->old, val))
		return 0;
	if ((err = save_state(k, path, s->old)))
		return err;
	if ((err = write_text(k->root, path, val))) {
		pr_err("cannot set %s%s to %s: %s", k->root, path, val, strerror(-err));
		return err;
	}
	s->changed = true;
	pr_info("set %s to %s (was %s; restored at exit)", path, val, s->old);
	return 0;
}

int ksettings__take(struct ksettings *k, const char *root, const char *state_path,
		    unsigned int scan_period_ms, bool take_over)
{
	char period[32], mode[16];
	int err;

	memset(k, 0, sizeof(*k));
	k->root = root ? root : "";
	snprintf(k->state, sizeof(k->state), "%s", state_path ? state_path : "");
	snprintf(period, sizeof(period), "%u", scan_period_ms);
	/* Mode bit 2 is NUMA_BALANCING_MEMORY_TIERING: someone else's tiering. */
	if (!read_text(k->root, NUMA_BALANCING, mode, sizeof(mode)) && (atoi(mode) & 2)) {
		if (!take_over) {
			pr_err("the kernel's own memory tiering is on (kernel.numa_balancing=%d): another tool or the administrator uses it; stop that first, or start with --take-over to run the agent anyway (it restores %d at exit)",
			       atoi(mode), atoi(mode));
			return -EBUSY;
		}
		pr_warn("taking over from the kernel's memory tiering (kernel.numa_balancing=%d); restored at exit",
			atoi(mode));
	}
	/*
	 * Rate limit first: the kernel must not promote in the instant mode 3
	 * starts.  The scanner's period stretches up to its maximum (60 s by
	 * default) while it migrates nothing, which would starve the samples:
	 * pin it (min = max), so each page can report about once a period and
	 * the cost of scanning stays what the period says.
	 */
	if ((err = apply(k, PROMOTE_RATE, "0", false)) ||
	    (err = apply(k, SCAN_PERIOD_MAX, period, true)) ||
	    (err = apply(k, SCAN_PERIOD_MIN, period, true)) ||
	    (err = apply(k, NUMA_BALANCING, "3", false))) {
		ksettings__restore(k);
		return err;
	}
	return 0;
}

int ksettings__meter_start(struct ksettings *k, double cpu_pct, double now, bool fast_roomy)
{
	struct hint_gate *g = &k->gate;
	int err;

	memset(g, 0, sizeof(*g));
	if ((err = read_keyed_u64(k->root, VMSTAT, "numa_hint_faults", &g->faults))) {
		pr_warn("cannot read numa_hint_faults from %s" VMSTAT ": %s; hint faults are not metered",
			k->root, strerror(-err));
		return err;
	}
	g->budget = (cpu_pct > 0 ? cpu_pct : HINT_CPU_PCT_DEFAULT) / 100 * 1e9 / HINT_FAULT_COST_NS;
	/*
	 * Open to start (take() set mode 3), the first pass a debt, so that a
	 * policy soon knows which fast-tier pages are idle; closed (mode 2)
	 * when the fast tier has room to spare, where it stays closed.
	 */
	if (fast_roomy && (err = write_text(k->root, NUMA_BALANCING, "2"))) {
		pr_warn("hint: cannot set %s to 2: %s; hint faults are not metered", NUMA_BALANCING,
			strerror(-err));
		return err;
	}
	g->credit = 0;
	g->need = fast_roomy ? HINT_NEED_MIN : 1;
	g->at = g->opened_at = now;
	g->on = true;
	g->open = !fast_roomy;
	g->roomy = fast_roomy;
	pr_info("hint: metering NUMA hint faults to %.3g%% of one core (%.0f faults/s at %.1f us each); over budget the kernel marks only slow-tier pages",
		g->budget * HINT_FAULT_COST_NS / 1e7, g->budget, HINT_FAULT_COST_NS / 1000);
	return 0;
}

bool pass_wait__due(struct pass_wait *w, uint64_t kept, bool passed, double now)
{
	uint64_t fresh = kept - w->kept;

	if (!w->looked) {
		w->looked = true;
		w->kept0 = w->kept = kept;
		return false;
	}
	w->kept = kept;
	if (!w->passed_at) {
		if (!passed)
			return false;
		w->passed_at = now;
	}
	return now - w->passed_at >= PASS_WAIT_ANSWER_SEC && fresh * 32 <= kept - w->kept0;
}

void ksettings__meter(struct ksettings *k, double now, uint64_t epoch, bool passes_seen)
{
	struct hint_gate *g = &k->gate;
	double dt = now - g->at, used;
	uint64_t n;
	bool open;
	int err;

	if (!g->on || !(dt > 0) || read_keyed_u64(k->root, VMSTAT, "numa_hint_faults", &n))
		return;
	used = n >= g->faults ? (double)(n - g->faults) : 0;
	g->rate = used / dt;
	g->credit = fmin(g->credit + g->budget * g->need * dt - used,
			 g->budget * g->need * HINT_BURST_SEC);
	g->faults = n;
	g->at = now;
	g->looks++;
	open = !g->roomy && (g->credit > 0 || g->wake ||
			     (g->open && !passes_seen && now - g->opened_at < HINT_PASS_WAIT_SEC));
	g->wake = false;
	if (open && !g->open) {
		g->opened_at = now;
		g->opened_epoch = epoch;
	}
	if (open != g->open) {
		if ((err = write_text(k->root, NUMA_BALANCING, open ? "3" : "2"))) {
			pr_warn("hint: cannot set %s to %d: %s", NUMA_BALANCING, open ? 3 : 2,
				strerror(-err));
		} else {
			pr_debug("hint: %.0f faults/s, credit %.0f: %s", g->rate, g->credit,
				 open ? "marking fast-tier pages again (mode 3)" :
					"over budget, marking slow-tier pages only (mode 2)");
			g->open = open;
			g->flips++;
		}
	}
	g->open_looks += g->open;
}

void ksettings__need(struct ksettings *k, bool moved, bool fast_roomy, bool starved)
{
	struct hint_gate *g = &k->gate;
	double was = g->need;
	uint32_t gap;

	if (!g->on)
		return;
	g->epochs++;
	g->moved_since_wake |= moved;
	gap = !g->woke || g->moved_since_wake ? HINT_WAKE_GAP :
	      g->wake_gap * 2 < HINT_WAKE_GAP_MAX ? g->wake_gap * 2 : HINT_WAKE_GAP_MAX;
	if (starved && !fast_roomy && !g->open && g->credit > -g->budget * HINT_BURST_SEC &&
	    g->epochs >= g->woke + gap) {
		g->wake_gap = gap;
		g->woke = g->epochs;
		g->moved_since_wake = false;
		g->wake = true;
		g->starved_wakes++;
		pr_debug("hint: hot pages wait on the slow tier and the fast tier's went unseen: marking them for a pass (credit %.0f)",
			 g->credit);
	}
	/*
	 * Room ran short: fast pages must be seen idle before any can make
	 * room, so the gate opens for a pass, as at a start that is short of
	 * room, whatever debt the slow tier's faults ran up meanwhile.
	 */
	g->wake |= g->roomy && !fast_roomy;
	g->roomy = fast_roomy;
	if (fast_roomy) {
		g->quiet = 0;
		g->need = HINT_NEED_MIN;
	} else if (moved) {
		g->quiet = 0;
		g->need = 1;
	} else if (++g->quiet >= HINT_QUIET_EPOCHS) {
		g->quiet = 0;
		g->need = fmax(g->need / 2, HINT_NEED_MIN);
	}
	if (g->need != was)
		pr_debug("hint: %s: budget now %.0f faults/s",
			 fast_roomy ? "fast memory to spare" : moved ? "pages moved" : "placement settled",
			 g->budget * g->need);
}

void ksettings__restore(struct ksettings *k)
{
	/* Reverse order: balancing off before the rate limit comes back. */
	for (int i = k->nr - 1; i >= 0; i--) {
		struct ksetting *s = &k->set[i];
		int err;

		if (!s->changed)
			continue;
		err = write_text(k->root, s->path, s->old);
		if (err)
			pr_err("cannot restore %s to %s: %s", s->path, s->old, strerror(-err));
		else
			pr_info("restored %s to %s", s->path, s->old);
		s->changed = false;
	}
	k->nr = 0;
	k->gate.on = false;
	if (k->state[0])
		unlink(k->state);
}
