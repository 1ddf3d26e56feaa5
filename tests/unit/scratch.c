#include "scratch.h"

#include <criterion/criterion.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <zlib.h>
#include <zstd.h>

char *scratch_dir_new(void)
{
	char *dir = g_dir_make_tmp("laplace-test-XXXXXX", NULL);
	cr_assert_not_null(dir);
	return dir;
}

static void remove_tree(const char *path)
{
	GDir *d = g_file_test(path, G_FILE_TEST_IS_SYMLINK) ? NULL : g_dir_open(path, 0, NULL);
	if (d) {
		const char *name;
		while ((name = g_dir_read_name(d))) {
			char *p = g_build_filename(path, name, NULL);
			remove_tree(p);
			g_free(p);
		}
		g_dir_close(d);
	}
	g_remove(path);
}

void scratch_dir_free(char *dir)
{
	remove_tree(dir);
	g_free(dir);
}

char *scratch_file(const char *dir, const char *name, const void *data, size_t n)
{
	char *p = g_build_filename(dir, name, NULL);
	cr_assert(g_file_set_contents(p, data, (gssize)n, NULL));
	return p;
}

GByteArray *scratch_gzip(const void *data, size_t n)
{
	z_stream zs = {0};
	cr_assert_eq(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	GByteArray *out = g_byte_array_sized_new((guint)deflateBound(&zs, n));
	g_byte_array_set_size(out, (guint)deflateBound(&zs, n));
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)n;
	zs.next_out = out->data;
	zs.avail_out = out->len;
	cr_assert_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
	g_byte_array_set_size(out, (guint)zs.total_out);
	deflateEnd(&zs);
	return out;
}

GByteArray *scratch_zstd(const void *data, size_t n)
{
	GByteArray *out = g_byte_array_sized_new((guint)ZSTD_compressBound(n));
	g_byte_array_set_size(out, (guint)ZSTD_compressBound(n));
	size_t z = ZSTD_compress(out->data, out->len, data, n, 3);
	cr_assert(!ZSTD_isError(z));
	g_byte_array_set_size(out, (guint)z);
	return out;
}
