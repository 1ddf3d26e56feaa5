/* What the fuzz targets share: the fuzzer's bytes as files the readers
 * can open (in-memory files, rewritten for each input), a private
 * directory for readers and writers that need real paths, an output that
 * discards everything, and a check that aborts. The same targets are built
 * with libFuzzer (clang) and with tests/fuzz/replay.c (any compiler). */
#ifndef LAPLACE_FUZZ_INPUT_H
#define LAPLACE_FUZZ_INPUT_H

#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_UNUSED __attribute__((unused))

/* Abort with a message when an invariant does not hold: libFuzzer (and the
 * replay driver under ASan) then keeps the input and prints the stack. */
#define FUZZ_CHECK(cond)                                                                   \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                    \
			abort();                                                           \
		}                                                                          \
	} while (0)

/* In-memory file number slot (0 to 3) holding data[0, size); its path,
 * /proc/self/fd/N, stays the same for the whole process. Readers that
 * refuse symbolic links need fuzz_dir_file instead. */
static FUZZ_UNUSED const char *fuzz_memfile(int slot, const uint8_t *data, size_t size)
{
	static int fd[4] = {-1, -1, -1, -1};
	static char path[4][64];
	if (slot < 0 || slot > 3)
		abort();
	if (fd[slot] < 0) {
		fd[slot] = memfd_create("laplace-fuzz", 0);
		if (fd[slot] < 0)
			abort();
		snprintf(path[slot], sizeof path[slot], "/proc/self/fd/%d", fd[slot]);
	}
	if (ftruncate(fd[slot], 0) || (size && pwrite(fd[slot], data, size, 0) != (ssize_t)size))
		abort();
	return path[slot];
}

static FUZZ_UNUSED const char *fuzz_file(const uint8_t *data, size_t size)
{
	return fuzz_memfile(0, data, size);
}

static char fuzz_dir_path[256];

static int fuzz_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

static void fuzz_dir_remove(void)
{
	if (fuzz_dir_path[0])
		nftw(fuzz_dir_path, fuzz_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A directory of this process (on /dev/shm when there is one, so that
 * staged outputs are flushed to memory, not disk), removed at exit. */
static FUZZ_UNUSED const char *fuzz_dir(void)
{
	if (!fuzz_dir_path[0]) {
		const char *tmp = getenv("TMPDIR");
		if (access("/dev/shm", W_OK) == 0)
			tmp = "/dev/shm";
		else if (!tmp || !*tmp)
			tmp = "/tmp";
		snprintf(fuzz_dir_path, sizeof fuzz_dir_path, "%s/laplace-fuzz-XXXXXX", tmp);
		if (!mkdtemp(fuzz_dir_path))
			abort();
		atexit(fuzz_dir_remove);
	}
	return fuzz_dir_path;
}

/* fuzz_dir()/name (newly allocated by malloc: free it). */
static FUZZ_UNUSED char *fuzz_dir_path_of(const char *name)
{
	const char *dir = fuzz_dir();
	size_t len = strlen(dir) + 1 + strlen(name) + 1;
	char *path = malloc(len);
	if (!path)
		abort();
	snprintf(path, len, "%s/%s", dir, name);
	return path;
}

/* Write data[0, size) to the regular file fuzz_dir()/name, replacing it;
 * returns its path (free it). */
static FUZZ_UNUSED char *fuzz_dir_file(const char *name, const uint8_t *data, size_t size)
{
	char *path = fuzz_dir_path_of(name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || close(fd))
		abort();
	return path;
}

/* One output for every input: opening one per input would cost more than
 * the work under test. Writes to /dev/null go straight through. */
static FUZZ_UNUSED lp_output *fuzz_sink(void)
{
	static lp_output *out;
	lp_error err;
	if (!out && !(out = lp_output_open("/dev/null", LP_COMPRESS_NONE, &err)))
		abort();
	return out;
}

/* Whether data starts as gzip or zstd content, which every reader
 * decompresses: checks on the raw bytes do not hold then. */
static FUZZ_UNUSED int fuzz_compressed(const uint8_t *data, size_t size)
{
	return (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) ||
	       (size >= 4 && data[0] == 0x28 && data[1] == 0xb5 && data[2] == 0x2f &&
		data[3] == 0xfd);
}

#endif
