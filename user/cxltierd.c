// SPDX-License-Identifier: MIT
/*
 * cxltierd: the cxltier agent.  Every epoch it drains the BPF heat map into
 * the tracker, refreshes targets and topology, asks the policy for a plan
 * and has the mover carry it out.  The design is in docs/design.md and in
 * the comments at the top of bpf/sampler.bpf.c and each user/ module.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <libgen.h>
#include <numa.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent_settings.h"
#include "config.h"
#include "control.h"
#include "damon.h"
#include "engine.h"
#include "kmigrate.h"
#include "ksettings.h"
#include "marks.h"
#include "mover.h"
#include "pipeline.h"
#include "policy_host.h"
#include "recorder.h"
#include "sampler.h"
#include "service.h"
#include "shares.h"
#include "status.h"
#include "targets.h"
#include "topology.h"
#include "tracker.h"
#include "util.h"

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t reload_requested;

struct agent {
	struct config *cfg;
	struct topology topo;
	struct tracker tr;
	struct sampler s;
	struct mover m;
	struct policy_host policy;
	struct ksettings kset;
	struct marks marks;
	struct kmigrate km;
	struct damon_src damon;
	bool use_damon;
	char damon_state[600];
	struct agent_state st;
	bool migrate;
	struct engine eng;
	struct control ctl;
	uint64_t log_every;
	double epoch_t0;	/* when the epoch in flight began */
	int drained;		/* heat entries the epoch in flight took in */
	int argc;		/* the command line, read again by a reload */
	char **argv;
	struct recorder rec;
	struct sandbox sandbox;	/* where the policy decides */
	struct fast_shares shares;	/* --fast-share */
	int lock_fd, sfd;	/* the machine lock, the signals; -1: not yet */
	bool run_dir_ok;
	char kset_state[600];
};

/*
 * source auto, the DAMON rows of its order: damon-vaddr (our own vaddr
 * kdamond, if no one else uses DAMON), damon (observe a running kdamond).
 */
static int try_damon(void *ctx, const char *name, char *why, size_t len)
{
	struct agent *a = ctx;
	int err = damon__open(&a->damon, a->cfg->k.sysfs_root, a->damon_state,
			      !strcmp(name, "damon-vaddr") ? DAMON_OWN_VADDR :
			      !strcmp(name, "damon-paddr") ? DAMON_OWN_PADDR : DAMON_ANY);

	snprintf(why, len, "%s", a->damon.why);
	a->use_damon = !err;
	return err;
}

/* Migrate or observe, from the topology and the flags; says which and why. */
static void set_mode(struct agent *a)
{
	a->migrate = !a->cfg->k.observe && topology__has_slow(&a->topo) && numa_available() >= 0;
	a->st.mode = a->migrate ? "migrate" : "observe";
	a->st.mode_why = a->cfg->k.observe ? "--observe given" :
			 !topology__has_slow(&a->topo) ?
			 "no slow memory node on this machine: nothing to migrate to" :
			 a->migrate ? "fast and slow nodes present" : "no NUMA support";
	if (a->migrate)
		pr_info("migrate mode: policy %s, %.0f MiB/s budget, watermarks %.1f%%/%.1f%%",
			a->policy.ops->name, a->m.opts.rate_mbps ? a->m.opts.rate_mbps : a->cfg->k.mover.rate_mbps,
			a->cfg->k.mover.low_wmark_pct, a->cfg->k.mover.high_wmark_pct);
	else
		pr_info("observe mode: %s; sampling, tracking and reporting only", a->st.mode_why);
}

/*
 * Memory hotplug and CXL dynamic capacity: nodes appear, grow, shrink and
 * go away while the agent runs.  The topology is read again every epoch;
 * when a node's size or role changed, the agent says so, uses the new one
 * (a node without memory is no longer a destination), and switches between
 * migrate and observe mode as needed.
 */
static void follow_topology(struct agent *a)
{
	struct topology *fresh = malloc(sizeof(*fresh));
	int lvl = log_verbosity;
	bool changed;

	if (!fresh)
		return;
	log_verbosity = LOG_ERR;	/* a failed re-read is reported below, once */
	if (topology__reload(fresh, &a->topo, a->cfg->k.fast_nodes, a->cfg->k.slow_nodes)) {
		log_verbosity = lvl;
		pr_warn("cannot re-read the topology (a named node lost its memory?); keeping the last one");
		free(fresh);
		return;
	}
	log_verbosity = lvl;
	changed = fresh->nr_nodes != a->topo.nr_nodes || fresh->fast_mask != a->topo.fast_mask ||
		  fresh->slow_mask != a->topo.slow_mask;
	for (int i = 0; !changed && i < fresh->nr_nodes; i++)
		changed = fresh->nodes[i].id != a->topo.nodes[i].id ||
			  fresh->nodes[i].total_pages != a->topo.nodes[i].total_pages ||
			  fresh->nodes[i].tier != a->topo.nodes[i].tier;
	if (changed) {
		bool was = a->migrate;

		pr_info("topology changed (memory hotplug or dynamic capacity):");
		a->topo = *fresh;
		topology__log(&a->topo);
		set_mode(a);
		if (was != a->migrate)
			pr_info("now %s", a->migrate ? "migrating again" : "observing: no slow node to migrate to");
	} else {
		for (int i = 0; i < fresh->nr_nodes; i++)
			a->topo.nodes[i].free_pages = fresh->nodes[i].free_pages;
	}
	free(fresh);
}

/* The agent's steps of the epoch pipeline (pipeline.h). */
static int live_ingest(void *ctx)
{
	struct agent *a = ctx;
	int err;

	targets__refresh(&a->cfg->specs, &a->tr, &a->s);
	shares__apply(&a->shares, &a->tr, topology__fast_pages(&a->topo));
	if (a->tr.sight) {
		/* Passes before samples: a page marked and sampled in one epoch stays unseen. */
		bool seen = marks__follow(&a->marks, &a->tr, a->kset.gate.open, a->topo.fast_mask,
					  a->kset.gate.opened_epoch);

		ksettings__meter(&a->kset, a->epoch_t0, a->tr.epoch, seen);
	}
	a->drained = sampler__drain(&a->s, &a->tr);
	recorder__epoch(&a->rec, &a->s, a->tr.epoch + 1);
	if (a->drained < 0)
		pr_warn("draining the heat map failed: %s", strerror(-a->drained));
	if (a->use_damon) {
		a->drained += damon__drain(&a->damon, &a->tr);
		damon__set_targets(&a->damon, &a->tr);
	}

	/* Memory blocks come and go with hotplug: re-read before the sweeps read page frames. */
	if (a->tr.epoch % a->cfg->k.scan_epochs == 0)
		pfn_nodes__load(&a->tr.pfn, a->cfg->k.sysfs_root);
	for (uint32_t i = 0; i < a->tr.nr_targets; i++) {
		struct target *t = &a->tr.targets[i];

		if (t->gone)
			continue;
		err = tracker__query_nodes(&a->tr, t, t->nodes_known);
		if (err == -ESRCH)
			t->gone = true;
		else if (err)
			pr_warn("pid %d: node query failed: %s", t->pid, strerror(-err));
	}
	/* A bounded slice of the targets' address spaces: the epoch's time does not grow with memory. */
	tracker__sweep_all(&a->tr, a->cfg->k.scan_epochs);
	recorder__targets(&a->rec, &a->tr);
	return 0;
}

static void live_topology(void *ctx)
{
	follow_topology(ctx);
}

static bool live_may_move(void *ctx)
{
	struct agent *a = ctx;

	return a->migrate && !a->st.paused && a->tr.nr_targets;
}

static void live_publish(void *ctx)
{
	struct agent *a = ctx;
	const struct mover_stats *e = &a->m.epoch;
	struct placement place;

	a->st.last_plan = a->eng.last_plan;
	if (a->migrate) {
		struct wmarks w;

		mover__wmarks(&a->m, &a->topo, &w);
		ksettings__need(&a->kset, e->promoted + e->demoted + e->moved_other > 0,
				w.fast_free > 2 * w.high);
	}
	/* One pass for the log line and the status, not one each. */
	tracker__count_placement(&a->tr, a->topo.fast_mask, &place);

	a->st.last_epoch_ms = (now_sec() - a->epoch_t0) * 1000;
	if (a->st.last_epoch_ms > a->st.max_epoch_ms)
		a->st.max_epoch_ms = a->st.last_epoch_ms;
	status__publish(&a->st);

	log_msg(e->promoted || e->demoted || e->rejected_invalid || a->tr.epoch % a->log_every == 1 ?
		LOG_INFO : LOG_DEBUG,
		"epoch %llu: %u targets, %llu pages tracked (fast %llu, slow %llu), %d heat entries drained; plan %llu: promoted %llu, demoted %llu, busy %llu, gone %llu, full %llu, rejected %llu (%.1f ms)",
		(unsigned long long)a->tr.epoch, a->tr.nr_targets,
		(unsigned long long)tracker__pages(&a->tr), (unsigned long long)place.fast,
		(unsigned long long)place.slow, a->drained > 0 ? a->drained : 0,
		(unsigned long long)a->st.last_plan, (unsigned long long)e->promoted,
		(unsigned long long)e->demoted, (unsigned long long)e->busy,
		(unsigned long long)e->gone, (unsigned long long)e->nomem,
		(unsigned long long)(e->rejected_invalid + e->rejected_pingpong +
				     e->rejected_budget + e->rejected_watermark),
		a->st.last_epoch_ms);
}

static const struct pipeline_steps live_steps = {
	.ingest = live_ingest,
	.topology = live_topology,
	.may_move = live_may_move,
	.publish = live_publish,
};

static void epoch(struct agent *a)
{
	struct pipeline p = { .steps = &live_steps, .ctx = a, .eng = &a->eng };

	a->epoch_t0 = now_sec();
	pipeline__epoch(&p);
}

/* The policy's own process, for decide(); a failure to start it is a failed policy. */
static int start_sandbox(struct agent *a)
{
	const struct agent_config *k = &a->cfg->k;
	double limit = k->decide_limit_ms ? k->decide_limit_ms : k->epoch_ms;
	int err = sandbox__start(&a->sandbox, &a->policy, limit);

	if (err)
		pr_err("policy %s: %s", a->policy.ops->name, a->sandbox.failed);
	else
		pr_info("policy %s decides in process %d (seccomp, nobody, %.0f ms at most)",
			a->policy.ops->name, a->sandbox.pid, limit);
	return 0;
}

/*
 * The one way a policy is replaced (SIGHUP, the control socket): the new
 * one must load, pass the ABI check and init, or the running one stays.
 */
static int swap_policy(struct agent *a, const char *name, const char *dir, char *const *params,
		       int nr_params, const char *why)
{
	struct policy_host fresh;

	if (policy_host__load(&fresh, name, dir, params, nr_params)) {
		pr_warn("%s refused: keeping policy %s from %s (policy %s does not load)", why,
			a->policy.ops->name, a->policy.path, name);
		return -EINVAL;
	}
	pr_info("%s: policy %s -> %s (%s)", why, a->policy.ops->name, fresh.ops->name, fresh.path);
	sandbox__stop(&a->sandbox);
	policy_host__unload(&a->policy);
	a->policy = fresh;
	return start_sandbox(a);
}

/* The fast-tier shares of a setting (validated with the settings); logs them. */
static void set_shares(struct agent *a, const char *setting)
{
	char why[256];

	memset(&a->shares, 0, sizeof(a->shares));
	if (!setting || shares__parse(setting, &a->shares, why, sizeof(why)))
		return;
	for (int i = 0; i < a->shares.n; i++)
		pr_info("fast-tier share: processes named %s hold at most %.4g%% of the fast nodes (%llu MiB)",
			a->shares.e[i].comm, a->shares.e[i].pct,
			(unsigned long long)(a->shares.e[i].pct / 100 *
					     (double)(topology__fast_pages(&a->topo) * a->topo.page_size) / (1 << 20)));
}

/*
 * SIGHUP: the settings are read again as at start (the --config file, then
 * the flags) and the policy file is loaded again (a researcher rebuilt it).
 * The policy (name, directory, parameters) and the mover settings change,
 * all or nothing: a file or policy that does not load is refused and
 * everything running stays.  The heat history stays either way; targets,
 * sampler and topology settings take a restart.
 */
static int reload(struct agent *a)
{
	struct config fresh = { 0 };
	struct agent_config *k = &a->cfg->k;
	char err[512];

	pr_info("reloading %s", a->cfg->config_path ? a->cfg->config_path : "the policy");
	if (read_settings(a->argc, a->argv, &fresh, true, err, sizeof(err))) {
		pr_warn("reload refused: %s; the running configuration stays", err);
		return -EINVAL;
	}
	if (!fresh.k.policy_dir)
		fresh.k.policy_dir = strdup(k->policy_dir);
	if (swap_policy(a, fresh.k.policy, fresh.k.policy_dir, fresh.k.params, fresh.k.nr_params,
			"reload")) {
		config__free(&fresh.k);
		return -EINVAL;
	}
	a->m.opts = fresh.k.mover;
	set_shares(a, fresh.k.fast_share);
	/* The running config keeps its own strings: the target specs point into them. */
	free(k->policy);
	free(k->policy_dir);
	k->policy = fresh.k.policy;
	k->policy_dir = fresh.k.policy_dir;
	fresh.k.policy = fresh.k.policy_dir = NULL;
	for (int i = 0; i < k->nr_params; i++)
		free(k->params[i]);
	memcpy(k->params, fresh.k.params, sizeof(k->params));
	k->nr_params = fresh.k.nr_params;
	fresh.k.nr_params = 0;
	k->mover = fresh.k.mover;
	config__free(&fresh.k);
	pr_info("reloaded: policy %s, %.0f MiB/s, watermarks %.1f%%/%.1f%%, ping-pong %u epochs",
		a->policy.ops->name, a->m.opts.rate_mbps, a->m.opts.low_wmark_pct,
		a->m.opts.high_wmark_pct, a->m.opts.pingpong_epochs);
	return 0;
}

static char *reply_json(struct json_object *o)
{
	char *out = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							     JSON_C_TO_STRING_NOSLASHESCAPE));

	json_object_put(o);
	return out;
}

static char *reply_ok(const char *what)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_add(o, "done", json_object_new_string(what));
	return reply_json(o);
}

/* Control socket requests (control__commands in control.c parses and vets them; the peer is root). */
static char *handle_request(void *ctx, const struct control_req *req)
{
	struct agent *a = ctx;
	struct json_object *st, *t;
	char what[128];

	switch (req->cmd) {
	case CTL_STATUS:
		return reply_json(status__json(&a->st));
	case CTL_TARGETS:
		st = status__json(&a->st);
		t = json_object_get(json_object_object_get(st, "targets"));
		json_object_put(st);
		return reply_json(t);
	case CTL_METRICS:
		return status__metrics(&a->st);
	case CTL_PAUSE:
		a->st.paused = true;
		pr_info("control: migration paused (sampling goes on)");
		return reply_ok("paused");
	case CTL_RESUME:
		a->st.paused = false;
		pr_info("control: migration resumed");
		return reply_ok("resumed");
	case CTL_RATE:
		pr_info("control: migration budget %.0f -> %.0f MiB/s", a->m.opts.rate_mbps, req->rate_mbps);
		a->m.opts.rate_mbps = req->rate_mbps;
		snprintf(what, sizeof(what), "rate %.3f MiB/s", req->rate_mbps);
		return reply_ok(what);
	case CTL_POLICY:
		if (swap_policy(a, req->policy, a->cfg->k.policy_dir, req->params, req->nr_params,
				"control"))
			return control__error("policy %s refused (see the agent's log for why); keeping %s",
					      req->policy, a->policy.ops->name);
		snprintf(what, sizeof(what), "policy %s", a->policy.ops->name);
		return reply_ok(what);
	case CTL_RELOAD:
		pr_info("control: reload");
		if (reload(a))
			return control__error("reload refused (see the agent's log for why); the running configuration stays");
		snprintf(what, sizeof(what), "reloaded: policy %s, %.0f MiB/s", a->policy.ops->name,
			 a->m.opts.rate_mbps);
		return reply_ok(what);
	}
	return control__error("unhandled request");
}

static int setup_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

static char *handle_request(void *ctx, const struct control_req *req);

/*
 * Waits until `until` (monotonic seconds) or a stop signal; meanwhile drains
 * the ring buffer and answers the control socket and the metrics port.
 */
static void wait_until(int sfd, struct agent *a, double until)
{
	while (!stop_requested) {
		double left = until - now_sec();
		struct signalfd_siginfo si;
		struct pollfd pfd[2 + 1 + CONTROL_MAX_CONNS] = {
			{ .fd = sfd, .events = POLLIN },
			{ .fd = sampler__ring_fd(&a->s), .events = POLLIN },
		};
		int nfds = 2 + control__pollfds(&a->ctl, pfd + 2, ARRAY_SIZE(pfd) - 2);
		int timeout = (int)(left * 1000) + 1, ctl_timeout = control__timeout_ms(&a->ctl);

		if (left <= 0)
			return;
		/* A client's deadline wakes the loop too: a slow one is dropped on time. */
		if (ctl_timeout >= 0 && ctl_timeout < timeout)
			timeout = ctl_timeout;
		/* poll ignores negative fds: absent channels cost nothing. */
		if (poll(pfd, nfds, timeout) < 0)
			continue;
		if (pfd[1].revents)
			sampler__ring_consume(&a->s);
		/* Never blocks: it takes what the clients sent and drops the late. */
		control__serve(&a->ctl, handle_request, a);
		if (!pfd[0].revents)
			continue;
		while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGHUP) {
				reload_requested = 1;
				return;
			}
			pr_info("%s: stopping", strsignal(si.ssi_signo));
			stop_requested = 1;
		}
	}
}

/* --policy-help and --check-config: report, change nothing; the exit status. */
static int answer_only(struct agent *a)
{
	struct config *cfg = a->cfg;
	char why[2 * PATH_MAX + 256];
	int bad;

	if (cfg->policy_help) {
		policy_host__describe(&a->policy);
		return 0;
	}
	/* The file is valid, the policy took its parameters, and a start would pass its checks. */
	printf("; %s: valid; policy %s loads from %s\n; the effective settings, flags included:\n",
	       cfg->config_path ? cfg->config_path : "(no file: flags and defaults)",
	       a->policy.ops->name, a->policy.path);
	bad = config__describe(&cfg->k, stdout);
	if (sampler__check_pin_dir(cfg->k.pin_dir, why, sizeof(why))) {
		pr_err("%s", why);
		bad = 1;
	}
	return bad ? 1 : 0;
}

/*
 * What makes this agent the machine's one: capabilities, the lock, the run
 * directory, signals, and what an agent that died left behind (pins, kernel
 * settings, its kdamond), recovered before anything changes.
 */
static int claim_machine(struct agent *a)
{
	const struct agent_config *k = &a->cfg->k;
	int err;

	if ((err = service__check_caps()))
		return err;
	service__lock_memory();
	if (numa_available() < 0)
		pr_warn("libnuma: this kernel has no NUMA support; running in observe mode");
	if ((a->lock_fd = service__take_lock(k->run_dir)) < 0)
		return a->lock_fd;
	if ((err = service__prepare_run_dir(k->run_dir)))
		return err;
	a->run_dir_ok = true;
	/*
	 * Before the first change to the kernel: a stop signal from here on ends
	 * the loop or the set-up through the cleanup path, and a closed log pipe
	 * (SIGPIPE) does not kill the agent with the kernel settings changed.
	 */
	signal(SIGPIPE, SIG_IGN);
	if ((a->sfd = setup_signals()) < 0) {
		pr_err("cannot set up signal handling: %s", strerror(-a->sfd));
		return a->sfd;
	}
	/* We hold the lock, so pins and state found now were left by an agent that died. */
	if ((err = sampler__prepare_pin_dir(k->pin_dir)))
		return err;
	err = sampler__remove_pins(k->pin_dir);
	if (err > 0)
		pr_info("removed %d stale pins under %s left by an agent that did not stop cleanly",
			err, k->pin_dir);
	snprintf(a->kset_state, sizeof(a->kset_state), "%s/kernel-settings.state", k->run_dir);
	snprintf(a->damon_state, sizeof(a->damon_state), "%s/damon.state", k->run_dir);
	if ((err = ksettings__recover(k->sysfs_root, a->kset_state)) < 0 ||
	    (err = damon__recover(k->sysfs_root, a->damon_state)) < 0)
		return err;
	return 0;
}

/* The heat map is preallocated: by default a size that follows the machine's memory. */
static uint32_t heat_entries(const struct agent *a)
{
	uint64_t ram = 0;

	if (a->cfg->k.heat_entries)
		return a->cfg->k.heat_entries;
	for (int i = 0; i < a->topo.nr_nodes; i++)
		ram += a->topo.nodes[i].total_pages;
	return ram / 16 < 16384 ? 16384 : ram / 16 > 262144 ? 262144 : ram / 16;
}

/* source hint: the kernel's scanner set up, and its CPU budget where pages can be seen unseen. */
static int start_hint(struct agent *a)
{
	const struct agent_config *k = &a->cfg->k;
	int err;

	if ((err = ksettings__take(&a->kset, k->sysfs_root, a->kset_state, k->hint_period_ms,
				   k->take_over)))
		return err;
	/*
	 * The budget makes fast-tier pages go unseen at times; only run it
	 * where the agent can tell which pages the scanner has looked at.
	 */
	if ((err = marks__open(&a->marks, k->pin_dir, k->sysfs_root))) {
		pr_warn("hint: no CPU budget: this kernel skips VMAs it has not seen used, and its sched_skip_vma_numa tracepoint does not attach (%s), so the agent cannot tell which pages went unseen; the scanner runs at its own pace",
			strerror(-err));
	} else if (!ksettings__meter_start(&a->kset, k->hint_cpu_pct, now_sec())) {
		a->tr.sight = true;
		pr_info("hint: following the scanner's passes (mm->numa_scan_seq)%s: pages it has not marked since their last sample are flagged unseen",
			a->marks.skel ? " and the VMAs it skips (sched_skip_vma_numa)" :
					"; this kernel skips no VMA for inactivity");
	}
	return 0;
}

/* Picks and attaches the source (recording if asked), and what it needs of the kernel. */
static int open_sources(struct agent *a)
{
	const struct agent_config *k = &a->cfg->k;
	struct sampler_opts so = { .source = k->source, .pin_dir = k->pin_dir,
				   .sysfs_root = k->sysfs_root, .heat_entries = heat_entries(a),
				   .ring_bytes = k->ring_kb * 1024,
				   .allow_hint = ksettings__hint_capable(k->sysfs_root) };
	char who[96];
	int err;

	if (k->record) {
		if ((err = recorder__open(&a->rec, k->record, &a->topo)))
			return err;
		so.record = true;
		so.on_sample = recorder__sample;
		so.sample_ctx = &a->rec;
		a->tr.first_sweep_whole = true;
		pr_info("recording every sample to %s", k->record);
	}
	if (strstr(k->source, "hint") && !so.allow_hint) {
		pr_err("source hint: this kernel has no NUMA balancing (/proc/sys/kernel/numa_balancing) to make hint faults");
		return -ENOTSUP;
	}
	/* damon: the fault hook for first touches, DAMON's regions for the rest. */
	if (!strncmp(k->source, "damon", 5)) {
		enum damon_mode mode = !strcmp(k->source, "damon-vaddr") ? DAMON_OWN_VADDR :
				       !strcmp(k->source, "damon-paddr") ? DAMON_OWN_PADDR : DAMON_ANY;

		if ((err = damon__open(&a->damon, k->sysfs_root, a->damon_state, mode))) {
			pr_err("source damon: %s", a->damon.why);
			return err;
		}
		a->use_damon = true;
		so.source = "fault";
	} else if (!strcmp(k->source, "auto")) {
		so.try_damon = try_damon;
		so.damon_ctx = a;
		/* What the targets already running hold: auto prefers a source that sees it. */
		targets__census(&a->cfg->specs, &so.need, who, sizeof(who));
		so.need_who = who;
	}
	if ((err = sampler__open(&a->s, &so)))
		return err;
	if (a->use_damon && strcmp(k->source, "auto")) {
		char why[sizeof(a->damon.why) + 64];

		snprintf(why, sizeof(why), "%s; first touches from the page-fault tracepoint", a->damon.why);
		sampler__set_source(&a->s, k->source, why);
	}
	if (sampler__has_source(&a->s, "hint") && (err = start_hint(a)))
		return err;
	pr_info("sampler: %s (%s); maps and programs pinned under %s", a->s.source,
		a->s.source_why, a->s.pin_dir);
	if ((err = kmigrate__open(&a->km, k->pin_dir)))
		pr_warn("kernel migration accounting unavailable: %s", strerror(-err));
	return 0;
}

/* The first targets, the engine, and the status and control surfaces over them. */
static int start_serving(struct agent *a)
{
	struct config *cfg = a->cfg;
	const struct agent_config *k = &cfg->k;
	int err;

	if ((err = targets__init(&cfg->specs, &a->s)))
		return err;
	if ((cfg->specs.nr_comms || cfg->specs.nr_cgroups) && !cfg->specs.nr_users)
		pr_info("--comm and --cgroup adopt matching processes of any user (--target-user limits them)");
	targets__refresh(&cfg->specs, &a->tr, &a->s);
	if (a->use_damon)
		damon__set_targets(&a->damon, &a->tr);
	if (!a->tr.nr_targets && !cfg->specs.nr_comms && !cfg->specs.nr_cgroups) {
		pr_err("no target process left to manage");
		return -ESRCH;
	}
	a->eng = (struct engine){ .topo = &a->topo, .tr = &a->tr, .m = &a->m,
				  .policy = &a->policy, .sandbox = &a->sandbox, .epoch_ms = k->epoch_ms };
	/* Page faults alone see first touches only; PMU samples, hint faults and DAMON repeat. */
	if (sampler__repeats(&a->s) || a->use_damon)
		a->eng.source_flags |= CXLT_SOURCE_REPEATS;
	else
		a->tr.split_mixed = true;	/* a page's one sample must not be lost */
	/* mode and mode_why are set_mode()'s. */
	a->st.run_dir = k->run_dir;
	a->st.topo = &a->topo;
	a->st.tr = &a->tr;
	a->st.s = &a->s;
	a->st.m = &a->m;
	a->st.policy = &a->policy;
	a->st.km = &a->km;
	a->st.damon = a->use_damon ? &a->damon : NULL;
	a->st.hint = &a->kset.gate;
	a->st.sandbox = &a->sandbox;
	a->st.epoch_ms = k->epoch_ms;
	a->st.started = (double)time(NULL);
	if ((err = control__open(&a->ctl, &(struct control_opts){
			.run_dir = k->run_dir, .metrics_addr = k->metrics_addr,
			.metrics_port = k->metrics_port, .metrics_textfile = k->metrics_textfile })))
		return err;
	if (k->metrics_port)
		pr_info("serving Prometheus metrics at http://%s:%d/metrics",
			k->metrics_addr ? k->metrics_addr : "127.0.0.1", k->metrics_port);
	if (k->metrics_textfile)
		pr_info("writing Prometheus metrics to %s each epoch", a->ctl.textfile_path);
	if (control__wants_metrics(&a->ctl))
		control__publish_metrics(&a->ctl, status__metrics(&a->st));
	a->log_every = 10000 / k->epoch_ms ? 10000 / k->epoch_ms : 1;
	return 0;
}

/* Epochs on the clock until a stop, the duration, or no target left. */
static void run(struct agent *a)
{
	const struct config *cfg = a->cfg;
	double period = cfg->k.epoch_ms / 1000.0, start = now_sec(), next = start + period;
	double end = cfg->k.duration ? start + cfg->k.duration : 0;

	service__notify("READY=1");
	while (!stop_requested) {
		wait_until(a->sfd, a, end && end < next ? end : next);
		if (reload_requested) {
			reload_requested = 0;
			pr_info("SIGHUP: reload");
			reload(a);
			continue;
		}
		if (stop_requested || (end && now_sec() >= end))
			break;
		epoch(a);
		if (control__wants_metrics(&a->ctl))
			control__publish_metrics(&a->ctl, status__metrics(&a->st));
		/* An epoch that finishes is the sign of life (the unit's WatchdogSec). */
		if (service__watchdog_usec())
			service__notify("WATCHDOG=1");
		next += period;
		if (next < now_sec())
			next = now_sec() + period; /* an epoch overran: do not pile up */
		if (!a->tr.nr_targets && !cfg->specs.nr_comms && !cfg->specs.nr_cgroups) {
			pr_info("every target exited: stopping");
			break;
		}
	}
	pr_info("stopped after %llu epochs: moved %llu pages (promoted %llu, demoted %llu, other %llu); %llu heat entries drained",
		(unsigned long long)a->tr.epoch,
		(unsigned long long)(a->m.total.promoted + a->m.total.demoted + a->m.total.moved_other),
		(unsigned long long)a->m.total.promoted, (unsigned long long)a->m.total.demoted,
		(unsigned long long)a->m.total.moved_other, (unsigned long long)a->s.drained);
	service__notify("STOPPING=1");
	kmigrate__log(&a->km);
}

/* Undoes whatever of the set-up happened, the kernel's settings before the rest. */
static int tear_down(struct agent *a, int err)
{
	int rec_err;

	if ((rec_err = recorder__close(&a->rec, &a->s)) && !err)
		err = rec_err;
	kmigrate__close(&a->km);
	marks__close(&a->marks);
	if (a->use_damon)
		damon__close(&a->damon);
	/* The kernel's settings first: nothing a client holds open comes before them. */
	ksettings__restore(&a->kset);
	sampler__close(&a->s, a->cfg->k.keep_pins);
	control__close(&a->ctl);
	if (a->run_dir_ok) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/status.json", a->cfg->k.run_dir);
		unlink(path);
	}
	if (a->lock_fd >= 0)
		close(a->lock_fd);
	if (a->sfd >= 0)
		close(a->sfd);
	sandbox__stop(&a->sandbox);
	sight__stop();
	tracker__free(&a->tr);
	mover__free(&a->m);
	engine__free(&a->eng);
	return err;
}

/* Everything between claiming the machine and the first epoch. */
static int set_up(struct agent *a)
{
	const struct agent_config *k = &a->cfg->k;
	int err;

	if ((err = topology__load(&a->topo, k->sysfs_root, k->fast_nodes, k->slow_nodes)))
		return err;
	topology__log(&a->topo);
	set_mode(a);
	if ((err = tracker__init(&a->tr, k->decay)) ||
	    (err = mover__init(&a->m, &k->mover, a->topo.page_size)))
		return err;
	a->tr.budget_bytes = (uint64_t)k->tracker_mb << 20;
	set_shares(a, k->fast_share);
	if ((err = open_sources(a)))
		return err;
	/* Before the metrics thread exists: the child is forked from one thread. */
	start_sandbox(a);
	service__drop_setup_caps();
	return start_serving(a);
}

int main(int argc, char **argv)
{
	static struct config cfg;
	static struct agent a;
	char why[PATH_MAX];
	int err;

	if (read_settings(argc, argv, &cfg, false, why, sizeof(why)))
		return 1;
	fill_specs(&cfg);
	log_verbosity = cfg.k.log_level;
	setvbuf(stderr, NULL, _IOLBF, 0);
	if (!cfg.k.policy_dir) {
		default_policy_dir(why, sizeof(why));
		if (!(cfg.k.policy_dir = strdup(why)))
			return 1;
	}
	a = (struct agent){ .cfg = &cfg, .ctl = { .sock_fd = -1, .textfile_dir = -1 },
			    .sandbox = { .to_child = -1, .from_child = -1, .memfd = -1 },
			    .lock_fd = -1, .sfd = -1, .argc = argc, .argv = argv };
	if (policy_host__load(&a.policy, cfg.k.policy, cfg.k.policy_dir, cfg.k.params,
			      cfg.k.nr_params))
		return 1;
	/* --check-config runs the start's checks first: "valid" means it starts. */
	err = cfg.policy_help ? answer_only(&a) : preflight(&cfg) ? 1 :
	      cfg.check_config ? answer_only(&a) : -1;
	if (err >= 0) {
		policy_host__unload(&a.policy);
		config__free(&cfg.k);
		return err;
	}
	if (!(err = claim_machine(&a)) && !(err = set_up(&a)))
		run(&a);
	err = tear_down(&a, err);
	policy_host__unload(&a.policy);
	config__free(&cfg.k);
	return err ? 1 : 0;
}
