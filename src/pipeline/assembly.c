/* The first half of every merge run: the job's two inputs opened as
 * sources, a merge core, and the pipeline between them. Apart from
 * job.c, which writes and publishes outputs, so that the library's
 * capture reader, which needs this half alone, carries no output code. */
#include "pipeline/job.h"

#include <fcntl.h>

#include "formats/kern.h"
#include "formats/registry.h"

void lp_merge_job_init(lp_merge_job *job)
{
	*job = (lp_merge_job){
		.ref_format = LP_REF_AUTO,
		.endian = LP_LITTLE,
		.compress = LP_COMPRESS_AUTO,
		.level = LP_LEVEL_DEFAULT,
		.output_dir_fd = AT_FDCWD,
	};
}

int lp_run_open(lp_run *r, const lp_merge_job *job, lp_error *err)
{
	*r = (lp_run){0};
	if (!(r->refs = lp_ref_open(job->reference, job->ref_format, job->endian, err)) ||
	    !(r->kern = lp_kern_reader_open(job->kernel, err))) {
		lp_run_close(r);
		return err->status;
	}
	uint64_t page_offset = job->page_offset_set ? job->page_offset
			       : lp_ref_source_width(r->refs) == 64 ? LP_PAGE_OFFSET_64
			       : LP_DEFAULT_PAGE_OFFSET;
	r->merge = lp_merge_new(&(lp_merge_config){.page_offset = page_offset});
	r->pipeline = (lp_pipeline){
		.refs = r->refs,
		.kern = r->kern,
		.merge = r->merge,
		.strict = job->strict,
		.warn = job->warn,
		.warn_ctx = job->warn_ctx,
		.progress = job->progress,
		.progress_ctx = job->progress_ctx,
		.threads = job->threads,
	};
	return 0;
}

void lp_run_close(lp_run *r)
{
	lp_merge_free(r->merge);
	lp_event_source_close(r->kern);
	lp_ref_source_close(r->refs);
	*r = (lp_run){0};
}
