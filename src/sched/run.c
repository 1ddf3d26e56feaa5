/* A schedule of a per-process directory: open it, run it, close it. */
#include "sched/run.h"

#include "formats/taskdir.h"

int lp_sched_dir_run(const char *dir, const lp_sched_dir_options *opt, const lp_sched_sink *sink,
		     lp_sched_report *report, lp_error *err)
{
	lp_taskdir_options topt = {
		.unit_streams = opt->sched.policy != LP_SCHED_AS_TRACED,
		.user_only = opt->user_only,
		.max_open = opt->max_open,
		.threads = opt->threads,
		.slice = opt->sched.quantum,
	};
	lp_taskdir *t = lp_taskdir_open(dir, &topt, err);
	if (!t)
		return err->status;
	const lp_sched_input *in = lp_taskdir_input(t);
	int rc = opt->ready ? opt->ready(opt->ready_ctx, in, lp_taskdir_paths(t), err) : 0;
	if (!rc)
		rc = lp_schedule_run(in, &opt->sched, sink, report, err);
	lp_taskdir_close(t);
	return rc;
}
