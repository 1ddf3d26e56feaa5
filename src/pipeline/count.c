/* The merge pipeline into a sink that discards everything: the merge core
 * itself keeps the statistics. */
#include "laplace/count.h"

static int discard_refs(void *ctx, const lp_ref *refs, const uint64_t *canon, size_t n,
			const lp_task_id *who, lp_error *err)
{
	(void)ctx, (void)refs, (void)canon, (void)n, (void)who, (void)err;
	return 0;
}

static int discard_event(void *ctx, const lp_event *ev, const lp_event_route *route, lp_error *err)
{
	(void)ctx, (void)ev, (void)route, (void)err;
	return 0;
}

static int discard_finish(void *ctx, const lp_stats *stats, lp_error *err)
{
	(void)ctx, (void)stats, (void)err;
	return 0;
}

static const lp_sink discard_sink = {discard_refs, discard_event, discard_finish};

int lp_count_capture(const lp_merge_job *job, lp_stats *stats, lp_error *err)
{
	lp_ref_reader *refs = lp_ref_reader_open(job->reference, job->ref_format, job->endian, err);
	if (!refs)
		return err->status;
	lp_kern_reader *kern = lp_kern_reader_open(job->kernel, err);
	if (!kern) {
		lp_ref_reader_close(refs);
		return err->status;
	}
	lp_merge *merge = lp_merge_new(&(lp_merge_config){.page_offset = job->page_offset});
	lp_pipeline p = {
		.refs = refs,
		.kern = kern,
		.merge = merge,
		.sink = &discard_sink,
		.strict = job->strict,
		.warn = job->warn,
		.warn_ctx = job->warn_ctx,
		.progress = job->progress,
		.progress_ctx = job->progress_ctx,
	};
	int rc = lp_pipeline_run(&p, err);
	if (!rc)
		*stats = *lp_merge_stats(merge);
	lp_merge_free(merge);
	lp_kern_reader_close(kern);
	lp_ref_reader_close(refs);
	return rc;
}
