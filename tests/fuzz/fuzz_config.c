// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the config file reader (config__load) and config__set.
 *
 * The input is written to a private file (0600 in a 0700 directory of our
 * own, as config__load() wants) and loaded on top of the defaults.  If the
 * input holds NUL bytes it is also cut at them into (section, key, value)
 * triples for config__set(), the path the command-line flags take.
 *
 * Oracle besides ASan/UBSan: whatever config__describe() says it wrote
 * cleanly (returns 0) must load back and describe to the same text, as
 * config.h promises for cxltierd --check-config.  Set
 * CXLT_FUZZ_NO_ROUNDTRIP=1 to fuzz for memory errors only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "util.h"

static char conf_path[64], back_path[64];
static FILE *null_out;
static int roundtrip = 1;

static void cleanup_dir(void)
{
	char dir[64];

	unlink(conf_path);
	unlink(back_path);
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(conf_path, '/') - conf_path), conf_path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[] = "/tmp/cxlt-fuzz-config.XXXXXX";

	(void)argc;
	(void)argv;
	log_verbosity = -1;	/* quiet: the errors are the point */
	umask(077);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		abort();
	}
	snprintf(conf_path, sizeof(conf_path), "%s/cxltier.conf", dir);
	snprintf(back_path, sizeof(back_path), "%s/described.conf", dir);
	atexit(cleanup_dir);
	null_out = fopen("/dev/null", "w");
	if (getenv("CXLT_FUZZ_NO_ROUNDTRIP"))
		roundtrip = 0;
	return 0;
}

static int write_file(const char *path, const void *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	const char *p = data;

	if (fd < 0)
		return -errno;
	while (size) {
		ssize_t n = write(fd, p, size);

		if (n <= 0) {
			close(fd);
			return -EIO;
		}
		p += n;
		size -= n;
	}
	close(fd);
	return 0;
}

/* config__describe() into a malloc'd string; its return value in *ret. */
static char *describe(const struct agent_config *c, int *ret)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		abort();
	*ret = config__describe(c, f);
	fclose(f);
	return text;
}

/* What describe writes cleanly, load reads back to the same settings. */
static void check_roundtrip(const struct agent_config *c)
{
	struct agent_config back;
	char err[1024] = "";
	char *first, *second;
	int ret;

	first = describe(c, &ret);
	if (ret || !roundtrip) {
		free(first);
		return;
	}
	if (write_file(back_path, first, strlen(first)))
		abort();
	if (config__defaults(&back))
		abort();
	ret = config__load(&back, back_path, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "round trip: config__describe() wrote a file config__load() refuses (%d): %s\n--- described ---\n%s---\n",
			ret, err, first);
		abort();
	}
	second = describe(&back, &ret);
	if (strcmp(first, second)) {
		fprintf(stderr, "round trip: the config read back differs\n--- described ---\n%s--- read back ---\n%s---\n",
			first, second);
		abort();
	}
	free(first);
	free(second);
	config__free(&back);
}

static void fuzz_load(const uint8_t *data, size_t size)
{
	struct agent_config c;
	char err[1024];

	if (write_file(conf_path, data, size))
		abort();
	if (config__defaults(&c))
		abort();
	err[0] = '\0';
	if (config__load(&c, conf_path, err, sizeof(err)) == 0) {
		config__check(&c, err, sizeof(err));
		check_roundtrip(&c);
	} else if (!err[0]) {
		fprintf(stderr, "config__load failed without a message\n");
		abort();
	}
	config__free(&c);
}

/* "section\0key\0value\0section\0key\0value...": one config__set() per triple. */
static void fuzz_set(const uint8_t *data, size_t size)
{
	struct agent_config c;
	char *copy, *p, *end, *words[3];
	char err[512];
	int n = 0;

	if (!memchr(data, '\0', size))
		return;
	copy = malloc(size + 1);
	if (!copy)
		return;
	memcpy(copy, data, size);
	copy[size] = '\0';
	if (config__defaults(&c))
		abort();
	for (p = copy, end = copy + size; p <= end; p += strlen(p) + 1) {
		words[n++] = p;
		if (n == 3) {
			config__set(&c, words[0], words[1], words[2], err, sizeof(err));
			n = 0;
		}
	}
	if (!config__check(&c, err, sizeof(err)))
		check_roundtrip(&c);
	else
		config__describe(&c, null_out);	/* a file load would refuse: only written */
	config__free(&c);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_load(data, size);
	fuzz_set(data, size);
	return 0;
}
