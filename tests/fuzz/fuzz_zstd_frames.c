/* libFuzzer target: zstd input cut into frames for worker threads
 * (src/io/input.c). The bytes are the file. It is read through the
 * threaded input (frames that give their size on workers, the rest as a
 * stream) and through a one-thread input (lp_input_open_sized: a stream
 * only). Checks: when the stream reads to the end, the threaded read does
 * too, with the same bytes; when both fail, with the same status. (The
 * threaded read may succeed where the stream fails: a frame decoded whole
 * needs no window, and zstd's stream refuses some windows.) */
#include "fuzz_input.h"

#include <glib.h>

/* Everything path holds through in, read 4093 bytes at a time; status set. */
static GByteArray *read_all(lp_input *in, int *status)
{
	GByteArray *got = g_byte_array_new();
	lp_error err = {0};
	*status = 0;
	if (!in) {
		*status = -1;
		return got;
	}
	char buf[4093];
	ssize_t r;
	while ((r = lp_input_read(in, buf, sizeof buf, &err)) > 0)
		g_byte_array_append(got, (guint8 *)buf, (guint)r);
	if (r < 0)
		*status = err.status;
	lp_input_close(in);
	return got;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	lp_error err;
	int threaded_status, stream_status;
	GByteArray *threaded = read_all(lp_input_open(path, &err), &threaded_status);
	GByteArray *stream = read_all(lp_input_open_sized(path, 32768, &err), &stream_status);
	FUZZ_CHECK(threaded_status != -1 && stream_status != -1);
	if (stream_status == 0) {
		FUZZ_CHECK(threaded_status == 0);
		FUZZ_CHECK(threaded->len == stream->len);
		FUZZ_CHECK(!stream->len || memcmp(threaded->data, stream->data, stream->len) == 0);
	} else if (threaded_status != 0) {
		FUZZ_CHECK(threaded_status == stream_status);
	}
	g_byte_array_unref(threaded);
	g_byte_array_unref(stream);
	return 0;
}
