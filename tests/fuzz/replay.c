/* Replays inputs through a fuzz target without libFuzzer: every file named
 * on the command line, and every regular file directly inside a directory
 * named there (in name order), is read whole and handed to
 * LLVMFuzzerTestOneInput once. A target that finds a broken invariant
 * aborts; sanitizers report what they find. Prints how many inputs ran. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX_INPUT (1u << 20) /* as make fuzz's -max_len */

static int run_file(const char *path, unsigned long *count)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	/* An exact-size heap copy, so that ASan sees reads past the end. */
	uint8_t *buf = malloc(REPLAY_MAX_INPUT + 1);
	if (!buf)
		abort();
	size_t n = fread(buf, 1, REPLAY_MAX_INPUT + 1, f);
	int bad = ferror(f);
	fclose(f);
	if (bad || n > REPLAY_MAX_INPUT) {
		fprintf(stderr, "replay: %s: %s\n", path,
			bad ? "read error" : "larger than 1 MiB, the fuzzers' limit");
		free(buf);
		return -1;
	}
	uint8_t *data = malloc(n ? n : 1);
	if (!data)
		abort();
	memcpy(data, buf, n);
	free(buf);
	fprintf(stderr, "replay: %s (%zu byte%s)\n", path, n, n == 1 ? "" : "s");
	LLVMFuzzerTestOneInput(data, n);
	free(data);
	(*count)++;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, unsigned long *count)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "replay: cannot open %s: %s\n", dir, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			names = realloc(names, cap * sizeof *names);
			if (!names)
				abort();
		}
		size_t len = strlen(dir) + 1 + strlen(e->d_name) + 1;
		names[n] = malloc(len);
		if (!names[n])
			abort();
		snprintf(names[n++], len, "%s/%s", dir, e->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, by_name);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode) && run_file(names[i], count))
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned long count = 0;
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			rc = 1;
		} else if (S_ISDIR(st.st_mode) ? run_dir(argv[i], &count) : run_file(argv[i], &count)) {
			rc = 1;
		}
	}
	printf("%s: %lu input%s replayed\n", argc > 0 ? argv[0] : "replay", count, count == 1 ? "" : "s");
	return rc;
}
