/* The merge pipeline: a reference source and an event source (stream.h) -> merge core
 * (filter) -> a sink that writes or counts. It interleaves the two inputs
 * by timestamp (events first on ties) and checks that each is ordered. */
#ifndef LAPLACE_PIPELINE_H
#define LAPLACE_PIPELINE_H

#include <stdbool.h>

#include "core/merge.h"
#include "core/progress.h"
#include "formats/stream.h"

typedef struct lp_pipeline {
	lp_ref_source *refs;
	lp_event_source *kern;
	lp_merge *merge;
	const lp_sink *sink;
	void *sink_ctx;
	bool strict;          /* a torn record is an error, not a warning */
	lp_warn_fn warn;      /* torn records; may be NULL */
	void *warn_ctx;
	lp_progress_fn progress; /* may be NULL */
	void *progress_ctx;
	/* More than 1: lp_pipeline_run reads, merges and writes in three
	 * threads (the same output, the same failures). */
	unsigned threads;
} lp_pipeline;

/* A sink that writes nothing, for runs that only want the statistics
 * (the merge core keeps them): src/pipeline/null.c. The writers of the
 * output formats are their formats' (formats/forms.h, formats/procdir.h). */
extern const lp_sink lp_null_sink_ops;

/* Run to the end of both inputs. Returns 0 or an lp_status with err set. */
int lp_pipeline_run(const lp_pipeline *p, lp_error *err);

/* The same run, driven by its caller one step at a time (lp_capture pulls
 * references this way). p must outlive the run. */
typedef struct lp_pipeline_state lp_pipeline_state;
lp_pipeline_state *lp_pipeline_start(const lp_pipeline *p);
/* One step: at most one batch of references read, one run of them handed
 * to the sink and one event applied; at the end, the sink's finish()
 * called. Returns 1 while
 * there is more to do, 0 once finish() has been called (and at every
 * later call), -1 with err set. The arrays a refs() call receives stay
 * valid until the next step. */
int lp_pipeline_step(lp_pipeline_state *st, lp_error *err);
void lp_pipeline_stop(lp_pipeline_state *st);

#endif
