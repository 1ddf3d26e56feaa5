/* libFuzzer target: the text form of raw reference traces (section 1.2)
 * and the detection of text from binary (1.3). Checks: a trace that reads
 * to the end has one record per line and no line over 4096 bytes; auto
 * detection agrees with the text reader on a short first line; what was
 * read survives the writer in either form and byte order, compressed or
 * not; cut into chunks of lines and parsed apart (merge -j's way), it
 * reads the same references and fails with the same message. The input's
 * size picks the form, byte order and compression of the round trip, so
 * that the input itself stays plain text. */
#include "fuzz_refs.h"

#include "io/inbuf.h"

/* The text reader's verdict on the first line alone: 1 valid, 0 not. */
static int first_record_reads(const char *path)
{
	lp_error err;
	lp_ref_source *r = lp_ref_open(path, LP_REF_TEXT, LP_LITTLE, &err);
	FUZZ_CHECK(r);
	lp_ref ref;
	ssize_t n = lp_ref_source_read(r, &ref, 1, &err);
	lp_ref_source_close(r);
	return n == 1;
}

static void check_lines(const uint8_t *data, size_t size, size_t records)
{
	size_t lines = 0, longest = 0;
	for (size_t at = 0; at < size;) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t len = (nl ? (size_t)(nl - data) : size) - at;
		longest = MAX(longest, len);
		lines++;
		at += len + 1;
	}
	FUZZ_CHECK(records == lines);
	FUZZ_CHECK(longest <= LP_LINE_MAX);
}

/* The reader's failure message, or NULL when it reads to the end. */
static char *reader_failure(const char *path)
{
	lp_error err;
	lp_ref_source *r = lp_ref_open(path, LP_REF_TEXT, LP_LITTLE, &err);
	FUZZ_CHECK(r);
	lp_ref buf[64];
	ssize_t n;
	while ((n = lp_ref_source_read(r, buf, 64, &err)) > 0)
		;
	lp_ref_source_close(r);
	return n < 0 ? g_strdup(err.msg) : NULL;
}

/* Chunks of 7 lines, parsed apart: the same references, the same end. */
static void check_chunks(const char *path, const GArray *refs, bool read_whole)
{
	lp_error err;
	lp_ref_source *r = lp_ref_open(path, LP_REF_TEXT, LP_LITTLE, &err);
	if (!r) {
		/* A compressed input that does not start right. */
		FUZZ_CHECK(!read_whole);
		return;
	}
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
		char *msg = reader_failure(path);
		FUZZ_CHECK(msg && !strcmp(msg, err.msg));
		g_free(msg);
	}
	lp_text_chunk_free(&c);
	lp_ref_source_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	bool plain = !fuzz_compressed(data, size);
	GArray *refs = g_array_new(FALSE, FALSE, sizeof(lp_ref));
	enum lp_ref_format detected;
	size_t torn;
	int rc = fuzz_read_refs(path, LP_REF_TEXT, LP_LITTLE, refs, &detected, &torn);
	/* Input whose first line is '#laplace-ref 64' is the 64-bit form
	 * (fuzz_ref64_text). */
	unsigned width = fuzz_width ? fuzz_width : 32;
	if (rc == 0 && plain && width == 32)
		check_lines(data, size, refs->len);
	check_chunks(path, refs, rc == 0);

	/* 1.3: the first line, when it ends within 64 bytes, decides alone. */
	if (plain && width == 32) {
		const uint8_t *nl = memchr(data, '\n', MIN(size, (size_t)LP_REF_SNIFF_BYTES + 1));
		size_t first = nl ? (size_t)(nl - data) : size;
		if (first <= LP_REF_SNIFF_BYTES) {
			lp_error err;
			lp_ref_source *r = lp_ref_open(path, LP_REF_AUTO, LP_LITTLE, &err);
			/* Only the 64-bit binary form's header can be refused. */
			bool headed = size >= LP_REF64_MAGIC_SIZE &&
				      !memcmp(data, LP_REF64_MAGIC, LP_REF64_MAGIC_SIZE);
			FUZZ_CHECK(r || headed);
			detected = r ? lp_ref_reader_format(r) : LP_REF_BIN;
			lp_ref_source_close(r);
			FUZZ_CHECK((detected == LP_REF_TEXT) == first_record_reads(path));
		}
	}

	enum lp_ref_format form = size & 1 ? LP_REF_BIN : LP_REF_TEXT;
	enum lp_endian endian = size & 2 ? LP_BIG : LP_LITTLE;
	enum lp_compress compress = (size & 12) == 12 ? (size & 16 ? LP_COMPRESS_GZIP : LP_COMPRESS_ZSTD)
						      : LP_COMPRESS_NONE;
	free(fuzz_round_trip(refs, form, width, endian, compress));
	g_array_free(refs, TRUE);
	return 0;
}
