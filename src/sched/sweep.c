/* A sweep of memory sizes: each size its own schedule of the directory,
 * from scratch (its own reading of the files, an empty memory, the random
 * generator seeded anew), on a pool of workers; rows in the order given.
 * The directory is opened once (index.yaml read, files mapped, units
 * found), and each schedule reads it through a share of its own. */
#include "sched/sweep.h"

#include <inttypes.h>
#include <string.h>

#include "laplace/laplace.h"

#include "formats/taskdir.h"
#include "io/io.h"
#include "io/workpool.h"
#include "sched/run.h"

const char lp_sweep_header[] =
	"memory,ticks,references,faults,waits,evictions,busy_ticks,idle_ticks,utilization\n";

void lp_sweep_format_row(GString *table, const lp_sched_report *rep)
{
	uint64_t busy = lp_sched_report_busy(rep);
	char utilization[32], idle[LP_U128_DIGITS];
	lp_sched_report_utilization(rep, utilization);
	g_string_append_printf(table,
			       "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			       ",%" PRIu64 ",%s,%s\n",
			       rep->memory, rep->ticks, busy, rep->mem.faults, rep->mem.waits,
			       rep->mem.evictions, busy, lp_fmt_u128(idle, lp_sched_report_idle(rep)),
			       utilization);
}

int lp_sweep_memory_parse(const char *text, uint64_t **sizes, size_t *n, lp_error *err)
{
	/* Not g_strsplit: its strstr measures the rest of the text at each
	 * item under AddressSanitizer, a time quadratic in a long list. */
	gchar **items = g_strsplit_set(text, ",", -1);
	size_t count = g_strv_length(items);
	uint64_t *out = g_new(uint64_t, count ? count : 1);
	const char *bad = count ? NULL : "";
	for (size_t i = 0; !bad && i < count; i++)
		if (!lp_parse_decimal(items[i], 1, LP_SCHED_MAX_MEMORY, &out[i]))
			bad = items[i];
	int rc = 0;
	if (bad && bad[0] && !bad[strspn(bad, "0123456789")])
		rc = lp_fail(err, LP_EUSAGE, "--memory: %s is out of range (1 to %" PRIu64 " frames)",
			     bad, LP_SCHED_MAX_MEMORY);
	else if (bad)
		rc = lp_fail(err, LP_EUSAGE, "--memory must be a decimal number of frames from 1 to %"
			     PRIu64 ", or several separated by commas, not '%s'", LP_SCHED_MAX_MEMORY,
			     text);
	g_strfreev(items);
	if (rc) {
		g_free(out);
		return rc;
	}
	*sizes = out;
	*n = count;
	return 0;
}

typedef struct sweep_run {
	const lp_sweep_plan *rq;
	lp_taskdir *dir;
	size_t index;
	unsigned max_open;
	lp_sched_report *rep; /* once run */
} sweep_run;

/* One size, on a worker: its run's report. */
static int sweep_one(void *ctx, void *job, lp_error *err)
{
	(void)ctx;
	sweep_run *r = job;
	const lp_sweep_plan *rq = r->rq;
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
	r->rep = g_memdup2(&rep, sizeof rep);
	return 0;
}

/* The runs of every size, told to rq->row in order; with check_output,
 * rq->output must not be one of the directory's files. */
static int sweep_runs(const lp_sweep_plan *rq, bool check_output, bool *stopped, lp_error *err)
{
	*stopped = false;
	/* The thread taking the rows runs sizes too while it waits. */
	unsigned running = (unsigned)MIN((size_t)MAX(rq->threads, 1u), MAX(rq->nmemory, 1));
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
	if (check_output) { /* the table must not replace a file the runs read */
		const char *outs[] = {rq->output};
		const char *const *inputs = lp_taskdir_paths(dir);
		size_t nin = 0;
		while (inputs[nin])
			nin++;
		if ((rc = lp_check_outputs(inputs, nin, outs, 1, err))) {
			lp_taskdir_close(dir);
			return rc;
		}
	}
	sweep_run *runs = g_new0(sweep_run, MAX(rq->nmemory, 1));
	lp_workpool *pool = lp_workpool_new("laplace-sweep", running - 1,
					    (unsigned)MIN(MAX(rq->nmemory, 1), 1024u), sweep_one, NULL);
	size_t given = 0, taken = 0;
	while (taken < rq->nmemory && !rc) {
		if (rq->stop && *rq->stop)
			*stopped = true;
		if (*stopped)
			break;
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
		if (job_rc) {
			rc = job_rc;
			*err = job_err;
		} else {
			*stopped = rq->row && rq->row(rq->row_ctx, r->rep);
			lp_sched_report_free(r->rep);
			g_free(r->rep);
			r->rep = NULL;
		}
	}
	/* The sizes not begun are dropped; those done and not taken freed. */
	lp_workpool_free(pool);
	for (size_t i = 0; i < given; i++)
		if (runs[i].rep) {
			lp_sched_report_free(runs[i].rep);
			g_free(runs[i].rep);
		}
	lp_taskdir_close(dir);
	g_free(runs);
	return rc;
}

int lp_schedule_sweep_rows(const lp_sweep_plan *rq, bool *stopped, lp_error *err)
{
	return sweep_runs(rq, false, stopped, err);
}

static int append_row(void *ctx, const lp_sched_report *rep)
{
	lp_sweep_format_row(ctx, rep);
	return 0;
}

int lp_schedule_sweep(const lp_sweep_plan *rq, lp_error *err)
{
	GString *table = g_string_new(lp_sweep_header);
	lp_sweep_plan with_table = *rq;
	with_table.row = append_row;
	with_table.row_ctx = table;
	with_table.stop = NULL;
	bool stopped;
	int rc = sweep_runs(&with_table, true, &stopped, err);
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

/* ---- lp_sweep_memory (laplace.h) ---- */

void lp_sweep_request_init_sized(lp_sweep_request *rq, size_t size)
{
	if (!rq)
		return;
	if (size != sizeof *rq) { /* recorded alone, for lp_sweep_memory to refuse */
		if (size >= sizeof rq->size)
			rq->size = size;
		return;
	}
	*rq = (lp_sweep_request){.size = size};
}

/* The caller's request as the sweep's plan, checked as laplace schedule
 * checks its options (its messages): 0 or LP_EUSAGE. */
static int plan_of(const char *dir, const lp_sweep_request *rq, lp_sweep_plan *plan,
		   uint64_t **sizes, lp_error *err)
{
	*plan = (lp_sweep_plan){
		.dir = dir,
		.opt = {.policy = LP_SCHED_RR, .quantum = rq->quantum ? rq->quantum
								   : LP_SCHED_DEFAULT_QUANTUM,
			.cpus = rq->cpus ? rq->cpus : 1, .seed = rq->seed,
			.fault_ticks = rq->fault_ticks ? rq->fault_ticks
						       : LP_SCHED_DEFAULT_FAULT_TICKS},
		.user_only = rq->user_only,
		.threads = rq->threads ? rq->threads : g_get_num_processors(),
	};
	int policy = rq->policy ? lp_sched_policy_parse(rq->policy) : LP_SCHED_RR;
	if (policy < 0)
		return lp_fail(err, LP_EUSAGE, "--policy must be as-traced, rr or random, not '%s'",
			       rq->policy);
	plan->opt.policy = (enum lp_sched_policy)policy;
	if (rq->cpus > LP_SCHED_MAX_CPUS)
		return lp_fail(err, LP_EUSAGE, "--cpus is out of range (1 to %u), not %u",
			       LP_SCHED_MAX_CPUS, rq->cpus);
	if (policy == LP_SCHED_AS_TRACED)
		return lp_fail(err, LP_EUSAGE, "--memory goes with --policy rr or random");
	int rc = lp_sweep_memory_parse(rq->memory, sizes, &plan->nmemory, err);
	if (rc)
		return rc;
	plan->memory = *sizes;
	plan->opt.replacement = lp_policy_find("lru");
	if (rq->replacement && !(plan->opt.replacement = lp_sched_replacement_find(rq->replacement))) {
		char *names = lp_sched_replacement_names();
		lp_fail(err, LP_EUSAGE, "--replacement must be %s, not '%s'", names, rq->replacement);
		g_free(names);
		return LP_EUSAGE;
	}
	if (plan->opt.fault_ticks > LP_SCHED_MAX_MEMORY)
		return lp_fail(err, LP_EUSAGE, "--fault-ticks is out of range (1 to %" PRIu64 "), not %"
			       PRIu64, LP_SCHED_MAX_MEMORY, plan->opt.fault_ticks);
	return 0;
}

/* A run's row, as the table prints it. */
static int tell_row(void *ctx, const lp_sched_report *rep)
{
	const lp_sweep_request *rq = ctx;
	char utilization[32];
	lp_sched_report_utilization(rep, utilization);
	lp_u128 idle = lp_sched_report_idle(rep);
	uint64_t busy = lp_sched_report_busy(rep);
	lp_memory_row row = {
		.memory = rep->memory,
		.ticks = rep->ticks,
		.references = busy,
		.faults = rep->mem.faults,
		.waits = rep->mem.waits,
		.evictions = rep->mem.evictions,
		.busy_ticks = busy,
		.idle_ticks = idle > UINT64_MAX ? UINT64_MAX : (uint64_t)idle,
		.utilization = g_ascii_strtod(utilization, NULL),
	};
	return rq->rows ? rq->rows(rq->ctx, &row, 1) : 0;
}

int lp_sweep_memory(const char *dir, const lp_sweep_request *rq, lp_error *err)
{
	lp_error dropped = {0};
	if (!err)
		err = &dropped;
	if (!dir)
		return lp_fail(err, LP_EUSAGE, "lp_sweep_memory: argument dir: NULL"), -1;
	if (!rq)
		return lp_fail(err, LP_EUSAGE, "lp_sweep_memory: argument rq: NULL"), -1;
	if (rq->size != sizeof *rq)
		return lp_fail(err, LP_EUSAGE, "lp_sweep_memory: field size: %zu is not the size of an "
			       "lp_sweep_request (%zu bytes): not set up by lp_sweep_request_init, "
			       "or from a newer laplace.h than this library's (%d.%d.%d)", rq->size,
			       sizeof *rq, LP_VERSION_MAJOR, LP_VERSION_MINOR, LP_VERSION_PATCH), -1;
	if (!rq->memory)
		return lp_fail(err, LP_EUSAGE, "lp_sweep_memory: field memory: NULL"), -1;
	lp_sweep_plan plan;
	uint64_t *sizes = NULL;
	bool stopped = false;
	int rc = plan_of(dir, rq, &plan, &sizes, err);
	if (!rc) {
		plan.row = tell_row;
		plan.row_ctx = (void *)rq;
		plan.stop = rq->stop;
		rc = lp_schedule_sweep_rows(&plan, &stopped, err);
	}
	g_free(sizes);
	return rc ? -1 : stopped;
}
