// SPDX-License-Identifier: MIT
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int log_verbosity = LOG_INFO;

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *const prefix[] = { "error: ", "warning: ", "", "debug: " };
	/* Under systemd, stderr goes to the journal: a <N> prefix sets the priority. */
	static const char *const journal[] = { "<3>", "<4>", "<6>", "<7>" };
	static int to_journal = -1;
	char line[4096], safe[STR_ESCAPED_SIZE(sizeof(line))];
	va_list ap;

	if ((int)level > log_verbosity)
		return;
	if (to_journal < 0)
		to_journal = getenv("JOURNAL_STREAM") != NULL;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/*
	 * Messages quote names processes chose (comm, cgroup paths): escaped
	 * here once, a newline or an escape sequence in one cannot forge a
	 * line of the journal or rewrite the terminal reading it.
	 */
	str_escape(line, safe, sizeof(safe));
	if (to_journal)
		fputs(journal[level], stderr);
	/* -v -v: seconds since the first line, to read a run's timeline (the journal stamps its own). */
	else if (log_verbosity >= LOG_DEBUG) {
		static double t0;
		double t = now_sec();

		if (!t0)
			t0 = t;
		fprintf(stderr, "[%8.3f] ", t - t0);
	}
	fputs(prefix[level], stderr);
	fputs(safe, stderr);
	fputc('\n', stderr);
}

char *str_escape(const char *in, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	size_t off = 0;

	if (!outlen)
		return out;
	for (const unsigned char *p = (const unsigned char *)(in ? in : ""); *p; p++) {
		char esc[4];
		size_t n;

		if (*p == '\\') {
			esc[0] = esc[1] = '\\';
			n = 2;
		} else if (*p < 0x20 || *p > 0x7e) {
			esc[0] = '\\';
			esc[1] = 'x';
			esc[2] = hex[*p >> 4];
			esc[3] = hex[*p & 0xf];
			n = 4;
		} else {
			esc[0] = (char)*p;
			n = 1;
		}
		if (off + n >= outlen)
			break;
		memcpy(out + off, esc, n);
		off += n;
	}
	out[off] = '\0';
	return out;
}

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull skips blanks and takes "-1" as 2^64-1: refuse any sign. */
	if (!s || !*s || strchr(s, '-'))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return errno == ERANGE ? -ERANGE : -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_int(const char *s, long min, long max, int *out)
{
	long v;
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end)
		return errno == ERANGE ? -ERANGE : -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = (int)v;
	return 0;
}

int parse_named_list(const char *value, int (*item)(void *ctx, const char *name, const char *val),
		     void *ctx, char *why, size_t len)
{
	char buf[256], *tok, *save;
	int n = 0, err;

	if (strlen(value) >= sizeof(buf)) {
		snprintf(why, len, "too long");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", value);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), n++) {
		char *colon = strchr(tok, ':');

		if (colon)
			*colon++ = '\0';
		if ((err = item(ctx, tok, colon)))
			return err;
	}
	return n;
}

int parse_double(const char *s, double min, double max, double *out)
{
	double v;
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || isnan(v))
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_size(const char *s, uint64_t *out)
{
	double v, mult = 1;
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || isnan(v) || v < 0)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': mult = 1ULL << 10; end++; break;
	case 'm': case 'M': mult = 1ULL << 20; end++; break;
	case 'g': case 'G': mult = 1ULL << 30; end++; break;
	case 't': case 'T': mult = 1ULL << 40; end++; break;
	default: break;
	}
	if (*end == 'i' || *end == 'B')
		end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
	if (*end || v * mult > 9.0e18)
		return -EINVAL;
	*out = (uint64_t)(v * mult);
	return 0;
}

int parse_nodelist(const char *s, uint64_t *mask)
{
	uint64_t m = 0;
	const char *p = s;

	if (!s)
		return -EINVAL;
	while (*p == ' ' || *p == '\n')
		p++;
	if (!strcmp(p, "all")) {
		*mask = ~0ULL;
		return 0;
	}
	while (*p && *p != '\n') {
		unsigned long a, b;
		char *end;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		a = strtoul(p, &end, 10);
		b = a;
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				return -EINVAL;
			b = strtoul(p, &end, 10);
		}
		if (a > b || b >= 64)
			return -EINVAL;
		for (unsigned long n = a; n <= b; n++)
			m |= 1ULL << n;
		p = end;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	*mask = m;
	return 0;
}

char *format_nodelist(uint64_t mask, char *buf, size_t len)
{
	size_t off = 0;
	int n = 0;

	buf[0] = '\0';
	while (n < 64) {
		int start;

		if (!(mask & (1ULL << n))) {
			n++;
			continue;
		}
		start = n;
		while (n + 1 < 64 && (mask & (1ULL << (n + 1))))
			n++;
		off += snprintf(buf + off, off < len ? len - off : 0,
				start == n ? "%s%d" : "%s%d-%d", off ? "," : "",
				start, n);
		n++;
	}
	if (off >= len && len)
		buf[len - 1] = '\0';
	return buf;
}

int read_text(const char *root, const char *path, char *buf, size_t len)
{
	char full[4096];
	ssize_t n;
	int fd, err = 0;

	snprintf(full, sizeof(full), "%s%s", root ? root : "", path);
	fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		err = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return err;
}

int read_keyed_u64(const char *root, const char *path, const char *key, uint64_t *val)
{
	size_t klen = strlen(key);
	char full[4096], line[256];
	int err = -ENODATA;
	FILE *f;

	snprintf(full, sizeof(full), "%s%s", root ? root : "", path);
	if (!(f = fopen(full, "re")))
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + klen, *end;

		/* The separator keeps numa_hint_faults_local out of numa_hint_faults. */
		if (strncmp(line, key, klen) || (*p != ' ' && *p != '\t' && *p != ':'))
			continue;
		p += strspn(p, " \t:");
		errno = 0;
		*val = strtoull(p, &end, 10);
		if (end != p && !errno)
			err = 0;
		break;
	}
	fclose(f);
	return err;
}

int write_text(const char *root, const char *path, const char *val)
{
	char full[4096];
	size_t len = strlen(val);
	int fd, err = 0;

	snprintf(full, sizeof(full), "%s%s", root ? root : "", path);
	fd = open(full, O_WRONLY | O_CLOEXEC | O_TRUNC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, len) != (ssize_t)len)
		err = -errno;
	close(fd);
	return err;
}

double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int exe_dir_entry(const char *name, char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return -errno;
	exe[n] = '\0';
	if (!(slash = strrchr(exe, '/')))
		return -ENOENT;
	*slash = '\0';
	if ((size_t)snprintf(buf, len, "%s/%s", exe, name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

void default_policy_dir(char *buf, size_t len)
{
	if (exe_dir_entry("policies", buf, len) || access(buf, F_OK))
		snprintf(buf, len, "/usr/lib/cxltier/policies");
}

/*
 * The trust rule.  The agent runs as root and acts on what it finds at the
 * paths it is given; this machine's kernel does not shield it from planted
 * links, FIFOs or files (fs.protected_* may be 0).  So for every path it
 * reads code, configuration or state from, or writes into:
 *
 * - every directory from the file up to / is root's and writable by no one
 *   else; a sticky directory (as /tmp) is allowed above, where it only
 *   stops others renaming root's entry, but never as the directory that
 *   holds the file: there anyone may put a hard link to another root file
 *   under the expected name;
 * - a symlink on the way is root's and sits in such a directory, and where
 *   it leads is checked the same way, so no link leaves the trusted tree;
 * - the file itself is checked on the descriptor that is read (fstat), not
 *   by name: regular, root's, not writable by group or others;
 * - files the agent creates are created O_EXCL|O_NOFOLLOW, never opened
 *   over what is there, and a FIFO or device is refused, never waited on.
 *
 * "Root's" means uid 0 or the user running the program (the same when the
 * agent runs; unit tests and --check-config may run as someone else).
 */
static bool trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

static int say_why(char *why, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int say_why(char *why, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return err;
}

static int check_dir_stat(const char *shown, const char *dir, const struct stat *st, bool holds,
			  char *why, size_t len)
{
	if (!S_ISDIR(st->st_mode))
		return say_why(why, len, -ENOTDIR, "refusing %s: %s is not a directory", shown, dir);
	if (!trusted_owner(st->st_uid))
		return say_why(why, len, -EPERM,
			       "refusing %s: directory %s belongs to uid %u, who could replace the file; it must be root's",
			       shown, dir, (unsigned)st->st_uid);
	if (!(st->st_mode & (S_IWGRP | S_IWOTH)) || (!holds && (st->st_mode & S_ISVTX)))
		return 0;
	if (st->st_mode & S_ISVTX)
		return say_why(why, len, -EPERM,
			       "refusing %s: directory %s is writable by %s (mode %04o): even with the sticky bit, anyone can put a link to another root file there under this name; use a directory only root can write",
			       shown, dir, st->st_mode & S_IWOTH ? "others" : "its group",
			       (unsigned)(st->st_mode & 07777));
	return say_why(why, len, -EPERM,
		       "refusing %s: directory %s is writable by %s (mode %04o), who could replace the file; run chmod go-w %s",
		       shown, dir, st->st_mode & S_IWOTH ? "others" : "its group",
		       (unsigned)(st->st_mode & 07777), dir);
}

/* real (absolute, no symlinks) and every directory above it. */
static int check_chain(const char *shown, const char *real, char *why, size_t len)
{
	char buf[PATH_MAX];
	bool holds = true;
	struct stat st;

	snprintf(buf, sizeof(buf), "%s", real);
	for (;;) {
		char *slash;
		int err;

		if (stat(buf, &st))
			return say_why(why, len, -errno, "cannot check %s: %s: %s", shown, buf,
				       strerror(errno));
		if ((err = check_dir_stat(shown, buf, &st, holds, why, len)))
			return err;
		if (!strcmp(buf, "/"))
			return 0;
		holds = false;
		slash = strrchr(buf, '/');
		if (slash == buf)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}

/* A symlink at path: root's, in a trusted directory. */
static int check_link(const char *shown, const char *path, const struct stat *st, char *why,
		      size_t len)
{
	char copy[PATH_MAX], holder[PATH_MAX];

	if (!trusted_owner(st->st_uid))
		return say_why(why, len, -EPERM,
			       "refusing %s: symlink %s belongs to uid %u, who could point it elsewhere",
			       shown, path, (unsigned)st->st_uid);
	snprintf(copy, sizeof(copy), "%s", path);
	if (!realpath(dirname(copy), holder))
		return say_why(why, len, -errno, "cannot check %s: %s: %s", shown, path,
			       strerror(errno));
	return check_chain(shown, holder, why, len);
}

/* dir as reached from the path given (each symlink on the way), then where it leads. */
static int trust_dirs_of(const char *shown, const char *dir, char *why, size_t len)
{
	char abs[PATH_MAX], real[PATH_MAX];
	size_t n;
	int err;

	if (dir[0] == '/') {
		snprintf(abs, sizeof(abs), "%s", dir);
	} else {
		if (!getcwd(abs, sizeof(abs)))
			return say_why(why, len, -errno, "cannot check %s: %s", shown, strerror(errno));
		n = strlen(abs);
		snprintf(abs + n, sizeof(abs) - n, "/%s", dir);
	}
	n = strlen(abs);
	for (size_t i = 1; i <= n; i++) {
		struct stat st;
		char keep = abs[i];

		if (keep != '/' && keep != '\0')
			continue;
		if (abs[i - 1] == '/')
			continue;
		abs[i] = '\0';
		err = lstat(abs, &st) ? say_why(why, len, -errno, "cannot check %s: %s: %s", shown, abs,
						strerror(errno)) :
		      S_ISLNK(st.st_mode) ? check_link(shown, abs, &st, why, len) : 0;
		abs[i] = keep;
		if (err)
			return err;
	}
	if (!realpath(abs, real))
		return say_why(why, len, -errno, "cannot check %s: %s", shown, strerror(errno));
	return check_chain(shown, real, why, len);
}

int trust_dir(const char *dir, char *why, size_t len)
{
	return trust_dirs_of(dir, dir, why, len);
}

/* The file itself, on the descriptor: regular, root's, writable by root alone. */
static int check_file_stat(const char *shown, const char *real, const struct stat *st,
			   const char *risk, char *why, size_t len)
{
	if (!S_ISREG(st->st_mode))
		return say_why(why, len, S_ISDIR(st->st_mode) ? -EISDIR : -EINVAL,
			       "refusing %s: not a regular file", shown);
	if (!trusted_owner(st->st_uid))
		return say_why(why, len, -EPERM,
			       "refusing %s: it belongs to uid %u; what a root daemon reads must be root's (chown root %s)",
			       shown, (unsigned)st->st_uid, real);
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return say_why(why, len, -EPERM,
			       "refusing %s: writable by %s (mode %04o), who could %s; run chmod go-w %s",
			       shown, st->st_mode & S_IWOTH ? "others" : "its group",
			       (unsigned)(st->st_mode & 07777), risk, real);
	return 0;
}

int open_trusted(const char *path, const char *risk, char *why, size_t len)
{
	char copy[PATH_MAX], real[PATH_MAX], shown[2 * PATH_MAX + 8];
	struct stat st;
	int fd, err;

	if (!*path)
		return say_why(why, len, -EINVAL, "no file named (an empty path)");
	snprintf(shown, sizeof(shown), "%s", path);
	snprintf(copy, sizeof(copy), "%s", path);
	if ((err = trust_dirs_of(shown, dirname(copy), why, len)))
		return err;
	if (lstat(path, &st))
		return say_why(why, len, -errno, "cannot read %s: %s", path, strerror(errno));
	if (!realpath(path, real))
		return say_why(why, len, -errno, "cannot read %s: %s", path, strerror(errno));
	if (S_ISLNK(st.st_mode)) {
		if ((err = check_link(shown, path, &st, why, len)))
			return err;
		snprintf(shown, sizeof(shown), "%s (-> %s)", path, real);
		snprintf(copy, sizeof(copy), "%s", real);
		if ((err = check_chain(shown, dirname(copy), why, len)))
			return err;
	}
	/* O_NONBLOCK: a FIFO must not hang the agent; it is refused below. */
	fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return say_why(why, len, -errno, "cannot read %s: %s", shown, strerror(errno));
	if (fstat(fd, &st))
		err = say_why(why, len, -errno, "cannot read %s: %s", shown, strerror(errno));
	else
		err = check_file_stat(shown, real, &st, risk, why, len);
	if (err) {
		close(fd);
		return err;
	}
	fcntl(fd, F_SETFL, 0);
	return fd;
}

FILE *fopen_trusted(const char *path, const char *risk, char *why, size_t len, int *err)
{
	FILE *f;
	int fd;

	*err = 0;
	if (access(path, F_OK) && errno == ENOENT)
		return NULL;
	fd = open_trusted(path, risk, why, len);
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	if (!(f = fdopen(fd, "r"))) {
		*err = say_why(why, len, -ENOMEM, "cannot read %s: out of memory", path);
		close(fd);
	}
	return f;
}

int create_private_file(const char *path, char *why, size_t len)
{
	int fd;

	/* unlink never follows a link: whatever was planted here goes, its target stays. */
	if (unlink(path) && errno != ENOENT)
		return say_why(why, len, -errno, "cannot replace %s: %s", path, strerror(errno));
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return say_why(why, len, -errno, "cannot create %s: %s", path, strerror(errno));
	return fd;
}

int open_output_file(const char *path, char *why, size_t len)
{
	char fdpath[64];
	struct stat st;
	int pfd, fd, err = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	if (errno != EEXIST)
		return say_why(why, len, -errno, "cannot create %s: %s", path, strerror(errno));
	/* O_PATH opens nothing: a FIFO does not block, a device sees no open. */
	pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return say_why(why, len, -errno, "cannot open %s: %s", path, strerror(errno));
	if (fstat(pfd, &st))
		err = say_why(why, len, -errno, "cannot open %s: %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		err = say_why(why, len, -EINVAL,
			      "refusing %s: it exists and is %s, not a regular file; name a new file",
			      path, S_ISLNK(st.st_mode) ? "a symbolic link" :
				    S_ISFIFO(st.st_mode) ? "a FIFO" :
				    S_ISDIR(st.st_mode) ? "a directory" :
				    S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "a socket");
	else if (!trusted_owner(st.st_uid))
		err = say_why(why, len, -EPERM,
			      "refusing %s: it exists and belongs to uid %u, who could read what is written; remove it or name a new file",
			      path, (unsigned)st.st_uid);
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		err = say_why(why, len, -EPERM,
			      "refusing %s: it exists and is writable by %s (mode %04o), who could read or change what is written; remove it or name a new file",
			      path, st.st_mode & S_IWOTH ? "others" : "its group",
			      (unsigned)(st.st_mode & 07777));
	else if (st.st_nlink != 1)
		err = say_why(why, len, -EPERM,
			      "refusing %s: it has %u names (hard links); overwriting it would change the other files; remove it or name a new file",
			      path, (unsigned)st.st_nlink);
	if (err) {
		close(pfd);
		return err;
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", pfd);
	fd = open(fdpath, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
	close(pfd);
	if (fd < 0)
		return say_why(why, len, -errno, "cannot open %s: %s", path, strerror(errno));
	/* What is written is as private as a new file would be. */
	if (ftruncate(fd, 0) || fchmod(fd, 0600)) {
		err = say_why(why, len, -errno, "cannot truncate %s: %s", path, strerror(errno));
		close(fd);
		return err;
	}
	fcntl(fd, F_SETFL, 0);
	return fd;
}

/*
 * A process on its way out has no mm any more, and move_pages then fails
 * with EINVAL rather than ESRCH; /proc/PID/statm reads all zeros (or is
 * gone) from that point on.
 */
bool proc_vanished(int pid)
{
	char path[64], text[128];

	snprintf(path, sizeof(path), "/proc/%d/statm", pid);
	return read_text(NULL, path, text, sizeof(text)) || strtoull(text, NULL, 10) == 0;
}
