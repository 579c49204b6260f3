// SPDX-License-Identifier: MIT
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	va_list ap;

	if ((int)level > log_verbosity)
		return;
	if (to_journal < 0)
		to_journal = getenv("JOURNAL_STREAM") != NULL;
	va_start(ap, fmt);
	if (to_journal)
		fputs(journal[level], stderr);
	fputs(prefix[level], stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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

void default_policy_dir(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	snprintf(buf, len, "/usr/lib/cxltier/policies");
	if (n <= 0)
		return;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash || (size_t)(slash - exe) + sizeof("/policies") > len)
		return;
	memcpy(buf, exe, slash - exe);
	strcpy(buf + (slash - exe), "/policies");
	if (access(buf, F_OK))
		snprintf(buf, len, "/usr/lib/cxltier/policies");
}
