/* libFuzzer target: the page-image reader and everything built on it:
 * format detection, text dump, validation, re-reduction to larger
 * memories and conversion to a reference stream. Each input is tried as
 * it is, and expanded: every 10 bytes (tag, page, dirt, evicted page)
 * become a record with 4096-byte images, so that short inputs reach the
 * LRU logic. The last byte chooses the memory size. */
#include "fuzz_input.h"

#include <stdbool.h>
#include <string.h>

#include "formats/legacy.h"
#include "formats/registry.h"
#include "analysis/lru.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void ignore(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
}

static void run_all(const char *path, uint32_t frames, bool strict, bool text)
{
	lp_torn_policy policy = {.strict = strict, .warn = ignore};
	lp_error err;
	lp_byte_source *src = lp_byte_source_open(path, &err);
	if (!src)
		abort();
	bool failed;
	lp_format_detect(src, &failed, &err);
	lp_legacy_dump(src, LP_FORMAT_PAGE_IMAGE, LP_LITTLE, &policy, fuzz_sink(), &err);

	lp_pi_validation res;
	if (!(src = lp_byte_source_open(path, &err)))
		abort();
	lp_pi_validate(src, ignore, NULL, &res, &err);

	if (!(src = lp_byte_source_open(path, &err)))
		abort();
	lp_pi_reduce_trace(src, frames, text, &policy, fuzz_sink(), &err);

	if (!(src = lp_byte_source_open(path, &err)))
		abort();
	lp_pi_to_basic(src, &policy, fuzz_sink(), &err);
}

#define COMPACT 10
#define MAX_RECORDS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t frames = size ? 1 + data[size - 1] % 8 : 1;
	bool text = size && data[size - 1] & 8;
	run_all(fuzz_file(data, size), frames, size & 1, text);

	static uint8_t expanded[MAX_RECORDS * LP_PI_LONG_RECORD];
	size_t len = 0;
	for (size_t at = 0; at + COMPACT <= size && at / COMPACT < MAX_RECORDS; at += COMPACT) {
		const uint8_t *c = data + at;
		memcpy(expanded + len, c, 5);
		memset(expanded + len + 5, c[0], LP_PAGE_BYTES);
		len += 5 + LP_PAGE_BYTES;
		memcpy(expanded + len, c + 5, 5);
		len += 5;
		if (c[5] != 'N') {
			memset(expanded + len, c[5], LP_PAGE_BYTES);
			len += LP_PAGE_BYTES;
		}
	}
	run_all(fuzz_file(expanded, len), frames, false, text);
	return 0;
}
