/* What the fuzz targets share: the fuzzer's bytes as a file the readers
 * can open (an in-memory file, rewritten for each input), and an output
 * that discards everything. */
#ifndef LAPLACE_FUZZ_INPUT_H
#define LAPLACE_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "laplace/io.h"

static const char *fuzz_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("laplace-fuzz", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	return path;
}

/* One output for every input: opening one per input would cost more than
 * the work under test. Writes to /dev/null go straight through. */
static lp_output *fuzz_sink(void)
{
	static lp_output *out;
	lp_error err;
	if (!out && !(out = lp_output_open("/dev/null", LP_COMPRESS_NONE, &err)))
		abort();
	return out;
}

#endif
