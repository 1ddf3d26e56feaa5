/* libFuzzer target: the 64-bit binary form of raw reference traces
 * (section 10.1). The first byte chooses whether the LPREF64 header is
 * put before the rest (bit 0; else the rest must carry one), auto
 * detection instead of --ref-format bin (bit 1), a text round trip
 * besides the binary one (bit 2) and compression of the round trips (bits
 * 3-4); the rest is the trace. Checks on plain input: a file shorter than
 * the header, or with another version byte, is refused naming the field;
 * else each record decodes as the format's table says (little-endian,
 * whatever --endian); a trace that reads to the end has (size - 8) / 26
 * records and (size - 8) % 26 torn bytes, and no bad type byte; a failed
 * read names the first bad type byte's record; writing the records gives
 * back the header and the whole records byte for byte; narrowing them to
 * the 32-bit forms refuses the first vas or address past 32 bits, or
 * keeps every reference. */
#include "fuzz_refs.h"

#include <inttypes.h>

static uint64_t get(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void check_decoding(const uint8_t *records, size_t size, const GArray *refs)
{
	for (size_t i = 0; i < refs->len; i++) {
		const uint8_t *p = records + i * LP_REF64_RECORD_SIZE;
		const lp_ref *ref = &g_array_index(refs, lp_ref, i);
		FUZZ_CHECK((i + 1) * LP_REF64_RECORD_SIZE <= size);
		FUZZ_CHECK(ref->type == (char)p[0]);
		FUZZ_CHECK(ref->timestamp == get(p + 1, 8));
		FUZZ_CHECK(ref->length == p[9]);
		FUZZ_CHECK(ref->vas == get(p + 10, 8));
		FUZZ_CHECK(ref->address == get(p + 18, 8));
	}
}

/* The message of the first failing read of path, as binary. */
static char *failure(const char *path, enum lp_endian endian)
{
	lp_error err;
	lp_ref_source *r = lp_ref_open(path, LP_REF_BIN, endian, &err);
	if (!r)
		return g_strdup(err.msg);
	static lp_ref buf[1024];
	ssize_t n;
	while ((n = lp_ref_source_read(r, buf, 1024, &err)) > 0)
		;
	lp_ref_source_close(r);
	return n < 0 ? g_strdup(err.msg) : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	uint8_t opt = data[0];
	GByteArray *trace = g_byte_array_new();
	if (opt & 1)
		g_byte_array_append(trace, (const guint8 *)LP_REF64_HEADER, LP_REF64_HEADER_SIZE);
	g_byte_array_append(trace, data + 1, (guint)(size - 1));
	const uint8_t *body = trace->data;
	size = trace->len;
	enum lp_endian endian = opt & 0x20 ? LP_BIG : LP_LITTLE;
	enum lp_ref_format format = opt & 2 ? LP_REF_AUTO : LP_REF_BIN;
	enum lp_compress compress = (opt >> 3 & 3) == 1 ? LP_COMPRESS_GZIP
				  : (opt >> 3 & 3) == 2 ? LP_COMPRESS_ZSTD : LP_COMPRESS_NONE;
	const char *path = fuzz_file(body, size);

	GArray *refs = g_array_new(FALSE, FALSE, sizeof(lp_ref));
	enum lp_ref_format detected = LP_REF_BIN;
	size_t torn = 0;
	int rc = fuzz_read_refs(path, format, endian, refs, &detected, &torn);
	bool headed = size >= LP_REF64_MAGIC_SIZE && !memcmp(body, LP_REF64_MAGIC, LP_REF64_MAGIC_SIZE);
	if (!fuzz_compressed(body, size) && headed) {
		char *msg = failure(path, endian);
		if (size < LP_REF64_HEADER_SIZE) {
			FUZZ_CHECK(rc < 0 && msg && strstr(msg, ": header (byte 7): field version: missing"));
		} else if (body[LP_REF64_MAGIC_SIZE] != 1) {
			FUZZ_CHECK(rc < 0 && msg && strstr(msg, ": header (byte 7): field version: "));
		} else {
			const uint8_t *records = body + LP_REF64_HEADER_SIZE;
			size_t rest = size - LP_REF64_HEADER_SIZE, whole = rest / LP_REF64_RECORD_SIZE;
			FUZZ_CHECK(detected == LP_REF_BIN && fuzz_width == 64);
			check_decoding(records, rest, refs);
			size_t first_bad = 0;
			while (first_bad < whole && records[first_bad * LP_REF64_RECORD_SIZE] &&
			       strchr("rwiRWI", records[first_bad * LP_REF64_RECORD_SIZE]))
				first_bad++;
			if (rc == 0) {
				FUZZ_CHECK(refs->len == whole && torn == rest % LP_REF64_RECORD_SIZE);
				FUZZ_CHECK(first_bad == whole && !msg);
			} else {
				char want[64];
				snprintf(want, sizeof want, ": record %zu: field type", first_bad);
				FUZZ_CHECK(first_bad < whole && refs->len <= first_bad);
				FUZZ_CHECK(msg && strstr(msg, want));
			}
			char *copy = fuzz_round_trip(refs, LP_REF_BIN, 64, endian, compress);
			if (compress == LP_COMPRESS_NONE) {
				gchar *text;
				gsize len;
				FUZZ_CHECK(g_file_get_contents(copy, &text, &len, NULL));
				FUZZ_CHECK(len == LP_REF64_HEADER_SIZE + refs->len * LP_REF64_RECORD_SIZE &&
					   !memcmp(text, body, len));
				g_free(text);
			}
			free(copy);
			if (opt & 4)
				free(fuzz_round_trip(refs, LP_REF_TEXT, 64, endian, compress));
			fuzz_narrow(refs, opt & 0x40 ? LP_REF_TEXT : LP_REF_BIN);
		}
		g_free(msg);
	}
	g_array_free(refs, TRUE);
	g_byte_array_free(trace, TRUE);
	return 0;
}
