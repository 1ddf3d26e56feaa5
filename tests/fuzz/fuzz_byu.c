/* libFuzzer target: the BYU reader, its text dump and its conversion to
 * raw references; the input's first byte picks the byte order and
 * whether a torn record is an error. */
#include "fuzz_input.h"

#include "formats/legacy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	enum lp_endian order = size && data[0] & 1 ? LP_BIG : LP_LITTLE;
	lp_torn_policy policy = {.strict = size && data[0] & 2};
	lp_error err;
	lp_byte_source *src = lp_byte_source_open(path, &err);
	if (!src)
		abort();
	lp_legacy_dump(src, LP_FORMAT_BYU, order, &policy, fuzz_sink(), &err);

	if (!(src = lp_byte_source_open(path, &err)))
		abort();
	lp_ref_writer *w = order == LP_BIG ? lp_ref_text_writer_new(fuzz_sink(), LP_LITTLE)
					   : lp_ref_bin_writer_new(fuzz_sink(), LP_LITTLE);
	lp_legacy_summary sum;
	if (lp_legacy_to_refs(src, LP_FORMAT_BYU, order, &policy, w, &sum, &err) == 0) {
		/* Every whole record is a reference or skipped, and not every
		 * one skipped; the count of records follows from the size
		 * unless the input was compressed. */
		if ((!fuzz_compressed(data, size) && sum.records != size / LP_BYU_RECORD_SIZE) ||
		    sum.refs[0] + sum.refs[1] + sum.refs[2] + sum.skipped != sum.records ||
		    (sum.records && sum.skipped == sum.records))
			abort();
		lp_ref_writer_finish(w, &err);
	} else {
		lp_ref_writer_free(w);
	}
	return 0;
}
