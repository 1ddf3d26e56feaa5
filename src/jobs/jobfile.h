/* Merge jobs described in YAML (laplace-jobs(5)): job files and the
 * daemon's settings. What `laplace batch` and `laplace daemon` need to run
 * them lies beside: confine.h, child.h, runner.h, jobreport.h, spool.h and
 * queue.h. */
#ifndef LAPLACE_JOBFILE_H
#define LAPLACE_JOBFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>
#include <yaml.h>

#include "core/error.h"
#include "pipeline/job.h"
#include "io/yamlout.h"

/* The daemon refuses job files larger than this. */
#define LP_JOBFILE_MAX_BYTES (64 * 1024)

/* ---- job files ---- */

/* The keys of a job, for the line numbers kept per key. */
enum lp_job_key {
	LP_JOB_KEY_REFERENCE, LP_JOB_KEY_KERNEL, LP_JOB_KEY_MODE, LP_JOB_KEY_OUTPUT,
	LP_JOB_KEY_OPTIONS, LP_JOB_KEY_TIMEOUT, LP_JOB_KEY_COUNT
};
extern const char *const lp_job_key_names[LP_JOB_KEY_COUNT];

/* One job as its file describes it. Strings are owned (lp_job_spec_clear). */
typedef struct lp_job_spec {
	char *reference;
	char *kernel;
	char *output;
	bool per_process;
	bool user_only;
	bool strict;
	uint64_t page_offset;
	bool page_offset_set;            /* given; else the capture's width's */
	enum lp_endian endian;
	enum lp_compress compress;
	unsigned timeout;                /* seconds, or 0: the runner's limit */
	size_t line;                     /* 1-based line where the job starts */
	size_t key_line[LP_JOB_KEY_COUNT]; /* line of each key given */
} lp_job_spec;

void lp_job_spec_clear(lp_job_spec *spec);
/* Fill a merge job that borrows spec's strings. Existing outputs are
 * replaced (force), as a basic output always is. */
void lp_job_spec_to_merge(const lp_job_spec *spec, lp_merge_job *job);
/* The time limit spec runs under, in seconds (0: none), given the runner's
 * limit (--job-timeout, 0: none): its own timeout key may lower the
 * runner's limit, never raise it. */
unsigned lp_job_spec_time_limit(const lp_job_spec *spec, unsigned runner_limit);

/* Read a whole job file of at most max_bytes: a regular file, opened
 * read-only without following a final symbolic link and without blocking
 * on a FIFO, whose lines are at most LP_LINE_MAX bytes long. *text is
 * NUL-terminated; free it with g_free. */
int lp_jobfile_read(const char *path, size_t max_bytes, char **text, size_t *len, lp_error *err);
/* Refuse (and free) a read job file's text with a line over LP_LINE_MAX. */
int lp_jobfile_check_lines(const char *path, char **text, size_t len, lp_error *err);

/* Parse one job (a daemon job file). name is used in messages; paths are
 * kept as written. Errors name the file, the line and the key. */
int lp_jobfile_parse_job(const char *name, const char *text, size_t len,
			 lp_job_spec *spec, lp_error *err);

/* Parse a batch file (`jobs:` and a list of jobs) into *jobs (an array of
 * *njobs, free with lp_job_specs_free). Relative paths are made relative
 * to base_dir. */
int lp_jobfile_parse_batch(const char *name, const char *text, size_t len,
			   const char *base_dir, lp_job_spec **jobs, size_t *njobs,
			   lp_error *err);
void lp_job_specs_free(lp_job_spec *jobs, size_t njobs);

/* ---- daemon settings (laplace-daemon(1), --config) ---- */

enum lp_log_level { LP_LOG_ERROR, LP_LOG_WARNING, LP_LOG_INFO, LP_LOG_DEBUG, LP_LOG_LEVEL_COUNT };
extern const char *const lp_log_level_names[LP_LOG_LEVEL_COUNT];
/* The lp_log_level named s ("error", ...), or -1. */
int lp_log_level_parse(const char *s);

/* Settings a daemon rereads on SIGHUP. Absent keys stay "not set": 0 for
 * jobs, rescan and max_attempts, -1 for grace, log_level and job_timeout. */
typedef struct lp_daemon_settings {
	int jobs;         /* jobs run at a time */
	int grace;        /* seconds running jobs get to finish when stopping */
	int rescan;       /* seconds between rescans of incoming/ */
	int log_level;    /* an lp_log_level */
	int job_timeout;  /* seconds a job may run (unless its own key says), 0: no limit */
	int max_attempts; /* runs a job gets when each is interrupted (a stop, a crash) */
} lp_daemon_settings;
#define LP_DAEMON_SETTINGS_UNSET \
	((lp_daemon_settings){.jobs = 0, .grace = -1, .rescan = 0, .log_level = -1, \
			      .job_timeout = -1, .max_attempts = 0})

int lp_daemon_settings_parse(const char *name, const char *text, size_t len,
			     lp_daemon_settings *settings, lp_error *err);

#endif
