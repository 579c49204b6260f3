// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"
#include "util.h"

char *control__error(const char *fmt, ...)
{
	struct json_object *o = json_object_new_object();
	char msg[512], *out;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(msg));
	out = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return out;
}

static int parse_rate(struct control_req *req, char **args, int n, char *err, size_t errlen)
{
	(void)n;
	if (parse_double(args[0], 0.001, 1e6, &req->rate_mbps)) {
		snprintf(err, errlen, "rate '%s': expected MiB/s, more than 0", args[0]);
		return -EINVAL;
	}
	return 0;
}

static int parse_policy(struct control_req *req, char **args, int n, char *err, size_t errlen)
{
	req->policy = args[0];
	for (int k = 1; k < n; k++) {
		if (!strchr(args[k], '=') || args[k][0] == '=') {
			snprintf(err, errlen, "policy parameter '%s': expected KEY=VALUE", args[k]);
			return -EINVAL;
		}
		req->params[req->nr_params++] = args[k];
	}
	return 0;
}

const struct control_command control__commands[CTL_NR_CMDS] = {
	{ "status", CTL_STATUS, 0, 0, "", "no arguments",
	  "nodes, sampler, policy, per-target placement and counters", CTL_REPLY_OBJECT, NULL },
	{ "targets", CTL_TARGETS, 0, 0, "", "no arguments",
	  "the managed processes and where their pages are", CTL_REPLY_ARRAY, NULL },
	{ "metrics", CTL_METRICS, 0, 0, "", "no arguments", "Prometheus text format",
	  CTL_REPLY_TEXT, NULL },
	{ "pause", CTL_PAUSE, 0, 0, "", "no arguments", "stop migrating (sampling goes on)",
	  CTL_REPLY_OBJECT, NULL },
	{ "resume", CTL_RESUME, 0, 0, "", "no arguments", "migrate again", CTL_REPLY_OBJECT, NULL },
	{ "rate", CTL_RATE, 1, 1, "MBPS", "one number: MiB/s", "change the migration budget",
	  CTL_REPLY_OBJECT, parse_rate },
	{ "policy", CTL_POLICY, 1, CXLT_MAX_PARAMS + 1, "NAME|PATH [KEY=VALUE...]",
	  "a name or path, then KEY=VALUE parameters",
	  "switch policy (the old one stays if the new is refused)", CTL_REPLY_OBJECT,
	  parse_policy },
	{ "reload", CTL_RELOAD, 0, 0, "", "no arguments",
	  "read the settings and the policy again, as SIGHUP does", CTL_REPLY_OBJECT, NULL },
};

const struct control_command *control__command(const char *name)
{
	for (int i = 0; i < CTL_NR_CMDS; i++)
		if (!strcmp(control__commands[i].name, name))
			return &control__commands[i];
	return NULL;
}

static void list_commands(char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < CTL_NR_CMDS && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s%s%s", i ? ", " : "",
				control__commands[i].name, *control__commands[i].args ? " " : "",
				control__commands[i].args);
}

int control__parse(const char *buf, size_t len, struct control_req *req, char *err, size_t errlen)
{
	char *words[CXLT_MAX_PARAMS + 2], *save, *w, list[256];
	const struct control_command *c;
	int n = 0;

	memset(req, 0, sizeof(*req));
	if (len > CONTROL_MAX_LINE) {
		snprintf(err, errlen, "request longer than %d bytes", CONTROL_MAX_LINE);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = buf[i];

		if (ch == '\n' && i == len - 1)
			break;
		if (ch < 0x20 || ch > 0x7e) {
			snprintf(err, errlen, "request holds a non-printable byte 0x%02x at %zu", ch, i);
			return -EINVAL;
		}
		req->line[i] = (char)ch;
	}
	for (w = strtok_r(req->line, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (n == (int)(sizeof(words) / sizeof(words[0]))) {
			snprintf(err, errlen, "too many words (at most %d parameters)", CXLT_MAX_PARAMS);
			return -EINVAL;
		}
		words[n++] = w;
	}
	list_commands(list, sizeof(list));
	if (!n) {
		snprintf(err, errlen, "empty request (%s)", list);
		return -EINVAL;
	}
	if (!(c = control__command(words[0]))) {
		snprintf(err, errlen, "unknown request '%.64s' (%s)", words[0], list);
		return -EINVAL;
	}
	if (n - 1 < c->min_args || n - 1 > c->max_args) {
		snprintf(err, errlen, "'%s' takes %s", c->name, c->takes);
		return -EINVAL;
	}
	req->cmd = c->cmd;
	return c->parse ? c->parse(req, words + 1, n - 1, err, errlen) : 0;
}

static int listen_unix(struct control *c, const char *run_dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	snprintf(c->path, sizeof(c->path), "%s/" CONTROL_SOCKET, run_dir);
	if (strlen(c->path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, c->path);
	unlink(c->path);	/* a leftover of an agent that died: we hold the lock */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* Mode 0600 from the start: no window in which others could connect. */
	mode_t old = umask(0177);
	int err = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16) ? -errno : 0;

	umask(old);
	if (err) {
		close(fd);
		return err;
	}
	c->sock_fd = fd;
	return 0;
}

/*
 * What the loop publishes and the HTTP thread serves: immutable once
 * published, freed by whoever drops the last reference, so the thread holds
 * the lock only to take a reference and never waits on the loop, nor the
 * loop on a slow reader.
 */
struct metrics_snapshot {
	atomic_int refs;
	size_t len;
	char *text;
};

static void snapshot_put(void *p)
{
	struct metrics_snapshot *snap = p;

	if (snap && atomic_fetch_sub(&snap->refs, 1) == 1) {
		free(snap->text);
		free(snap);
	}
}

static struct metrics_snapshot *snapshot_get(struct control *c)
{
	struct metrics_snapshot *snap;

	pthread_mutex_lock(c->lock);
	snap = c->snapshot;
	if (snap)
		atomic_fetch_add(&snap->refs, 1);
	pthread_mutex_unlock(c->lock);
	return snap;
}

static enum MHD_Result reply_http(struct MHD_Connection *conn, unsigned int status, const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text,
								 MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* libmicrohttpd's thread: reads the snapshot only, never agent state. */
static enum MHD_Result serve_http(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct control *c = cls;
	struct metrics_snapshot *snap;
	struct MHD_Response *r;
	enum MHD_Result ret;

	(void)version;
	(void)upload_data;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_http(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET /metrics here\n");
	/* A GET with a body: take none of it, answer at once. */
	if (*upload_data_size) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	(void)req_cls;
	if (strcmp(url, "/metrics"))
		return reply_http(conn, MHD_HTTP_NOT_FOUND, "only /metrics here\n");
	snap = snapshot_get(c);
	if (!snap)
		return reply_http(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no metrics yet\n");
	r = MHD_create_response_from_buffer_with_free_callback_cls(snap->len, snap->text,
								   snapshot_put, snap);
	if (!r) {
		snapshot_put(snap);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; version=0.0.4");
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static int listen_http(struct control *c, const char *addr, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };

	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		return -EINVAL;
	errno = 0;
	/*
	 * Its own thread (epoll), a cap on connections, a short idle timeout
	 * and a small per-connection memory budget: a client can at worst
	 * keep others from the metrics, never the agent from its epochs.
	 * The thread inherits the loop's blocked stop signals (signalfd).
	 * MHD_USE_ITC: at the connection cap the thread no longer polls the
	 * listening socket, so only a pipe wakes it at once to stop (without,
	 * stopping waited out the idle timeout).
	 */
	c->http = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ITC, (uint16_t)port, NULL, NULL,
				   serve_http, c,
				   MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				   MHD_OPTION_CONNECTION_LIMIT, (unsigned int)METRICS_MAX_CONNS,
				   MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)METRICS_IDLE_SEC,
				   MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384,
				   MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)64,
				   MHD_OPTION_END);
	/* libmicrohttpd leaves bind's errno; EADDRNOTAVAIL if it set none. */
	return c->http ? 0 : errno ? -errno : -EADDRNOTAVAIL;
}

static int open_textfile_dir(struct control *c, const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	c->textfile_dir = fd;
	snprintf(c->textfile_path, sizeof(c->textfile_path), "%s/" METRICS_TEXTFILE, dir);
	return 0;
}

int control__open(struct control *c, const struct control_opts *o)
{
	const char *addr = o->metrics_addr ? o->metrics_addr : "127.0.0.1";
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int err;

	memset(c, 0, sizeof(*c));
	c->sock_fd = c->textfile_dir = -1;
	for (int i = 0; i < CONTROL_MAX_CONNS; i++)
		c->conns[i].fd = -1;
	c->lock = &lock;
	if ((err = listen_unix(c, o->run_dir))) {
		pr_err("cannot create the control socket %s: %s", c->path, strerror(-err));
		return err;
	}
	if (o->metrics_port > 0 && (err = listen_http(c, addr, o->metrics_port))) {
		pr_err("cannot serve metrics on %s:%d: %s (an address of this machine and a free port?)",
		       addr, o->metrics_port, strerror(-err));
		control__close(c);
		return err;
	}
	if (o->metrics_textfile && (err = open_textfile_dir(c, o->metrics_textfile))) {
		pr_err("metrics textfile directory %s: %s", o->metrics_textfile, strerror(-err));
		control__close(c);
		return err;
	}
	return 0;
}

static void conn_close(struct control_conn *k)
{
	if (k->fd >= 0)
		close(k->fd);
	free(k->out);
	k->out = NULL;
	k->fd = -1;
}

void control__close(struct control *c)
{
	if (c->sock_fd >= 0) {
		close(c->sock_fd);
		unlink(c->path);
	}
	for (int i = 0; i < CONTROL_MAX_CONNS; i++)
		conn_close(&c->conns[i]);
	if (c->http)
		MHD_stop_daemon(c->http);	/* joins its thread: no reader is left */
	c->http = NULL;
	if (c->textfile_dir >= 0) {
		/* Stale numbers would read as a live agent: the file goes with it. */
		unlinkat(c->textfile_dir, METRICS_TEXTFILE, 0);
		close(c->textfile_dir);
	}
	c->textfile_dir = -1;
	if (c->lock) {
		snapshot_put(c->snapshot);
		c->snapshot = NULL;
	}
	c->sock_fd = -1;
}

bool control__wants_metrics(const struct control *c)
{
	return c->http || c->textfile_dir >= 0;
}

/*
 * node_exporter's convention: write a temporary file beside the real one,
 * then rename it over, so the collector never reads half a file.  The
 * temporary name starts with a dot (the collector reads *.prom only); it is
 * created afresh (O_EXCL, O_NOFOLLOW): a link planted under that name is
 * neither followed nor truncated.
 */
static int write_textfile(struct control *c, const char *text, size_t len)
{
	static const char tmp[] = "." METRICS_TEXTFILE ".tmp";
	int fd, err = 0;

	unlinkat(c->textfile_dir, tmp, 0);
	fd = openat(c->textfile_dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	/* 0644 whatever the umask: the collector runs as its own user. */
	if (fchmod(fd, 0644))
		err = -errno;
	while (!err && len) {
		ssize_t n = write(fd, text, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		text += n;
		len -= n;
	}
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(c->textfile_dir, tmp, c->textfile_dir, METRICS_TEXTFILE))
		err = -errno;
	if (err)
		unlinkat(c->textfile_dir, tmp, 0);
	return err;
}

void control__publish_metrics(struct control *c, char *text)
{
	struct metrics_snapshot *snap, *old;
	int err;

	if (!text)
		return;
	if (c->textfile_dir >= 0) {
		err = write_textfile(c, text, strlen(text));
		if (err && !c->textfile_failed)
			pr_warn("cannot write the metrics textfile %s: %s (said once)", c->textfile_path,
				strerror(-err));
		c->textfile_failed = err != 0;
	}
	if (!c->http || !(snap = malloc(sizeof(*snap)))) {
		free(text);
		return;
	}
	atomic_init(&snap->refs, 1);
	snap->text = text;
	snap->len = strlen(text);
	pthread_mutex_lock(c->lock);
	old = c->snapshot;
	c->snapshot = snap;
	pthread_mutex_unlock(c->lock);
	snapshot_put(old);
}

/* ---- the Unix socket, served from the loop without ever blocking ---- */

int control__pollfds(const struct control *c, struct pollfd *pfd, int max)
{
	int n = 0;

	if (c->sock_fd < 0 || max < 1)
		return 0;
	pfd[n++] = (struct pollfd){ .fd = c->sock_fd, .events = POLLIN };
	for (int i = 0; i < CONTROL_MAX_CONNS && n < max; i++)
		if (c->conns[i].fd >= 0)
			pfd[n++] = (struct pollfd){ .fd = c->conns[i].fd,
						    .events = c->conns[i].replying ? POLLOUT : POLLIN };
	return n;
}

int control__timeout_ms(const struct control *c)
{
	double first = 0, now = now_sec();

	for (int i = 0; i < CONTROL_MAX_CONNS; i++)
		if (c->conns[i].fd >= 0 && (!first || c->conns[i].deadline < first))
			first = c->conns[i].deadline;
	if (!first)
		return -1;
	return first <= now ? 0 : (int)((first - now) * 1000) + 1;
}

static void conn_accept(struct control *c)
{
	for (;;) {
		int fd = accept4(c->sock_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct control_conn *k = NULL;
		struct ucred cred = { .uid = (uid_t)-1, .pid = 0 };
		socklen_t clen = sizeof(cred);

		if (fd < 0)
			return;	/* EAGAIN: nothing more pending */
		for (int i = 0; i < CONTROL_MAX_CONNS && !k; i++)
			if (c->conns[i].fd < 0)
				k = &c->conns[i];
		if (!k) {
			/* Full: this one is closed unanswered; those being served go on. */
			pr_debug("control socket: %d connections open; closed a new one",
				 CONTROL_MAX_CONNS);
			close(fd);
			continue;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen))
			cred.uid = (uid_t)-1;
		*k = (struct control_conn){ .fd = fd, .uid = cred.uid, .pid = cred.pid,
					    .deadline = now_sec() + CONTROL_REQUEST_SEC };
	}
}

/* The request is in (a line, EOF or the byte budget spent): the reply. */
static void conn_answer(struct control_conn *k, control_handler handle, void *ctx)
{
	struct control_req *req = malloc(sizeof(*req));
	char err[256], *reply;

	if (k->uid != 0 && k->uid != geteuid()) {
		reply = control__error("permission denied: the control socket is for root only");
		pr_warn("control socket: refused a request from uid %u (pid %d)", k->uid, k->pid);
	} else if (!req) {
		reply = control__error("out of memory");
	} else if (!k->in_len) {
		reply = control__error("no request");
	} else if (control__parse(k->in, k->in_len > CONTROL_MAX_LINE ? CONTROL_MAX_LINE + 1 : k->in_len,
				  req, err, sizeof(err))) {
		reply = control__error("%s", err);
	} else {
		reply = handle(ctx, req);
	}
	free(req);
	k->replying = true;
	k->deadline = now_sec() + CONTROL_REPLY_SEC;
	k->out_off = 0;
	k->out_len = 0;
	if (reply && (k->out = realloc(reply, strlen(reply) + 2))) {
		k->out_len = strlen(k->out);
		k->out[k->out_len++] = '\n';
		k->out[k->out_len] = '\0';
	} else {
		free(reply);
	}
}

/* Reads what is there; false when the connection is done with. */
static bool conn_read(struct control_conn *k, control_handler handle, void *ctx)
{
	while (k->in_len <= CONTROL_MAX_LINE) {
		ssize_t n = read(k->fd, k->in + k->in_len, CONTROL_MAX_LINE + 1 - k->in_len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (n < 0)
			return false;
		if (n == 0)
			break;	/* EOF: the request is what came */
		k->in_len += n;
		if (memchr(k->in + k->in_len - n, '\n', n))
			break;
	}
	conn_answer(k, handle, ctx);
	return true;
}

static bool conn_write(struct control_conn *k)
{
	while (k->out_off < k->out_len) {
		ssize_t n = send(k->fd, k->out + k->out_off, k->out_len - k->out_off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (n <= 0)
			return false;
		k->out_off += n;
	}
	return false;	/* all written */
}

void control__serve(struct control *c, control_handler handle, void *ctx)
{
	double now;

	if (c->sock_fd < 0)
		return;
	conn_accept(c);
	for (int i = 0; i < CONTROL_MAX_CONNS; i++) {
		struct control_conn *k = &c->conns[i];
		bool open;

		if (k->fd < 0)
			continue;
		open = k->replying ? conn_write(k) : conn_read(k, handle, ctx);
		/* A reply just made goes out at once if the socket takes it. */
		if (open && k->replying && k->out_off == 0)
			open = conn_write(k);
		now = now_sec();
		if (open && now >= k->deadline) {
			pr_debug("control socket: closed a connection of pid %d: too slow to %s",
				 k->pid, k->replying ? "take its reply" : "send a request");
			open = false;
		}
		if (!open)
			conn_close(k);
	}
}
