// SPDX-License-Identifier: MIT
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy_host.h"
#include "util.h"

static const char *param_default(const struct cxlt_policy *ops, const char *key)
{
	for (const struct cxlt_param_desc *d = ops->params; d && d->key; d++)
		if (!strcmp(d->key, key))
			return d->def;
	return NULL;
}

static int build_params(struct policy_host *h, char *const *kv, int nr_kv)
{
	const struct cxlt_policy *ops = h->ops;
	size_t len = 0;
	char *p;

	for (const struct cxlt_param_desc *d = ops->params; d && d->key; d++)
		len += strlen(d->key) + strlen(d->def ? d->def : "") + 2;
	for (int i = 0; i < nr_kv; i++)
		len += strlen(kv[i]) + 1;
	h->strings = p = malloc(len + 1);
	if (!p)
		return -ENOMEM;

	for (const struct cxlt_param_desc *d = ops->params; d && d->key; d++) {
		if (h->nr_params == CXLT_MAX_PARAMS)
			return -E2BIG;
		h->params[h->nr_params].key = strcpy(p, d->key);
		p += strlen(p) + 1;
		h->params[h->nr_params++].value = strcpy(p, d->def ? d->def : "");
		p += strlen(p) + 1;
	}
	for (int i = 0; i < nr_kv; i++) {
		char *eq, *key = strcpy(p, kv[i]);
		uint32_t k;

		p += strlen(p) + 1;
		eq = strchr(key, '=');
		if (!eq || eq == key) {
			pr_err("policy %s: parameter '%s' is not key=value", ops->name, kv[i]);
			return -EINVAL;
		}
		*eq = '\0';
		if (!param_default(ops, key)) {
			char accepted[512] = "";

			for (const struct cxlt_param_desc *d = ops->params; d && d->key; d++)
				snprintf(accepted + strlen(accepted), sizeof(accepted) - strlen(accepted),
					 "%s%s", accepted[0] ? ", " : "", d->key);
			pr_err("policy %s: unknown parameter '%s' (accepted: %s)", ops->name, key,
			       accepted[0] ? accepted : "none");
			return -EINVAL;
		}
		for (k = 0; k < h->nr_params; k++)
			if (!strcmp(h->params[k].key, key))
				h->params[k].value = eq + 1;
	}
	return 0;
}

static int copy_to_memfd(const char *path, int fd, int *out)
{
	char buf[65536];
	ssize_t n;
	int mfd = memfd_create("cxlt-policy", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (mfd < 0) {
		int err = -errno;

		pr_err("policy %s: memfd_create: %s", path, strerror(errno));
		return err;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(mfd, buf, n) != n) {
			n = -1;
			break;
		}
	if (n < 0 || fcntl(mfd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL)) {
		int err = -errno;

		pr_err("policy %s: cannot copy it for loading: %s", path, strerror(errno));
		close(mfd);
		return err;
	}
	*out = mfd;
	return 0;
}

int policy_host__open(struct policy_host *h, const char *name, const char *dir,
		      char *const *kv, int nr_kv)
{
	const struct cxlt_policy *ops;
	char fdpath[64], why[2 * PATH_MAX + 256];
	int err, fd, mfd = -1;

	memset(h, 0, sizeof(*h));
	if (strchr(name, '/'))
		snprintf(h->path, sizeof(h->path), "%s", name);
	else
		snprintf(h->path, sizeof(h->path), "%s/%s.so", dir, name);
	/*
	 * The checked bytes are the loaded bytes: the file is opened once,
	 * checked through that descriptor and copied into a sealed memfd that
	 * dlopen maps.  A rebuilt file is thus really reloaded on SIGHUP (dlopen
	 * would hand back the old object for the same path), and rewriting the
	 * file later cannot change the code that runs.
	 * The file and every directory up to / must be root's and writable by
	 * no one else (open_trusted() in util.c): a policy swapped for a link,
	 * or held in a directory someone else can write, is refused.
	 */
	fd = open_trusted(h->path, "make the agent run their code as root", why, sizeof(why));
	if (fd < 0) {
		err = fd;
		pr_err("policy: %s%s", why,
		       err != -ENOENT || strchr(name, '/') ? "" : " (a bare name is looked up in the policy directory; give a path to load another file)");
		return err;
	}
	if ((err = copy_to_memfd(h->path, fd, &mfd))) {
		close(fd);
		return err;
	}
	close(fd);
	/*
	 * dlopen knows objects by path: the memfd stays open while the policy
	 * is loaded, so no other policy can get the same /proc/self/fd/N name.
	 */
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", mfd);
	h->dl = dlopen(fdpath, RTLD_NOW | RTLD_LOCAL);
	h->memfd = mfd;
	if (!h->dl) {
		const char *why = dlerror();
		const char *tail = why ? strstr(why, ": ") : NULL;

		pr_err("policy %s: cannot load: %s", h->path, tail ? tail + 2 : why);
		err = -ENOEXEC;
		goto fail;
	}
	ops = dlsym(h->dl, "cxlt_policy");
	if (!ops) {
		pr_err("policy %s: no 'cxlt_policy' symbol: not a cxltier policy (see include/cxltier/policy.h)",
		       h->path);
		err = -ENOEXEC;
		goto fail;
	}
	if (ops->abi != CXLT_POLICY_ABI) {
		pr_err("policy %s: built for policy ABI %u, but this cxltierd speaks ABI %u; rebuild it against this include/cxltier/policy.h",
		       h->path, ops->abi, CXLT_POLICY_ABI);
		err = -EPROTO;
		goto fail;
	}
	if (ops->sz < sizeof(struct cxlt_policy)) {
		pr_err("policy %s: ops table is %u bytes, ABI %u needs %zu; rebuild it",
		       h->path, ops->sz, CXLT_POLICY_ABI, sizeof(struct cxlt_policy));
		err = -EPROTO;
		goto fail;
	}
	if (!ops->decide || !ops->name) {
		pr_err("policy %s: the ops table has no %s", h->path, ops->name ? "decide()" : "name");
		err = -EINVAL;
		goto fail;
	}
	h->ops = ops;
	if ((err = build_params(h, kv, nr_kv)))
		goto fail;
	return 0;
fail:
	policy_host__unload(h);
	return err;
}

int policy_host__init(struct policy_host *h, char *msg, size_t len)
{
	int err;

	msg[0] = '\0';
	if (!h->ops->init) {
		h->inited = true;
		return 0;
	}
	if ((err = h->ops->init(&h->state, h->params, h->nr_params, msg, len))) {
		if (!msg[0])
			snprintf(msg, len, "%s", strerror(err < 0 ? -err : err));
		h->state = NULL;
		return err < 0 ? err : -EINVAL;
	}
	h->inited = true;
	return 0;
}

int policy_host__load(struct policy_host *h, const char *name, const char *dir,
		      char *const *kv, int nr_kv)
{
	char msg[256];
	int err;

	if ((err = policy_host__open(h, name, dir, kv, nr_kv)))
		return err;
	if ((err = policy_host__init(h, msg, sizeof(msg)))) {
		pr_err("policy %s: init failed: %s", h->ops->name, msg);
		policy_host__unload(h);
	}
	return err;
}

void policy_host__unload(struct policy_host *h)
{
	if (h->ops && h->ops->fini && h->state)
		h->ops->fini(h->state);
	if (h->dl)
		dlclose(h->dl);
	if (h->memfd > 0)
		close(h->memfd);
	free(h->strings);
	memset(h, 0, sizeof(*h));
}

void policy_host__describe(const struct policy_host *h)
{
	printf("%s: %s\n", h->ops->name, h->ops->description ? h->ops->description : "");
	for (const struct cxlt_param_desc *d = h->ops->params; d && d->key; d++)
		printf("  %-16s default %-8s %s\n", d->key, d->def, d->help ? d->help : "");
}
