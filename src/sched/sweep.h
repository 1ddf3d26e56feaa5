/* A sweep of memory sizes (laplace-formats(5), 9.4.6): one schedule of a
 * per-process directory per size, each from scratch, run side by side on
 * the processors, and their figures as one CSV table. */
#ifndef LAPLACE_SCHED_SWEEP_H
#define LAPLACE_SCHED_SWEEP_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/progress.h"
#include "sched/schedule.h"

/* A sweep's sizes as --memory gives them ("M1,M2,...", each a decimal
 * number of frames from 1 to LP_SCHED_MAX_MEMORY) into a new array of
 * *n (g_free'd by the caller): 0, or LP_EUSAGE with err set, the
 * message beginning with "--memory". */
int lp_sweep_memory_parse(const char *text, uint64_t **sizes, size_t *n, lp_error *err);

/* Told each size's run, in the order of the sizes: non-zero stops the
 * sweep. */
typedef int (*lp_sweep_row_fn)(void *ctx, const lp_sched_report *report);

typedef struct lp_sweep_plan {
	const char *dir;        /* the per-process directory */
	const char *output;     /* the table; NULL: standard output */
	lp_sched_options opt;   /* rr or random, with fault_ticks and replacement; memory unused */
	const uint64_t *memory; /* the sizes, in the order of the rows */
	size_t nmemory;
	bool user_only;
	unsigned threads;       /* schedules run at once, at least 1 */
	lp_progress progress;   /* told the sizes done (may be none) */
	/* lp_schedule_sweep_rows: the runs, as they are taken in order; no
	 * more sizes are started once *stop (when set) turns non-zero. */
	lp_sweep_row_fn row;
	void *row_ctx;
	const volatile int *stop;
} lp_sweep_plan;

/* The header line of the table, with its newline. */
extern const char lp_sweep_header[];

/* One row of the table for report (a run with a memory), with its newline. */
void lp_sweep_format_row(GString *table, const lp_sched_report *report);

/* Run every size of rq and write the table. Returns 0, or an lp_status
 * with err set and nothing written: the first size's failure in the
 * table's order (LP_EINPUT for a directory that is not a per-process
 * one, LP_EUSAGE for an output that is one of its files or too few file
 * descriptors), or the output's. */
int lp_schedule_sweep(const lp_sweep_plan *rq, lp_error *err);
/* Run every size of rq and tell rq->row each run in the order of the
 * sizes (output unused): 0, with *stopped true when rq->row or *rq->stop
 * stopped it, or an lp_status with err set as lp_schedule_sweep's (the
 * rows before the failing size told). */
int lp_schedule_sweep_rows(const lp_sweep_plan *rq, bool *stopped, lp_error *err);

#endif
