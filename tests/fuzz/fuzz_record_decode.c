/* libFuzzer target: the decoder of the recorder's streams
 * (src/record/decode.c, format in src/record/tool/README), given the input
 * as the one stream of a recording. Checks: it ends, with success or an
 * input or I/O failure whose message is not empty; nothing it writes
 * (to /dev/null) is read back. */
#include "fuzz_input.h"

#include <glib.h>
#include <glib/gstdio.h>

#include "record/decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *dir;
	if (!dir)
		dir = g_dir_make_tmp("fuzz-record-XXXXXX", NULL);
	FUZZ_CHECK(dir);
	char *stream = g_build_filename(dir, "1.lps", NULL);
	FUZZ_CHECK(g_file_set_contents(stream, (const char *)data, (gssize)size, NULL));
	lp_error err = {0};
	lp_output *ref = lp_output_open("/dev/null", LP_COMPRESS_NONE, &err);
	lp_output *kern = lp_output_open("/dev/null", LP_COMPRESS_NONE, &err);
	FUZZ_CHECK(ref && kern);
	lp_record_summary sum;
	int rc = lp_record_decode(dir, ref, kern, &sum, &err);
	FUZZ_CHECK(rc == 0 || ((rc == LP_EINPUT || rc == LP_EIO) && rc == err.status && err.msg[0]));
	lp_record_summary_clear(&sum);
	lp_output_abort(ref);
	lp_output_abort(kern);
	g_unlink(stream);
	g_free(stream);
	return 0;
}
