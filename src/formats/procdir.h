/* The per-process merge output's writer (laplace-formats(5), "PER-PROCESS
 * MERGE OUTPUT"): the merge's sink writing one file per task, kernel,
 * orphan and index.yaml. Its readers: formats/taskdir.h (the task files)
 * and formats/procindex.h (index.yaml, written there too). */
#ifndef LAPLACE_PROCDIR_H
#define LAPLACE_PROCDIR_H

#include <stdbool.h>

#include "core/error.h"
#include "io/io.h"
#include "io/staging.h"
#include "formats/procindex.h"
#include "formats/stream.h"

/* The directory is staged as DIR.partial-XXXXXX; finish() writes
 * index.yaml and flushes the tree to disk; lp_procdir_release() hands it
 * over for publication (replacing an existing DIR only when force was
 * given). */
typedef struct lp_procdir_inputs {
	const char *reference; /* input names recorded in index.yaml */
	const char *kernel;
} lp_procdir_inputs;
typedef struct lp_procdir lp_procdir;
/* The directory dir, in parent_fd as lp_stage_dir takes it; its files in
 * the binary task form when binary, else as text. With compress
 * LP_COMPRESS_GZIP or LP_COMPRESS_ZSTD every file but index.yaml is
 * compressed at level (LP_LEVEL_DEFAULT: the default) and named with the
 * suffix .gz or .zst, by threads workers when more than one; otherwise
 * plain. */
lp_procdir *lp_procdir_open(int parent_fd, const char *dir, bool force, bool user_only,
			    enum lp_layout layout, bool binary, enum lp_compress compress, int level,
			    unsigned threads, const lp_procdir_inputs *inputs, lp_error *err);
/* After a successful finish(): free pd and hand back the staged tree. */
lp_staged *lp_procdir_release(lp_procdir *pd);
/* Free and remove the partial directory. */
void lp_procdir_free(lp_procdir *pd);
extern const lp_sink lp_procdir_sink_ops;

#endif
