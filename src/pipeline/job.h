/* A whole merge, from input paths to a finished output: what `laplace
 * merge`, `laplace batch` and the daemon share. */
#ifndef LAPLACE_JOB_H
#define LAPLACE_JOB_H

#include <stdbool.h>

#include "io/io.h"
#include "formats/forms.h"
#include "pipeline/pipeline.h"
#include "formats/procindex.h"

typedef struct lp_merge_job {
	const char *reference;   /* raw reference trace ("-": standard input) */
	const char *kernel;      /* kernel event trace ("-": standard input) */
	enum lp_ref_format ref_format;
	enum lp_endian endian;
	bool user_only;
	bool strict;
	/* The page offset, when page_offset_set; else, as lp_merge_job_init
	 * leaves it, the default of the capture's width (its reference
	 * source's): LP_DEFAULT_PAGE_OFFSET for 32 bits, LP_PAGE_OFFSET_64
	 * for 64 (laplace-formats(5) 10.2). */
	uint64_t page_offset;
	bool page_offset_set;
	bool per_process;        /* output is a directory (laplace-formats(5),
				  * "PER-PROCESS MERGE OUTPUT") */
	enum lp_layout layout;   /* per-process: a file per task or per process */
	bool discard;            /* write nothing: only the statistics */
	const char *output;      /* basic: file, or NULL/"-" for standard output */
	int output_dir_fd;       /* AT_FDCWD, or output's directory already
				  * resolved (the daemon's confinement): output's
				  * last component is created there, never
				  * followed (io/staging.h) */
	bool force;              /* per-process: replace an existing directory */
	enum lp_compress compress; /* basic output */
	int level;               /* its compression level, or LP_LEVEL_DEFAULT */
	enum lp_form form;       /* basic output (laplace-formats(5), "FORMS
				  * FOR SIMULATORS"); per-process: LP_FORM_BIN
				  * for the binary task form, else text */
	const char *stats_path;  /* the statistics as YAML, or NULL; published
				  * with the output, all or nothing */
	lp_warn_fn warn;         /* may be NULL */
	void *warn_ctx;
	lp_progress_fn progress; /* may be NULL */
	void *progress_ctx;
	unsigned threads;        /* lp_pipeline.threads */
} lp_merge_job;

/* The run the merge, the library's capture reader, batch jobs and report
 * share: the job's two inputs opened as sources, a merge core, and the
 * pipeline between them, whose sink the caller sets (and whose threads,
 * progress and warnings come from the job). */
typedef struct lp_run {
	lp_ref_source *refs;
	lp_event_source *kern;
	lp_merge *merge;
	lp_pipeline pipeline;
} lp_run;
/* Open job's inputs into r; returns 0, or an lp_status with err set and
 * nothing left open. */
int lp_run_open(lp_run *r, const lp_merge_job *job, lp_error *err);
/* Close what lp_run_open opened (r may be all zeros). */
void lp_run_close(lp_run *r);

/* Fill in the defaults (auto format, little endian, the page offset of
 * the capture's width). */
void lp_merge_job_init(lp_merge_job *job);
/* Run it. On success returns 0 with *stats filled; on failure returns an
 * lp_status with err set and leaves no output that looks complete. */
int lp_merge_job_run(const lp_merge_job *job, lp_stats *stats, lp_error *err);
/* The statistics of job's merge, nothing else written (`laplace stat` of
 * a capture); with stats_path (NULL: none) also staged there as YAML in
 * *yaml, for the caller to publish once it has written its summary. 0, or
 * an lp_status with err set: stats_path would replace an input, or the
 * merge failed. */
int lp_merge_stats_only(lp_merge_job *job, const char *stats_path, lp_stats *stats, lp_staged **yaml,
			lp_error *err);

#endif
