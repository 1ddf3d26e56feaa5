/* libFuzzer target: the p6 reader, its text dump (checked against the
 * seed's printf format) and its conversion to raw references. */
#include "fuzz_input.h"

#include <string.h>

#include "formats/legacy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	lp_torn_policy policy = {.strict = size & 1};
	lp_error err;

	/* every record prints as the seed's printf would print it */
	lp_byte_source *src = lp_byte_source_open(path, &err);
	if (!src)
		abort();
	lp_p6_reader *r = lp_record_reader_new(src, LP_BIG);
	lp_p6_record recs[64];
	ssize_t n;
	while ((n = lp_p6_reader_read(r, recs, 64, &policy, &err)) > 0)
		for (ssize_t i = 0; i < n; i++) {
			char ours[LP_P6_LINE_MAX], seed[64];
			size_t len = lp_p6_format(ours, &recs[i], 1);
			int want = snprintf(seed, sizeof seed, "%08x %02x %s\n", (unsigned)recs[i].addr,
					    recs[i].be, lp_p6_op_names[recs[i].control >> 4]);
			if ((size_t)want != len || memcmp(ours, seed, len))
				abort();
		}
	lp_record_reader_close(r);

	if (!(src = lp_byte_source_open(path, &err)))
		abort();
	lp_ref_writer *w = lp_ref_text_writer_new(fuzz_sink(), LP_LITTLE);
	lp_legacy_summary sum;
	if (lp_legacy_to_refs(src, LP_FORMAT_P6, LP_BIG, &policy, w, &sum, &err) == 0)
		lp_ref_writer_finish(w, &err);
	else
		lp_ref_writer_free(w);
	return 0;
}
