// SPDX-License-Identifier: MIT
/*
 * What a running agent is asked: a policy swap, a reload (SIGHUP, the
 * control socket), and the control socket's requests.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "util.h"

/*
 * Starts the loaded policy a->policy in a process of its own (sb), where it
 * runs init and then decides; 0, or -errno with why logged.
 */
static int start_sandbox(struct agent *a, struct sandbox *sb)
{
	const struct agent_config *k = &a->cfg->k;
	double limit = k->decide_limit_ms ? k->decide_limit_ms : k->epoch_ms;
	int err = sandbox__start(sb, &a->policy, limit);

	if (err)
		pr_err("policy %s: %s", a->policy.ops->name, sb->failed);
	else
		pr_info("policy %s decides in process %d (seccomp, nobody, %.0f ms at most)",
			a->policy.ops->name, sb->pid, limit);
	return err;
}

int agent__start_sandbox(struct agent *a)
{
	return start_sandbox(a, &a->sandbox);
}

/*
 * The one way a policy is replaced (SIGHUP, the control socket): the new
 * one must load, pass the ABI check and init (in its own process), or the
 * running one stays.
 */
static int swap_policy(struct agent *a, const char *name, const char *dir, char *const *params,
		       int nr_params, const char *why)
{
	struct policy_host old = a->policy;
	struct sandbox sb;

	if (policy_host__open(&a->policy, name, dir, params, nr_params)) {
		a->policy = old;
		pr_warn("%s refused: keeping policy %s from %s (policy %s does not load)", why,
			old.ops->name, old.path, name);
		return -EINVAL;
	}
	if (start_sandbox(a, &sb)) {
		policy_host__unload(&a->policy);
		a->policy = old;
		pr_warn("%s refused: keeping policy %s from %s (policy %s does not start)", why,
			old.ops->name, old.path, name);
		return -EINVAL;
	}
	pr_info("%s: policy %s -> %s (%s)", why, old.ops->name, a->policy.ops->name, a->policy.path);
	sandbox__stop(&a->sandbox);
	policy_host__unload(&old);
	a->sandbox = sb;
	return 0;
}

/* The fast-tier shares of a setting (validated with the settings); logs them. */
void agent__set_shares(struct agent *a, const char *setting)
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
int agent__reload(struct agent *a)
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
	agent__set_shares(a, fresh.k.fast_share);
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
char *agent__handle_request(void *ctx, const struct control_req *req)
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
		if (agent__reload(a))
			return control__error("reload refused (see the agent's log for why); the running configuration stays");
		snprintf(what, sizeof(what), "reloaded: policy %s, %.0f MiB/s", a->policy.ops->name,
			 a->m.opts.rate_mbps);
		return reply_ok(what);
	}
	return control__error("unhandled request");
}
