/* A whole merge: open the inputs, build the pipeline, write the output,
 * and on any failure leave nothing that looks complete. */
#include "laplace/job.h"

#include "laplace/sinks.h"

void lp_merge_job_init(lp_merge_job *job)
{
	*job = (lp_merge_job){
		.ref_format = LP_REF_AUTO,
		.endian = LP_LITTLE,
		.page_offset = LP_DEFAULT_PAGE_OFFSET,
		.compress = LP_COMPRESS_AUTO,
	};
}

int lp_merge_job_run(const lp_merge_job *job, lp_stats *stats, lp_error *err)
{
	int rc;
	lp_ref_reader *refs = NULL;
	lp_kern_reader *kern = NULL;
	lp_output *out = NULL;
	lp_basic_sink *basic = NULL;
	lp_procdir *procdir = NULL;
	lp_merge *merge = NULL;
	const lp_sink *sink;
	void *sink_ctx;

	refs = lp_ref_reader_open(job->reference, job->ref_format, job->endian, err);
	if (!refs)
		return err->status;
	kern = lp_kern_reader_open(job->kernel, err);
	if (!kern) {
		rc = err->status;
		goto done;
	}
	if (job->discard) {
		sink = &lp_null_sink_ops;
		sink_ctx = NULL;
	} else if (job->per_process) {
		lp_procdir_inputs inputs = {job->reference, job->kernel};
		procdir = lp_procdir_open(job->output, job->force, job->user_only, &inputs, err);
		if (!procdir) {
			rc = err->status;
			goto done;
		}
		sink = &lp_procdir_sink_ops;
		sink_ctx = procdir;
	} else {
		out = lp_output_open(job->output, job->compress, err);
		if (!out) {
			rc = err->status;
			goto done;
		}
		basic = lp_basic_sink_new(out, job->user_only);
		sink = &lp_basic_sink_ops;
		sink_ctx = basic;
	}
	merge = lp_merge_new(&(lp_merge_config){.page_offset = job->page_offset});
	lp_pipeline p = {
		.refs = refs,
		.kern = kern,
		.merge = merge,
		.sink = sink,
		.sink_ctx = sink_ctx,
		.strict = job->strict,
		.warn = job->warn,
		.warn_ctx = job->warn_ctx,
		.progress = job->progress,
		.progress_ctx = job->progress_ctx,
	};
	/* The per-process sink renames its directory into place in finish(). */
	rc = lp_pipeline_run(&p, err);
	if (!rc && out) {
		rc = lp_output_commit(out, err);
		out = NULL;
	}
	if (!rc && stats)
		*stats = *lp_merge_stats(merge);
done:
	if (out)
		lp_output_abort(out);
	lp_basic_sink_free(basic);
	lp_procdir_free(procdir);
	lp_merge_free(merge);
	lp_kern_reader_close(kern);
	lp_ref_reader_close(refs);
	return rc;
}
