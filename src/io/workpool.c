/* The ordered work pool: see io/workpool.h.
 *
 * Jobs sit in a ring of in_flight slots, counted by three numbers that
 * only grow: given (submitted), begun (by a worker or a taker) and taken.
 * Jobs are begun in the order they were given; a taker whose job is not
 * done runs the next job not begun, if any, rather than wait. Wake-ups cost a
 * system call each: a thread is woken only if one waits. */
#include "io/workpool.h"

#include <glib.h>

typedef struct work_slot {
	void *job;
	int rc;
	lp_error err;
	bool done; /* under the lock */
} work_slot;

struct lp_workpool {
	lp_work_fn fn;
	void *ctx;
	work_slot *slots;
	unsigned nslots;
	guint64 given, begun, taken;
	GMutex lock;
	GCond work;            /* a job given, or closing */
	GCond done;            /* a job done */
	GCond room;            /* a job taken */
	unsigned idle, waiting_done, waiting_room;
	bool closing;
	GThread **workers;
	unsigned nworkers;
};

/* Run the job of slot s, begun by this thread: the lock held, and
 * dropped meanwhile. */
static void run_job(lp_workpool *p, work_slot *s)
{
	g_mutex_unlock(&p->lock);
	lp_error err = {0};
	int rc = p->fn(p->ctx, s->job, &err);
	g_mutex_lock(&p->lock);
	s->rc = rc;
	if (rc)
		s->err = err;
	s->done = true;
	if (p->waiting_done)
		g_cond_broadcast(&p->done);
}

static gpointer worker_main(gpointer data)
{
	lp_workpool *p = data;
	g_mutex_lock(&p->lock);
	for (;;) {
		while (!p->closing && p->begun == p->given) {
			p->idle++;
			g_cond_wait(&p->work, &p->lock);
			p->idle--;
		}
		if (p->closing)
			break;
		run_job(p, &p->slots[p->begun++ % p->nslots]);
	}
	g_mutex_unlock(&p->lock);
	return NULL;
}

lp_workpool *lp_workpool_new(const char *name, unsigned threads, unsigned in_flight, lp_work_fn fn,
			     void *ctx)
{
	lp_workpool *p = g_new0(lp_workpool, 1);
	p->fn = fn;
	p->ctx = ctx;
	p->nslots = MAX(in_flight, 1u);
	p->slots = g_new0(work_slot, p->nslots);
	g_mutex_init(&p->lock);
	g_cond_init(&p->work);
	g_cond_init(&p->done);
	g_cond_init(&p->room);
	p->workers = g_new0(GThread *, MAX(threads, 1u));
	while (p->nworkers < threads &&
	       (p->workers[p->nworkers] = g_thread_try_new(name, worker_main, p, NULL)))
		p->nworkers++;
	return p;
}

unsigned lp_workpool_threads(const lp_workpool *p)
{
	return p->nworkers;
}

bool lp_workpool_full(const lp_workpool *p)
{
	return lp_workpool_pending(p) == p->nslots;
}

unsigned lp_workpool_pending(const lp_workpool *p)
{
	lp_workpool *q = (lp_workpool *)p; /* the lock only */
	g_mutex_lock(&q->lock);
	unsigned n = (unsigned)(p->given - p->taken);
	g_mutex_unlock(&q->lock);
	return n;
}

void lp_workpool_submit(lp_workpool *p, void *job)
{
	g_mutex_lock(&p->lock);
	while (p->given - p->taken == p->nslots) {
		p->waiting_room++;
		g_cond_wait(&p->room, &p->lock);
		p->waiting_room--;
	}
	work_slot *s = &p->slots[p->given++ % p->nslots];
	s->job = job;
	s->done = false;
	if (p->idle)
		g_cond_signal(&p->work);
	g_mutex_unlock(&p->lock);
}

void *lp_workpool_take(lp_workpool *p, int *rc, lp_error *err)
{
	g_mutex_lock(&p->lock);
	if (p->taken == p->given) {
		g_mutex_unlock(&p->lock);
		*rc = 0;
		return NULL;
	}
	/* Rather than wait for the oldest job, run the next one no worker has
	 * begun (the oldest first, if none has). */
	work_slot *s = &p->slots[p->taken % p->nslots];
	while (!s->done) {
		if (p->begun < p->given) {
			run_job(p, &p->slots[p->begun++ % p->nslots]);
			continue;
		}
		p->waiting_done++;
		g_cond_wait(&p->done, &p->lock);
		p->waiting_done--;
	}
	void *job = s->job;
	*rc = s->rc;
	if (s->rc && err)
		*err = s->err;
	p->taken++;
	if (p->waiting_room)
		g_cond_signal(&p->room);
	g_mutex_unlock(&p->lock);
	return job;
}

void lp_workpool_free(lp_workpool *p)
{
	if (!p)
		return;
	g_mutex_lock(&p->lock);
	p->closing = true;
	g_cond_broadcast(&p->work);
	g_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nworkers; i++)
		g_thread_join(p->workers[i]);
	g_cond_clear(&p->room);
	g_cond_clear(&p->done);
	g_cond_clear(&p->work);
	g_mutex_clear(&p->lock);
	g_free(p->workers);
	g_free(p->slots);
	g_free(p);
}
