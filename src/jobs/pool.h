/* Children run N at a time from the GLib main loop until done or stopped
 * by a signal (pool.c): the one runner of laplace batch's jobs and laplace
 * study's cells. The caller keeps what there is to run and starts it
 * (lp_job_proc_start, lp_cell_proc_start) from its start callback; the
 * pool counts and holds the running children, stops them on SIGINT,
 * SIGTERM or SIGHUP, and runs the loop until the last has ended. */
#ifndef LAPLACE_JOBS_POOL_H
#define LAPLACE_JOBS_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include <glib.h>

#include "jobs/runner.h"

typedef struct lp_job_pool {
	size_t max_running;  /* children at once */
	size_t running;      /* how many there are now */
	int stopped_by;      /* the signal that stopped the pool, or 0 */
	/* Start what may start now, while lp_job_pool_has_room; not called
	 * once the pool is stopped. */
	void (*start)(void *ctx);
	void *ctx;
	GPtrArray *procs;    /* the running children (lp_job_proc *) */
	guint signal_sources[3];
	GMainLoop *loop;
} lp_job_pool;

/* Children at once when -j is not given: SLURM_CPUS_PER_TASK, else
 * SLURM_CPUS_ON_NODE, else the processors. */
size_t lp_job_pool_default_max_running(void);
/* One child at a time until max_running is set, start(ctx) to fill it. */
void lp_job_pool_init(lp_job_pool *pool, void (*start)(void *ctx), void *ctx);
/* Stop catching signals and free what the pool holds. */
void lp_job_pool_clear(lp_job_pool *pool);
/* SIGINT, SIGTERM and SIGHUP (unless ignored, as under nohup(1)) stop the
 * pool from now on: nothing more starts, the running children get the
 * signal (each removes its temporary outputs and ends) and lp_job_pool_run
 * returns once they have. A signal caught before lp_job_pool_run stops
 * the pool before anything starts. */
void lp_job_pool_catch_signals(lp_job_pool *pool);
/* Stop catching them (the signals' default actions again). */
void lp_job_pool_release_signals(lp_job_pool *pool);
/* Whether one more child may start: not stopped, fewer than max_running. */
bool lp_job_pool_has_room(const lp_job_pool *pool);
/* proc has started (from the start callback). */
void lp_job_pool_started(lp_job_pool *pool, lp_job_proc *proc);
/* proc has ended (from its done callback, once the caller has taken its
 * outcome): start what may start, and end lp_job_pool_run when nothing
 * runs. */
void lp_job_pool_ended(lp_job_pool *pool, lp_job_proc *proc);
/* Take the signals caught so far, start, and run the main loop while
 * any child runs. */
void lp_job_pool_run(lp_job_pool *pool);

#endif
