/* The batch engine behind `laplace batch` (laplace-batch(1)): the jobs of
 * a batch file, some or all of them, run N at a time, each in its own
 * process (lp_job_proc_start), and the report of how each ended. */
#ifndef LAPLACE_BATCH_H
#define LAPLACE_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "laplace/io.h"
#include "laplace/jobfile.h"

/* How often the progress line is redrawn. */
#define LP_BATCH_PROGRESS_REDRAW_MS 200

typedef struct lp_batch lp_batch;

typedef struct lp_batch_job {
	lp_batch *batch;
	size_t index;          /* in the batch file */
	lp_job_outcome outcome;
	lp_job_proc *proc;     /* while it runs */
	bool finished;
	uint64_t refs_done;
} lp_batch_job;

struct lp_batch {
	const char *command;   /* how messages start: "laplace batch" */
	const char *file;      /* the batch file, as named */
	lp_job_spec *specs;    /* every job of the file (borrowed) */
	size_t nspecs;
	lp_batch_job *jobs;    /* the ones this run takes, in index order */
	size_t njobs;
	size_t next;           /* the next job to start */
	size_t running;
	size_t succeeded, failed;
	size_t max_running;
	unsigned job_timeout;  /* seconds, 0 for none; a job's own key wins */
	bool show_progress;    /* a progress line on standard error */
	bool progress_shown;
	int stopped_by;        /* the signal that interrupted the batch, or 0 */
	guint signal_sources[3];
	GMainLoop *loop;
};

/* Start with no jobs. b must stay where it is: its jobs point back at it. */
void lp_batch_init(lp_batch *b, const char *command);
/* SIGINT, SIGTERM and SIGHUP (unless ignored) stop the batch from now on:
 * nothing more starts, the running jobs get the signal (each removes its
 * temporary outputs and ends) and lp_batch_run returns once they have. */
void lp_batch_catch_signals(lp_batch *b);
/* Take the jobs of the batch file (specs are borrowed). */
void lp_batch_set_jobs(lp_batch *b, const char *file, lp_job_spec *specs, size_t nspecs);
/* Keep the jobs whose index is k modulo n. */
void lp_batch_select_shard(lp_batch *b, size_t k, size_t n);
/* Run the selected jobs, max_running at a time, until all have ended or a
 * caught signal stopped the batch (then b->stopped_by is set). */
void lp_batch_run(lp_batch *b);
/* The YAML report (laplace-batch(1), --report) into out, opened before the
 * jobs ran, committed; frees out. shard is the --shard text or NULL. */
int lp_batch_write_report(lp_output *out, const lp_batch *b, const char *shard, lp_error *err);
/* Free the jobs and stop catching signals. */
void lp_batch_clear(lp_batch *b);

#endif
