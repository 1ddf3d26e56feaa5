/* A schedule of a per-process directory: open it, run it, close it. */
#include "sched/run.h"

#include <errno.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/taskdir.h"

/* Descriptors kept for everything but task files: standard streams, the
 * output and report with their directories, index.yaml, slack. */
#define FD_RESERVE 16

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

unsigned lp_schedule_fd_budget(unsigned outputs)
{
	struct rlimit rl;
	uint64_t limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
		? rl.rlim_cur : 1024;
	uint64_t reserve = FD_RESERVE + 2 * (uint64_t)outputs; /* a file and its directory each */
	if (limit <= reserve)
		return 0;
	return (unsigned)MIN(limit - reserve, (uint64_t)LP_TASKDIR_MAX_OPEN);
}

int lp_schedule_check_dir(const char *dir, lp_error *err)
{
	struct stat st;
	if (stat(dir, &st) < 0)
		return lp_fail(err, LP_EIO, "cannot open %s: %s", dir, g_strerror(errno));
	char *index = g_build_filename(dir, "index.yaml", NULL);
	bool no_index = !S_ISDIR(st.st_mode) || (access(index, F_OK) < 0 && errno == ENOENT);
	g_free(index);
	if (no_index)
		return lp_fail(err, LP_EINPUT, "%s: not a per-process directory: %s", dir,
			       S_ISDIR(st.st_mode) ? "no index.yaml" : "not a directory");
	return 0;
}
