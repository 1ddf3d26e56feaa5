/* A whole merge: open the inputs (lp_run, pipeline/assembly.c), write the
 * outputs, and publish them together; on any failure leave nothing that
 * looks complete. */
#include "pipeline/job.h"

#include <fcntl.h>

#include "formats/forms.h"
#include "formats/procdir.h"
#include "formats/stats.h"

/* The statistics file, staged beside the main output. */
static int stage_stats(const char *path, const lp_stats *stats, lp_staged **staged, lp_error *err)
{
	lp_output *out = lp_output_open(path, LP_COMPRESS_NONE, err);
	if (!out)
		return err->status;
	return lp_output_stage(out, lp_stats_write_yaml(out, stats, err), staged, err);
}

int lp_merge_job_run(const lp_merge_job *job, lp_stats *stats, lp_error *err)
{
	int rc;
	lp_run run = {0};
	lp_output *out = NULL;
	lp_basic_sink *basic = NULL;
	lp_procdir *procdir = NULL;
	/* What the run publishes: the output (file or directory) and the
	 * statistics file. */
	lp_staged *staged[2] = {NULL, NULL};

	const char *inputs[] = {job->reference, job->kernel};
	const char *output = job->discard ? NULL : job->output ? job->output : "-";
	bool confined = job->output_dir_fd != AT_FDCWD;
	const char *outputs[] = {confined ? NULL : output, job->stats_path};
	if ((rc = lp_check_outputs(inputs, 2, outputs, 2, err)) ||
	    (confined && (rc = lp_check_output_in(job->output_dir_fd, output, inputs, 2, err))))
		return rc;
	if ((rc = lp_run_open(&run, job, err)))
		return rc;
	if (job->discard) {
		run.pipeline.sink = &lp_null_sink_ops;
	} else if (job->per_process) {
		lp_procdir_inputs names = {job->reference, job->kernel};
		procdir = lp_procdir_open(job->output_dir_fd, job->output, job->force, job->user_only,
					  job->layout, job->form == LP_FORM_BIN, job->compress, job->level, job->threads, &names, err);
		if (!procdir) {
			rc = err->status;
			goto done;
		}
		run.pipeline.sink = &lp_procdir_sink_ops;
		run.pipeline.sink_ctx = procdir;
	} else {
		out = confined ? lp_output_open_in_level(job->output_dir_fd, output, job->compress,
							 job->level, err)
			       : lp_output_open_level(job->output, job->compress, job->level, err);
		if (!out) {
			rc = err->status;
			goto done;
		}
		basic = lp_basic_sink_new(out, job->user_only, job->form);
		run.pipeline.sink = &lp_basic_sink_ops;
		run.pipeline.sink_ctx = basic;
	}
	if ((rc = lp_pipeline_run(&run.pipeline, err)))
		goto done;
	if (out) {
		rc = lp_output_stage(out, 0, &staged[0], err);
		out = NULL;
		if (rc)
			goto done;
	} else if (procdir) {
		staged[0] = lp_procdir_release(procdir);
		procdir = NULL;
	}
	if (job->stats_path &&
	    (rc = stage_stats(job->stats_path, lp_merge_stats(run.merge), &staged[1], err)))
		goto done;
	/* Publishing frees the staged items, whatever happens. */
	rc = lp_stage_publish(staged, 2, err);
	staged[0] = staged[1] = NULL;
	if (!rc && stats)
		*stats = *lp_merge_stats(run.merge);
done:
	lp_staged_discard(staged[0]);
	lp_staged_discard(staged[1]);
	lp_output_abort(out);
	lp_basic_sink_free(basic);
	lp_procdir_free(procdir);
	lp_run_close(&run);
	return rc;
}

/* The --stats file is staged here, not by the job, to be published only
 * once the caller's summary is written. */
int lp_merge_stats_only(lp_merge_job *job, const char *stats_path, lp_stats *stats, lp_staged **yaml,
			lp_error *err)
{
	*yaml = NULL;
	job->discard = true;
	const char *inputs[] = {job->reference, job->kernel};
	int rc = lp_check_outputs(inputs, 2, &stats_path, 1, err);
	if (!rc)
		rc = lp_merge_job_run(job, stats, err);
	if (rc || !stats_path)
		return rc;
	return stage_stats(stats_path, stats, yaml, err);
}
