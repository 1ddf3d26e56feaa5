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
		fuzz_check_lines(data, size, refs->len, 0);
	fuzz_check_chunks(path, refs, rc == 0, 0);

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
