/* libFuzzer target: basic merge streams read back ("type canonical" lines,
 * section 4) and the LRU behaviour sequence of one. Checks: each
 * reference has a valid type and the number its line spells; a plain
 * stream read to the end has one reference per line and no line over
 * 4096 bytes. The input's size picks the memory size of the LRU run. */
#include "fuzz_input.h"

#include <stdbool.h>

#include "laplace/inbuf.h"
#include "laplace/legacy.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	bool plain = !fuzz_compressed(data, size);
	lp_error err;
	lp_basic_reader *r = lp_basic_reader_open(path, &err);
	FUZZ_CHECK(r);
	static lp_basic_ref refs[333];
	ssize_t n;
	size_t at = 0;
	while ((n = lp_basic_reader_read(r, refs, 333, &err)) > 0) {
		FUZZ_CHECK(n <= 333);
		for (ssize_t i = 0; i < n; i++) {
			FUZZ_CHECK(lp_ref_type_index(refs[i].type) >= 0);
			if (!plain)
				continue;
			/* Basic streams have no blank or comment lines. */
			FUZZ_CHECK(at < size);
			const uint8_t *nl = memchr(data + at, '\n', size - at);
			size_t len = (nl ? (size_t)(nl - data) : size) - at;
			FUZZ_CHECK(len <= LP_LINE_MAX && data[at] == (uint8_t)refs[i].type);
			FUZZ_CHECK(line_page(data + at, len) == refs[i].page);
			at += len + 1;
		}
	}
	lp_basic_reader_close(r);
	if (n < 0)
		FUZZ_CHECK(err.status == LP_EINPUT || err.status == LP_EIO);
	else if (plain)
		FUZZ_CHECK(at >= size);

	uint64_t frames = 1 + size % 5;
	int rc = lp_lru_basic_trace(path, frames, fuzz_sink(), &err);
	FUZZ_CHECK((rc == 0) == (n == 0));
	return 0;
}
