/* libFuzzer target: the binary form of raw reference traces (section
 * 1.1). The first byte chooses the byte order (bit 0), auto detection
 * instead of binary (bit 1), a text round trip besides the binary one
 * (bit 2) and compression of the round trips (bits 3-4); the rest is the
 * trace. Checks on plain input read as binary: each record decodes as the
 * format's table says; a trace that reads to the end has size / 18
 * records and size % 18 torn bytes, and no bad type byte; a failed read
 * names the first bad type byte's record; writing the records in the same
 * byte order gives back the input's whole records byte for byte. */
#include "fuzz_refs.h"

#include <inttypes.h>

static uint64_t get(const uint8_t *p, int n, bool big)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[big ? n - 1 - i : i] << (8 * i);
	return v;
}

static bool valid_type(uint8_t c)
{
	return c && strchr("rwiRWI", c);
}

static void check_decoding(const uint8_t *body, size_t size, const GArray *refs, bool big)
{
	for (size_t i = 0; i < refs->len; i++) {
		const uint8_t *p = body + i * LP_REF_RECORD_SIZE;
		const lp_ref *ref = &g_array_index(refs, lp_ref, i);
		FUZZ_CHECK((i + 1) * LP_REF_RECORD_SIZE <= size);
		FUZZ_CHECK(ref->type == (char)p[0]);
		FUZZ_CHECK(ref->timestamp == get(p + 1, 8, big));
		FUZZ_CHECK(ref->length == p[9]);
		FUZZ_CHECK(ref->vas == get(p + 10, 4, big));
		FUZZ_CHECK(ref->address == get(p + 14, 4, big));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	uint8_t opt = data[0];
	const uint8_t *body = data + 1;
	size--;
	bool big = opt & 1;
	enum lp_endian endian = big ? LP_BIG : LP_LITTLE;
	enum lp_ref_format format = opt & 2 ? LP_REF_AUTO : LP_REF_BIN;
	enum lp_compress compress = (opt >> 3 & 3) == 1 ? LP_COMPRESS_GZIP
				  : (opt >> 3 & 3) == 2 ? LP_COMPRESS_ZSTD : LP_COMPRESS_NONE;
	const char *path = fuzz_file(body, size);

	GArray *refs = g_array_new(FALSE, FALSE, sizeof(lp_ref));
	enum lp_ref_format detected = LP_REF_BIN;
	size_t torn = 0;
	int rc = fuzz_read_refs(path, format, endian, refs, &detected, &torn);
	/* Input that starts with LPREF64 is the 64-bit form (fuzz_ref64_bin). */
	bool headed = size >= LP_REF64_MAGIC_SIZE && !memcmp(body, LP_REF64_MAGIC, LP_REF64_MAGIC_SIZE);
	unsigned width = fuzz_width ? fuzz_width : 32;
	bool plain_bin = !fuzz_compressed(body, size) && detected == LP_REF_BIN && !headed;
	size_t whole = size / LP_REF_RECORD_SIZE;
	if (plain_bin) {
		check_decoding(body, size, refs, big);
		size_t first_bad = 0;
		while (first_bad < whole && valid_type(body[first_bad * LP_REF_RECORD_SIZE]))
			first_bad++;
		if (rc == 0) {
			FUZZ_CHECK(refs->len == whole && torn == size % LP_REF_RECORD_SIZE);
			FUZZ_CHECK(first_bad == whole);
		} else {
			/* Some records before the bad one may have been read. */
			FUZZ_CHECK(first_bad < whole && refs->len <= first_bad);
			lp_error err;
			lp_ref_source *r = lp_ref_open(path, LP_REF_BIN, endian, &err);
			FUZZ_CHECK(r);
			static lp_ref buf[1024];
			ssize_t n;
			while ((n = lp_ref_source_read(r, buf, 1024, &err)) > 0)
				;
			lp_ref_source_close(r);
			char want[64];
			snprintf(want, sizeof want, ": record %zu: field type", first_bad);
			FUZZ_CHECK(n < 0 && strstr(err.msg, want));
		}
	}

	char *copy = fuzz_round_trip(refs, LP_REF_BIN, width, endian, compress);
	if (plain_bin && compress == LP_COMPRESS_NONE) {
		gchar *text;
		gsize len;
		FUZZ_CHECK(g_file_get_contents(copy, &text, &len, NULL));
		FUZZ_CHECK(len == refs->len * LP_REF_RECORD_SIZE && (!len || !memcmp(text, body, len)));
		g_free(text);
	}
	free(copy);
	if (opt & 4)
		free(fuzz_round_trip(refs, LP_REF_TEXT, width, endian, compress));
	g_array_free(refs, TRUE);
	return 0;
}
