/* index.yaml of a per-process merge directory (laplace-merge(1), PER-PROCESS
 * OUTPUT): written by the per-process sink and by laplace index, read back
 * so that counts need not re-read the task files. A manifest written by
 * another tool may give no more than the tasks' paths: what it leaves out
 * is counted from the files (lp_index_count). */
#ifndef LAPLACE_PROCINDEX_H
#define LAPLACE_PROCINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "formats/stats.h"

/* How the references of processes are laid out in files (laplace-formats(5),
 * "PER-PROCESS MERGE OUTPUT"). */
enum lp_layout {
	LP_LAYOUT_TASK,    /* PID/TID: one file per task */
	LP_LAYOUT_PROCESS, /* PID: one file per process, its tasks' records merged */
};
extern const char *const lp_layout_names[2]; /* "task", "process" */

typedef struct lp_index_file {
	char *path;            /* relative to the directory; NULL: no such file */
	uint64_t records;      /* lines: events and references */
	uint64_t references;
	uint64_t first_ts, last_ts; /* meaningful when records > 0 */
	bool counted;          /* the counts are known (else all 0) */
	/* The records the manifest gives for the whole file (a reused
	 * tid's entries, each giving its own, added up; layout task only),
	 * which a reader that reads the file to its end checks
	 * (laplace-formats(5), PER-PROCESS OUTPUT). */
	bool expect_records;
	uint64_t expected_records;
} lp_index_file;

typedef struct lp_index_task {
	uint64_t tid;
	lp_index_file file;
} lp_index_task;

typedef struct lp_index_process {
	uint64_t pid;
	char **programs;       /* NULL-terminated, in the order they ran; NULL: not known */
	lp_index_task *tasks;
	size_t ntasks;
} lp_index_process;

typedef struct lp_index {
	char *reference, *kernel_input; /* the merge's inputs; NULL: not known */
	enum lp_layout layout;
	bool binary;           /* form: bin, the binary task form */
	lp_index_process *processes;
	size_t nprocesses;
	lp_index_file kernel, orphan;
	bool has_stats;        /* the statistics entry was there */
	lp_stats stats;
} lp_index;

/* The largest index.yaml read: about 100000 tasks. libyaml loads a whole
 * document, about ten times the size of its text. */
#define LP_INDEX_MAX_BYTES (16u << 20)

/* Read DIR/index.yaml. Only the tasks' paths must be there: a task's
 * missing pid and tid are its path's (PID/TID, or PID for layout
 * process), a missing kernel or orphan entry the file of that name that
 * DIR holds (plain, .gz or .zst; the kernel's named even when absent).
 * NULL with err set: LP_EIO when it cannot be read, LP_EINPUT when it is
 * not a regular file (a FIFO is refused without blocking), is larger than
 * LP_INDEX_MAX_BYTES or is not a per-process index (line and field
 * named). */
lp_index *lp_index_read(const char *dir, lp_error *err);
/* A file read to its end holds records records: 0, or LP_EINPUT with err
 * set naming path, index and both counts when f expects others. */
int lp_index_check_records(const lp_index_file *f, const char *path, const char *index,
			   uint64_t records, lp_error *err);
/* Count what ix does not give from DIR's files (src/formats/taskdir.c):
 * the records, references and first and last timestamps of every file not
 * counted, and the programs of every process without them (its tasks' E
 * records, in timestamp order). 0, or an lp_status with err set: a file
 * that cannot be read, a line that is not a per-process record, or a
 * process file (layout process) whose tasks' counts are not given. */
int lp_index_count(const char *dir, lp_index *ix, lp_error *err);
void lp_index_free(lp_index *ix);

/* The writer's side: the entries of index.yaml, ix and the merge's
 * statistics, into the top mapping of an lp_yaml_start document (a file's
 * path NULL: it was not made, and no path is written; inputs not known
 * and stats NULL: not written). Every file must be counted. */
int lp_index_emit(yaml_emitter_t *em, const lp_index *ix, const lp_stats *stats);
/* Write index.yaml (lp_index_emit's entries) into the directory dirfd,
 * named dir in messages, and flush it to disk: the per-process sink's last
 * file (src/formats/procdir.c). 0, or LP_EIO with err set. */
int lp_index_write_at(int dirfd, const char *dir, const lp_index *ix, const lp_stats *stats,
		      lp_error *err);

#endif
