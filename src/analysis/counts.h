/* What `laplace stat` counts (laplace-stat(1)) of a per-process directory;
 * a basic merge stream's counts are reuse.h's, a capture's statistics a
 * merge's (pipeline/job.h, lp_merge_stats_only). */
#ifndef LAPLACE_COUNTS_H
#define LAPLACE_COUNTS_H

#include <stdint.h>

#include "core/error.h"
#include "formats/procindex.h"

typedef struct lp_dir_counts {
	lp_index *ix;                   /* index.yaml, every file counted */
	uint64_t tasks, records, references; /* in all */
	uint64_t *records_of, *references_of; /* per process: its tasks' */
} lp_dir_counts;

/* Read DIR/index.yaml and count what it does not give (lp_index_count).
 * 0, or an lp_status with err set. */
int lp_dir_counts_read(const char *dir, lp_dir_counts *c, lp_error *err);
void lp_dir_counts_clear(lp_dir_counts *c);

#endif
