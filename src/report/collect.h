/* laplace report (laplace-report(1)): what a capture, a per-process
 * directory or a basic merge stream holds, gathered once (here), a
 * schedule's report added (lp_report_read_schedule), and drawn as one
 * self-contained HTML page with inline SVG figures (page.h, with the axes, colours and
 * knees of figure.h). */
#ifndef LAPLACE_REPORT_COLLECT_H
#define LAPLACE_REPORT_COLLECT_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/policy.h"
#include "analysis/trace.h"
#include "core/progress.h"
#include "core/units.h"
#include "io/io.h"
#include "pipeline/job.h"

enum lp_report_source { LP_REPORT_CAPTURE, LP_REPORT_DIRECTORY, LP_REPORT_STREAM };

typedef struct lp_report_process {
	uint64_t pid;
	GPtrArray *programs;  /* names, in the order they ran (exec) */
	size_t first_task;    /* its tasks are rows first_task .. + ntasks - 1 */
	size_t ntasks;
	uint64_t references;  /* user references of its tasks */
	uint64_t pages;       /* distinct canonical pages they touched */
} lp_report_process;

/* A row of the task timeline. */
typedef struct lp_report_task {
	uint64_t pid, tid;
	size_t process;
} lp_report_task;

/* A stretch of time a task was the current one, running one program. */
typedef struct lp_report_run {
	size_t task;
	size_t program; /* index into programs; LP_REPORT_NO_PROGRAM: unknown */
	uint64_t start, end;
} lp_report_run;
#define LP_REPORT_NO_PROGRAM SIZE_MAX

/* laplace schedule --report (laplace-formats(5), "Output and report"). */
typedef struct lp_report_cpu {
	uint64_t references, idle_ticks, slices;
} lp_report_cpu;
typedef struct lp_report_unit {
	uint64_t pid, tid, incarnation, references, slices;
	uint64_t first_tick, last_tick; /* meaningful when references > 0 */
} lp_report_unit;
/* Columns of the per-CPU timeline: which task each processor ran in tick
 * c * ticks / LP_REPORT_SCHEDULE_COLUMNS (rounded down) of column c, a
 * picture as fine as a figure shows, whatever the schedule's length. */
#define LP_REPORT_SCHEDULE_COLUMNS 1024
typedef struct lp_report_schedule {
	char *policy;
	uint64_t quantum, ticks;
	/* With a memory (0: none), its frames, policy and fault ticks. */
	uint64_t memory, fault_ticks;
	const lp_policy_info *replacement;
	lp_report_cpu *cpu;
	size_t ncpus;
	lp_report_unit *unit;
	size_t nunits;
	/* From lp_report_replay_schedule, else NULL: per cpu, per column, the
	 * task row (index into lp_report.tasks) + 1, 0 when idle. */
	uint32_t (*columns)[LP_REPORT_SCHEDULE_COLUMNS];
} lp_report_schedule;

/* A policy's faults at some sizes (laplace sim's, sim.h): frames for a
 * fixed-space policy, windows for ws and vmin. */
typedef struct lp_report_curve {
	const lp_policy_info *policy;
	size_t n;
	uint64_t *size, *faults, *space_time;
} lp_report_curve;

typedef struct lp_report {
	enum lp_report_source source;
	char *title;                /* the input as named on the command line */
	bool has_stats;             /* a capture's or directory's merge statistics */
	lp_stats stats;
	uint64_t refs_by_type[6];   /* as read, "rwiRWI" order */
	uint64_t references, distinct;
	uint64_t *misses;           /* LRU misses with f frames, f = 0 .. distinct */
	GArray *processes;          /* lp_report_process, in order of creation */
	GArray *tasks;              /* lp_report_task, grouped by process */
	GArray *runs;               /* lp_report_run, in time order */
	GPtrArray *programs;        /* distinct program names, first run first */
	bool has_time;              /* first_ts and last_ts are known */
	uint64_t first_ts, last_ts;
	/* A directory's units, in the order a schedule report lists them
	 * (9.3); only pid, tid and incarnation are set. */
	lp_sched_unit *units;
	size_t nunits;
	lp_report_schedule *schedule;
	/* The references as dense pages, held for lp_report_simulate (which
	 * frees them); NULL when they are more pages than a trace holds. */
	lp_trace *trace;
	/* From lp_report_simulate: the fixed-space policies asked for, and ws
	 * and vmin (nlifetime 2), else none. */
	lp_report_curve *curves;
	size_t ncurves;
	lp_report_curve lifetime[2];
	size_t nlifetime;
	/* When the footprint passes LP_REPORT_MINI_PAGES, the curves of the
	 * policies lp_sim_miniature names come from miniature simulations
	 * of sample_pages (sim's --sample-pages LP_REPORT_SAMPLE_PAGES):
	 * sampled pages and R; else 0. */
	uint64_t sampled_pages;
	double sample_rate;
} lp_report;

#define LP_REPORT_MINI_PAGES 100000
#define LP_REPORT_SAMPLE_PAGES 8192

/* Gather a report, telling progress (may be NULL) the references read.
 * NULL with err set: the status and message of the reader or merge that
 * failed. */
lp_report *lp_report_from_capture(const lp_merge_job *job, const char *title,
				  const lp_progress *progress, lp_error *err);
lp_report *lp_report_from_directory(const char *dir, const lp_progress *progress, lp_error *err);
lp_report *lp_report_from_stream(const char *path, const lp_progress *progress, lp_error *err);
/* Add laplace schedule's report of the directory r is of, the YAML file
 * at path (lp_sched_report_read, src/sched/schedreport.c, with r's units):
 * LP_EINPUT naming file, line and field when it is not one as laplace
 * schedule writes it, keys and values, or lists a unit other than r's
 * units in their order. The file may be no larger than such a report of
 * r's units can be; memory follows the directory, not the file. */
int lp_report_read_schedule(lp_report *r, const char *path, lp_error *err);
/* Run again the schedule read by lp_report_read_schedule (its policy,
 * quantum and processors, and seed for random) over the directory the
 * report is of, to know which task ran on which processor when. LP_EINPUT
 * when the run does not give the report's ticks and references: the
 * report is not of this directory, or not with this seed. */
int lp_report_replay_schedule(lp_report *r, const char *dir, uint64_t seed, lp_error *err);
/* Simulate the fixed-space policies (laplace sim's, at sizes from 1 page
 * to the footprint spread evenly on a log scale: every size a whole curve
 * of a stack algorithm draws, 8 a decade for the others) and ws and vmin
 * (16 windows a decade up to the largest backward distance), on up to
 * threads threads, then let the references go. Past LP_REPORT_MINI_PAGES
 * pages, fifo, clock, segq and arc run miniature simulations (when the
 * sample cannot be made, exact ones). progress (may be NULL) is told
 * the references simulated. */
void lp_report_simulate(lp_report *r, const lp_policy_info *const *policies, size_t n,
			unsigned threads, const lp_progress *progress);
void lp_report_free(lp_report *r);

#endif
