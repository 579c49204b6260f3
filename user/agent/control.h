/* SPDX-License-Identifier: MIT */
/*
 * The agent's control surface: a Unix socket (RUN_DIR/cxltier.sock, 0600,
 * root only: the peer's credentials are checked) taking one request line per
 * connection; an optional loopback HTTP port serving /metrics for
 * Prometheus; and an optional metrics file for node_exporter's textfile
 * collector (DIR/cxltier.prom, replaced atomically each epoch).
 *
 * Requests (ASCII words, one line, at most CONTROL_MAX_LINE bytes): the
 * rows of control__commands below, such as "rate 128".
 * Replies: JSON ({"ok": false, "error": "..."} on failure); metrics: text.
 */
#ifndef CXLT_CONTROL_H
#define CXLT_CONTROL_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#include "policy_host.h"

#define CONTROL_MAX_LINE 4096
#define CONTROL_SOCKET "cxltier.sock"

enum control_cmd {
	CTL_STATUS, CTL_TARGETS, CTL_METRICS, CTL_PAUSE, CTL_RESUME, CTL_RATE, CTL_POLICY,
	CTL_RELOAD,
};
/* The agent's handle_request switches over every cmd: -Wswitch finds a missing one. */
#define CTL_NR_CMDS (CTL_RELOAD + 1)

struct control_req {
	enum control_cmd cmd;
	double rate_mbps;
	char *policy;
	char *params[CXLT_MAX_PARAMS];
	int nr_params;
	char line[CONTROL_MAX_LINE + 1];	/* the words point in here */
};

/* What a command's reply is: cxltierctl refuses a reply of another shape. */
enum control_reply { CTL_REPLY_OBJECT, CTL_REPLY_ARRAY, CTL_REPLY_TEXT };

/*
 * The requests, one row each: the socket's parser, the agent's handlers
 * (one per cmd) and cxltierctl's usage and reply checks all read this table.
 */
struct control_command {
	const char *name;
	enum control_cmd cmd;
	int min_args, max_args;	/* words after the name */
	const char *args;	/* as usage shows them, "" for none */
	const char *takes;	/* finishes "'NAME' takes ..." when they are wrong */
	const char *help;	/* one line */
	enum control_reply reply;
	/* Checks and stores the arguments; NULL: none to check.  Message in err. */
	int (*parse)(struct control_req *req, char **args, int n, char *err, size_t errlen);
};

extern const struct control_command control__commands[CTL_NR_CMDS];
const struct control_command *control__command(const char *name);

/* Parses one request; -EINVAL with a message naming what is wrong. */
int control__parse(const char *buf, size_t len, struct control_req *req, char *err, size_t errlen);

/* Answers a request: a malloc'd reply (JSON or metrics text). */
typedef char *(*control_handler)(void *ctx, const struct control_req *req);

/*
 * Nothing a client does may delay an epoch, a stop signal or the watchdog:
 * the Unix socket is served from the epoch loop without blocking (a
 * connection cap, a byte budget and deadlines that do not restart on each
 * byte), and HTTP is served by libmicrohttpd's own thread from a metrics
 * snapshot the loop publishes; that thread never touches agent state.
 */
#define CONTROL_MAX_CONNS 16
#define CONTROL_REQUEST_SEC 2.0	/* from accept to the request's end */
#define CONTROL_REPLY_SEC 5.0	/* for the client to take its reply */
#define METRICS_MAX_CONNS 64
#define METRICS_IDLE_SEC 2	/* libmicrohttpd: an idle connection is closed */
#define METRICS_TEXTFILE "cxltier.prom"

struct control_conn {
	int fd;			/* -1: a free slot */
	bool replying;		/* the request is in; out is being written */
	unsigned int uid;
	int pid;
	double deadline;	/* monotonic seconds */
	size_t in_len, out_len, out_off;
	char in[CONTROL_MAX_LINE + 2];
	char *out;
};

struct metrics_snapshot;
struct MHD_Daemon;

struct control {
	int sock_fd;		/* the Unix socket, or -1 */
	struct control_conn conns[CONTROL_MAX_CONNS];
	struct MHD_Daemon *http;	/* the metrics port, or NULL */
	void *lock;		/* pthread_mutex_t, guards snapshot */
	struct metrics_snapshot *snapshot;
	int textfile_dir;	/* node_exporter's textfile directory, or -1 */
	bool textfile_failed;	/* said once, not each epoch */
	char path[512];
	char textfile_path[512];
};

struct control_opts {
	const char *run_dir;
	const char *metrics_addr;	/* NULL: 127.0.0.1 */
	int metrics_port;		/* 0: none */
	const char *metrics_textfile;	/* a directory, or NULL */
};

int control__open(struct control *c, const struct control_opts *o);
void control__close(struct control *c);
/* The fds to poll for the control socket: at most 1 + CONTROL_MAX_CONNS. */
int control__pollfds(const struct control *c, struct pollfd *pfd, int max);
/* Milliseconds until the next connection deadline, or -1 for none. */
int control__timeout_ms(const struct control *c);
/* Accepts, reads, answers and expires what it can now; never waits. */
void control__serve(struct control *c, control_handler handle, void *ctx);
/* Whether anything reads metrics snapshots (an HTTP port or a textfile). */
bool control__wants_metrics(const struct control *c);
/* Publishes a metrics text (taking it: malloc'd) for HTTP and the textfile. */
void control__publish_metrics(struct control *c, char *text);
/* A JSON error reply. */
char *control__error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
