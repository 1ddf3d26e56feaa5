/* libFuzzer target: index.yaml of a per-process directory read back
 * (lp_index_read reads DIR/index.yaml: the directory is made once, the
 * file rewritten for each input). Checks on an index that reads: every
 * task and the kernel file have a path, no counted file has more
 * references than records, a file not counted has no counts; program
 * lists, when given, end. */
#include "fuzz_input.h"

#include <errno.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "formats/procindex.h"

static void check_file(const lp_index_file *f, bool need_path)
{
	FUZZ_CHECK(!need_path || f->path);
	FUZZ_CHECK(f->references <= f->records);
	FUZZ_CHECK(f->counted || !f->records);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *dir;
	if (!dir) {
		dir = fuzz_dir_path_of("ix");
		if (mkdir(dir, 0700) && errno != EEXIST)
			abort();
	}
	free(fuzz_dir_file("ix/index.yaml", data, size));
	lp_error err;
	lp_index *ix = lp_index_read(dir, &err);
	if (!ix) {
		FUZZ_CHECK(err.status == LP_EINPUT);
		/* The manifest's fault, or the directory's: no kernel file. */
		FUZZ_CHECK(strstr(err.msg, "index.yaml") || strstr(err.msg, ": no kernel file ("));
		return 0;
	}
	for (size_t i = 0; i < ix->nprocesses; i++) {
		const lp_index_process *p = &ix->processes[i];
		for (char **prog = p->programs; prog && *prog; prog++)
			FUZZ_CHECK(strlen(*prog) < size);
		FUZZ_CHECK(p->ntasks == 0 || p->tasks);
		for (size_t t = 0; t < p->ntasks; t++)
			check_file(&p->tasks[t].file, true);
	}
	check_file(&ix->kernel, true);
	check_file(&ix->orphan, false);
	lp_index_free(ix);
	return 0;
}
