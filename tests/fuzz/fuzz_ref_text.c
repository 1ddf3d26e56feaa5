/* libFuzzer target: the text form of raw reference traces (section 1.2)
 * and the detection of text from binary (1.3). Checks: a trace that reads
 * to the end has one record per line and no line over 4096 bytes; auto
 * detection agrees with the text reader on a short first line; what was
 * read survives the writer in either form and byte order, compressed or
 * not. The input's size picks the form, byte order and compression of the
 * round trip, so that the input itself stays plain text. */
#include "fuzz_refs.h"

#include "laplace/inbuf.h"

/* The text reader's verdict on the first line alone: 1 valid, 0 not. */
static int first_record_reads(const char *path)
{
	lp_error err;
	lp_ref_reader *r = lp_ref_reader_open(path, LP_REF_TEXT, LP_LITTLE, &err);
	FUZZ_CHECK(r);
	lp_ref ref;
	ssize_t n = lp_ref_reader_read(r, &ref, 1, &err);
	lp_ref_reader_close(r);
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	bool plain = !fuzz_compressed(data, size);
	GArray *refs = g_array_new(FALSE, FALSE, sizeof(lp_ref));
	enum lp_ref_format detected;
	size_t torn;
	int rc = fuzz_read_refs(path, LP_REF_TEXT, LP_LITTLE, refs, &detected, &torn);
	if (rc == 0 && plain)
		check_lines(data, size, refs->len);

	/* 1.3: the first line, when it ends within 64 bytes, decides alone. */
	if (plain) {
		const uint8_t *nl = memchr(data, '\n', MIN(size, (size_t)LP_REF_SNIFF_BYTES + 1));
		size_t first = nl ? (size_t)(nl - data) : size;
		if (first <= LP_REF_SNIFF_BYTES) {
			lp_error err;
			lp_ref_reader *r = lp_ref_reader_open(path, LP_REF_AUTO, LP_LITTLE, &err);
			FUZZ_CHECK(r);
			detected = lp_ref_reader_format(r);
			lp_ref_reader_close(r);
			FUZZ_CHECK((detected == LP_REF_TEXT) == first_record_reads(path));
		}
	}

	enum lp_ref_format form = size & 1 ? LP_REF_BIN : LP_REF_TEXT;
	enum lp_endian endian = size & 2 ? LP_BIG : LP_LITTLE;
	enum lp_compress compress = (size & 12) == 12 ? (size & 16 ? LP_COMPRESS_GZIP : LP_COMPRESS_ZSTD)
						      : LP_COMPRESS_NONE;
	free(fuzz_round_trip(refs, form, endian, compress));
	g_array_free(refs, TRUE);
	return 0;
}
