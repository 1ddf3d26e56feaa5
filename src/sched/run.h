/* A schedule of a per-process directory (laplace-formats(5),
 * "RE-SCHEDULING"): the directory read through formats/taskdir.h, its
 * units the engine's input (schedule.h), a policy run into a sink. The
 * one way `laplace schedule` and `laplace report` schedule a directory. */
#ifndef LAPLACE_SCHED_RUN_H
#define LAPLACE_SCHED_RUN_H

#include <stdbool.h>

#include "core/error.h"
#include "core/units.h"
#include "sched/schedule.h"

typedef struct lp_sched_dir_options {
	lp_sched_options sched;
	bool user_only;    /* leave kernel references (R W I) out */
	unsigned max_open; /* task files open at once, 1 to LP_TASKDIR_MAX_OPEN */
	unsigned threads;  /* > 1: task files parsed ahead of the run in this many threads */
	/* May be NULL. Called once the directory is read, before the run,
	 * with the engine's input and every file the run reads (index.yaml
	 * included, NULL-terminated); a nonzero return (err set) ends the run
	 * with that status. */
	int (*ready)(void *ctx, const lp_sched_input *in, const char *const *paths, lp_error *err);
	void *ready_ctx;
} lp_sched_dir_options;

/* Run opt's schedule of dir into sink. Returns 0 with *report filled (free
 * it with lp_sched_report_free), or an lp_status with err set: the
 * directory's (lp_taskdir_open), ready's, or the run's (lp_schedule_run). */
int lp_sched_dir_run(const char *dir, const lp_sched_dir_options *opt, const lp_sched_sink *sink,
		     lp_sched_report *report, lp_error *err);

/* How many task files may be open at once beside a run's outputs
 * (with their directories); 0: too few descriptors. */
unsigned lp_schedule_fd_budget(unsigned outputs);
/* 0, or LP_EINPUT (err set) for a dir that is not a per-process
 * directory, said as such rather than as the first file it lacks; LP_EIO
 * when it cannot be looked at. */
int lp_schedule_check_dir(const char *dir, lp_error *err);

#endif
