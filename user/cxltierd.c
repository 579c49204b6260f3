// SPDX-License-Identifier: MIT
/*
 * cxltierd: the cxltier agent.  Every epoch it drains the BPF heat map into
 * the tracker, refreshes targets and topology, asks the policy for a plan
 * and has the mover carry it out.  This file is the agent's set-up, loop and
 * tear-down; its epoch steps are in agent/live.c, what it is asked while it
 * runs in agent/requests.c.  The design is in docs/design.md and in the
 * comments at the top of bpf/sampler.bpf.c and each user/ module.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
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

#include "agent.h"
#include "damon.h"
#include "service.h"
#include "targets.h"
#include "util.h"

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t reload_requested;

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
		control__serve(&a->ctl, agent__handle_request, a);
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

/*
 * source hint: whether the agent can tell which pages the scanner has looked
 * at (a CPU budget makes fast-tier pages go unseen at times).  Its BPF
 * program loads here, before the set-up's capabilities go.
 */
static void open_marks(struct agent *a)
{
	int err;

	if ((err = marks__open(&a->marks, a->cfg->k.pin_dir, a->cfg->k.sysfs_root))) {
		pr_warn("hint: no CPU budget: this kernel skips VMAs it has not seen used, and its sched_skip_vma_numa tracepoint does not attach (%s), so the agent cannot tell which pages went unseen; the scanner runs at its own pace",
			strerror(-err));
		a->marks_failed = true;
	}
}

/*
 * Hint source: each target's scanner pass count (mm->numa_scan_seq) now,
 * which the next epoch waits to see move (epoch_due()); none noted with more
 * than PASS_WATCH_MAX targets, and the epochs keep to the clock.
 */
static void note_passes(struct agent *a)
{
	a->nr_pass_seq = 0;
	for (uint32_t i = 0; i < a->tr.nr_targets && a->tr.nr_targets <= PASS_WATCH_MAX; i++) {
		struct pass_seq *f = &a->pass_seq[a->nr_pass_seq];

		f->pid = a->tr.targets[i].pid;
		if (!a->tr.targets[i].gone && !marks__scan_seq(a->cfg->k.sysfs_root, f->pid, &f->seq))
			a->nr_pass_seq++;
	}
}

/*
 * source hint: the kernel's scanner set up, and its CPU budget where pages
 * can be seen unseen; once the targets are known, so that the first epoch
 * can wait for the first pass (note_passes()).
 */
static int start_hint(struct agent *a)
{
	const struct agent_config *k = &a->cfg->k;
	struct wmarks w;
	int err;

	note_passes(a);
	if ((err = ksettings__take(&a->kset, k->sysfs_root, a->kset_state, k->hint_period_ms,
				   k->take_over)))
		return err;
	/* A migrating agent with fast memory to spare starts with slow-tier marks only. */
	mover__wmarks(&a->m, &a->topo, &w);
	if (!a->marks_failed && !ksettings__meter_start(&a->kset, k->hint_cpu_pct, now_sec(),
							a->migrate && wmarks__roomy(&w))) {
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
	so.damon_state = a->damon_state;
	if (!strcmp(k->source, "auto")) {
		/* What the targets already running hold: auto prefers a source that sees it. */
		targets__census(&a->cfg->specs, &so.need, who, sizeof(who));
		so.need_who = who;
	}
	if ((err = sampler__open(&a->s, &so)))
		return err;
	if (sampler__has_source(&a->s, "hint"))
		open_marks(a);
	pr_info("sampler: %s (%s); maps and programs pinned under %s", a->s.source,
		a->s.source_why, a->s.pin_dir);
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
	sampler__set_targets(&a->s, &a->tr);
	if (!a->tr.nr_targets && !cfg->specs.nr_comms && !cfg->specs.nr_cgroups) {
		pr_err("no target process left to manage");
		return -ESRCH;
	}
	a->eng = (struct engine){ .topo = &a->topo, .tr = &a->tr, .m = &a->m,
				  .policy = &a->policy, .sandbox = &a->sandbox, .epoch_ms = k->epoch_ms };
	/* Page faults alone see first touches only; PMU samples, hint faults and DAMON repeat. */
	if (sampler__repeats(&a->s))
		a->eng.source_flags |= CXLT_SOURCE_REPEATS;
	else
		a->tr.split_mixed = true;	/* a page's one sample must not be lost */
	/* mode and mode_why are agent__set_mode()'s. */
	a->st.run_dir = k->run_dir;
	a->st.topo = &a->topo;
	a->st.tr = &a->tr;
	a->st.s = &a->s;
	a->st.m = &a->m;
	a->st.policy = &a->policy;
	a->st.km = &a->km;
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

/* Hint source: ksettings.h's pass_wait, with what it looks at. */
static bool epoch_due(struct agent *a, struct pass_wait *w, double now)
{
	uint64_t st[CXLT_NR_STATS];
	bool passed = true;

	if (sampler__read_stats(a->s.stats_fd, st))
		return true;	/* cannot tell: no wait */
	for (int i = 0; i < a->nr_pass_seq && passed && !w->passed_at; i++) {
		uint32_t seq;

		/* A target gone (no file) waits for nothing. */
		passed = marks__scan_seq(a->cfg->k.sysfs_root, a->pass_seq[i].pid, &seq) ||
			 seq != a->pass_seq[i].seq;
	}
	return pass_wait__due(w, st[CXLT_STAT_KEPT], passed, now);
}

/* Epochs on the clock until a stop, the duration, or no target left. */
static void run(struct agent *a)
{
	const struct config *cfg = a->cfg;
	double period = cfg->k.epoch_ms / 1000.0, start = now_sec(), next = start + period;
	double end = cfg->k.duration ? start + cfg->k.duration : 0, t_epoch = 0;

	service__notify("READY=1");
	pr_info("set-up done in %.2f s: epochs follow", start - a->started_at);
	while (!stop_requested) {
		double until = end && end < next ? end : next;

		if (a->nr_pass_seq) {
			/* No sooner than half a period after the last epoch: one pass an epoch. */
			double soonest = t_epoch ? t_epoch + period / 2 : start;
			struct pass_wait w = { 0 };

			while (!stop_requested && !reload_requested && now_sec() < until &&
			       (!epoch_due(a, &w, now_sec()) || now_sec() < soonest))
				wait_until(a->sfd, a, fmin(now_sec() + PASS_WAIT_LOOK_SEC, until));
			if (!t_epoch)
				pr_debug("hint: the first epoch %.2f s after the start: %s", now_sec() - start,
					 now_sec() < until ? "the scanner's first pass is answered" :
							     "a period passed first");
		} else {
			wait_until(a->sfd, a, until);
		}
		if (reload_requested) {
			reload_requested = 0;
			pr_info("SIGHUP: reload");
			agent__reload(a);
			continue;
		}
		if (stop_requested || (end && now_sec() >= end))
			break;
		t_epoch = now_sec();
		/* The passes this epoch's drain may miss count for the next wait. */
		if (sampler__has_source(&a->s, "hint"))
			note_passes(a);
		agent__epoch(a);
		if (control__wants_metrics(&a->ctl))
			control__publish_metrics(&a->ctl, status__metrics(&a->st));
		/* An epoch that finishes is the sign of life (the unit's WatchdogSec). */
		if (service__watchdog_usec())
			service__notify("WATCHDOG=1");
		/* Following the passes, a period after this epoch: they set the phase. */
		next = a->nr_pass_seq ? t_epoch + period : next + period;
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
	agent__set_mode(a);
	if ((err = tracker__init(&a->tr, k->decay)) ||
	    (err = mover__init(&a->m, &k->mover, a->topo.page_size)))
		return err;
	a->tr.budget_bytes = (uint64_t)k->tracker_mb << 20;
	agent__set_shares(a, k->fast_share);
	if ((err = open_sources(a)) || (err = start_serving(a)) ||
	    (sampler__has_source(&a->s, "hint") && (err = start_hint(a)))) {
		sampler__kernel_btf_put();
		return err;
	}
	/* Accounting only: loaded once the scanner runs, off the way to the first epoch. */
	if ((err = kmigrate__open(&a->km, k->pin_dir)))
		pr_warn("kernel migration accounting unavailable: %s", strerror(-err));
	sampler__kernel_btf_put();
	service__drop_setup_caps();
	return 0;
}

int main(int argc, char **argv)
{
	static struct config cfg;
	static struct agent a;
	char why[PATH_MAX];
	double started_at = now_sec();
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
			    .lock_fd = -1, .sfd = -1, .argc = argc, .argv = argv,
			    .started_at = started_at };
	/*
	 * The policy's init runs in its own process (as decide() does), forked
	 * now, before any thread or BPF object exists; --check-config thus
	 * checks its parameters as a start would.  A process that cannot be
	 * made (no memory for its mapping) is a failed policy, as a crash later
	 * is: the agent runs on without moves.
	 */
	if (policy_host__open(&a.policy, cfg.k.policy, cfg.k.policy_dir, cfg.k.params,
			      cfg.k.nr_params))
		return 1;
	if (!cfg.policy_help && agent__start_sandbox(&a) && a.sandbox.init_refused) {
		policy_host__unload(&a.policy);
		return 1;
	}
	/* --check-config runs the start's checks first: "valid" means it starts. */
	err = cfg.policy_help ? answer_only(&a) : preflight(&cfg) ? 1 :
	      cfg.check_config ? answer_only(&a) : -1;
	if (err >= 0) {
		sandbox__stop(&a.sandbox);
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
