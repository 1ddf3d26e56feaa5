/* The writers at the end of the merge pipeline that live here. They know
 * output formats, not merge semantics: they receive canonical numbers and
 * routes. */
#ifndef LAPLACE_SINKS_H
#define LAPLACE_SINKS_H

#include <stdbool.h>

#include "io/io.h"
#include "pipeline/pipeline.h"
#include "formats/forms.h"
#include "formats/procindex.h"

/* The basic merge's sink is its forms' writer: formats/forms.h. */

/* A sink that writes nothing, for runs that only want the statistics
 * (the merge core keeps them). */
extern const lp_sink lp_null_sink_ops;

/* Per-process directory (laplace-formats(5), "PER-PROCESS MERGE OUTPUT"). The
 * directory is staged as DIR.partial-XXXXXX; finish() writes index.yaml and
 * flushes the tree to disk; lp_procdir_release() hands it over for
 * publication (replacing an existing DIR only when force was given). */
typedef struct lp_procdir_inputs {
	const char *reference; /* input names recorded in index.yaml */
	const char *kernel;
} lp_procdir_inputs;
typedef struct lp_procdir lp_procdir;
/* The directory dir, in parent_fd as lp_stage_dir takes it. With compress
 * LP_COMPRESS_GZIP or LP_COMPRESS_ZSTD every file but index.yaml is
 * compressed at level (LP_LEVEL_DEFAULT: the default) and named with the
 * suffix .gz or .zst, by threads workers when more than one; otherwise
 * plain. */
lp_procdir *lp_procdir_open(int parent_fd, const char *dir, bool force, bool user_only,
			    enum lp_layout layout, enum lp_compress compress, int level, unsigned threads,
			    const lp_procdir_inputs *inputs, lp_error *err);
/* After a successful finish(): free pd and hand back the staged tree. */
lp_staged *lp_procdir_release(lp_procdir *pd);
/* Free and remove the partial directory. */
void lp_procdir_free(lp_procdir *pd);
extern const lp_sink lp_procdir_sink_ops;

#endif
