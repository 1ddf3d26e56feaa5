/* Scratch directories for unit tests: one per test, removed with
 * everything in it. */
#ifndef LAPLACE_TEST_SCRATCH_H
#define LAPLACE_TEST_SCRATCH_H

#include <stddef.h>

#include <glib.h>

/* A new empty directory under the system's temporary directory. */
char *scratch_dir_new(void);
/* Remove dir and everything below it, and free the name. */
void scratch_dir_free(char *dir);
/* Write data to dir/name; returns the path (g_free it). */
char *scratch_file(const char *dir, const char *name, const void *data, size_t n);
/* data[0, n) compressed: one gzip member (zlib), one zstd frame. */
GByteArray *scratch_gzip(const void *data, size_t n);
GByteArray *scratch_zstd(const void *data, size_t n);

/* A Criterion suite whose tests each get a new scratch directory in dir
 * (removed after the test) and a cleared err. Include criterion and the
 * header that defines lp_error first. */
#define SCRATCH_SUITE(name) \
	static char *dir; \
	static lp_error err; \
	static void scratch_setup(void) \
	{ \
		dir = scratch_dir_new(); \
		err = (lp_error){0}; \
	} \
	static void scratch_teardown(void) { scratch_dir_free(dir); } \
	TestSuite(name, .init = scratch_setup, .fini = scratch_teardown)

#endif
