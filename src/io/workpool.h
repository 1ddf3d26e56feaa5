/* One way to run like jobs on threads: an ordered work pool.
 *
 * Jobs are given in order, at most a bounded number in flight, and their
 * results are taken back in the same order, each job's failure with it.
 * Worker threads that cannot start (short of memory or threads) are done
 * without: a thread waiting for a job's result runs the jobs no worker
 * has begun meanwhile, so a pool with no worker at all runs every job in
 * its taker.
 *
 * Every wait has an end: a worker marks every job it begins done, failed
 * or not (the taker's wait); a submitter waits for room only while jobs
 * are in flight, which their taker ends (submit from the taking thread
 * only when lp_workpool_full is false); closing stops the workers after
 * the jobs they are running (their wait for work, then their join). */
#ifndef LAPLACE_WORKPOOL_H
#define LAPLACE_WORKPOOL_H

#include <stdbool.h>

#include "core/error.h"

/* A job: 0, or a status with err set. Runs on a worker or on the thread
 * taking its result, never on two threads at once. */
typedef int (*lp_work_fn)(void *ctx, void *job, lp_error *err);

typedef struct lp_workpool lp_workpool;

/* A pool of up to threads workers (named name) running fn(ctx, job) for
 * at most in_flight jobs (>= 1) given and not yet taken. Never NULL. */
lp_workpool *lp_workpool_new(const char *name, unsigned threads, unsigned in_flight, lp_work_fn fn,
			     void *ctx);
/* The workers that started. */
unsigned lp_workpool_threads(const lp_workpool *p);
/* in_flight jobs are given and not taken: submit would wait. */
bool lp_workpool_full(const lp_workpool *p);
/* Jobs given and not taken. */
unsigned lp_workpool_pending(const lp_workpool *p);
/* Give job (the caller's until it is taken back); waits while the pool
 * is full. */
void lp_workpool_submit(lp_workpool *p, void *job);
/* The oldest job given and not taken, once done (jobs no worker has
 * begun are run here meanwhile, that one first), and its status in *rc
 * (err set if not 0); NULL if none. */
void *lp_workpool_take(lp_workpool *p, int *rc, lp_error *err);
/* Stop the workers once the jobs they run are done; jobs not begun are
 * dropped (they stay their owner's). NULL-safe. */
void lp_workpool_free(lp_workpool *p);

#endif
