/* The daemon's spool (spool.c). */
#ifndef LAPLACE_JOBS_SPOOL_H
#define LAPLACE_JOBS_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#include "core/error.h"

/* ---- the daemon's spool (laplace-daemon(1)) ----
 *
 * The spool invariants, numbered, are at the top of src/jobs/spool.c. */

typedef struct lp_spool lp_spool;

/* Open the spool: create incoming/, running/, done/ and failed/ if needed,
 * check and open them (spool invariant (3)) and lock the spool (2). A held
 * lock fails with LP_EIO and a message naming the holder's pid. */
lp_spool *lp_spool_open(const char *dir, lp_error *err);
void lp_spool_close(lp_spool *spool);
/* DIR/SUB/NAME, newly allocated. */
char *lp_spool_path(const lp_spool *spool, const char *sub, const char *name);

/* Job files waiting in incoming/ (names ending in ".yaml", not starting
 * with "."), sorted by name. */
GPtrArray *lp_spool_incoming(const lp_spool *spool);
/* Claim a job: rename incoming/NAME into running/ (spool invariant (4)).
 * Returns 1 when claimed, 0 when it was gone or running/ holds a job of
 * its name (it waits) or it was refused before and is still left there,
 * LP_SPOOL_REFUSED with err saying why and what became of it when it may
 * not run (spool invariant (14): removed, or left in incoming/), -1 with
 * err set on another failure. */
int lp_spool_claim(lp_spool *spool, const char *name, lp_error *err);
#define LP_SPOOL_REFUSED (-2)
/* Read a claimed job file (running/NAME) if it may be run: a regular file
 * with one link, writable by nobody but its owner, and, for a daemon not
 * running as root, owned by the daemon's own user; checked on the file
 * opened (spool invariant (4)). 0 with *owner and the text set (as
 * lp_jobfile_read), or an lp_status with err saying why. */
int lp_spool_read_job(const lp_spool *spool, const char *name, uid_t *owner, char **text,
		      size_t *len, lp_error *err);
/* How many runs of the job file running/NAME were interrupted (by a stop
 * past the grace period, or a crash of the daemon) and requeued, as kept
 * in running/ID.attempts: 0 unless that file was written for this very job
 * file (spool invariant (12)), so a new job of the same name, or the same
 * file rewritten, starts afresh. */
unsigned lp_spool_attempts(const lp_spool *spool, const char *name);
/* Put a running job back into incoming/ after its attempts-th interrupted
 * run, recorded in running/ID.attempts, which outlives the daemon (spool
 * invariants (11) and (12)). LP_SPOOL_NAME_TAKEN, with err not set, when
 * incoming/ holds another job file of its name (spool invariant (13)). */
int lp_spool_requeue(lp_spool *spool, const char *name, unsigned attempts, lp_error *err);
#define LP_SPOOL_NAME_TAKEN (-1)
/* Finish job file FROM/NAME (from "running", or "incoming" for a queued
 * job that fails without running): write done/ID.report.yaml (or
 * failed/...), remove the job's status and attempts files, then move the
 * job file beside its report (spool invariants (9) and (11)). ID is NAME
 * without ".yaml", or ID~N when done/ (failed/) holds ID already: *record
 * (unless record is NULL) is then the name the job file is kept under,
 * newly allocated. */
int lp_spool_finish(lp_spool *spool, const char *from, const char *name, bool ok,
		    const char *report, char **record, lp_error *err);
/* Write running/ID.status. */
int lp_spool_status(lp_spool *spool, const char *name, const char *text, lp_error *err);
/* Job names left in running/ by a daemon that died (sorted), once the
 * rest of running/ is cleaned up (spool invariant (11)) and what may not
 * run is removed or put back into incoming/ (14), a message for each
 * added to refused (char *, g_free them). */
GPtrArray *lp_spool_leftovers(lp_spool *spool, GPtrArray *refused);

/* Cancel requests: incoming/.cancel-ID, owned by whoever asks. */
#define LP_CANCEL_PREFIX ".cancel-"

/* A cancel request taken from incoming/ by the daemon. */
typedef struct lp_cancel_request {
	char *id;
	uid_t requester;
} lp_cancel_request;
/* Take (remove) every cancel request waiting in incoming/; requests that
 * are not regular files with one link are dropped. Holds lp_cancel_request
 * pointers. */
GPtrArray *lp_spool_take_cancel_requests(lp_spool *spool);
/* The owner of job file NAME in incoming/ (sub "incoming") or running/;
 * false if it is not there. */
bool lp_spool_job_owner(const lp_spool *spool, const char *sub, const char *name, uid_t *owner);

/* The job's identifier: NAME without ".yaml" (newly allocated). */
char *lp_spool_job_id(const char *name);
/* Whether an output path (as lp_job_confine leaves it; it is then written
 * without following any link) would name the spool's own files: anything
 * in the spool but in done/ and below, and in done/ itself a job file, a
 * report or a status file. */
bool lp_spool_holds(const lp_spool *spool, const char *path);

#endif
