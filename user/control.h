/* SPDX-License-Identifier: MIT */
/*
 * The agent's control surface: a Unix socket (RUN_DIR/cxltier.sock, 0600,
 * root only: the peer's credentials are checked) taking one request line per
 * connection, and an optional loopback HTTP port serving /metrics for
 * Prometheus.
 *
 * Requests (ASCII words, one line, at most CONTROL_MAX_LINE bytes):
 *   status | targets | metrics | pause | resume | rate MBPS |
 *   policy NAME|PATH [KEY=VALUE ...]
 * Replies: JSON ({"ok": false, "error": "..."} on failure); metrics: text.
 */
#ifndef CXLT_CONTROL_H
#define CXLT_CONTROL_H

#include <stddef.h>

#define CONTROL_MAX_LINE 4096
#define CONTROL_MAX_PARAMS 32
#define CONTROL_SOCKET "cxltier.sock"

enum control_cmd {
	CTL_STATUS, CTL_TARGETS, CTL_METRICS, CTL_PAUSE, CTL_RESUME, CTL_RATE, CTL_POLICY,
};

struct control_req {
	enum control_cmd cmd;
	double rate_mbps;
	char *policy;
	char *params[CONTROL_MAX_PARAMS];
	int nr_params;
	char line[CONTROL_MAX_LINE + 1];	/* the words point in here */
};

/* Parses one request; -EINVAL with a message naming what is wrong. */
int control__parse(const char *buf, size_t len, struct control_req *req, char *err, size_t errlen);

/* Answers a request: a malloc'd reply (JSON or metrics text). */
typedef char *(*control_handler)(void *ctx, const struct control_req *req);

struct control {
	int sock_fd;		/* the Unix socket, or -1 */
	int http_fd;		/* the metrics port, or -1 */
	char path[512];
};

int control__open(struct control *c, const char *run_dir, const char *metrics_addr, int metrics_port);
void control__close(struct control *c);
/* Serves every connection pending on fd (one of c's); never blocks for long. */
void control__serve(struct control *c, int fd, control_handler handle, void *ctx);
/* A JSON error reply. */
char *control__error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
