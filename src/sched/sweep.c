/* A sweep of memory sizes: each size its own schedule of the directory,
 * from scratch (its own reading of the files, an empty memory, the random
 * generator seeded anew), on a pool of workers; rows in the order given. */
#include "sched/sweep.h"

#include <inttypes.h>

#include "io/io.h"
#include "io/workpool.h"
#include "sched/publish.h"
#include "sched/run.h"

const char lp_sweep_header[] =
	"memory,ticks,references,faults,waits,evictions,busy_ticks,idle_ticks,utilization\n";

void lp_sweep_row(GString *table, const lp_sched_report *rep)
{
	uint64_t busy = lp_sched_report_busy(rep);
	char utilization[32];
	lp_sched_report_utilization(rep, utilization);
	g_string_append_printf(table,
			       "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			       ",%" PRIu64 ",%" PRIu64 ",%s\n",
			       rep->memory, rep->ticks, busy, rep->mem.faults, rep->mem.waits,
			       rep->mem.evictions, busy, rep->ticks * rep->cpus - busy, utilization);
}

typedef struct sweep_run {
	const lp_sweep_request *rq;
	size_t index;
	unsigned max_open;
	GString *row;
} sweep_run;

/* lp_sched_dir_options.ready: the table must not replace a file the
 * run reads. */
static int sweep_ready(void *ctx, const lp_sched_input *in, const char *const *inputs,
		       lp_error *err)
{
	(void)in;
	const lp_sweep_request *rq = ctx;
	size_t nin = 0;
	while (inputs[nin])
		nin++;
	const char *outs[] = {rq->output};
	return lp_check_outputs(inputs, nin, outs, 1, err);
}

/* One size, on a worker: its row. */
static int sweep_one(void *ctx, void *job, lp_error *err)
{
	(void)ctx;
	sweep_run *r = job;
	const lp_sweep_request *rq = r->rq;
	lp_sched_dir_options dopt = {
		.sched = rq->opt,
		.user_only = rq->user_only,
		.max_open = r->max_open,
		.threads = 1, /* the sizes are the parallel work */
		.ready = sweep_ready,
		.ready_ctx = (void *)rq,
	};
	dopt.sched.memory = rq->memory[r->index];
	dopt.sched.renumber = false;
	lp_sched_sink sink = {0}; /* no stream: the figures only */
	lp_sched_report rep;
	int rc = lp_sched_dir_run(rq->dir, &dopt, &sink, &rep, err);
	if (rc)
		return rc;
	r->row = g_string_new(NULL);
	lp_sweep_row(r->row, &rep);
	lp_sched_report_free(&rep);
	return 0;
}

int lp_schedule_sweep(const lp_sweep_request *rq, lp_error *err)
{
	/* The thread taking the rows runs sizes too while it waits. */
	unsigned running = (unsigned)MIN((size_t)MAX(rq->threads, 1u), rq->nmemory);
	unsigned budget = lp_schedule_fd_budget(1);
	if (budget < running)
		return lp_fail(err, LP_EUSAGE, "too few file descriptors (ulimit -n) for %u schedules",
			       running);
	int rc = lp_schedule_check_dir(rq->dir, err);
	if (rc)
		return rc;
	sweep_run *runs = g_new0(sweep_run, rq->nmemory);
	lp_workpool *pool = lp_workpool_new("laplace-sweep", running - 1, (unsigned)MIN(rq->nmemory, 1024u),
					    sweep_one, NULL);
	GString *table = g_string_new(lp_sweep_header);
	size_t given = 0, taken = 0;
	while (taken < rq->nmemory) {
		while (given < rq->nmemory && !lp_workpool_full(pool)) {
			runs[given] = (sweep_run){rq, given, budget / running, NULL};
			lp_workpool_submit(pool, &runs[given++]);
		}
		lp_error job_err = {0};
		int job_rc = 0;
		sweep_run *r = lp_workpool_take(pool, &job_rc, &job_err);
		taken++;
		if (job_rc && !rc) {
			rc = job_rc;
			*err = job_err;
		}
		if (!rc)
			g_string_append_len(table, r->row->str, (gssize)r->row->len);
	}
	lp_workpool_free(pool);
	for (size_t i = 0; i < rq->nmemory; i++)
		if (runs[i].row)
			g_string_free(runs[i].row, TRUE);
	g_free(runs);
	if (!rc) {
		lp_output *out = lp_output_open(rq->output, LP_COMPRESS_NONE, err);
		if (!out)
			rc = err->status;
		else if ((rc = lp_output_write(out, table->str, table->len, err)))
			lp_output_abort(out);
		else
			rc = lp_output_commit(out, err);
	}
	g_string_free(table, TRUE);
	return rc;
}
