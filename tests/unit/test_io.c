/* Byte streams: plain, gzip and zstd input told by content; atomic output
 * with compression; the exact messages of every failure. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "scratch.h"
#include "threads.h"
#include "io/inbuf.h"
#include "io/io.h"
#include "io/lrulist.h"
#include "io/mapped.h"
#include "io/staging.h"

SCRATCH_SUITE(io);

static char *path_of(const char *name) { return g_build_filename(dir, name, NULL); }

/* Everything path holds, read through lp_input in chunks of chunk bytes. */
static GByteArray *read_all(const char *path, size_t chunk, int *status)
{
	lp_input *in = lp_input_open(path, &err);
	GByteArray *got = g_byte_array_new();
	*status = 0;
	if (!in) {
		*status = err.status;
		return got;
	}
	char *buf = g_malloc(chunk);
	ssize_t r;
	while ((r = lp_input_read(in, buf, chunk, &err)) > 0)
		g_byte_array_append(got, (guint8 *)buf, (guint)r);
	if (r < 0)
		*status = err.status;
	g_free(buf);
	lp_input_close(in);
	return got;
}

/* A few MiB of varied bytes, more than any internal buffer. */
static GByteArray *pattern(size_t n)
{
	GByteArray *a = g_byte_array_sized_new((guint)n);
	g_byte_array_set_size(a, (guint)n);
	uint32_t x = 12345;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		a->data[i] = (guint8)(i % 7 ? x >> 24 : 'a' + i % 26);
	}
	return a;
}

static void assert_bytes(const GByteArray *got, const void *want, size_t n)
{
	cr_assert_eq(got->len, n, "got %u bytes, want %zu", got->len, n);
	cr_assert(memcmp(got->data, want, n) == 0);
}

Test(io, plain_input_in_small_and_large_reads)
{
	GByteArray *data = pattern(2500000);
	char *p = scratch_file(dir, "plain", data->data, data->len);
	int status;
	for (size_t chunk = 1000; chunk <= 4000000; chunk *= 4000) {
		GByteArray *got = read_all(p, chunk, &status);
		cr_assert_eq(status, 0, "%s", err.msg);
		assert_bytes(got, data->data, data->len);
		g_byte_array_unref(got);
	}
	g_byte_array_unref(data);
	g_free(p);
}

Test(io, plain_input_size_offset_and_name)
{
	char *p = scratch_file(dir, "f", "0123456789", 10);
	lp_input *in = lp_input_open(p, &err);
	cr_assert_not_null(in);
	cr_assert_str_eq(lp_input_name(in), p);
	cr_assert_eq(lp_input_file_size(in), 10);
	char buf[4];
	cr_assert_eq(lp_input_read(in, buf, 4, &err), 4);
	cr_assert(memcmp(buf, "0123", 4) == 0);
	cr_assert_eq(lp_input_file_offset(in), 4);
	cr_assert_eq(lp_input_read(in, buf, 4, &err), 4);
	cr_assert_eq(lp_input_read(in, buf, 4, &err), 2);
	cr_assert_eq(lp_input_file_offset(in), 10);
	cr_assert_eq(lp_input_read(in, buf, 4, &err), 0);
	lp_input_close(in);
	g_free(p);
}

Test(io, empty_input)
{
	char *p = scratch_file(dir, "empty", "", 0);
	int status;
	GByteArray *got = read_all(p, 100, &status);
	cr_assert_eq(status, 0);
	cr_assert_eq(got->len, 0);
	g_byte_array_unref(got);
	g_free(p);
}

Test(io, gzip_members_are_concatenated)
{
	GByteArray *data = pattern(1500000);
	GByteArray *gz = scratch_gzip(data->data, 1000000);
	GByteArray *gz2 = scratch_gzip(data->data + 1000000, data->len - 1000000);
	g_byte_array_append(gz, gz2->data, gz2->len);
	/* The name says nothing: the magic bytes decide. */
	char *p = scratch_file(dir, "trace.bin", gz->data, gz->len);
	int status;
	GByteArray *got = read_all(p, 70000, &status);
	cr_assert_eq(status, 0, "%s", err.msg);
	assert_bytes(got, data->data, data->len);
	lp_input *in = lp_input_open(p, &err);
	cr_assert_eq(lp_input_file_size(in), (int64_t)gz->len);
	lp_input_close(in);
	g_byte_array_unref(got);
	g_byte_array_unref(gz);
	g_byte_array_unref(gz2);
	g_byte_array_unref(data);
	g_free(p);
}

Test(io, zstd_frames_are_concatenated)
{
	GByteArray *data = pattern(1500000);
	GByteArray *z = scratch_zstd(data->data, 700000);
	GByteArray *z2 = scratch_zstd(data->data + 700000, data->len - 700000);
	g_byte_array_append(z, z2->data, z2->len);
	char *p = scratch_file(dir, "trace.txt", z->data, z->len);
	int status;
	GByteArray *got = read_all(p, 1 << 20, &status);
	cr_assert_eq(status, 0, "%s", err.msg);
	assert_bytes(got, data->data, data->len);
	g_byte_array_unref(got);
	g_byte_array_unref(z);
	g_byte_array_unref(z2);
	g_byte_array_unref(data);
	g_free(p);
}

/* Frames as laplace's outputs and pzstd have them: each with its size in
 * its header, decompressed on every core. n frames of size bytes of data,
 * frame i compressed with checksum when check is i; a skippable frame
 * (pzstd's) first, and a frame of unknown size at unknown_at. */
static GByteArray *zstd_frames(const guint8 *data, size_t len, size_t size, int unknown_at,
			       int check)
{
	static const guint8 skippable[] = {0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4};
	GByteArray *z = g_byte_array_new();
	g_byte_array_append(z, skippable, sizeof skippable);
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	for (size_t at = 0, i = 0; at < len; at += size, i++) {
		size_t n = MIN(size, len - at);
		ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, (int)i == check);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, (int)i != unknown_at);
		guint old = z->len;
		g_byte_array_set_size(z, old + (guint)ZSTD_compressBound(n));
		size_t zlen = ZSTD_compress2(cctx, z->data + old, z->len - old, data + at, n);
		cr_assert(!ZSTD_isError(zlen));
		g_byte_array_set_size(z, old + (guint)zlen);
	}
	ZSTD_freeCCtx(cctx);
	return z;
}

Test(io, zstd_frames_have_workers_a_stream_none)
{
	GByteArray *data = pattern(3 * 1048576);
	GByteArray *z = zstd_frames(data->data, data->len, 1048576, -1, -1);
	char *p = scratch_file(dir, "frames.zst", z->data, z->len);
	lp_input *in = lp_input_open(p, &err);
	cr_assert_not_null(in, "%s", err.msg);
	/* A thread names itself once it runs: give them 5 s to. */
	unsigned want = MIN(g_get_num_processors(), 4u), seen = 0;
	for (int tries = 0; tries < 5000 && (seen = threads_named("laplace-unzstd")) < want; tries++)
		g_usleep(1000);
	cr_assert_eq(seen, want);
	lp_input_close(in);
	cr_assert_eq(threads_named("laplace-unzstd"), 0);
	/* One frame of unknown size (without the skippable frame before it),
	 * read to its end: a stream, no workers. */
	GByteArray *one = zstd_frames(data->data, data->len, data->len, 0, -1);
	char *stream = scratch_file(dir, "stream.zst", one->data + 12, one->len - 12);
	in = lp_input_open(stream, &err);
	cr_assert_not_null(in, "%s", err.msg);
	char buf[65536];
	while (lp_input_read(in, buf, sizeof buf, &err) > 0)
		;
	cr_assert_eq(threads_named("laplace-unzstd"), 0);
	lp_input_close(in);
	g_byte_array_unref(one);
	g_free(stream);
	/* A plain input has no decompressing thread at all. */
	char *plain = scratch_file(dir, "plain", data->data, data->len);
	in = lp_input_open(plain, &err);
	cr_assert_not_null(in, "%s", err.msg);
	cr_assert_eq(threads_named("laplace-unzstd") + threads_named("laplace-input"), 0);
	lp_input_close(in);
	g_byte_array_unref(z);
	g_byte_array_unref(data);
	g_free(plain);
	g_free(p);
}

Test(io, zstd_frames_read_in_parallel_and_as_a_stream)
{
	GByteArray *data = pattern(9 * 1048576 + 12345);
	/* Frames of known size only, then the rest of the input as a stream
	 * from the frame of unknown size (frame 6) on. */
	for (int unknown_at = -1; unknown_at <= 6; unknown_at += 7) {
		GByteArray *z = zstd_frames(data->data, data->len, 1048576, unknown_at, -1);
		char *p = scratch_file(dir, "frames.zst", z->data, z->len);
		int status;
		GByteArray *got = read_all(p, 100000, &status);
		cr_assert_eq(status, 0, "%s", err.msg);
		assert_bytes(got, data->data, data->len);
		g_byte_array_unref(got);
		g_byte_array_unref(z);
		g_free(p);
	}
	g_byte_array_unref(data);
}

Test(io, bad_zstd_frame_among_many_comes_in_its_turn)
{
	GByteArray *data = pattern(6 * 1048576);
	/* Frame 3's checksum spoilt: frames 0 to 2 are read, then the error.
	 * Frames 0 to 3 alone end where frame 3 ends in the whole. */
	GByteArray *z = zstd_frames(data->data, data->len, 1048576, -1, 3);
	GByteArray *head = zstd_frames(data->data, 4 * 1048576, 1048576, -1, 3);
	z->data[head->len - 1] ^= 0xff;
	g_byte_array_unref(head);
	char *p = scratch_file(dir, "bad.zst", z->data, z->len);
	int status;
	GByteArray *got = read_all(p, 4096, &status);
	cr_assert_eq(status, LP_EINPUT);
	char *want = g_strdup_printf("%s: corrupt zstd data: Restored data doesn't match checksum", p);
	cr_assert_str_eq(err.msg, want);
	assert_bytes(got, data->data, 3 * 1048576);
	g_free(want);
	g_byte_array_unref(got);
	g_byte_array_unref(z);
	g_byte_array_unref(data);
	g_free(p);
}

/* A bad frame early among many more than the chunks in flight: the
 * decompressing thread has filled every chunk and waits for one back when
 * the reader meets the error. The error stays (a second read gives it
 * again), and closing ends every thread (it hung in a join). */
Test(io, bad_zstd_frame_early_then_close_ends_every_thread, .timeout = 20)
{
	GByteArray *data = pattern(64 * 65536);
	GByteArray *z = zstd_frames(data->data, data->len, 65536, -1, 1);
	GByteArray *head = zstd_frames(data->data, 2 * 65536, 65536, -1, 1);
	z->data[head->len - 1] ^= 0x01;
	g_byte_array_unref(head);
	char *p = scratch_file(dir, "early-bad.zst", z->data, z->len);
	lp_input *in = lp_input_open(p, &err);
	cr_assert_not_null(in, "%s", err.msg);
	unsigned char buf[65536];
	cr_assert_eq(lp_input_read(in, buf, sizeof buf, &err), (ssize_t)sizeof buf);
	/* Let the thread run ahead until every chunk is full. */
	g_usleep(200000);
	char *want = g_strdup_printf("%s: corrupt zstd data: Restored data doesn't match checksum", p);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(lp_input_read(in, buf, sizeof buf, &err), -1);
		cr_assert_eq(err.status, LP_EINPUT);
		cr_assert_str_eq(err.msg, want);
	}
	lp_input_close(in);
	cr_assert_eq(threads_named("laplace-unzstd") + threads_named("laplace-input"), 0);
	g_free(want);
	g_byte_array_unref(z);
	g_byte_array_unref(data);
	g_free(p);
}

/* Reading bytes stored as file name must fail as corrupt input with the
 * message "NAME: corrupt CODEC data: " followed by detail, or by anything
 * when detail is NULL (zlib's and zstd's wording for garbage varies). */
static void expect_corrupt(const char *name, const GByteArray *bytes, size_t n, const char *codec,
			   const char *detail)
{
	char *p = scratch_file(dir, name, bytes->data, n);
	int status;
	GByteArray *got = read_all(p, 4096, &status);
	cr_assert_eq(status, LP_EINPUT);
	char *want = g_strdup_printf("%s: corrupt %s data: %s", p, codec, detail ? detail : "");
	if (detail)
		cr_assert_str_eq(err.msg, want);
	else
		cr_assert(g_str_has_prefix(err.msg, want), "%s", err.msg);
	g_free(want);
	g_byte_array_unref(got);
	g_free(p);
}

Test(io, truncated_gzip_is_corrupt_input)
{
	GByteArray *data = pattern(10000);
	GByteArray *gz = scratch_gzip(data->data, data->len);
	expect_corrupt("cut.gz", gz, gz->len / 2, "gzip", "unexpected end of file");
	g_byte_array_unref(gz);
	g_byte_array_unref(data);
}

Test(io, damaged_gzip_is_corrupt_input)
{
	GByteArray *data = pattern(10000);
	GByteArray *gz = scratch_gzip(data->data, data->len);
	/* Spoil the stored CRC-32 in the trailer. */
	gz->data[gz->len - 6] ^= 0xff;
	expect_corrupt("bad.gz", gz, gz->len, "gzip", "incorrect data check");
	g_byte_array_unref(gz);
	g_byte_array_unref(data);
}

Test(io, trailing_garbage_after_gzip_is_corrupt_input)
{
	GByteArray *gz = scratch_gzip("abc", 3);
	g_byte_array_append(gz, (const guint8 *)"xyz", 3);
	expect_corrupt("junk.gz", gz, gz->len, "gzip", NULL);
	g_byte_array_unref(gz);
}

Test(io, truncated_zstd_is_corrupt_input)
{
	GByteArray *data = pattern(10000);
	GByteArray *z = scratch_zstd(data->data, data->len);
	expect_corrupt("cut.zst", z, z->len - 3, "zstd", "unexpected end of file");
	g_byte_array_unref(z);
	g_byte_array_unref(data);
}

Test(io, damaged_zstd_is_corrupt_input)
{
	GByteArray *z = scratch_zstd("hello", 5);
	g_byte_array_append(z, (const guint8 *)"not zstd", 8);
	expect_corrupt("junk.zst", z, z->len, "zstd", NULL);
	g_byte_array_unref(z);
}

Test(io, missing_input_cannot_be_opened)
{
	char *p = path_of("nope");
	cr_assert_null(lp_input_open(p, &err));
	cr_assert_eq(err.status, LP_EIO);
	char *want = g_strdup_printf("cannot open %s: No such file or directory", p);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
	g_free(p);
}

Test(io, unreadable_input_is_an_io_error)
{
	/* A directory opens but cannot be read. */
	cr_assert_null(lp_input_open(dir, &err));
	cr_assert_eq(err.status, LP_EIO);
	char *want = g_strdup_printf("cannot read %s: Is a directory", dir);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
}

Test(io, compress_names)
{
	cr_assert_eq(lp_compress_parse("gz"), LP_COMPRESS_GZIP);
	cr_assert_eq(lp_compress_parse("gzip"), LP_COMPRESS_GZIP);
	cr_assert_eq(lp_compress_parse("zst"), LP_COMPRESS_ZSTD);
	cr_assert_eq(lp_compress_parse("zstd"), LP_COMPRESS_ZSTD);
	cr_assert_eq(lp_compress_parse("none"), LP_COMPRESS_NONE);
	cr_assert_eq(lp_compress_parse("bz2"), -1);
	cr_assert_eq(lp_compress_parse(""), -1);
}

static bool exists(const char *p) { return g_file_test(p, G_FILE_TEST_EXISTS); }

/* How many names in dir start with prefix. */
static int count_prefixed(const char *prefix)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	int n = 0;
	const char *name;
	while ((name = g_dir_read_name(d)))
		n += g_str_has_prefix(name, prefix);
	g_dir_close(d);
	return n;
}

Test(io, output_appears_only_on_commit)
{
	char *p = path_of("out.txt");
	mode_t old = umask(022);
	lp_output *out = lp_output_open(p, LP_COMPRESS_AUTO, &err);
	umask(old);
	cr_assert_not_null(out, "%s", err.msg);
	cr_assert_str_eq(lp_output_name(out), p);
	cr_assert_eq(lp_output_write(out, "hello ", 6, &err), 0);
	cr_assert_eq(lp_output_write(out, "world\n", 6, &err), 0);
	cr_assert_not(exists(p));
	cr_assert_eq(count_prefixed(".out.txt.tmp-"), 1);
	cr_assert_eq(lp_output_commit(out, &err), 0, "%s", err.msg);
	cr_assert_eq(count_prefixed(".out.txt.tmp-"), 0);
	char *got;
	gsize n;
	cr_assert(g_file_get_contents(p, &got, &n, NULL));
	cr_assert_eq(n, 12);
	cr_assert(memcmp(got, "hello world\n", 12) == 0);
	struct stat st;
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0644);
	g_free(got);
	g_free(p);
}

Test(io, abort_keeps_the_old_file)
{
	char *p = scratch_file(dir, "keep.txt", "old\n", 4);
	lp_output *out = lp_output_open(p, LP_COMPRESS_NONE, &err);
	cr_assert_not_null(out);
	cr_assert_eq(lp_output_write(out, "new\n", 4, &err), 0);
	lp_output_abort(out);
	cr_assert_eq(count_prefixed(".keep.txt.tmp-"), 0);
	char *got;
	cr_assert(g_file_get_contents(p, &got, NULL, NULL));
	cr_assert_str_eq(got, "old\n");
	g_free(got);
	g_free(p);
}

Test(io, big_writes_pass_through_whole)
{
	GByteArray *data = pattern(3000000);
	char *p = path_of("big");
	lp_output *out = lp_output_open(p, LP_COMPRESS_AUTO, &err);
	cr_assert_not_null(out);
	/* Small writes, then one larger than the buffer, then small again. */
	size_t i = 0;
	for (; i < 500000; i += 1000)
		cr_assert_eq(lp_output_write(out, data->data + i, 1000, &err), 0);
	cr_assert_eq(lp_output_write(out, data->data + i, 2000000, &err), 0);
	i += 2000000;
	for (; i < data->len; i += 500)
		cr_assert_eq(lp_output_write(out, data->data + i, 500, &err), 0);
	cr_assert_eq(lp_output_commit(out, &err), 0);
	int status;
	GByteArray *got = read_all(p, 1 << 20, &status);
	assert_bytes(got, data->data, data->len);
	g_byte_array_unref(got);
	g_byte_array_unref(data);
	g_free(p);
}

/* Write data to name with compress, check the first bytes of the file and
 * that lp_input reads the data back. */
static void compressed_round_trip(const char *name, enum lp_compress compress,
				  const char *magic, size_t magic_len)
{
	GByteArray *data = pattern(1300000);
	char *p = path_of(name);
	lp_output *out = lp_output_open(p, compress, &err);
	cr_assert_not_null(out);
	for (size_t i = 0; i < data->len; i += 100000)
		cr_assert_eq(lp_output_write(out, data->data + i, MIN(100000, data->len - i), &err), 0);
	cr_assert_eq(lp_output_commit(out, &err), 0, "%s", err.msg);
	char *raw;
	gsize n;
	cr_assert(g_file_get_contents(p, &raw, &n, NULL));
	cr_assert(n >= magic_len && memcmp(raw, magic, magic_len) == 0);
	g_free(raw);
	int status;
	GByteArray *got = read_all(p, 65536, &status);
	cr_assert_eq(status, 0, "%s", err.msg);
	assert_bytes(got, data->data, data->len);
	g_byte_array_unref(got);
	g_byte_array_unref(data);
	g_free(p);
}

/* No compressing thread can start: the writing thread compresses, and
 * the file is the same. */
static void compressed_without_threads(const char *name, enum lp_compress compress)
{
	GByteArray *data = pattern(3300000);
	char *p = path_of(name);
	char *q = g_strconcat(p, ".threads", NULL);
	for (int pass = 0; pass < 2; pass++) {
		thread_stacks(pass ? 8u << 20 : THREAD_STACK_TOO_LARGE);
		lp_output *out = lp_output_open(pass ? q : p, compress, &err);
		cr_assert_not_null(out, "%s", err.msg);
		for (size_t i = 0; i < data->len; i += 100000)
			cr_assert_eq(lp_output_write(out, data->data + i, MIN(100000, data->len - i), &err), 0);
		cr_assert_eq(lp_output_commit(out, &err), 0, "%s", err.msg);
	}
	char *without, *with;
	gsize n_without, n_with;
	cr_assert(g_file_get_contents(p, &without, &n_without, NULL));
	cr_assert(g_file_get_contents(q, &with, &n_with, NULL));
	cr_assert(n_without == n_with && !memcmp(without, with, n_with));
	g_free(without);
	g_free(with);
	int status;
	GByteArray *got = read_all(p, 65536, &status);
	cr_assert_eq(status, 0, "%s", err.msg);
	assert_bytes(got, data->data, data->len);
	g_byte_array_unref(got);
	g_byte_array_unref(data);
	g_free(q);
	g_free(p);
}

Test(io, gzip_output_without_threads) { compressed_without_threads("o.gz", LP_COMPRESS_GZIP); }
Test(io, zstd_output_without_threads) { compressed_without_threads("o.zst", LP_COMPRESS_ZSTD); }

Test(io, gzip_output_by_suffix) { compressed_round_trip("o.gz", LP_COMPRESS_AUTO, "\x1f\x8b", 2); }
Test(io, zstd_output_by_suffix) { compressed_round_trip("o.zst", LP_COMPRESS_AUTO, "\x28\xb5\x2f\xfd", 4); }
Test(io, gzip_output_forced) { compressed_round_trip("o", LP_COMPRESS_GZIP, "\x1f\x8b", 2); }
Test(io, zstd_output_forced) { compressed_round_trip("o.txt", LP_COMPRESS_ZSTD, "\x28\xb5\x2f\xfd", 4); }
Test(io, no_compression_despite_suffix) { compressed_round_trip("o.gz", LP_COMPRESS_NONE, "a", 1); }

/* More pieces of 1 MiB than the pool holds (2 a thread and 2, for 8
 * threads at most): the output fills again the buffers the pool handed
 * back, and every byte reads back in order. */
Test(io, compressed_output_of_more_pieces_than_the_pool_holds)
{
	GByteArray *data = pattern((19u << 20) + 4321);
	const char *names[] = {"many.zst", "many.gz"};
	for (size_t k = 0; k < G_N_ELEMENTS(names); k++) {
		char *p = path_of(names[k]);
		lp_output *out = lp_output_open(p, LP_COMPRESS_AUTO, &err);
		cr_assert_not_null(out, "%s", err.msg);
		for (size_t i = 0; i < data->len; i += 100000)
			cr_assert_eq(lp_output_write(out, data->data + i, MIN(100000, data->len - i), &err), 0);
		cr_assert_eq(lp_output_commit(out, &err), 0, "%s", err.msg);
		int status;
		GByteArray *got = read_all(p, 1 << 20, &status);
		cr_assert_eq(status, 0, "%s", err.msg);
		assert_bytes(got, data->data, data->len);
		g_byte_array_unref(got);
		g_free(p);
	}
	g_byte_array_unref(data);
}

Test(io, empty_compressed_output_reads_back_empty)
{
	char *p = path_of("e.gz");
	lp_output *out = lp_output_open(p, LP_COMPRESS_AUTO, &err);
	cr_assert_eq(lp_output_commit(out, &err), 0);
	int status;
	GByteArray *got = read_all(p, 100, &status);
	cr_assert_eq(status, 0);
	cr_assert_eq(got->len, 0);
	g_byte_array_unref(got);
	g_free(p);
}

Test(io, dev_full_fails_at_commit)
{
	lp_output *out = lp_output_open("/dev/full", LP_COMPRESS_AUTO, &err);
	cr_assert_not_null(out, "%s", err.msg);
	cr_assert_eq(lp_output_write(out, "x\n", 2, &err), 0);
	cr_assert_eq(lp_output_commit(out, &err), LP_EIO);
	cr_assert_str_eq(err.msg, "cannot write /dev/full: No space left on device");
	/* Still a device: it was written directly, never replaced. */
	struct stat st;
	cr_assert_eq(stat("/dev/full", &st), 0);
	cr_assert(S_ISCHR(st.st_mode));
}

Test(io, dev_full_fails_on_a_big_write)
{
	lp_output *out = lp_output_open("/dev/full", LP_COMPRESS_NONE, &err);
	cr_assert_not_null(out);
	char *big = g_malloc0(3 << 20);
	cr_assert_eq(lp_output_write(out, big, 3 << 20, &err), LP_EIO);
	cr_assert_str_eq(err.msg, "cannot write /dev/full: No space left on device");
	lp_output_abort(out);
	g_free(big);
}

Test(io, output_in_a_missing_directory)
{
	char *p = g_build_filename(dir, "no", "out.txt", NULL);
	cr_assert_null(lp_output_open(p, LP_COMPRESS_AUTO, &err));
	cr_assert_eq(err.status, LP_EIO);
	char *want = g_strdup_printf("cannot open %s: No such file or directory", p);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
	g_free(p);
}

Test(io, output_onto_a_directory)
{
	cr_assert_null(lp_output_open(dir, LP_COMPRESS_AUTO, &err));
	cr_assert_eq(err.status, LP_EIO);
	char *want = g_strdup_printf("cannot open %s: Is a directory", dir);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
}

Test(io, stdout_is_named)
{
	lp_output *out = lp_output_open(NULL, LP_COMPRESS_AUTO, &err);
	cr_assert_str_eq(lp_output_name(out), "<stdout>");
	lp_output_abort(out);
	out = lp_output_open("-", LP_COMPRESS_AUTO, &err);
	cr_assert_str_eq(lp_output_name(out), "<stdout>");
	lp_output_abort(out);
}

Test(io, symbolic_link_target_is_replaced_not_the_link)
{
	char *target = scratch_file(dir, "target", "old\n", 4);
	char *link = path_of("link");
	cr_assert_eq(symlink("target", link), 0);
	lp_output *out = lp_output_open(link, LP_COMPRESS_AUTO, &err);
	cr_assert_not_null(out);
	cr_assert_str_eq(lp_output_name(out), link);
	cr_assert_eq(lp_output_write(out, "new\n", 4, &err), 0);
	cr_assert_eq(lp_output_commit(out, &err), 0, "%s", err.msg);
	cr_assert(g_file_test(link, G_FILE_TEST_IS_SYMLINK));
	char *got;
	cr_assert(g_file_get_contents(target, &got, NULL, NULL));
	cr_assert_str_eq(got, "new\n");
	g_free(got);
	g_free(link);
	g_free(target);
}

Test(io, failed_rename_is_an_io_error_and_leaves_nothing)
{
	char *p = path_of("out.txt");
	lp_output *out = lp_output_open(p, LP_COMPRESS_AUTO, &err);
	cr_assert_not_null(out);
	cr_assert_eq(lp_output_write(out, "x\n", 2, &err), 0);
	/* Something else takes the name meanwhile: a file cannot replace a directory. */
	cr_assert_eq(g_mkdir(p, 0755), 0);
	cr_assert_eq(lp_output_commit(out, &err), LP_EIO);
	char *prefix = g_strdup_printf("cannot rename %s/.out.txt.tmp-", dir);
	char *suffix = g_strdup_printf(" to %s: Is a directory", p);
	cr_assert(g_str_has_prefix(err.msg, prefix), "%s", err.msg);
	cr_assert(g_str_has_suffix(err.msg, suffix), "%s", err.msg);
	cr_assert_eq(count_prefixed(".out.txt.tmp-"), 0);
	g_rmdir(p);
	g_free(prefix);
	g_free(suffix);
	g_free(p);
}

/* ---- lines through lp_inbuf ---- */

/* Each line of text through lp_inbuf_line: its length, or -1 for a line
 * refused as too long (reading stops there). Returns the lines seen. */
static size_t line_lengths(const char *text, size_t n, long *lens, size_t cap)
{
	char *p = scratch_file(dir, "lines", text, n);
	lp_input *in = lp_input_open(p, &err);
	cr_assert_not_null(in);
	lp_inbuf b;
	lp_inbuf_init(&b, in);
	size_t count = 0;
	char *line;
	size_t len;
	int got;
	while (count < cap && (got = lp_inbuf_line(&b, &line, &len, &err)) != 0) {
		cr_assert_neq(got, -1, "%s", err.msg);
		if (got == LP_INBUF_LONG_LINE) {
			lens[count++] = -1;
			break;
		}
		cr_assert_eq(strlen(line), len, "NUL-terminated in place");
		lens[count++] = (long)len;
	}
	lp_inbuf_free(&b);
	lp_input_close(in);
	g_free(p);
	return count;
}

/* A line of len 'x' bytes starting at offset at (after lines of 63 'y'),
 * then "z\n"; with_newline false: the line ends the input instead. */
static GString *text_with_line(size_t at, size_t len, bool with_newline)
{
	GString *s = g_string_new(NULL);
	while (s->len < at)
		g_string_append(s, "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\n");
	for (size_t i = 0; i < len; i++)
		g_string_append_c(s, 'x');
	if (with_newline)
		g_string_append(s, "\nz\n");
	return s;
}

static void check_line(size_t at, size_t len, bool with_newline)
{
	GString *s = text_with_line(at, len, with_newline);
	size_t before = at / 64;
	long lens[1 << 15];
	size_t n = line_lengths(s->str, s->len, lens, G_N_ELEMENTS(lens));
	bool fits = len <= LP_LINE_MAX;
	cr_assert_eq(n, before + (fits && with_newline ? 2 : 1), "at %zu len %zu", at, len);
	cr_assert_eq(lens[before], fits ? (long)len : -1, "at %zu len %zu", at, len);
	g_string_free(s, TRUE);
}

Test(io, inbuf_lines_up_to_4096_bytes)
{
	cr_assert_eq(LP_LINE_MAX, 4096);
	check_line(0, 0, true);
	for (int with_newline = 0; with_newline < 2; with_newline++) {
		check_line(0, LP_LINE_MAX, with_newline);
		check_line(0, LP_LINE_MAX + 1, with_newline);
		/* Straddling the first refill of the 1 MiB buffer. */
		check_line((1 << 20) - 2048, LP_LINE_MAX, with_newline);
		check_line((1 << 20) - 2048, LP_LINE_MAX + 1, with_newline);
		check_line((1 << 20) - 64, LP_LINE_MAX, with_newline);
		check_line((1 << 20) - 64, LP_LINE_MAX + 1, with_newline);
	}
	check_line(0, 5 << 20, true);
}

Test(io, inbuf_long_line_message)
{
	cr_assert_eq(lp_inbuf_long_line(&err, "k.txt", 7), -1);
	cr_assert_eq(err.status, LP_EINPUT);
	cr_assert_str_eq(err.msg, "k.txt:7: line longer than 4096 bytes");
}

Test(io, messages_escape_bytes_that_are_not_printable)
{
	cr_assert_eq(lp_fail(&err, LP_EINPUT, "a%sb%cc", "\x1b[2J\x7f\xff\t", '\n'), LP_EINPUT);
	cr_assert_str_eq(err.msg, "a\\x1b[2J\\x7f\\xff\\x09b\\x0ac");
	/* A %c of NUL is shown, not taken for the end of the message. */
	lp_fail(&err, LP_EINPUT, "tag '%c' here", '\0');
	cr_assert_str_eq(err.msg, "tag '\\x00' here");
	/* A long message is cut before an escape that would not fit. */
	char big[2000];
	memset(big, '\x01', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	lp_fail(&err, LP_EINPUT, "%s", big);
	cr_assert_eq(strlen(err.msg), 1020);
	char q[LP_QUOTE_SIZE];
	cr_assert_str_eq(lp_quote(q, "a\0b", 3), "a\\x00b");
	char ones[LP_QUOTE_MAX + 10];
	memset(ones, '\x01', sizeof ones);
	cr_assert_eq(strlen(lp_quote(q, ones, sizeof ones)), 4 * LP_QUOTE_MAX);
}

Test(io, small_files_are_regular_and_bounded)
{
	char *text;
	size_t len;
	char *ok = scratch_file(dir, "ok.yaml", "a: 1\n", 5);
	cr_assert_eq(lp_read_small_file(ok, true, 5, "index", &text, &len, &err), 0, "%s", err.msg);
	cr_assert_eq(len, 5);
	cr_assert_str_eq(text, "a: 1\n");
	g_free(text);
	cr_assert_eq(lp_read_small_file(ok, true, 4, "index", &text, &len, &err), LP_EINPUT);
	char *want = g_strdup_printf("%s: index too large (5 bytes, at most 4)", ok);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
	char *fifo = path_of("fifo");
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(lp_read_small_file(fifo, true, 5, "index", &text, &len, &err), LP_EINPUT);
	want = g_strdup_printf("%s: not a regular file", fifo);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
	char *link = path_of("link");
	cr_assert_eq(symlink(ok, link), 0);
	cr_assert_eq(lp_read_small_file(link, true, 5, "index", &text, &len, &err), 0);
	g_free(text);
	cr_assert_eq(lp_read_small_file(link, false, 5, "index", &text, &len, &err), LP_EIO);
	want = g_strdup_printf("cannot open %s: Too many levels of symbolic links", link);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
	g_free(link);
	g_free(fifo);
	g_free(ok);
}

/* Temporary names: the patterns staging creates, and only those, are
 * recognised as a name's temporaries. */
Test(staging, temporary_names)
{
	char *file = lp_tmp_pattern("out.basic", false), *dir = lp_tmp_pattern("pp", true);
	cr_assert_str_eq(file, ".out.basic.tmp-XXXXXX");
	cr_assert_str_eq(dir, "pp.partial-XXXXXX");
	cr_assert(lp_is_tmp_of(".out.basic.tmp-a1B2c3", "out.basic"));
	cr_assert(lp_is_tmp_of("pp.partial-a1B2c3", "pp"));
	cr_assert_not(lp_is_tmp_of("out.basic", "out.basic"));
	cr_assert_not(lp_is_tmp_of(".out.basic2.tmp-a1B2c3", "out.basic"));
	cr_assert_not(lp_is_tmp_of("pp2.partial-a1B2c3", "pp"));
	cr_assert_not(lp_is_tmp_of(".pp.partial-a1B2c3", "pp"));
	cr_assert_not(lp_is_tmp_of("out.basic.tmp-a1B2c3", "out.basic"));
	g_free(file);
	g_free(dir);
}

/* Whether dir holds name (a symbolic link or FIFO too). */
static bool in_dir(const char *name)
{
	char *p = path_of(name);
	struct stat st;
	bool r = lstat(p, &st) == 0;
	g_free(p);
	return r;
}

/* A run's temporary is locked while it lives (staging invariant (10));
 * the next output of the same name removes the temporaries nobody holds,
 * files and directories, and nothing else: not a held one, not one of
 * another name, not a FIFO or a file under a directory's name. */
Test(io, stale_temporaries_removed_live_ones_kept)
{
	const char *dead[] = {".out.txt.tmp-dead01", "out.txt.partial-dead02"};
	const char *kept[] = {".out.txt.tmp-live01", ".out.txt.tmp-fifo01",
			      "out.txt.partial-file01", ".other.tmp-dead03"};
	char *p = path_of(dead[0]);
	cr_assert(g_file_set_contents(p, "x", 1, NULL));
	g_free(p);
	p = path_of(dead[1]);
	cr_assert_eq(g_mkdir(p, 0777), 0);
	char *inside = g_build_filename(p, "1", NULL);
	cr_assert(g_file_set_contents(inside, "x", 1, NULL));
	g_free(inside);
	g_free(p);
	p = path_of(kept[0]);
	int held = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	cr_assert(held >= 0 && flock(held, LOCK_EX) == 0);
	g_free(p);
	p = path_of(kept[1]);
	cr_assert_eq(mkfifo(p, 0666), 0);
	g_free(p);
	for (int i = 2; i < 4; i++) {
		p = path_of(kept[i]);
		cr_assert(g_file_set_contents(p, "x", 1, NULL));
		g_free(p);
	}
	p = path_of("out.txt");
	lp_output *out = lp_output_open(p, LP_COMPRESS_NONE, &err);
	cr_assert_not_null(out, "%s", err.msg);
	for (int i = 0; i < 2; i++)
		cr_assert_not(in_dir(dead[i]), "%s", dead[i]);
	for (int i = 0; i < 4; i++)
		cr_assert(in_dir(kept[i]), "%s", kept[i]);
	/* The new temporary is locked: another open of it cannot take it. */
	cr_assert_eq(count_prefixed(".out.txt.tmp-"), 3);
	GDir *d = g_dir_open(dir, 0, NULL);
	for (const char *name; (name = g_dir_read_name(d));) {
		if (!g_str_has_prefix(name, ".out.txt.tmp-") || !strcmp(name, kept[0]) ||
		    !strcmp(name, kept[1]))
			continue;
		char *tmp = path_of(name);
		int fd = open(tmp, O_RDONLY | O_CLOEXEC);
		cr_assert(fd >= 0);
		cr_assert_eq(flock(fd, LOCK_EX | LOCK_NB), -1);
		cr_assert_eq(errno, EWOULDBLOCK);
		close(fd);
		g_free(tmp);
	}
	g_dir_close(d);
	lp_output_abort(out);
	close(held);
	g_free(p);
}

/* A compressed output to /dev/full: the write fails on the compressing
 * thread, and the caller hears of it (at a later write or at the commit),
 * with the device's error. */
static void compressed_dev_full(enum lp_compress compress)
{
	GByteArray *data = pattern(4000000); /* mostly random: > 1 MiB compressed */
	lp_output *out = lp_output_open("/dev/full", compress, &err);
	cr_assert_not_null(out, "%s", err.msg);
	int rc = 0;
	for (size_t i = 0; !rc && i < data->len; i += 100000)
		rc = lp_output_write(out, data->data + i, MIN(100000, data->len - i), &err);
	if (rc)
		lp_output_abort(out);
	else
		rc = lp_output_commit(out, &err);
	cr_assert_eq(rc, LP_EIO);
	cr_assert_str_eq(err.msg, "cannot write /dev/full: No space left on device");
	g_byte_array_unref(data);
}

Test(io, gzip_output_thread_failure_reaches_caller) { compressed_dev_full(LP_COMPRESS_GZIP); }
Test(io, zstd_output_thread_failure_reaches_caller) { compressed_dev_full(LP_COMPRESS_ZSTD); }

/* Closing a compressed input long before its end stops its decompressing
 * thread, which is chunks ahead (ASan and the test's end would show a
 * leak or a hang). */
Test(io, compressed_input_closed_early)
{
	GByteArray *data = pattern(6000000);
	GByteArray *z = scratch_zstd(data->data, data->len);
	char *p = scratch_file(dir, "early.zst", z->data, z->len);
	lp_input *in = lp_input_open(p, &err);
	cr_assert_not_null(in, "%s", err.msg);
	unsigned char buf[100];
	cr_assert_eq(lp_input_read(in, buf, sizeof buf, &err), (ssize_t)sizeof buf);
	cr_assert(memcmp(buf, data->data, sizeof buf) == 0);
	lp_input_close(in);
	g_byte_array_unref(z);
	g_byte_array_unref(data);
	g_free(p);
}

/* An output's level reaches the codec: gzip level 0 (igzip's fastest)
 * writes a larger file of text than level 3, and both read back. */
Test(io, gzip_levels_differ)
{
	GString *text = g_string_new(NULL);
	for (int i = 0; i < 200000; i++)
		g_string_append_printf(text, "%d %x\n", i % 97, i * 7919);
	gsize sizes[2];
	int levels[2] = {0, 3};
	for (int k = 0; k < 2; k++) {
		char *p = path_of(k ? "l3.gz" : "l0.gz");
		lp_output *out = lp_output_open_level(p, LP_COMPRESS_AUTO, levels[k], &err);
		cr_assert_not_null(out, "%s", err.msg);
		cr_assert_eq(lp_output_write(out, text->str, text->len, &err), 0);
		cr_assert_eq(lp_output_commit(out, &err), 0, "%s", err.msg);
		int status;
		GByteArray *got = read_all(p, 65536, &status);
		cr_assert_eq(status, 0, "%s", err.msg);
		assert_bytes(got, text->str, text->len);
		g_byte_array_unref(got);
		struct stat st;
		cr_assert_eq(stat(p, &st), 0);
		sizes[k] = (gsize)st.st_size;
		g_free(p);
	}
	cr_assert_gt(sizes[0], sizes[1], "level 0: %zu bytes, level 3: %zu", sizes[0], sizes[1]);
	g_string_free(text, TRUE);
}

/* A guarded mapping of a file that shrinks under it: its pages past the
 * new end read as zeros instead of raising SIGBUS, and it says so; the
 * pages before keep the file's bytes. */
Test(io, mapped_file_that_shrinks_reads_zeros_and_says_so)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = 3 * page;
	char *data = g_malloc(size);
	memset(data, 'x', size);
	char *path = scratch_file(dir, "f", data, size);
	int fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	lp_mapped m;
	cr_assert_eq(lp_mapped_open(&m, fd, size), 0);
	close(fd);
	cr_assert_eq(m.size, size);
	cr_assert_eq(m.data[2 * page], 'x');
	cr_assert_not(lp_mapped_shrunk(&m));
	cr_assert_eq(truncate(path, (off_t)page), 0);
	cr_assert_eq(m.data[page - 1], 'x');
	cr_assert_not(lp_mapped_shrunk(&m));
	cr_assert_eq(m.data[page + 10], 0);
	cr_assert(lp_mapped_shrunk(&m));
	cr_assert_eq(m.data[2 * page + 5], 0);
	lp_mapped_close(&m);
	cr_assert_null(m.data);
	cr_assert_not(lp_mapped_shrunk(&m));
	g_free(path);
	g_free(data);
}

/* A SIGBUS outside every guarded mapping is not swallowed: it gets the
 * action there was before the guard, here the default (set so: a
 * sanitizer's would report and abort), which ends the process with it. */
Test(io, sigbus_outside_guarded_mappings_still_kills, .signal = SIGBUS)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigemptyset(&dfl.sa_mask);
	cr_assert_eq(sigaction(SIGBUS, &dfl, NULL), 0);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *data = g_malloc0(2 * page);
	char *path = scratch_file(dir, "f", data, 2 * page);
	int fd = open(path, O_RDONLY);
	lp_mapped guarded;
	cr_assert_eq(lp_mapped_open(&guarded, fd, 2 * page), 0);
	const volatile char *plain = mmap(NULL, 2 * page, PROT_READ, MAP_PRIVATE, fd, 0);
	cr_assert_neq((void *)plain, MAP_FAILED);
	cr_assert_eq(truncate(path, 0), 0);
	(void)plain[page];
}

/* The recency list of open files (io/lrulist.h): pushed newest first,
 * touched to the front, unlinked from either end or the middle; entries
 * found back from their links. */
typedef struct lru_item {
	int id;
	lp_lru_link link;
} lru_item;

static void assert_order(const lp_lru_list *l, const char *want)
{
	char got[16] = "", back[16] = "";
	size_t n = 0, m = 0;
	for (const lp_lru_link *e = l->newest; e; e = e->older)
		got[n++] = (char)('0' + LP_LRU_ENTRY(e, lru_item, link)->id);
	for (const lp_lru_link *e = l->oldest; e; e = e->newer)
		back[m++] = (char)('0' + LP_LRU_ENTRY(e, lru_item, link)->id);
	cr_assert_str_eq(got, want);
	cr_assert_eq(m, n);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(back[i], got[n - 1 - i]);
}

Test(io, lru_list_of_open_files)
{
	lp_lru_list l = {0};
	lru_item items[4] = {{.id = 0}, {.id = 1}, {.id = 2}, {.id = 3}};
	assert_order(&l, "");
	for (int i = 0; i < 4; i++)
		lp_lru_push_newest(&l, &items[i].link);
	assert_order(&l, "3210");
	lp_lru_touch(&l, &items[1].link);
	assert_order(&l, "1320");
	lp_lru_touch(&l, &items[1].link);
	assert_order(&l, "1320");
	lp_lru_touch(&l, &items[0].link);
	assert_order(&l, "0132");
	lp_lru_unlink(&l, &items[2].link); /* the oldest */
	assert_order(&l, "013");
	cr_assert_null(items[2].link.newer);
	cr_assert_null(items[2].link.older);
	lp_lru_unlink(&l, &items[1].link); /* the middle */
	assert_order(&l, "03");
	lp_lru_unlink(&l, &items[0].link); /* the newest */
	assert_order(&l, "3");
	lp_lru_unlink(&l, &items[3].link);
	assert_order(&l, "");
	cr_assert_null(l.newest);
	cr_assert_null(l.oldest);
}
