/* libFuzzer target: a task file of the binary task form (laplace-formats(5),
 * "PER-PROCESS MERGE OUTPUT": the LPTASK header, 26-byte reference
 * records, K event records). Inputs whose first byte is odd get the
 * header put in front (the rest is records), others are the file as it
 * is (headers of every kind). Checks: the file converted to text either
 * fails with an input error naming the file and a byte offset within it,
 * or converts back to the same bytes; read as a basic stream
 * (lp_basic_read), it gives the text's reference lines, or fails as the
 * conversion did (a file that begins with the header); read as the task
 * file of a per-process directory (lp_taskdir, which also checks that
 * timestamps do not go back), by this thread or parsed ahead by three
 * (and viewed where they were parsed, the file's pages let go as they are
 * read), it gives the same references or the same error, and when it reads the
 * file, the text's reference lines. */
#include "fuzz_input.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>

#include "formats/basicin.h"
#include "formats/taskdir.h"
#include "formats/taskline.h"

/* data[0, size) converted by lp_task_convert into fuzz_dir()/name:
 * 0 with *out (malloc'd) and *out_size set, or the status with err set. */
static int convert(const char *path, bool to_binary, const char *name, uint8_t **out, size_t *out_size,
		   lp_error *err)
{
	char *to = fuzz_dir_path_of(name);
	lp_byte_source *src = lp_byte_source_open(path, err);
	FUZZ_CHECK(src);
	lp_output *o = lp_output_open(to, LP_COMPRESS_NONE, err);
	FUZZ_CHECK(o);
	int rc = lp_task_convert(src, !to_binary, to_binary, NULL, o, err);
	lp_byte_source_close(src);
	if (rc) {
		lp_output_abort(o);
		free(to);
		return rc;
	}
	FUZZ_CHECK(lp_output_commit(o, err) == 0);
	FILE *f = fopen(to, "rb");
	FUZZ_CHECK(f);
	fseek(f, 0, SEEK_END);
	*out_size = (size_t)ftell(f);
	rewind(f);
	*out = malloc(*out_size + 1);
	FUZZ_CHECK(fread(*out, 1, *out_size, f) == *out_size);
	fclose(f);
	free(to);
	return 0;
}

/* References in the text of a task file: its lines that are not events. */
static uint64_t reference_lines(const uint8_t *text, size_t size)
{
	uint64_t n = 0;
	for (size_t at = 0; at < size;) {
		const uint8_t *nl = memchr(text + at, '\n', size - at);
		FUZZ_CHECK(nl);
		n += !(nl - (text + at) >= 2 && text[at + 1] == ' ' && strchr(lp_tag_chars, text[at]));
		at = (size_t)(nl - text) + 1;
	}
	return n;
}

/* The directory td: index.yaml with form: bin, a kernel file of the
 * header alone, and the task file 1/1 of data[0, size). */
static char *task_dir(const uint8_t *data, size_t size)
{
	static const char index_yaml[] = "form: bin\nprocesses:\n- tasks: [{path: 1/1}]\n";
	char *dir = fuzz_dir_path_of("td"), *sub = fuzz_dir_path_of("td/1");
	if ((mkdir(dir, 0700) && errno != EEXIST) || (mkdir(sub, 0700) && errno != EEXIST))
		abort();
	free(sub);
	free(fuzz_dir_file("td/index.yaml", (const uint8_t *)index_yaml, sizeof index_yaml - 1));
	free(fuzz_dir_file("td/kernel", (const uint8_t *)LP_TASK_BIN_HEADER, LP_TASK_BIN_HEADER_SIZE));
	free(fuzz_dir_file("td/1/1", data, size));
	return dir;
}

/* The references of stream 1 (the task file, read whole) of directory
 * dir, read with threads (more than one: through the source's view, the
 * pages of the file let go as they are read): 0 with *count and *hash
 * set, or the status of the error in err. */
static int read_task_dir(const char *dir, unsigned threads, uint64_t *count, uint64_t *hash, lp_error *err)
{
	lp_taskdir_options opt = {.max_open = 1, .threads = threads, .slice = 2, .map_hold = threads > 1};
	lp_taskdir *t = lp_taskdir_open(dir, &opt, err);
	if (!t)
		return err->status;
	const lp_sched_input *in = lp_taskdir_input(t);
	*count = 0;
	*hash = UINT64_C(0xcbf29ce484222325);
	int rc = 0;
	for (;;) {
		lp_sched_ref batch[5];
		const lp_sched_ref *refs = batch;
		lp_sched_event ev;
		ssize_t n = threads > 1 ? in->source.view(in->source.ctx, 1, &refs, 5, &ev, err)
					: in->source.read(in->source.ctx, 1, batch, 5, UINT64_MAX, &ev, err);
		if (n < 0) {
			rc = err->status;
			break;
		}
		for (ssize_t i = 0; i < n; i++)
			*hash = (*hash ^ refs[i].canonical ^ refs[i].timestamp ^ (uint64_t)refs[i].type) *
				UINT64_C(0x100000001b3);
		*count += (uint64_t)n;
		if (!n && ev.tag == LP_SCHED_END)
			break;
	}
	lp_taskdir_close(t);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool with_header = size && data[0] & 1;
	size_t file_size = size - (size > 0) + (with_header ? LP_TASK_BIN_HEADER_SIZE : 0);
	uint8_t *file = malloc(file_size + 1);
	if (with_header)
		memcpy(file, LP_TASK_BIN_HEADER, LP_TASK_BIN_HEADER_SIZE);
	if (size)
		memcpy(file + (with_header ? LP_TASK_BIN_HEADER_SIZE : 0), data + 1, size - 1);
	if (fuzz_compressed(file, file_size)) {
		free(file);
		return 0;
	}
	char *path = fuzz_dir_file("task", file, file_size);

	lp_error err = {0};
	uint8_t *text = NULL, *back = NULL;
	size_t text_size = 0, back_size = 0;
	int rc = convert(path, false, "task.txt", &text, &text_size, &err);
	if (rc) {
		FUZZ_CHECK(rc == LP_EINPUT && err.status == LP_EINPUT);
		FUZZ_CHECK(strncmp(err.msg, path, strlen(path)) == 0);
		const char *at = strstr(err.msg, ": byte ");
		FUZZ_CHECK(at);
		FUZZ_CHECK(strtoull(at + 7, NULL, 10) <= file_size);
	} else {
		char *text_path = fuzz_dir_path_of("task.txt");
		FUZZ_CHECK(convert(text_path, true, "task.bin", &back, &back_size, &err) == 0);
		FUZZ_CHECK(back_size == file_size && memcmp(back, file, file_size) == 0);
		free(text_path);
	}

	/* Without the header, a basic reader takes the file as text. */
	if (file_size < LP_TASK_BIN_MAGIC_SIZE || memcmp(file, LP_TASK_BIN_HEADER, LP_TASK_BIN_MAGIC_SIZE))
		goto out;
	lp_basic_reader *r = lp_basic_open(path, &err);
	uint64_t refs = 0;
	int read_rc = 0;
	if (!r) {
		read_rc = err.status;
	} else {
		lp_basic_ref batch[64];
		ssize_t n;
		while ((n = lp_basic_read(r, batch, 64, &err)) > 0)
			refs += (uint64_t)n;
		read_rc = n < 0 ? err.status : 0;
		lp_basic_close(r);
	}
	FUZZ_CHECK(!rc == !read_rc);
	if (!rc)
		FUZZ_CHECK(refs == reference_lines(text, text_size));

	char *dir = task_dir(file, file_size);
	lp_error err1 = {0}, err3 = {0};
	uint64_t count1, hash1, count3, hash3;
	int rc1 = read_task_dir(dir, 1, &count1, &hash1, &err1);
	int rc3 = read_task_dir(dir, 3, &count3, &hash3, &err3);
	FUZZ_CHECK(rc1 == rc3);
	FUZZ_CHECK(rc1 ? strcmp(err1.msg, err3.msg) == 0 : count1 == count3 && hash1 == hash3);
	FUZZ_CHECK(!rc1 || rc1 == LP_EINPUT);
	/* The directory refuses more (timestamps going back), never less. */
	FUZZ_CHECK(!rc || rc1);
	if (!rc1)
		FUZZ_CHECK(count1 == reference_lines(text, text_size));
	free(dir);
out:
	free(text);
	free(back);
	free(path);
	free(file);
	return 0;
}
