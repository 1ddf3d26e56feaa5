/* What `laplace batch` does besides running the jobs here
 * (laplace-batch(1)): a report that must not replace an input, the report
 * of an earlier run read back (--skip-done), the reports of a Slurm
 * array's elements collected (--collect), and what a Slurm submission's
 * collector wrote read back (--submit slurm --wait). */
#ifndef LAPLACE_GATHER_H
#define LAPLACE_GATHER_H

#include <glib.h>
#include <stddef.h>

#include "core/error.h"
#include "jobs/batch.h"

/* LP_EUSAGE when report would replace the batch file or a job's input. */
int lp_batch_check_report(const lp_batch *b, const char *report, lp_error *err);
/* The report of an earlier run at report, if there is one (*earlier NULL
 * if not). */
int lp_batch_load_earlier(const char *report, lp_batch_report **earlier, lp_error *err);
/* --collect DIR: take the entries of DIR's reports (N.yaml, in name
 * order), then those of the earlier report at report of jobs done before;
 * a job with neither was interrupted ("no report from its array
 * element"). A report that cannot be read is passed over with a warning.
 * Returns the reports read (the entries point into them: free with
 * g_ptr_array_free after b is done with them), or NULL with err set
 * (LP_EIO) when DIR cannot be read. */
GPtrArray *lp_batch_collect(lp_batch *b, const char *dir, const char *report, lp_warn_fn warn,
			    void *warn_ctx, lp_error *err);
/* How many of the selected jobs have no entry: the ones to run. */
size_t lp_batch_pending(const lp_batch *b);
/* --submit slurm: lp_slurm_submit(s, b) with s->program this program
 * (else "laplace" on PATH); b stops catching signals first, as waiting
 * for sbatch a signal ends this process as it would sbatch. */
int lp_batch_submit(lp_batch *b, lp_slurm_submission *s, lp_error *err);
/* --wait: the report the collector job collector_job_id wrote to report,
 * its entries taken for every job instead of any they had. Returns it (to
 * free with lp_batch_report_free once b is done with it), or NULL with
 * err set: it cannot be read, or another collector wrote it (LP_EIO). */
lp_batch_report *lp_batch_take_collected(lp_batch *b, const char *report,
					 const char *collector_job_id, lp_error *err);

#endif
