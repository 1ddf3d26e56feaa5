/* A merge job run in a child process (runner.c). */
#ifndef LAPLACE_JOBS_RUNNER_H
#define LAPLACE_JOBS_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#include "core/error.h"
#include "jobs/confine.h"
#include "pipeline/job.h"

/* ---- running a job in a child process ---- */

/* How a job ended. status is an lp_status; a child that died without
 * reporting (a crash, a kill) gives LP_EIO with the signal in msg. */
typedef struct lp_job_outcome {
	int status;
	char msg[1024];
	lp_stats stats;  /* valid when status is LP_OK */
	double seconds;  /* wall-clock duration */
	double cpu_seconds;    /* user and system time of the job's processes */
	uint64_t peak_rss_kib; /* the largest resident set among them */
	bool killed;     /* ended by lp_job_proc_kill, without a result, within its time */
} lp_job_outcome;

typedef struct lp_job_proc_ops {
	/* A few times a second at most, while the job runs. */
	void (*progress)(void *ctx, uint64_t refs_done, uint64_t events_done);
	/* A warning of the job (the first ones only; all are counted). */
	void (*warning)(void *ctx, const char *msg);
	/* Once, after the child has exited; the process handle is freed after
	 * this returns. */
	void (*done)(void *ctx, const lp_job_outcome *outcome);
} lp_job_proc_ops;

typedef struct lp_job_proc lp_job_proc;

/* Start a child (`laplace __job`) that runs job with lp_merge_job_run and
 * reports back through a pipe, watched from the thread-default GLib main
 * context; job's callbacks are the child's own and its output_dir_fd must
 * be AT_FDCWD. --no-sync (lp_stage_set_sync) holds in the child as here.
 * The child dies with its parent. With owner other than LP_NO_OWNER (a
 * parent running as root), the child takes that user's groups, gid and uid
 * before it opens anything, and the job fails if it cannot. With confine
 * (the daemon), the output is written only through lp_job_open_output_dir's
 * directory. With a timeout (seconds, 0 for none), a job still running
 * then gets SIGTERM (it removes its temporary outputs), SIGKILL a few
 * seconds later, and fails "timed out after N s". Returns NULL with err
 * set if it cannot start the child. */
lp_job_proc *lp_job_proc_start(const lp_merge_job *job, uid_t owner,
			       const lp_job_confinement *confine, unsigned timeout,
			       const lp_job_proc_ops *ops, void *ctx, lp_error *err);
/* The same for a command of this program, or a pipeline of them: one
 * command runs as `laplace ARGS...` itself (its standard error the
 * pipe's, its exit status the result); a pipeline through a child
 * (`laplace __cell`) that starts `laplace ARGS...` for each stage of
 * stages (each a NULL-terminated argv without the program, the standard
 * output of one the standard input of the next, the last's standard
 * output discarded), passes SIGINT, SIGTERM and SIGHUP on to them, waits
 * for them and reports their exit status (the last stage's if it failed,
 * else the first failed one's; 128 + signal for a stage that a signal
 * ended). Either way msg is the last line on standard error, and the
 * outcome has the CPU time and peak memory of the processes (every child
 * of the runner is reaped with wait4 through a pidfd). */
lp_job_proc *lp_cell_proc_start(char **const *stages, size_t nstages, unsigned timeout,
				const lp_job_proc_ops *ops, void *ctx, lp_error *err);
pid_t lp_job_proc_pid(const lp_job_proc *proc);
/* End the job on request: SIGTERM (it removes its temporary outputs),
 * SIGKILL a few seconds later; it fails "cancelled" unless it had already
 * sent its result. */
void lp_job_proc_cancel(lp_job_proc *proc);
/* Kill the child (SIGKILL); done() follows once it has exited. */
void lp_job_proc_kill(lp_job_proc *proc);

/* The hidden command `laplace __job` (child.h): runs the job of
 * lp_job_proc_start and reports through LP_CHILD_PIPE_FD; exits with 0
 * once its result is sent. LP_EUSAGE with err set when run by hand,
 * without its descriptors. */
int lp_job_child_main(lp_error *err);
/* The hidden command `laplace __cell` (child.h) of lp_cell_proc_start. */
int lp_cell_child_main(lp_error *err);

#endif
