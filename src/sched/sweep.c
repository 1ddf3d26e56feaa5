/* A sweep of memory sizes: each size its own schedule of the directory,
 * from scratch (its own reading of the files, an empty memory, the random
 * generator seeded anew), on a pool of workers; rows in the order given.
 * The directory is opened once (index.yaml read, files mapped, units
 * found), and each schedule reads it through a share of its own. */
#include "sched/sweep.h"

#include <inttypes.h>

#include "formats/taskdir.h"
#include "io/io.h"
#include "io/workpool.h"
#include "sched/publish.h"

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
	lp_taskdir *dir;
	size_t index;
	unsigned max_open;
	GString *row;
} sweep_run;

/* One size, on a worker: its row. */
static int sweep_one(void *ctx, void *job, lp_error *err)
{
	(void)ctx;
	sweep_run *r = job;
	const lp_sweep_request *rq = r->rq;
	lp_sched_options opt = rq->opt;
	opt.memory = rq->memory[r->index];
	opt.renumber = false;
	lp_sched_sink sink = {0}; /* no stream: the figures only */
	lp_sched_report rep;
	lp_taskdir *share = lp_taskdir_share(r->dir, r->max_open);
	int rc = lp_schedule_run(lp_taskdir_input(share), &opt, &sink, &rep, err);
	lp_taskdir_close(share);
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
	lp_taskdir_options topt = {
		.unit_streams = true,
		.user_only = rq->user_only,
		.max_open = budget,
		/* The files searched for units on every core; then the sizes
		 * are the parallel work, each read on one thread. */
		.threads = MAX(rq->threads, 1u),
		.search_only = true,
		.slice = rq->opt.quantum,
	};
	lp_taskdir *dir = lp_taskdir_open(rq->dir, &topt, err);
	if (!dir)
		return err->status;
	/* The table must not replace a file the runs read. */
	const char *outs[] = {rq->output};
	const char *const *inputs = lp_taskdir_paths(dir);
	size_t nin = 0;
	while (inputs[nin])
		nin++;
	if ((rc = lp_check_outputs(inputs, nin, outs, 1, err))) {
		lp_taskdir_close(dir);
		return rc;
	}
	sweep_run *runs = g_new0(sweep_run, rq->nmemory);
	lp_workpool *pool = lp_workpool_new("laplace-sweep", running - 1, (unsigned)MIN(rq->nmemory, 1024u),
					    sweep_one, NULL);
	GString *table = g_string_new(lp_sweep_header);
	size_t given = 0, taken = 0;
	while (taken < rq->nmemory) {
		while (given < rq->nmemory && !lp_workpool_full(pool)) {
			runs[given] = (sweep_run){rq, dir, given, budget / running, NULL};
			lp_workpool_submit(pool, &runs[given++]);
		}
		lp_error job_err = {0};
		int job_rc = 0;
		sweep_run *r = lp_workpool_take(pool, &job_rc, &job_err);
		taken++;
		if (rq->progress.fn) {
			lp_progress_info info = {.records = taken,
						 .fraction = (double)taken / (double)rq->nmemory};
			rq->progress.fn(rq->progress.ctx, &info);
		}
		if (job_rc && !rc) {
			rc = job_rc;
			*err = job_err;
		}
		if (!rc)
			g_string_append_len(table, r->row->str, (gssize)r->row->len);
	}
	lp_workpool_free(pool);
	lp_taskdir_close(dir);
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
