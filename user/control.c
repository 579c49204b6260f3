// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <stdarg.h>
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

int control__parse(const char *buf, size_t len, struct control_req *req, char *err, size_t errlen)
{
	char *words[CONTROL_MAX_PARAMS + 2], *save, *w;
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
			snprintf(err, errlen, "too many words (at most %d parameters)", CONTROL_MAX_PARAMS);
			return -EINVAL;
		}
		words[n++] = w;
	}
	if (!n) {
		snprintf(err, errlen, "empty request (status, targets, metrics, pause, resume, rate MBPS, policy NAME [KEY=VALUE...])");
		return -EINVAL;
	}
	static const struct { const char *name; enum control_cmd cmd; int min, max; } cmds[] = {
		{ "status", CTL_STATUS, 1, 1 }, { "targets", CTL_TARGETS, 1, 1 },
		{ "metrics", CTL_METRICS, 1, 1 }, { "pause", CTL_PAUSE, 1, 1 },
		{ "resume", CTL_RESUME, 1, 1 }, { "rate", CTL_RATE, 2, 2 },
		{ "policy", CTL_POLICY, 2, CONTROL_MAX_PARAMS + 2 },
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(words[0], cmds[i].name))
			continue;
		if (n < cmds[i].min || n > cmds[i].max) {
			snprintf(err, errlen, "'%s' takes %s", cmds[i].name,
				 cmds[i].cmd == CTL_RATE ? "one number: MiB/s" :
				 cmds[i].cmd == CTL_POLICY ? "a name or path, then KEY=VALUE parameters" :
				 "no arguments");
			return -EINVAL;
		}
		req->cmd = cmds[i].cmd;
		if (req->cmd == CTL_RATE && parse_double(words[1], 0.001, 1e6, &req->rate_mbps)) {
			snprintf(err, errlen, "rate '%s': expected MiB/s, more than 0", words[1]);
			return -EINVAL;
		}
		if (req->cmd == CTL_POLICY) {
			req->policy = words[1];
			for (int k = 2; k < n; k++) {
				if (!strchr(words[k], '=') || words[k][0] == '=') {
					snprintf(err, errlen, "policy parameter '%s': expected KEY=VALUE", words[k]);
					return -EINVAL;
				}
				req->params[req->nr_params++] = words[k];
			}
		}
		return 0;
	}
	snprintf(err, errlen, "unknown request '%.64s' (status, targets, metrics, pause, resume, rate, policy)",
		 words[0]);
	return -EINVAL;
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

static int listen_http(struct control *c, const char *addr, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd, one = 1;

	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		return -EINVAL;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16)) {
		int err = -errno;

		close(fd);
		return err;
	}
	c->http_fd = fd;
	return 0;
}

int control__open(struct control *c, const char *run_dir, const char *metrics_addr, int metrics_port)
{
	int err;

	c->sock_fd = c->http_fd = -1;
	if ((err = listen_unix(c, run_dir))) {
		pr_err("cannot create the control socket %s: %s", c->path, strerror(-err));
		return err;
	}
	if (metrics_port > 0 && (err = listen_http(c, metrics_addr ? metrics_addr : "127.0.0.1", metrics_port))) {
		pr_err("cannot serve metrics on %s:%d: %s", metrics_addr ? metrics_addr : "127.0.0.1",
		       metrics_port, strerror(-err));
		control__close(c);
		return err;
	}
	return 0;
}

void control__close(struct control *c)
{
	if (c->sock_fd >= 0) {
		close(c->sock_fd);
		unlink(c->path);
	}
	if (c->http_fd >= 0)
		close(c->http_fd);
	c->sock_fd = c->http_fd = -1;
}

/* Reads until a newline, EOF, the limit, or a 1 s timeout. */
static ssize_t read_request(int fd, char *buf, size_t cap, bool stop_at_blank_line)
{
	struct timeval tv = { .tv_sec = 1 };
	size_t off = 0;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (off < cap) {
		ssize_t n = read(fd, buf + off, cap - off);

		if (n <= 0)
			break;
		off += n;
		if (!stop_at_blank_line && memchr(buf, '\n', off))
			break;
		if (stop_at_blank_line && off >= 4 && memmem(buf, off, "\r\n\r\n", 4))
			break;
	}
	return off;
}

static void write_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t n = write(fd, s, len);

		if (n <= 0)
			return;
		s += n;
		len -= n;
	}
}

static void serve_unix(int fd, control_handler handle, void *ctx)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	struct control_req *req = malloc(sizeof(*req));
	char buf[CONTROL_MAX_LINE + 2], err[256], *reply;
	ssize_t n;

	if (!req)
		return;
	/* Read first, so a refused client gets its answer rather than a broken pipe. */
	n = read_request(fd, buf, sizeof(buf), false);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) ||
	    (cred.uid != 0 && cred.uid != geteuid())) {
		reply = control__error("permission denied: the control socket is for root only");
		pr_warn("control socket: refused a request from uid %u (pid %d)", cred.uid, cred.pid);
	} else if (n <= 0) {
		reply = control__error("no request");
	} else if (control__parse(buf, (size_t)n > CONTROL_MAX_LINE ? CONTROL_MAX_LINE + 1 : (size_t)n,
				  req, err, sizeof(err))) {
		reply = control__error("%s", err);
	} else {
		reply = handle(ctx, req);
	}
	if (reply) {
		write_all(fd, reply, strlen(reply));
		write_all(fd, "\n", 1);
	}
	free(reply);
	free(req);
}

static void serve_http(int fd, control_handler handle, void *ctx)
{
	struct control_req req = { .cmd = CTL_METRICS };
	char buf[2048], head[256], *body = NULL;
	ssize_t n = read_request(fd, buf, sizeof(buf) - 1, true);
	bool ok;

	if (n <= 0)
		return;
	buf[n] = '\0';
	ok = !strncmp(buf, "GET /metrics ", 13) || !strncmp(buf, "GET /metrics?", 13);
	if (ok)
		body = handle(ctx, &req);
	snprintf(head, sizeof(head),
		 "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
		 ok && body ? "200 OK" : "404 Not Found",
		 ok ? "text/plain; version=0.0.4" : "text/plain",
		 ok && body ? strlen(body) : strlen("only /metrics here\n"));
	write_all(fd, head, strlen(head));
	if (ok && body)
		write_all(fd, body, strlen(body));
	else
		write_all(fd, "only /metrics here\n", 19);
	free(body);
}

void control__serve(struct control *c, int fd, control_handler handle, void *ctx)
{
	for (;;) {
		int conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

		if (conn < 0)
			return;	/* EAGAIN: nothing more pending */
		if (fd == c->sock_fd)
			serve_unix(conn, handle, ctx);
		else
			serve_http(conn, handle, ctx);
		close(conn);
	}
}
