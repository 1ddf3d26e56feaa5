/* What a report shows, gathered in one pass over a capture's merge, two
 * over a per-process directory (its references in traced order for the
 * miss-ratio curve, then file by file for processes and the timeline), or
 * one over a basic merge stream. */
#include "report/collect.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "formats/basicin.h"
#include "formats/legacy.h"
#include "analysis/mrc.h"
#include "analysis/sim.h"
#include "pipeline/job.h"
#include "formats/procindex.h"
#include "sched/run.h"
#include "sched/schedreport.h"
#include "sched/schedule.h"
#include "formats/taskdir.h"

#define READ_BATCH 4096
/* An E whose program is the next one its process's index entry lists. */
#define PROGRAM_FROM_INDEX (SIZE_MAX - 1)

/* What changes who runs what: S, X, E and F, replayed in time order once
 * everything is read. */
typedef struct switch_event {
	uint64_t ts;
	char tag;
	size_t task;
	size_t arg; /* E: program (or PROGRAM_FROM_INDEX); F: the child's task */
} switch_event;

typedef struct collector {
	lp_report *r;
	lp_mrc *mrc;
	GArray *events;          /* switch_event */
	GPtrArray *page_sets;    /* per process: canonical pages touched */
	GHashTable *program_ids; /* name -> index + 1 */
	GHashTable *task_ids;    /* "pid/tid/serial" (capture) or "pid/tid" -> row + 1 */
	GHashTable *process_ids; /* capture: "pid/serial" -> index + 1 */
	const lp_progress *progress; /* told the references read (may be NULL) */
	uint64_t read;
} collector;

static lp_report *report_new(enum lp_report_source source, const char *title)
{
	lp_report *r = g_new0(lp_report, 1);
	r->source = source;
	r->title = g_strdup(title);
	r->processes = g_array_new(FALSE, TRUE, sizeof(lp_report_process));
	r->tasks = g_array_new(FALSE, TRUE, sizeof(lp_report_task));
	r->runs = g_array_new(FALSE, TRUE, sizeof(lp_report_run));
	r->programs = g_ptr_array_new_with_free_func(g_free);
	return r;
}

void lp_report_free(lp_report *r)
{
	if (!r)
		return;
	for (guint i = 0; i < r->processes->len; i++)
		g_ptr_array_free(g_array_index(r->processes, lp_report_process, i).programs, TRUE);
	g_array_free(r->processes, TRUE);
	g_array_free(r->tasks, TRUE);
	g_array_free(r->runs, TRUE);
	g_ptr_array_free(r->programs, TRUE);
	if (r->schedule) {
		g_free(r->schedule->policy);
		g_free(r->schedule->cpu);
		g_free(r->schedule->unit);
		g_free(r->schedule->columns);
		g_free(r->schedule);
	}
	g_free(r->units);
	g_free(r->misses);
	if (r->trace)
		lp_trace_clear(r->trace);
	g_free(r->trace);
	for (size_t i = 0; i < r->ncurves; i++) {
		g_free(r->curves[i].size);
		g_free(r->curves[i].faults);
		g_free(r->curves[i].space_time);
	}
	g_free(r->curves);
	for (size_t i = 0; i < r->nlifetime; i++) {
		g_free(r->lifetime[i].size);
		g_free(r->lifetime[i].faults);
		g_free(r->lifetime[i].space_time);
	}
	g_free(r->title);
	g_free(r);
}

static void collector_init(collector *c, lp_report *r, const lp_progress *progress)
{
	r->trace = g_new0(lp_trace, 1);
	lp_trace_init(r->trace, 0);
	*c = (collector){
		.r = r,
		.mrc = lp_mrc_new(),
		.events = g_array_new(FALSE, FALSE, sizeof(switch_event)),
		.page_sets = g_ptr_array_new_with_free_func((GDestroyNotify)g_hash_table_destroy),
		.program_ids = g_hash_table_new(g_str_hash, g_str_equal),
		.task_ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
		.process_ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
		.progress = progress,
	};
}

static void collector_free(collector *c)
{
	lp_mrc_free(c->mrc);
	g_array_free(c->events, TRUE);
	g_ptr_array_free(c->page_sets, TRUE);
	g_hash_table_destroy(c->program_ids);
	g_hash_table_destroy(c->task_ids);
	g_hash_table_destroy(c->process_ids);
}

static void note_time(lp_report *r, uint64_t ts)
{
	if (!r->has_time || ts < r->first_ts)
		r->first_ts = ts;
	if (!r->has_time || ts > r->last_ts)
		r->last_ts = ts;
	r->has_time = true;
}

static void count_reference(collector *c, char type, uint64_t canonical)
{
	int t = lp_ref_type_index(type);
	if (t >= 0)
		c->r->refs_by_type[t]++;
	lp_mrc_access(c->mrc, canonical, NULL);
	if (!(++c->read & 0xffff))
		lp_progress_records(c->progress, c->read);
	/* Past LP_TRACE_MAX_PAGES pages the policies are left out (said on
	 * the page), not the report. */
	lp_error ignored = {0};
	if (c->r->trace && lp_trace_add(c->r->trace, type, canonical, &ignored)) {
		lp_trace_clear(c->r->trace);
		g_free(c->r->trace);
		c->r->trace = NULL;
	}
}

static size_t intern_program(collector *c, const char *name)
{
	gpointer id = g_hash_table_lookup(c->program_ids, name);
	if (id)
		return GPOINTER_TO_SIZE(id) - 1;
	g_ptr_array_add(c->r->programs, g_strdup(name));
	size_t index = c->r->programs->len - 1;
	g_hash_table_insert(c->program_ids, g_ptr_array_index(c->r->programs, index),
			    GSIZE_TO_POINTER(index + 1));
	return index;
}

static size_t add_process(collector *c, uint64_t pid)
{
	lp_report_process p = {.pid = pid, .programs = g_ptr_array_new_with_free_func(g_free)};
	g_array_append_val(c->r->processes, p);
	g_ptr_array_add(c->page_sets, g_hash_table_new(g_direct_hash, g_direct_equal));
	return c->r->processes->len - 1;
}

static size_t add_task(collector *c, char *key, uint64_t pid, uint64_t tid, size_t process)
{
	lp_report_task t = {.pid = pid, .tid = tid, .process = process};
	g_array_append_val(c->r->tasks, t);
	g_hash_table_insert(c->task_ids, key, GSIZE_TO_POINTER(c->r->tasks->len));
	g_array_index(c->r->processes, lp_report_process, process).ntasks++;
	return c->r->tasks->len - 1;
}

static void touch_page(collector *c, size_t process, uint64_t canonical)
{
	lp_report_process *p = &g_array_index(c->r->processes, lp_report_process, process);
	p->references++;
	/* Canonical numbers are dense from 0 and fit a pointer on the 64-bit
	 * machines laplace is built for. */
	g_hash_table_add(g_ptr_array_index(c->page_sets, process), GSIZE_TO_POINTER(canonical));
}

static void push_event(collector *c, uint64_t ts, char tag, size_t task, size_t arg)
{
	switch_event ev = {.ts = ts, .tag = tag, .task = task, .arg = arg};
	g_array_append_val(c->events, ev);
}

static int by_time(gconstpointer a, gconstpointer b)
{
	const switch_event *x = a, *y = b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static void add_run(lp_report *r, size_t task, size_t program, uint64_t start, uint64_t end)
{
	if (end <= start)
		return; /* nothing to draw */
	lp_report_run run = {.task = task, .program = program, .start = start, .end = end};
	g_array_append_val(r->runs, run);
}

/* Replay the switches in time order: a task runs from its S to the next
 * S, its own X or the end of the trace; an E splits its run, the program
 * changing; a forked process runs its parent's program until its E. */
static void build_timeline(collector *c)
{
	lp_report *r = c->r;
	/* GLib's array sort is stable: events of one timestamp keep the order
	 * they were read in. */
	g_array_sort(c->events, by_time);
	size_t nproc = r->processes->len;
	size_t *program = g_new(size_t, nproc), *execs = g_new0(size_t, nproc);
	for (size_t p = 0; p < nproc; p++)
		program[p] = LP_REPORT_NO_PROGRAM;
	size_t current = SIZE_MAX, running = LP_REPORT_NO_PROGRAM;
	uint64_t since = 0;
	for (guint i = 0; i < c->events->len; i++) {
		const switch_event *ev = &g_array_index(c->events, switch_event, i);
		size_t proc = g_array_index(r->tasks, lp_report_task, ev->task).process;
		if (ev->tag == 'F') {
			size_t child = g_array_index(r->tasks, lp_report_task, ev->arg).process;
			if (program[child] == LP_REPORT_NO_PROGRAM)
				program[child] = program[proc];
		} else if (ev->tag == 'E') {
			size_t prog = ev->arg;
			if (prog == PROGRAM_FROM_INDEX) {
				GPtrArray *names = g_array_index(r->processes, lp_report_process,
								 proc).programs;
				prog = execs[proc] < names->len
					       ? intern_program(c, g_ptr_array_index(names, execs[proc]))
					       : LP_REPORT_NO_PROGRAM;
			}
			execs[proc]++;
			program[proc] = prog;
			if (current == ev->task) {
				add_run(r, current, running, since, ev->ts);
				running = prog;
				since = ev->ts;
			}
		} else if (ev->tag == 'S') {
			if (current != SIZE_MAX)
				add_run(r, current, running, since, ev->ts);
			current = ev->task;
			running = program[proc];
			since = ev->ts;
		} else if (ev->tag == 'X' && current == ev->task) {
			add_run(r, current, running, since, ev->ts);
			current = SIZE_MAX;
		}
	}
	if (current != SIZE_MAX)
		add_run(r, current, running, since, r->last_ts);
	g_free(program);
	g_free(execs);
}

/* Rows grouped by process (in the order processes were created), tasks
 * in the order they appeared; the runs follow their rows. */
static void group_tasks(lp_report *r)
{
	size_t n = r->tasks->len, nproc = r->processes->len;
	size_t *first = g_new0(size_t, nproc + 1), *row = g_new(size_t, n);
	for (size_t t = 0; t < n; t++)
		first[g_array_index(r->tasks, lp_report_task, t).process + 1]++;
	for (size_t p = 0; p < nproc; p++) {
		first[p + 1] += first[p];
		g_array_index(r->processes, lp_report_process, p).first_task = first[p];
	}
	GArray *grouped = g_array_sized_new(FALSE, FALSE, sizeof(lp_report_task), (guint)n);
	g_array_set_size(grouped, (guint)n);
	for (size_t t = 0; t < n; t++) {
		lp_report_task *task = &g_array_index(r->tasks, lp_report_task, t);
		row[t] = first[task->process]++;
		g_array_index(grouped, lp_report_task, row[t]) = *task;
	}
	for (guint i = 0; i < r->runs->len; i++) {
		lp_report_run *run = &g_array_index(r->runs, lp_report_run, i);
		run->task = row[run->task];
	}
	g_array_free(r->tasks, TRUE);
	r->tasks = grouped;
	g_free(first);
	g_free(row);
}

/* The report's figures once every reference is counted; fails when the
 * input had more pages than the exact LRU curve holds. */
static int finish(collector *c, const char *input, lp_error *err)
{
	lp_report *r = c->r;
	if (lp_mrc_check(c->mrc, input, err))
		return err->status;
	r->references = lp_mrc_references(c->mrc);
	r->distinct = lp_mrc_distinct_pages(c->mrc);
	r->misses = g_new(uint64_t, r->distinct + 1);
	lp_mrc_misses(c->mrc, r->misses);
	if (r->trace)
		lp_trace_done(r->trace);
	for (guint p = 0; p < r->processes->len; p++)
		g_array_index(r->processes, lp_report_process, p).pages =
			g_hash_table_size(g_ptr_array_index(c->page_sets, p));
	build_timeline(c);
	group_tasks(r);
	return 0;
}

/* ---- a capture, merged here with a sink of our own ---- */

static size_t capture_task(collector *c, const lp_task_id *id)
{
	char *key = g_strdup_printf("%" PRIx64 "/%" PRIx64 "/%" PRIu64, id->pid, id->tid, id->process);
	gpointer row = g_hash_table_lookup(c->task_ids, key);
	if (row) {
		g_free(key);
		return GPOINTER_TO_SIZE(row) - 1;
	}
	char *pkey = g_strdup_printf("%" PRIx64 "/%" PRIu64, id->pid, id->process);
	gpointer proc = g_hash_table_lookup(c->process_ids, pkey);
	size_t process;
	if (proc) {
		process = GPOINTER_TO_SIZE(proc) - 1;
		g_free(pkey);
	} else {
		process = add_process(c, id->pid);
		g_hash_table_insert(c->process_ids, pkey, GSIZE_TO_POINTER(process + 1));
	}
	return add_task(c, key, id->pid, id->tid, process);
}

static int capture_refs(void *ctx, const lp_ref *refs, const uint64_t *canon, size_t n,
			const lp_task_id *who, lp_error *err)
{
	(void)err;
	collector *c = ctx;
	if (!n)
		return 0;
	note_time(c->r, refs[0].timestamp);
	note_time(c->r, refs[n - 1].timestamp);
	size_t process = who ? g_array_index(c->r->tasks, lp_report_task, capture_task(c, who)).process
			     : SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		count_reference(c, refs[i].type, canon[i]);
		/* Kernel references belong to the kernel, whoever is current
		 * (laplace-formats(5), "PER-PROCESS MERGE OUTPUT"). */
		if (process != SIZE_MAX && !lp_ref_is_kernel(refs[i].type))
			touch_page(c, process, canon[i]);
	}
	return 0;
}

static int capture_event(void *ctx, const lp_event *ev, const lp_event_route *route, lp_error *err)
{
	(void)err;
	collector *c = ctx;
	note_time(c->r, ev->timestamp);
	if (route->ntasks == 0)
		return 0;
	size_t task = capture_task(c, &route->task[0]);
	switch (ev->tag) {
	case LP_TAG_F:
	case LP_TAG_T: {
		size_t child = capture_task(c, &route->task[1]);
		if (ev->tag == LP_TAG_F)
			push_event(c, ev->timestamp, 'F', task, child);
		break;
	}
	case LP_TAG_E: {
		size_t proc = g_array_index(c->r->tasks, lp_report_task, task).process;
		g_ptr_array_add(g_array_index(c->r->processes, lp_report_process, proc).programs,
				g_strdup(ev->name));
		push_event(c, ev->timestamp, 'E', task, intern_program(c, ev->name));
		break;
	}
	case LP_TAG_S:
		push_event(c, ev->timestamp, 'S', task, 0);
		break;
	case LP_TAG_X:
		push_event(c, ev->timestamp, 'X', task, 0);
		break;
	default:
		break;
	}
	return 0;
}

static int capture_finish(void *ctx, const lp_stats *stats, lp_error *err)
{
	(void)err;
	collector *c = ctx;
	c->r->stats = *stats;
	c->r->has_stats = true;
	return 0;
}

static const lp_sink report_sink_ops = {
	.refs = capture_refs,
	.event = capture_event,
	.finish = capture_finish,
};

lp_report *lp_report_from_capture(const lp_merge_job *job, const char *title,
				  const lp_progress *progress, lp_error *err)
{
	lp_run run;
	if (lp_run_open(&run, job, err))
		return NULL;
	lp_report *r = report_new(LP_REPORT_CAPTURE, title);
	collector c;
	collector_init(&c, r, progress);
	run.pipeline.sink = &report_sink_ops;
	run.pipeline.sink_ctx = &c;
	int rc = lp_pipeline_run(&run.pipeline, err);
	if (!rc)
		rc = finish(&c, title, err);
	collector_free(&c);
	lp_run_close(&run);
	if (rc) {
		lp_report_free(r);
		return NULL;
	}
	return r;
}

/* ---- a per-process directory ---- */

static int mrc_refs(void *ctx, const lp_sched_out *refs, size_t n, lp_error *err)
{
	(void)err;
	collector *c = ctx;
	for (size_t i = 0; i < n; i++)
		count_reference(c, refs[i].type, refs[i].canonical);
	return 0;
}

/* Every reference in traced order (the as-traced schedule, which is the
 * merge's order), for the miss-ratio curve. */
static int directory_curve(collector *c, const char *dir, lp_error *err)
{
	lp_sched_dir_options opt = {.sched = {.policy = LP_SCHED_AS_TRACED, .cpus = 1},
				    .max_open = LP_TASKDIR_MAX_OPEN};
	lp_sched_sink sink = {.ctx = c, .refs = mrc_refs};
	lp_sched_report rep;
	int rc = lp_sched_dir_run(dir, &opt, &sink, &rep, err);
	if (!rc)
		lp_sched_report_free(&rep);
	return rc;
}

typedef struct replay {
	const lp_report *r;
	lp_report_schedule *sc;
	uint32_t *unit_task; /* per unit of the run: its task row + 1, 0: none */
} replay;

/* lp_sched_dir_options.ready: each unit's task row. */
static int replay_ready(void *ctx, const lp_sched_input *in, const char *const *paths,
			lp_error *err)
{
	(void)paths, (void)err;
	replay *rp = ctx;
	GHashTable *rows = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	for (guint i = 0; i < rp->r->tasks->len; i++) {
		const lp_report_task *task = &g_array_index(rp->r->tasks, lp_report_task, i);
		g_hash_table_insert(rows, g_strdup_printf("%" PRIx64 "/%" PRIx64, task->pid, task->tid),
				    GSIZE_TO_POINTER(i + 1));
	}
	rp->unit_task = g_new0(uint32_t, in->nunits);
	for (size_t u = 0; u < in->nunits; u++) {
		char key[48];
		g_snprintf(key, sizeof key, "%" PRIx64 "/%" PRIx64, in->units[u].pid, in->units[u].tid);
		rp->unit_task[u] = (uint32_t)GPOINTER_TO_SIZE(g_hash_table_lookup(rows, key));
	}
	g_hash_table_destroy(rows);
	return 0;
}

static int replay_refs(void *ctx, const lp_sched_out *refs, size_t n, lp_error *err)
{
	(void)ctx, (void)refs, (void)n, (void)err;
	return 0;
}

/* The columns that show a tick of [tick, tick + n) get the unit's task. */
static void replay_ran(void *ctx, unsigned cpu, size_t unit, uint64_t tick, uint64_t n)
{
	replay *rp = ctx;
	const uint64_t cols = LP_REPORT_SCHEDULE_COLUMNS, ticks = rp->sc->ticks;
	/* Column c shows tick floor(c * ticks / cols): the columns from
	 * ceil(tick * cols / ticks) on, up to ceil((tick + n) * cols / ticks),
	 * in 128 bits (ticks reach 2^64 - 1). */
	uint64_t from = (uint64_t)(((lp_u128)tick * cols + ticks - 1) / ticks);
	uint64_t to = (uint64_t)(((lp_u128)(tick + n) * cols + ticks - 1) / ticks);
	for (uint64_t c = from; c < to && c < cols; c++)
		rp->sc->columns[cpu][c] = rp->unit_task[unit];
}

/* One run of the schedule; *same: whether it gives the report's ticks and
 * references. */
static int replay_once(lp_report *r, const char *dir, const lp_sched_options *opt,
		       bool user_only, bool *same, lp_error *err)
{
	lp_report_schedule *sc = r->schedule;
	replay rp = {.r = r, .sc = sc};
	lp_sched_dir_options dopt = {.sched = *opt, .user_only = user_only,
				     .max_open = LP_TASKDIR_MAX_OPEN, .ready = replay_ready,
				     .ready_ctx = &rp};
	memset(sc->columns, 0, sc->ncpus * sizeof *sc->columns);
	lp_sched_sink sink = {.ctx = &rp, .refs = replay_refs, .ran = replay_ran};
	lp_sched_report rep;
	int rc = lp_sched_dir_run(dir, &dopt, &sink, &rep, err);
	if (!rc) {
		*same = rep.ticks == sc->ticks && rep.cpus == sc->ncpus;
		for (size_t c = 0; *same && c < sc->ncpus; c++)
			*same = rep.cpu[c].references == sc->cpu[c].references;
		lp_sched_report_free(&rep);
	}
	g_free(rp.unit_task);
	return rc;
}

int lp_report_read_schedule(lp_report *r, const char *path, lp_error *err)
{
	lp_sched_report rep;
	int rc = lp_sched_report_read(path, r->units, r->nunits, &rep, err);
	if (rc)
		return rc;
	lp_report_schedule *sc = g_new0(lp_report_schedule, 1);
	sc->policy = g_strdup(lp_sched_policy_names[rep.policy]);
	sc->quantum = rep.quantum;
	sc->ticks = rep.ticks;
	sc->memory = rep.memory;
	sc->replacement = rep.replacement;
	sc->fault_ticks = rep.fault_ticks;
	sc->ncpus = rep.cpus;
	sc->cpu = g_new0(lp_report_cpu, rep.cpus);
	for (size_t c = 0; c < sc->ncpus; c++)
		sc->cpu[c] = (lp_report_cpu){rep.cpu[c].references, rep.cpu[c].idle_ticks, rep.cpu[c].slices};
	sc->nunits = rep.nunits;
	sc->unit = g_new0(lp_report_unit, rep.nunits ? rep.nunits : 1);
	for (size_t i = 0; i < sc->nunits; i++) {
		const lp_sched_unit *u = &rep.units[i];
		const lp_sched_unit_stats *us = &rep.unit[i];
		sc->unit[i] = (lp_report_unit){u->pid, u->tid, u->incarnation, us->references, us->slices,
					       us->first_tick, us->last_tick};
	}
	lp_sched_report_free(&rep);
	r->schedule = sc;
	return 0;
}

int lp_report_replay_schedule(lp_report *r, const char *dir, uint64_t seed, lp_error *err)
{
	lp_report_schedule *sc = r->schedule;
	int policy = lp_sched_policy_parse(sc->policy);
	if (policy < 0)
		return lp_fail(err, LP_EINPUT, "schedule report: no policy %s", sc->policy);
	if (!sc->ticks)
		return 0;
	sc->columns = g_malloc0_n(sc->ncpus, sizeof *sc->columns);
	lp_sched_options opt = {.policy = policy, .quantum = sc->quantum, .cpus = (unsigned)sc->ncpus,
				.seed = seed, .memory = sc->memory,
				.replacement = sc->replacement,
				.fault_ticks = sc->fault_ticks};
	/* The report does not say whether the schedule left out kernel
	 * references (--user-only): the run that gives its counts did. */
	bool same = false;
	int rc = replay_once(r, dir, &opt, false, &same, err);
	if (!rc && !same)
		rc = replay_once(r, dir, &opt, true, &same, err);
	if (!rc && !same)
		rc = lp_fail(err, LP_EINPUT, "the schedule report is not of %s%s: run again, the schedule "
			     "does not give its %" G_GUINT64_FORMAT " tick%s and references per CPU", dir,
			     policy == LP_SCHED_RANDOM ? " with this --seed" : "", sc->ticks,
			     sc->ticks == 1 ? "" : "s");
	if (rc) {
		g_free(sc->columns);
		sc->columns = NULL;
	}
	return rc;
}

static size_t task_by_tid(collector *c, uint64_t pid, uint64_t tid)
{
	char key[48];
	g_snprintf(key, sizeof key, "%" PRIx64 "/%" PRIx64, pid, tid);
	return GPOINTER_TO_SIZE(g_hash_table_lookup(c->task_ids, key)) - 1;
}

/* One task file: its task's pages and its switches. */
static int directory_file(collector *c, const lp_sched_input *in, size_t f, lp_sched_ref *buf,
			  lp_error *err)
{
	const lp_sched_file *file = &in->files[f];
	uint64_t pid = in->units[file->first_unit].pid;
	size_t task = task_by_tid(c, pid, file->tid);
	if (task == SIZE_MAX)
		return lp_fail(err, LP_EINPUT, "%s: task %" PRIx64 " of process %" PRIx64
			       " is not in index.yaml", file->name, file->tid, pid);
	size_t process = g_array_index(c->r->tasks, lp_report_task, task).process;
	for (;;) {
		lp_sched_event ev;
		ssize_t n = in->source.read(in->source.ctx, f, buf, READ_BATCH, UINT64_MAX, &ev, err);
		if (n < 0)
			return err->status;
		for (ssize_t i = 0; i < n; i++)
			touch_page(c, process, buf[i].canonical);
		if (n > 0)
			continue;
		if (ev.tag == LP_SCHED_END)
			return 0;
		if (ev.tag == 'S' || ev.tag == 'E' || (ev.tag == 'X' && ev.task == file->tid))
			push_event(c, ev.timestamp, ev.tag, task, PROGRAM_FROM_INDEX);
		else if (ev.tag == 'F' && ev.child == file->tid) {
			/* The child's copy: its parent is a task of another process,
			 * found by tid alone (the last one listed with it). */
			GHashTableIter it;
			gpointer key, value;
			size_t parent = SIZE_MAX;
			g_hash_table_iter_init(&it, c->task_ids);
			while (g_hash_table_iter_next(&it, &key, &value)) {
				const lp_report_task *t = &g_array_index(c->r->tasks, lp_report_task,
									 GPOINTER_TO_SIZE(value) - 1);
				if (t->tid == ev.parent && t->process != process)
					parent = GPOINTER_TO_SIZE(value) - 1;
			}
			if (parent != SIZE_MAX)
				push_event(c, ev.timestamp, 'F', parent, task);
		}
	}
}

/* The processes and tasks of index.yaml, in its order. */
static void directory_tasks(collector *c, const lp_index *ix)
{
	lp_report *r = c->r;
	if (ix->has_stats) {
		r->stats = ix->stats;
		r->has_stats = true;
	}
	for (size_t p = 0; p < ix->nprocesses; p++) {
		const lp_index_process *ip = &ix->processes[p];
		size_t proc = add_process(c, ip->pid);
		for (size_t k = 0; ip->programs[k]; k++)
			g_ptr_array_add(g_array_index(r->processes, lp_report_process, proc).programs,
					g_strdup(ip->programs[k]));
		for (size_t t = 0; t < ip->ntasks; t++) {
			char *key = g_strdup_printf("%" PRIx64 "/%" PRIx64, ip->pid, ip->tasks[t].tid);
			if (g_hash_table_contains(c->task_ids, key))
				g_free(key); /* a reused pid: its files are shared */
			else
				add_task(c, key, ip->pid, ip->tasks[t].tid, proc);
			if (ip->tasks[t].file.records) {
				note_time(r, ip->tasks[t].file.first_ts);
				note_time(r, ip->tasks[t].file.last_ts);
			}
		}
	}
	const lp_index_file *others[] = {&ix->kernel, &ix->orphan};
	for (size_t i = 0; i < 2; i++)
		if (others[i]->records) {
			note_time(r, others[i]->first_ts);
			note_time(r, others[i]->last_ts);
		}
}

/* The units a schedule report of the directory lists, in its order. */
static void directory_units(lp_report *r, const lp_sched_input *in)
{
	size_t *order = g_new(size_t, in->nunits);
	lp_sched_unit_order(in, order);
	r->units = g_new0(lp_sched_unit, in->nunits);
	r->nunits = in->nunits;
	for (size_t i = 0; i < in->nunits; i++) {
		const lp_sched_unit *u = &in->units[order[i]];
		r->units[i] = (lp_sched_unit){.pid = u->pid, .tid = u->tid, .incarnation = u->incarnation};
	}
	g_free(order);
}

lp_report *lp_report_from_directory(const char *dir, const lp_progress *progress, lp_error *err)
{
	lp_report *r = report_new(LP_REPORT_DIRECTORY, dir);
	collector c;
	collector_init(&c, r, progress);
	/* The curve first: the directory's reader says best what is wrong
	 * with one that is not a complete per-process merge. */
	int rc = directory_curve(&c, dir, err);
	lp_index *ix = NULL;
	if (!rc && !(ix = lp_index_read(dir, err)))
		rc = err->status;
	if (!rc)
		rc = lp_index_count(dir, ix, err);
	if (!rc)
		directory_tasks(&c, ix);
	lp_index_free(ix);
	lp_taskdir *t = NULL;
	if (!rc) {
		lp_taskdir_options topt = {.max_open = 1};
		t = lp_taskdir_open(dir, &topt, err);
		rc = t ? 0 : err->status;
	}
	if (!rc) {
		const lp_sched_input *in = lp_taskdir_input(t);
		directory_units(r, in);
		lp_sched_ref *buf = g_new(lp_sched_ref, READ_BATCH);
		for (size_t f = 0; f < in->nfiles && !rc; f++)
			if (in->files[f].first_unit != SIZE_MAX)
				rc = directory_file(&c, in, f, buf, err);
		g_free(buf);
	}
	lp_taskdir_close(t);
	if (!rc)
		rc = finish(&c, dir, err);
	collector_free(&c);
	if (rc) {
		lp_report_free(r);
		return NULL;
	}
	return r;
}

/* ---- a basic merge stream ---- */

lp_report *lp_report_from_stream(const char *path, const lp_progress *progress, lp_error *err)
{
	lp_basic_iter in;
	if (lp_basic_iter_open(&in, path, READ_BATCH, err))
		return NULL;
	lp_report *r = report_new(LP_REPORT_STREAM, path);
	collector c;
	collector_init(&c, r, progress);
	for (lp_basic_block b; (b = lp_basic_iter_next(&in)).len;)
		for (size_t i = 0; i < b.len; i++)
			count_reference(&c, b.ref[i].type, b.ref[i].canonical);
	int rc = lp_basic_iter_clear(&in);
	if (!rc)
		rc = finish(&c, path, err);
	collector_free(&c);
	if (rc) {
		lp_report_free(r);
		return NULL;
	}
	return r;
}

/* ---- the policies ---- */

/* Sizes 1 .. max spread on a log scale: floor(max^(i/points)) for i = 0
 * .. points, each once, then max (none when max is 0). */
static size_t log_sizes(uint64_t max, size_t points, uint64_t *out)
{
	size_t n = 0;
	for (size_t i = 0; max && i <= points; i++) {
		uint64_t s = i == points ? max : (uint64_t)pow((double)max, (double)i / (double)points);
		if (s >= 1 && (!n || s > out[n - 1]))
			out[n++] = s;
	}
	return n;
}

static void curve_alloc(lp_report_curve *c, const lp_policy_info *policy, const uint64_t *sizes,
			size_t n)
{
	*c = (lp_report_curve){.policy = policy, .n = n,
			       .size = g_memdup2(sizes, (n ? n : 1) * sizeof *sizes),
			       .faults = g_new0(uint64_t, n ? n : 1),
			       .space_time = g_new0(uint64_t, n ? n : 1)};
}

/* Whether a policy's whole curve is drawn: lru's, from stack distances
 * in O(log D) a reference. opt's priority stack costs up to D a
 * reference where stacks are deep (a footprint of 2*10^5 pages took
 * minutes), so opt, like the others, is simulated at 8 sizes a decade,
 * each in O(log K) a reference. */
static bool whole_curve(const lp_policy_info *p)
{
	return !strcmp(p->name, "lru");
}

#define STACK_POINTS 480
#define OTHER_PER_DECADE 8
#define WINDOWS_PER_DECADE 16

void lp_report_simulate(lp_report *r, const lp_policy_info *const *policies, size_t n,
			unsigned threads, const lp_progress *progress)
{
	if (!r->trace)
		return;
	const lp_trace *t = r->trace;
	/* No curve rather than one of wrapped sums. */
	if (t->n && lp_sim_space_fits(t)) {
		/* Points for the curve of a footprint of D pages: at most
		 * STACK_POINTS + 1, or 8 a decade (log10 D < 20). */
		uint64_t *sizes = g_new(uint64_t, STACK_POINTS + 2);
		r->curves = g_new0(lp_report_curve, n);
		r->ncurves = n;
		for (size_t i = 0; i < n; i++) {
			double decades = log10((double)t->pages);
			size_t points = whole_curve(policies[i]) ? STACK_POINTS
								 : (size_t)ceil(decades * OTHER_PER_DECADE);
			curve_alloc(&r->curves[i], policies[i], sizes,
				    log_sizes(t->pages, points, sizes));
		}
		uint64_t max_b = lp_sim_max_backward(t);
		size_t windows = log_sizes(max_b, (size_t)ceil(log10((double)MAX(max_b, 1)) *
								WINDOWS_PER_DECADE), sizes);
		curve_alloc(&r->lifetime[0], lp_policy_find("ws"), sizes, windows);
		curve_alloc(&r->lifetime[1], lp_policy_find("vmin"), sizes, windows);
		r->nlifetime = 2;
		g_free(sizes);
		lp_sim_task *tasks = g_new(lp_sim_task, n + 2);
		/* The policies run size by size. */
		for (size_t i = 0; i < n + 2; i++) {
			lp_report_curve *c = i < n ? &r->curves[i] : &r->lifetime[i - n];
			tasks[i] = (lp_sim_task){.policy = c->policy, .sizes = c->size, .nsizes = c->n,
						 .faults = c->faults, .space_time = c->space_time,
						 .per_size = i < n && !whole_curve(c->policy)};
		}
		lp_sim_options options = {0};
		if (progress) {
			options.progress = progress->fn;
			options.progress_ctx = progress->ctx;
		}
		bool mini = false;
		for (size_t i = 0; i < n; i++)
			mini |= lp_sim_miniature(policies[i]);
		lp_trace sample;
		lp_error err = {0};
		if (mini && t->pages > LP_REPORT_MINI_PAGES &&
		    !lp_sim_sample(t, 0, LP_REPORT_SAMPLE_PAGES, &sample, &options.sample_rate,
				   &err)) {
			options.sample = &sample;
			r->sampled_pages = sample.pages;
			r->sample_rate = options.sample_rate;
		}
		lp_sim_run(t, tasks, n + 2, &options, threads);
		if (options.sample)
			lp_trace_clear(&sample);
		g_free(tasks);
	}
	lp_trace_clear(r->trace);
	g_free(r->trace);
	r->trace = NULL;
}
