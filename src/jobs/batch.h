/* The batch engine behind `laplace batch` (laplace-batch(1)): the jobs of
 * a batch file, some or all of them, run N at a time, each in its own
 * process (lp_job_proc_start); reports written, read back to skip what is
 * done, and collected from the elements of a Slurm array job. */
#ifndef LAPLACE_BATCH_H
#define LAPLACE_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>
#include <yaml.h>

#include "io/io.h"
#include "jobs/jobfile.h"
#include "jobs/jobreport.h"
#include "jobs/pool.h"
#include "jobs/runner.h"

/* How often the progress line is redrawn. */
#define LP_BATCH_PROGRESS_REDRAW_MS 200

/* A report read back (a --report file): its jobs' entries by index. */
typedef struct lp_batch_report {
	yaml_document_t doc;
	GHashTable *entries;   /* index (GSIZE_TO_POINTER(index + 1)) -> yaml_node_t * */
	char *collector_job_id; /* its collector_job_id key, or NULL */
} lp_batch_report;

/* Read a batch report; LP_EINPUT when it is not one, LP_EIO when it cannot
 * be read. */
int lp_batch_report_load(const char *path, lp_batch_report **report, lp_error *err);
void lp_batch_report_free(lp_batch_report *report);

typedef struct lp_batch lp_batch;

typedef struct lp_batch_job {
	lp_batch *batch;
	size_t index;          /* in the batch file */
	lp_input_state reference, kernel; /* as they were when it started */
	lp_job_outcome outcome;
	lp_job_proc *proc;     /* while it runs */
	bool finished;
	bool stopped;          /* ended after a signal stopped the batch */
	uint64_t refs_done;
	/* An entry of another report that stands for this job (done before,
	 * or collected from an array element); the job is then not run. */
	const lp_batch_report *entry_report;
	yaml_node_t *entry;
	bool done_before;      /* the entry is a success of an earlier run */
} lp_batch_job;

struct lp_batch {
	const char *command;   /* how messages start: "laplace batch" */
	const char *file;      /* the batch file, as named */
	lp_job_spec *specs;    /* every job of the file (borrowed) */
	size_t nspecs;
	lp_batch_job *jobs;    /* the ones this run takes, in index order */
	size_t njobs;
	size_t next;           /* the next job to start */
	size_t succeeded, failed;
	lp_job_pool pool;      /* runs them: max_running, stopped_by, the signals */
	unsigned job_timeout;  /* seconds, 0 for none; a job's own key may lower it */
	bool show_progress;    /* a progress line on standard error */
	bool progress_shown;
	const char *missing_why; /* why a job without an outcome or entry has
				  * none (collecting); NULL: it never started */
};

/* Start with no jobs. b must stay where it is: its jobs point back at it.
 * lp_job_pool_catch_signals(&b->pool) makes SIGINT, SIGTERM and SIGHUP
 * stop the batch: nothing more starts, the running jobs get the signal
 * and lp_batch_run returns once they have ended. */
void lp_batch_init(lp_batch *b, const char *command);
/* Take the jobs of the batch file (specs are borrowed); LP_EINPUT when two
 * jobs write the same output. */
int lp_batch_set_jobs(lp_batch *b, const char *file, lp_job_spec *specs, size_t nspecs,
		      lp_error *err);
/* Keep the jobs of shard k of n: by input size (the largest job first, each
 * to the shard with the fewest bytes so far, ties to the lowest shard), or
 * by index (index modulo n). Deterministic for the same inputs. */
void lp_batch_select_shard(lp_batch *b, size_t k, size_t n, bool by_size);
/* Keep job index only. */
void lp_batch_select_index(lp_batch *b, size_t index);
/* Take the entries of an earlier report (kept by the caller) for the jobs
 * that are done: their output exists, and the entry says they succeeded
 * with the same inputs, mode and output, the inputs of the same size and
 * modification time. Returns how many. */
size_t lp_batch_skip_done(lp_batch *b, const lp_batch_report *earlier);
/* Take report's entries for the jobs that have none yet, whatever they
 * say. Returns how many. */
size_t lp_batch_take_entries(lp_batch *b, const lp_batch_report *report);
/* Run the selected jobs that have no entry, pool.max_running at a time,
 * until all have ended or a caught signal stopped the batch. Each job's output
 * directory is created first. */
void lp_batch_run(lp_batch *b);
/* List the jobs that did not succeed, in index order, on standard error;
 * returns the highest exit status among them (0 when all succeeded). */
int lp_batch_list_failures(const lp_batch *b);
/* How the selected jobs ended. */
typedef struct lp_batch_counts {
	size_t succeeded, failed, interrupted;
	size_t done_before; /* of the succeeded: an earlier run's (--skip-done) */
} lp_batch_counts;
void lp_batch_count(const lp_batch *b, lp_batch_counts *c);
/* The YAML report (laplace-batch(1), --report) into out, opened before the
 * jobs ran, committed; frees out. shard is the --shard text or NULL;
 * collector_job_id names the Slurm job that collected it, or NULL. */
int lp_batch_write_report(lp_output *out, const lp_batch *b, const char *shard,
			  const char *collector_job_id, lp_error *err);
/* Free the jobs and the pool (its signals no longer caught). */
void lp_batch_clear(lp_batch *b);

/* ---- Slurm (laplace-batch(1), --submit slurm) ---- */

typedef struct lp_slurm_submission {
	const char *program;     /* the laplace program the elements run, absolute */
	const char *batch_file;  /* absolute */
	const char *report;      /* absolute; scripts and parts go beside it */
	size_t max_running;      /* elements at once (the %N throttle), 0: any */
	char **sbatch_options;   /* extra sbatch arguments, NULL-terminated, or NULL */
	unsigned job_timeout;    /* --job-timeout passed on, 0 for none */
	bool wait;               /* sbatch --wait on the collector */
	char *array_job_id;      /* set by lp_slurm_submit */
	char *collector_job_id;
} lp_slurm_submission;

/* Write REPORT.array.sh and REPORT.collect.sh, empty REPORT.parts/ of an
 * earlier submission's reports and logs, then submit an array job with one
 * element per job of b that has no entry (element I runs job I, `--index
 * I`, its report in REPORT.parts/I.yaml), then a collector job that runs
 * once the array has ended however it did (afterany) and collects the
 * elements' reports into REPORT (`--collect`). With wait, returns when the
 * collector has ended. */
int lp_slurm_submit(lp_slurm_submission *s, const lp_batch *b, lp_error *err);
void lp_slurm_submission_clear(lp_slurm_submission *s);

#endif
