/* Helpers of the raw reference targets: read a whole trace, and write
 * references out and read them back. */
#ifndef LAPLACE_FUZZ_REFS_H
#define LAPLACE_FUZZ_REFS_H

#include "fuzz_input.h"

#include <stdbool.h>

#include <glib.h>

#include "formats/refio.h"
#include "formats/registry.h"

/* The width of the trace read last by fuzz_read_refs: 32 or 64. */
static unsigned fuzz_width;

/* Every record of the trace at path into refs; returns what the last read
 * returned (0 at the end, -1 on an error), with *torn the torn bytes and
 * fuzz_width its width. */
static FUZZ_UNUSED int fuzz_read_refs(const char *path, enum lp_ref_format format,
				      enum lp_endian endian, GArray *refs,
				      enum lp_ref_format *detected, size_t *torn)
{
	lp_error err;
	g_array_set_size(refs, 0);
	*torn = 0;
	fuzz_width = 0;
	lp_ref_source *r = lp_ref_open(path, format, endian, &err);
	if (!r)
		return -1;
	*detected = lp_ref_reader_format(r);
	fuzz_width = lp_ref_source_width(r);
	FUZZ_CHECK(format == LP_REF_AUTO || *detected == format);
	FUZZ_CHECK(*detected == LP_REF_TEXT || *detected == LP_REF_BIN);
	FUZZ_CHECK(fuzz_width == 32 || fuzz_width == 64);
	lp_ref buf[257];
	ssize_t n;
	/* An odd batch size, so that batches and buffer refills do not align. */
	while ((n = lp_ref_source_read(r, buf, 257, &err)) > 0) {
		FUZZ_CHECK(n <= 257);
		for (ssize_t i = 0; i < n; i++)
			FUZZ_CHECK(lp_ref_type_index(buf[i].type) >= 0 &&
				   (fuzz_width == 64 || !((buf[i].vas | buf[i].address) >> 32)));
		g_array_append_vals(refs, buf, (guint)n);
		FUZZ_CHECK(lp_ref_source_index(r) == refs->len);
	}
	if (n < 0)
		FUZZ_CHECK(err.status == LP_EINPUT || err.status == LP_EIO);
	if (n == 0 && *detected == LP_REF_BIN) {
		*torn = lp_ref_source_torn_bytes(r);
		FUZZ_CHECK(*torn < (fuzz_width == 64 ? LP_REF64_RECORD_SIZE : LP_REF_RECORD_SIZE));
	}
	lp_ref_source_close(r);
	return n < 0 ? -1 : 0;
}

static FUZZ_UNUSED int fuzz_same_refs(const lp_ref *a, const lp_ref *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].type != b[i].type || a[i].timestamp != b[i].timestamp ||
		    a[i].length != b[i].length || a[i].vas != b[i].vas || a[i].address != b[i].address)
			return 0;
	return 1;
}

/* Write refs with the reference writer (format, width, endian, compress)
 * into a file of fuzz_dir(), read it back, and check that the same
 * references come out in the same form; returns the file's path (free it)
 * for further checks. */
static FUZZ_UNUSED char *fuzz_round_trip(const GArray *refs, enum lp_ref_format format,
					 unsigned width, enum lp_endian endian,
					 enum lp_compress compress)
{
	char *path = fuzz_dir_path_of("round-trip");
	lp_error err;
	lp_output *out = lp_output_open(path, compress, &err);
	FUZZ_CHECK(out);
	lp_ref_writer *w = lp_ref_row(format, width)->open_sink(out, endian);
	/* In uneven pieces, as a converter would write them. */
	for (size_t at = 0; at < refs->len;) {
		size_t n = MIN(refs->len - at, (size_t)1 + at % 1000);
		FUZZ_CHECK(lp_ref_writer_write(w, &g_array_index(refs, lp_ref, at), n, &err) == 0);
		at += n;
	}
	FUZZ_CHECK(lp_ref_writer_finish(w, &err) == 0);
	FUZZ_CHECK(lp_output_commit(out, &err) == 0);

	GArray *back = g_array_new(FALSE, FALSE, sizeof(lp_ref));
	enum lp_ref_format detected;
	size_t torn;
	/* Text written by the writer is also detected as text. */
	FUZZ_CHECK(fuzz_read_refs(path, format, endian, back, &detected, &torn) == 0);
	FUZZ_CHECK(torn == 0 && fuzz_width == width);
	FUZZ_CHECK(back->len == refs->len);
	FUZZ_CHECK(fuzz_same_refs((const lp_ref *)(void *)back->data,
				  (const lp_ref *)(void *)refs->data, refs->len));
	if (format == LP_REF_TEXT && refs->len) {
		FUZZ_CHECK(fuzz_read_refs(path, LP_REF_AUTO, endian, back, &detected, &torn) == 0);
		FUZZ_CHECK(detected == LP_REF_TEXT && fuzz_width == width && back->len == refs->len);
	}
	g_array_free(back, TRUE);
	return path;
}

/* refs (read from a 64-bit trace) copied into the 32-bit form of format:
 * refused, naming the first reference whose vas or address does not fit
 * 32 bits, and that field; else read back as the same references. */
static FUZZ_UNUSED void fuzz_narrow(const GArray *refs, enum lp_ref_format format)
{
	const lp_ref *r = (const lp_ref *)(void *)refs->data;
	size_t first = 0;
	while (first < refs->len && !((r[first].vas | r[first].address) >> 32))
		first++;
	char *wide_path = fuzz_round_trip(refs, LP_REF_BIN, 64, LP_LITTLE, LP_COMPRESS_NONE);
	char *path = fuzz_dir_path_of("narrow");
	lp_error err;
	lp_ref_source *s = lp_ref_open(wide_path, LP_REF_BIN, LP_LITTLE, &err);
	lp_output *out = lp_output_open(path, LP_COMPRESS_NONE, &err);
	FUZZ_CHECK(s && out);
	lp_torn_policy policy = {.strict = true};
	int rc = lp_ref_copy(s, lp_ref_row(format, 32), LP_LITTLE, &policy, NULL, out, &err);
	lp_ref_source_close(s);
	if (first < refs->len) {
		char want[96];
		snprintf(want, sizeof want, ": record %zu: field %s: ", first,
			 r[first].vas >> 32 ? "vas" : "address");
		FUZZ_CHECK(rc == LP_EINPUT && strstr(err.msg, want));
		lp_output_abort(out);
	} else {
		FUZZ_CHECK(rc == 0 && lp_output_commit(out, &err) == 0);
		GArray *back = g_array_new(FALSE, FALSE, sizeof(lp_ref));
		enum lp_ref_format detected;
		size_t torn;
		FUZZ_CHECK(fuzz_read_refs(path, format, LP_LITTLE, back, &detected, &torn) == 0);
		FUZZ_CHECK(fuzz_width == 32 && back->len == refs->len);
		FUZZ_CHECK(fuzz_same_refs((const lp_ref *)(void *)back->data, r, refs->len));
		g_array_free(back, TRUE);
	}
	free(path);
	free(wide_path);
}

/* Text traces, either width: a trace that reads to the end has one record
 * per line after its header lines (1 in the 64-bit form, else 0) and no
 * line over LP_LINE_MAX. */
static FUZZ_UNUSED void fuzz_check_lines(const uint8_t *data, size_t size, size_t records,
					 size_t header_lines)
{
	size_t lines = 0, longest = 0;
	for (size_t at = 0; at < size;) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t len = (nl ? (size_t)(nl - data) : size) - at;
		longest = MAX(longest, len);
		lines++;
		at += len + 1;
	}
	FUZZ_CHECK(records + header_lines == lines);
	FUZZ_CHECK(longest <= LP_LINE_MAX);
}

/* The text reader's failure message at path, or NULL when it reads to the
 * end. */
static FUZZ_UNUSED char *fuzz_text_failure(const char *path)
{
	lp_error err;
	lp_ref_source *r = lp_ref_open(path, LP_REF_TEXT, LP_LITTLE, &err);
	if (!r)
		return g_strdup(err.msg);
	lp_ref buf[64];
	ssize_t n;
	while ((n = lp_ref_source_read(r, buf, 64, &err)) > 0)
		;
	lp_ref_source_close(r);
	return n < 0 ? g_strdup(err.msg) : NULL;
}

/* A text trace cut in chunks of 7 lines and parsed apart (merge -j's way):
 * the references read whole (refs), each chunk starting on the line of its
 * first reference, and the same end. width: what the trace must be (32 or
 * 64), or 0 for either. */
static FUZZ_UNUSED void fuzz_check_chunks(const char *path, const GArray *refs, bool read_whole,
					  unsigned width)
{
	lp_error err;
	lp_ref_source *r = lp_ref_open(path, LP_REF_TEXT, LP_LITTLE, &err);
	if (!r) {
		/* A compressed input that does not start right. */
		FUZZ_CHECK(!read_whole);
		return;
	}
	FUZZ_CHECK(!width || lp_ref_source_width(r) == width);
	uint64_t header_lines = lp_ref_source_width(r) == 64;
	lp_text_chunk c = {0};
	lp_ref buf[7];
	size_t total = 0;
	bool failed = false;
	for (;;) {
		ssize_t n = r->ops->cut(r, &c, 7, &err);
		if (n < 0 || (n == 0 && !c.long_line)) {
			failed = n < 0;
			break;
		}
		FUZZ_CHECK(c.first_line == total + 1 + header_lines);
		if (r->ops->decode(r, &c, buf, &err) < 0) {
			failed = true;
			break;
		}
		size_t common = MIN((size_t)n, refs->len > total ? refs->len - total : 0);
		FUZZ_CHECK(!common || fuzz_same_refs(buf, &g_array_index(refs, lp_ref, total), common));
		total += (size_t)n;
	}
	FUZZ_CHECK(failed == !read_whole);
	if (read_whole) {
		FUZZ_CHECK(total == refs->len);
	} else {
		char *msg = fuzz_text_failure(path);
		FUZZ_CHECK(msg && !strcmp(msg, err.msg));
		g_free(msg);
	}
	lp_text_chunk_free(&c);
	lp_ref_source_close(r);
}

#endif
