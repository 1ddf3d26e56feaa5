/* libFuzzer target: the oracle-general reader (policies.md §6), and its
 * references written again by the oracle-general writer: every whole
 * record is read unless one is refused, and the writer gives one record
 * back for each. */
#include "fuzz_input.h"

#include "formats/oracle.h"

enum { BATCH = 1000 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	lp_error err;
	lp_byte_source *src = lp_byte_source_open(path, &err);
	if (!src)
		abort();
	lp_oracle_reader *r = lp_oracle_reader_new(src);
	lp_oracle_writer *w = lp_oracle_writer_new(0, fuzz_sink());
	static lp_basic_ref refs[BATCH];
	uint64_t n = 0;
	ssize_t k;
	while ((k = lp_oracle_read(r, refs, BATCH, &err)) > 0)
		for (ssize_t i = 0; i < k; i++, n++) {
			FUZZ_CHECK(refs[i].type == 'r');
			FUZZ_CHECK(refs[i].canonical <= LP_ORACLE_CANON_MAX);
			FUZZ_CHECK(lp_oracle_put(w, refs[i].canonical, &err) == 0);
		}
	lp_oracle_reader_close(r);
	/* Read whole: then the bytes were whole records (unless compressed). */
	if (k == 0 && !fuzz_compressed(data, size))
		FUZZ_CHECK(size % LP_ORACLE_RECORD_SIZE == 0 && n == size / LP_ORACLE_RECORD_SIZE);
	FUZZ_CHECK(lp_oracle_finish(w, &err) == 0);
	lp_oracle_writer_free(w);
	return 0;
}
