/* A per-process merge directory (laplace-formats(5), "PER-PROCESS MERGE
 * OUTPUT") read for re-scheduling ("RE-SCHEDULING"): its files, its units, and their records as
 * the streams of an lp_sched_source. Task files are streamed with small
 * buffers, and at most a fixed number of them is open at once: a stream
 * whose file was closed is reopened where it stopped. */
#ifndef LAPLACE_TASKDIR_H
#define LAPLACE_TASKDIR_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "core/units.h"

typedef struct lp_taskdir lp_taskdir;

/* Task files open at once, at most: enough to keep many streams going,
 * few enough to leave descriptors to the rest of the run. */
#define LP_TASKDIR_MAX_OPEN 64

typedef struct lp_taskdir_options {
	bool unit_streams; /* stream u is unit u (rr, random); else file f (as-traced) */
	bool user_only;    /* leave kernel references (R W I) out */
	unsigned max_open; /* files open at once, at least 1 */
	unsigned threads;  /* > 1: files parsed ahead of the engine by this many
			      threads (and searched for units in parallel) */
	uint64_t slice;    /* with threads, references to parse ahead of a
			      stream the engine will read soon: the quantum */
	bool search_only;  /* threads search the files for units, and parse
			      nothing ahead (a directory to share) */
	uint64_t map_hold; /* task files (in bytes) that stay mapped from the
			      search for units to the schedule; a larger
			      directory's pages are let go once read. 0: a
			      quarter of the memory */
} lp_taskdir_options;

/* Read dir/index.yaml (layout task only), check that every listed file
 * exists, and find the units of every task file by reading it once
 * (its first record and the records after each X of its task). NULL with
 * err set: LP_EINPUT for a directory that is not a complete per-process
 * merge (file and line named), LP_EIO when a file cannot be read. */
lp_taskdir *lp_taskdir_open(const char *dir, const lp_taskdir_options *opt, lp_error *err);
/* Another reading of t's directory, from the start of every unit: its
 * own streams (and at most max_open files open), t's files, mappings and
 * units, which it only reads, so that shares of one t run side by side
 * on threads of their own (laplace schedule's sweep: the directory read
 * and searched for units once, mapped once). t must have unit_streams
 * and no threads parsing ahead (one, or search_only), and is not read
 * itself. The end of a share's unit lets
 * none of its mapped pages go, which the other shares may still read
 * (unless the directory is too large to stay mapped). Close every share
 * before t. */
lp_taskdir *lp_taskdir_share(lp_taskdir *t, unsigned max_open);
/* The engine's input: units, files and the source of their records. */
const lp_sched_input *lp_taskdir_input(lp_taskdir *t);
/* Every file the run reads, index.yaml included (to refuse an output
 * that would overwrite one); NULL-terminated. */
const char *const *lp_taskdir_paths(const lp_taskdir *t);
void lp_taskdir_close(lp_taskdir *t);

#endif
