/* libFuzzer target: the decoder of the recorder's streams followed while
 * a recording runs (lp_record_decoder_step, src/record/decode.c; the clock
 * page and its slots in src/record/tool/README). The input's first 4096
 * bytes (zero-filled when shorter) are the clock page, the rest the one
 * stream of the recording: two steps while it runs, then the last.
 * Checks: each step ends, with success or an input or I/O failure whose
 * message is not empty, and nothing is merged after a failure. */
#include "fuzz_input.h"

#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "record/decode.h"

#define CLOCK_SIZE 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *dir;
	if (!dir)
		dir = g_dir_make_tmp("fuzz-follow-XXXXXX", NULL);
	FUZZ_CHECK(dir);
	uint8_t clock[CLOCK_SIZE] = {0};
	size_t head = MIN(size, (size_t)CLOCK_SIZE);
	memcpy(clock, data, head);
	char *clock_path = g_build_filename(dir, "clock", NULL);
	char *stream = g_build_filename(dir, "1.lps", NULL);
	FUZZ_CHECK(g_file_set_contents(clock_path, (const char *)clock, CLOCK_SIZE, NULL));
	FUZZ_CHECK(g_file_set_contents(stream, (const char *)data + head, (gssize)(size - head), NULL));
	lp_error err = {0};
	lp_output *ref = lp_output_open("/dev/null", LP_COMPRESS_NONE, &err);
	lp_output *kern = lp_output_open("/dev/null", LP_COMPRESS_NONE, &err);
	FUZZ_CHECK(ref && kern);
	lp_record_summary sum;
	lp_record_decoder *dec = lp_record_decoder_new(dir, ref, kern, &sum);
	int rc = 0;
	for (int step = 0; step < 3 && rc == 0; step++)
		rc = lp_record_decoder_step(dec, step == 2, NULL, &err);
	FUZZ_CHECK(rc == 0 || ((rc == LP_EINPUT || rc == LP_EIO) && rc == err.status && err.msg[0]));
	lp_record_decoder_free(dec);
	lp_record_summary_clear(&sum);
	lp_output_abort(ref);
	lp_output_abort(kern);
	g_unlink(stream);
	g_unlink(clock_path);
	g_free(stream);
	g_free(clock_path);
	return 0;
}
