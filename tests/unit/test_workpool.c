/* The ordered work pool: results in submission order, failures carried to
 * their taker, the bound on jobs in flight, no worker at all, and closing
 * mid-stream. */
#include <criterion/criterion.h>
#include <string.h>

#include <glib.h>

#include "io/workpool.h"
#include "threads.h"

typedef struct job {
	unsigned index;
	GThread *ran_on;
} job;

typedef struct counts {
	gint running, most_running; /* jobs begun and not yet taken */
	unsigned in_flight;
	unsigned fail_every;
} counts;

/* Job i fails when fail_every divides it; a little work, unevenly, so that
 * jobs end out of order. */
static int run(void *ctx, void *data, lp_error *err)
{
	counts *c = ctx;
	job *j = data;
	j->ran_on = g_thread_self();
	gint now = g_atomic_int_add(&c->running, 1) + 1;
	for (gint most; (most = g_atomic_int_get(&c->most_running)) < now &&
			!g_atomic_int_compare_and_exchange(&c->most_running, most, now);)
		;
	g_usleep((j->index * 7919) % 5 * 100);
	if (c->fail_every && j->index % c->fail_every == 0)
		return lp_fail(err, LP_EINPUT, "job %u failed", j->index);
	return 0;
}

/* Submit n jobs, taking the oldest whenever the pool is full, then the
 * rest: every result comes back in order with its own status. */
static void ordered(unsigned threads, unsigned in_flight, unsigned n, counts *c)
{
	c->in_flight = in_flight;
	lp_workpool *p = lp_workpool_new("test-pool", threads, in_flight, run, c);
	cr_assert_leq(lp_workpool_threads(p), threads);
	job *jobs = g_new0(job, n);
	unsigned taken = 0;
	for (unsigned i = 0; i < n || lp_workpool_pending(p); ) {
		if (i < n && !lp_workpool_full(p)) {
			jobs[i].index = i;
			lp_workpool_submit(p, &jobs[i++]);
			continue;
		}
		int rc;
		lp_error err = {0};
		job *j = lp_workpool_take(p, &rc, &err);
		g_atomic_int_add(&c->running, -1);
		cr_assert_eq(j, &jobs[taken]);
		if (c->fail_every && taken % c->fail_every == 0) {
			cr_assert_eq(rc, LP_EINPUT);
			char want[64];
			g_snprintf(want, sizeof want, "job %u failed", taken);
			cr_assert_str_eq(err.msg, want);
		} else {
			cr_assert_eq(rc, 0);
			cr_assert_eq(err.status, 0);
		}
		taken++;
	}
	cr_assert_eq(taken, n);
	int rc = 1;
	cr_assert_null(lp_workpool_take(p, &rc, NULL));
	cr_assert_eq(rc, 0);
	cr_assert_leq(g_atomic_int_get(&c->most_running), (gint)in_flight);
	if (!lp_workpool_threads(p))
		for (unsigned i = 0; i < n; i++)
			cr_assert_eq(jobs[i].ran_on, g_thread_self());
	lp_workpool_free(p);
	cr_assert_eq(threads_named("test-pool"), 0);
	g_free(jobs);
}

Test(workpool, results_in_order_with_their_failures)
{
	counts c = {.fail_every = 3};
	ordered(4, 6, 500, &c);
}

Test(workpool, no_worker_runs_every_job_in_the_taker)
{
	counts c = {.fail_every = 5};
	ordered(0, 3, 50, &c);
}

Test(workpool, one_job_in_flight)
{
	counts c = {0};
	ordered(3, 1, 100, &c);
}

/* A submitter on a thread of its own waits for room, which the taker
 * makes: every job arrives, in order. */
typedef struct producer {
	lp_workpool *p;
	job *jobs;
	unsigned n;
} producer;

static gpointer produce(gpointer data)
{
	producer *pr = data;
	for (unsigned i = 0; i < pr->n; i++) {
		pr->jobs[i].index = i;
		lp_workpool_submit(pr->p, &pr->jobs[i]);
	}
	return NULL;
}

Test(workpool, submit_waits_for_room_from_another_taker, .timeout = 30)
{
	counts c = {0};
	producer pr = {lp_workpool_new("test-pool", 2, 2, run, &c), g_new0(job, 200), 200};
	GThread *t = g_thread_new("test-producer", produce, &pr);
	for (unsigned i = 0; i < pr.n; i++) {
		int rc = 1;
		job *j;
		while (!(j = lp_workpool_take(pr.p, &rc, NULL)))
			g_thread_yield(); /* the producer has not given it yet */
		cr_assert_eq(j, &pr.jobs[i]);
		cr_assert_eq(rc, 0);
	}
	g_thread_join(t);
	lp_workpool_free(pr.p);
	g_free(pr.jobs);
}

/* Closing with jobs given and not taken ends every worker; jobs not begun
 * are dropped. */
Test(workpool, closing_mid_stream_ends_every_worker, .timeout = 30)
{
	counts c = {0};
	lp_workpool *p = lp_workpool_new("test-pool", 3, 8, run, &c);
	job jobs[8] = {{0}};
	for (unsigned i = 0; i < 8; i++) {
		jobs[i].index = i;
		lp_workpool_submit(p, &jobs[i]);
	}
	lp_workpool_free(p);
	cr_assert_eq(threads_named("test-pool"), 0);
	lp_workpool_free(NULL);
}

/* Threads cannot start (their stacks cannot be mapped): a pool has no
 * worker, and its taker runs every job. */
Test(workpool, no_thread_can_start)
{
	thread_stacks(THREAD_STACK_TOO_LARGE);
	counts c = {.fail_every = 4};
	lp_workpool *p = lp_workpool_new("test-pool", 4, 4, run, &c);
	cr_assert_eq(lp_workpool_threads(p), 0);
	lp_workpool_free(p);
	ordered(4, 4, 40, &c);
}
