/* libFuzzer target: basic merge streams read back ("type canonical" lines,
 * section 4, or the binary form of section 8) and the LRU behaviour
 * sequence of one. Checks: each reference has a valid type and the number
 * its line or word spells; a plain stream read to the end has one
 * reference per line and no line over 4096 bytes, or one per 8-byte word
 * after the header. The input's size picks the memory size of the LRU
 * run. */
#include "fuzz_input.h"

#include <stdbool.h>

#include "laplace/inbuf.h"
#include "laplace/legacy.h"
#include "laplace/lru.h"

#define BIN_HEADER "LPBASIC\x01"

/* The page a well-formed line spells, parsed here independently. */
static uint64_t line_page(const uint8_t *line, size_t len)
{
	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\r'))
		len--;
	FUZZ_CHECK(len >= 3 && line[1] == ' ');
	uint64_t v = 0;
	for (size_t i = 2; i < len; i++) {
		int c = line[i] | 0x20;
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		FUZZ_CHECK(d >= 0 && !(v >> 60));
		v = v << 4 | (uint64_t)d;
	}
	return v;
}

/* The reference a word of the binary form spells. */
static void check_word(const uint8_t *p, const lp_basic_ref *ref)
{
	uint64_t w = 0;
	for (int k = 7; k >= 0; k--)
		w = w << 8 | p[k];
	FUZZ_CHECK(w >> 61 < 6 && "rwiRWI"[w >> 61] == ref->type);
	FUZZ_CHECK((w & ((UINT64_C(1) << 61) - 1)) == ref->canonical);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	bool plain = !fuzz_compressed(data, size);
	bool binary = size >= 7 && !memcmp(data, BIN_HEADER, 7);
	lp_error err;
	uint64_t frames = 1 + size % 5;
	lp_basic_reader *r = lp_basic_open(path, &err);
	/* Only a header of another version, or corrupt compressed data, is
	 * refused at once. */
	FUZZ_CHECK(!r == (plain && binary && (size < 8 || data[7] != 1)) || (!r && !plain));
	if (!r) {
		FUZZ_CHECK(err.status == LP_EINPUT || err.status == LP_EIO);
		FUZZ_CHECK(lp_lru_basic_trace(path, frames, fuzz_sink(), &err) != 0);
		return 0;
	}
	static lp_basic_ref refs[333];
	ssize_t n;
	size_t at = binary ? 8 : 0;
	while ((n = lp_basic_read(r, refs, 333, &err)) > 0) {
		FUZZ_CHECK(n <= 333);
		for (ssize_t i = 0; i < n; i++) {
			FUZZ_CHECK(lp_ref_type_index(refs[i].type) >= 0);
			if (!plain)
				continue;
			if (binary) {
				FUZZ_CHECK(at + 8 <= size);
				check_word(data + at, &refs[i]);
				at += 8;
				continue;
			}
			/* Basic streams have no blank or comment lines. */
			FUZZ_CHECK(at < size);
			const uint8_t *nl = memchr(data + at, '\n', size - at);
			size_t len = (nl ? (size_t)(nl - data) : size) - at;
			FUZZ_CHECK(len <= LP_LINE_MAX && data[at] == (uint8_t)refs[i].type);
			FUZZ_CHECK(line_page(data + at, len) == refs[i].canonical);
			at += len + 1;
		}
	}
	lp_basic_close(r);
	if (n < 0)
		FUZZ_CHECK(err.status == LP_EINPUT || err.status == LP_EIO);
	else if (plain)
		FUZZ_CHECK(at >= size);

	int rc = lp_lru_basic_trace(path, frames, fuzz_sink(), &err);
	FUZZ_CHECK((rc == 0) == (n == 0));
	return 0;
}
