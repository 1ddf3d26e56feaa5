/* libFuzzer target: the 64-bit text form of raw reference traces (section
 * 10.1). The input is the trace after its first line, '#laplace-ref 64'
 * put before it, or, when the input starts with "#laplace" or is gzip or
 * zstd compressed, the whole trace (its first line then decides the form). Checks: a trace whose
 * first line is the header (trailing '\r's and spaces aside) is read as
 * the 64-bit text form, any other as the 32-bit one; read to the end, it
 * has one record per line after the first and no line over 4096 bytes;
 * cut into chunks of lines and parsed apart (merge -j's way), it reads the
 * same references and fails with the same message, naming the same line;
 * what was read survives the 64-bit writers, compressed or not, and
 * narrowing to the 32-bit forms refuses the first vas or address past 32
 * bits or keeps every reference. The input's size picks the form and
 * compression of the round trip. */
#include "fuzz_refs.h"

#include "io/inbuf.h"

/* Whether the trace's first line is the header. */
static bool headed(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t len = nl ? (size_t)(nl - data) : size;
	while (len > 0 && (data[len - 1] == ' ' || data[len - 1] == '\r'))
		len--;
	return len == strlen(LP_REF64_TEXT_HEADER) && !memcmp(data, LP_REF64_TEXT_HEADER, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	GByteArray *trace = g_byte_array_new();
	if (!fuzz_compressed(data, size) && (size < 8 || memcmp(data, "#laplace", 8)))
		g_byte_array_append(trace, (const guint8 *)LP_REF64_TEXT_HEADER "\n",
				    (guint)strlen(LP_REF64_TEXT_HEADER "\n"));
	g_byte_array_append(trace, data, (guint)size);
	const char *path = fuzz_file(trace->data, trace->len);
	bool plain = !fuzz_compressed(trace->data, trace->len);
	GArray *refs = g_array_new(FALSE, FALSE, sizeof(lp_ref));
	enum lp_ref_format detected;
	size_t torn;
	int rc = fuzz_read_refs(path, LP_REF_TEXT, LP_LITTLE, refs, &detected, &torn);
	if (plain && headed(trace->data, trace->len)) {
		FUZZ_CHECK(fuzz_width == 64 || rc < 0);
		lp_error err;
		lp_ref_source *auto_read = lp_ref_open(path, LP_REF_AUTO, LP_LITTLE, &err);
		FUZZ_CHECK(!auto_read == (rc < 0 && !fuzz_width));
		if (auto_read) {
			FUZZ_CHECK(lp_ref_reader_format(auto_read) == LP_REF_TEXT &&
				   lp_ref_source_width(auto_read) == 64);
			lp_ref_source_close(auto_read);
		}
		if (rc == 0)
			fuzz_check_lines(trace->data, trace->len, refs->len, 1);
		fuzz_check_chunks(path, refs, rc == 0, 64);
		enum lp_ref_format form = size & 1 ? LP_REF_BIN : LP_REF_TEXT;
		enum lp_compress compress = (size & 6) == 6 ? (size & 8 ? LP_COMPRESS_GZIP
								       : LP_COMPRESS_ZSTD)
							    : LP_COMPRESS_NONE;
		free(fuzz_round_trip(refs, form, 64, LP_LITTLE, compress));
		fuzz_narrow(refs, size & 16 ? LP_REF_BIN : LP_REF_TEXT);
	} else if (plain) {
		FUZZ_CHECK(!fuzz_width || fuzz_width == 32);
	}
	g_array_free(refs, TRUE);
	g_byte_array_free(trace, TRUE);
	return 0;
}
