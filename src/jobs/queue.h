/* The daemon's queue seen from outside, by `laplace jobs` (queue.c). */
#ifndef LAPLACE_JOBS_QUEUE_H
#define LAPLACE_JOBS_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#include "core/error.h"

/* ---- the queue seen from outside (laplace jobs) ---- */

enum lp_job_state { LP_JOB_QUEUED, LP_JOB_RUNNING, LP_JOB_DONE, LP_JOB_FAILED, LP_JOB_STATE_COUNT };
extern const char *const lp_job_state_names[LP_JOB_STATE_COUNT];

typedef struct lp_queued_job {
	char *name;                  /* the job file's name */
	enum lp_job_state state;
	char *started;               /* running, done, failed: when it started, or NULL */
	uint64_t references, events; /* running: its progress */
	double duration;             /* done, failed: seconds, or -1 */
	char *error;                 /* failed: why, or NULL */
	char *submitted_as;          /* done, failed: the name it came under (its
				      * report's job), which name differs from
				      * when kept as ID~N; or NULL */
	uid_t owner;                 /* its job file's owner, or (uid_t)-1 */
} lp_queued_job;
void lp_queued_job_free(gpointer job);

/* Every job of the spool in spool_dir, by state then name, read without
 * taking the spool (any user who can read it may). *jobs holds
 * lp_queued_job pointers. LP_EUSAGE when spool_dir is not a spool. */
int lp_queue_list(const char *spool_dir, GPtrArray **jobs, lp_error *err);
/* Whether a daemon holds the spool's lock. */
bool lp_queue_daemon_running(const char *spool_dir);

/* Cancel requests (LP_CANCEL_PREFIX, spool.h). */
char *lp_cancel_request_name(const char *id);
int lp_queue_request_cancel(const char *spool_dir, const char *id, lp_error *err);

#endif
