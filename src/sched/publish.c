/* laplace schedule's outputs: streams, report, publication. */
#include "sched/publish.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/taskdir.h"
#include "io/staging.h"
#include "formats/forms.h"
#include "formats/registry.h"
#include "sched/run.h"
#include "sched/schedreport.h"

/* References are written a job at a time: a job holds one stream's next
 * references. With threads, the output's own thread formats and writes
 * the jobs in the order they were filled, while the schedule goes on;
 * else each is written once full. A job holds fewer references when
 * there is one stream per processor, as every stream fills one. Each
 * stream is written by its form's sink (the registry's, lp_stream_forms),
 * with a buffer of TEXT_JOBS jobs' room. */
#define JOB_REFS 16384
#define JOB_REFS_PER_CPU 4096
#define JOBS_AHEAD 4 /* jobs filled and not yet written, at most */
#define TEXT_JOBS 3

typedef struct stream_out stream_out;

typedef struct format_job {
	stream_out *stream;
	size_t n;
	lp_sched_out *refs; /* outputs.job_refs of each */
} format_job;

/* One output stream. */
struct stream_out {
	lp_output *out;
	enum lp_form form;
	uint64_t count;      /* references given, to name one in a message */
	format_job *job;     /* being filled, or NULL */
	lp_basic_sink *sink; /* the writer's: its form's */
};

typedef struct outputs {
	stream_out *streams; /* one, or one per processor */
	unsigned nstreams;
	lp_staged *dir;      /* --per-cpu: the staged directory */
	int dir_fd;
	size_t job_refs;
	GPtrArray *jobs;      /* every job (owned) */
	GAsyncQueue *filled;  /* jobs for the writer, then stop_writer */
	GAsyncQueue *written; /* jobs to fill again */
	GThread *writer;      /* NULL: none */
	gint failed;          /* the writer failed, write_err says why */
	lp_error write_err;
} outputs;

static char stop_writer; /* its address ends the writer's queue */

static void job_free(gpointer data)
{
	format_job *job = data;
	g_free(job->refs);
	g_free(job);
}

/* A job's references to its stream's sink, read in place. Returns 0 or
 * an lp_status. */
static int job_write(const format_job *job, lp_error *err)
{
	const lp_sched_out *refs = job->refs;
	lp_form_batch b = {
		.type = &refs->type, .type_stride = sizeof *refs,
		.canon = (const char *)&refs->canonical, .canon_stride = sizeof *refs,
		.n = job->n,
	};
	return lp_basic_sink_put(job->stream->sink, &b, err);
}

/* The writer: jobs in the order filled; after a failure they come back
 * unwritten. */
static gpointer writer_main(gpointer data)
{
	outputs *o = data;
	for (;;) {
		gpointer item = g_async_queue_pop(o->filled);
		if (item == &stop_writer)
			return NULL;
		format_job *job = item;
		if (!g_atomic_int_get(&o->failed) && job_write(job, &o->write_err))
			g_atomic_int_set(&o->failed, 1);
		g_async_queue_push(o->written, job);
	}
}

/* The writer's failure, if it failed: its status, err set; else 0. */
static int writer_failed(outputs *o, lp_error *err)
{
	if (!g_atomic_int_get(&o->failed))
		return 0;
	*err = o->write_err;
	return err->status;
}

/* End the writer once it has written every job given. */
static void writer_stop(outputs *o)
{
	if (!o->writer)
		return;
	g_async_queue_push(o->filled, &stop_writer);
	g_thread_join(o->writer);
	o->writer = NULL;
}

/* A job to fill: a new one while there are fewer than a stream's each
 * and JOBS_AHEAD more, else one written (waiting for the writer). */
static format_job *job_get(outputs *o)
{
	if (o->jobs->len >= o->nstreams + JOBS_AHEAD)
		return g_async_queue_pop(o->written);
	format_job *job = g_new0(format_job, 1);
	job->refs = g_new(lp_sched_out, o->job_refs);
	g_ptr_array_add(o->jobs, job);
	return job;
}

/* s's job to the writer, or written here. Returns 0 or an lp_status. */
static int stream_submit(outputs *o, stream_out *s, lp_error *err)
{
	format_job *job = s->job;
	s->job = NULL;
	if (!o->writer) {
		int rc = job_write(job, err);
		g_async_queue_push(o->written, job);
		return rc;
	}
	if (writer_failed(o, err))
		return err->status;
	g_async_queue_push(o->filled, job);
	return 0;
}

/* s's job, a new one if it has none. */
static format_job *stream_job(outputs *o, stream_out *s)
{
	if (!s->job) {
		s->job = job_get(o);
		s->job->stream = s;
		s->job->n = 0;
	}
	return s->job;
}

/* Append n references to s (unless they are where its job's next go),
 * their canonical numbers checked against its form; a full job is given
 * to be written. Returns 0 or an lp_status. */
static int stream_put(outputs *o, stream_out *s, const lp_sched_out *refs, size_t n, lp_error *err)
{
	uint64_t max = lp_stream_forms[s->form].canon_max;
	while (n) {
		format_job *job = stream_job(o, s);
		size_t k = MIN(n, o->job_refs - job->n);
		for (size_t i = 0; max != UINT64_MAX && i < k; i++)
			if (refs[i].canonical > max)
				return lp_form_canon_error(err, s->form, s->count + i, refs[i].canonical);
		if (refs != job->refs + job->n)
			memcpy(job->refs + job->n, refs, k * sizeof *refs);
		job->n += k;
		s->count += k;
		refs += k;
		n -= k;
		if (job->n == o->job_refs && stream_submit(o, s, err))
			return err->status;
	}
	return 0;
}

/* lp_sched_sink.buffer: with one stream, the engine puts references
 * straight into its job. */
static lp_sched_out *outputs_buffer(void *ctx, size_t *cap)
{
	outputs *o = ctx;
	if (o->nstreams != 1)
		return NULL;
	format_job *job = stream_job(o, &o->streams[0]);
	*cap = o->job_refs - job->n;
	return job->refs + job->n;
}

/* lp_sched_sink.refs: each reference to its processor's stream, or all
 * to the one stream. */
static int outputs_refs(void *ctx, const lp_sched_out *refs, size_t n, lp_error *err)
{
	outputs *o = ctx;
	if (o->nstreams == 1)
		return stream_put(o, &o->streams[0], refs, n, err);
	/* One at a time, each to its processor's stream: no call but to
	 * give a full job. */
	uint64_t max = lp_stream_forms[o->streams[0].form].canon_max;
	for (size_t i = 0; i < n; i++) {
		stream_out *s = &o->streams[refs[i].cpu];
		if (refs[i].canonical > max)
			return lp_form_canon_error(err, s->form, s->count, refs[i].canonical);
		format_job *job = stream_job(o, s);
		job->refs[job->n++] = refs[i];
		s->count++;
		if (job->n == o->job_refs && stream_submit(o, s, err))
			return err->status;
	}
	return 0;
}

static int stream_open(const outputs *o, stream_out *s, int dir_fd, const char *path,
		       enum lp_form form, lp_error *err)
{
	s->out = dir_fd >= 0 ? lp_output_open_in(dir_fd, path, LP_COMPRESS_NONE, err)
			     : lp_output_open(path, LP_COMPRESS_AUTO, err);
	if (!s->out)
		return err->status;
	s->form = form;
	s->sink = lp_stream_forms[form].open_sink(s->out, false, form,
						  TEXT_JOBS * o->job_refs * LP_FORM_RECORD_MAX);
	return 0;
}

/* The outputs: path (NULL: standard output), or with per_cpu the
 * directory per_cpu holding cpu0 ... cpuK-1; with threads > 1, a writer
 * thread (if it can start). */
static int outputs_open(outputs *o, const char *path, const char *per_cpu, unsigned cpus, bool force,
			enum lp_form form, unsigned threads, lp_error *err)
{
	o->dir_fd = -1;
	o->job_refs = per_cpu ? JOB_REFS_PER_CPU : JOB_REFS;
	o->jobs = g_ptr_array_new_with_free_func(job_free);
	o->filled = g_async_queue_new();
	o->written = g_async_queue_new();
	if (threads > 1)
		o->writer = g_thread_try_new("laplace-write", writer_main, o, NULL);
	if (!per_cpu) {
		o->nstreams = 1;
		o->streams = g_new0(stream_out, 1);
		return stream_open(o, &o->streams[0], -1, path, form, err);
	}
	struct stat st;
	if (lstat(per_cpu, &st) == 0 && !force)
		return lp_fail(err, LP_EUSAGE, "%s: already exists; use --force to replace it", per_cpu);
	o->dir = lp_stage_dir(AT_FDCWD, per_cpu, force);
	if (!o->dir) {
		int saved = errno;
		char *pattern = lp_tmp_pattern(per_cpu, true);
		lp_fail(err, LP_EIO, "cannot create %s: %s", pattern, g_strerror(saved));
		g_free(pattern);
		return err->status;
	}
	o->dir_fd = lp_staged_open_dir(o->dir);
	if (o->dir_fd < 0)
		return lp_fail(err, LP_EIO, "cannot open %s: %s", lp_staged_path(o->dir), g_strerror(errno));
	o->streams = g_new0(stream_out, cpus);
	for (unsigned i = 0; i < cpus; i++) {
		o->nstreams = i + 1;
		char name[32];
		snprintf(name, sizeof name, "cpu%u", i);
		if (stream_open(o, &o->streams[i], o->dir_fd, name, form, err))
			return err->status;
	}
	return 0;
}

/* Finish every stream (rc: how the run went) and stage them; the staged
 * items, the directory last, go to staged[] (nstreams + 1 entries). */
static int outputs_finish(outputs *o, int rc, lp_staged **staged, lp_error *err)
{
	/* The jobs being filled, then every job given, written. */
	for (unsigned i = 0; i < o->nstreams && !rc; i++)
		if (o->streams[i].job)
			rc = stream_submit(o, &o->streams[i], err);
	writer_stop(o);
	if (!rc)
		rc = writer_failed(o, err);
	for (unsigned i = 0; i < o->nstreams && !rc; i++)
		rc = lp_basic_sink_ops.finish(o->streams[i].sink, NULL, err);
	for (unsigned i = 0; i < o->nstreams; i++) {
		stream_out *s = &o->streams[i];
		rc = lp_output_stage(s->out, rc, &staged[i], err);
		s->out = NULL;
	}
	staged[o->nstreams] = o->dir;
	o->dir = NULL;
	return rc;
}

static void outputs_free(outputs *o)
{
	writer_stop(o); /* first: it may be writing a job */
	if (o->jobs) {
		g_ptr_array_free(o->jobs, TRUE);
		g_async_queue_unref(o->filled);
		g_async_queue_unref(o->written);
	}
	for (unsigned i = 0; i < o->nstreams; i++) {
		lp_output_abort(o->streams[i].out);
		lp_basic_sink_free(o->streams[i].sink);
	}
	g_free(o->streams);
	if (o->dir_fd >= 0)
		close(o->dir_fd);
	lp_staged_discard(o->dir);
}

typedef struct outputs_ready_ctx {
	const lp_schedule_request *rq;
	outputs *o;
} outputs_ready_ctx;

/* lp_sched_dir_options.ready: the outputs must not replace a file the
 * run reads; then they are opened. */
static int outputs_ready(void *ctx, const lp_sched_input *in, const char *const *inputs,
			 lp_error *err)
{
	(void)in;
	const outputs_ready_ctx *r = ctx;
	const lp_schedule_request *rq = r->rq;
	size_t nin = 0;
	while (inputs[nin])
		nin++;
	const char *outs[] = {rq->per_cpu ? rq->per_cpu : rq->output, rq->report};
	int rc = lp_check_outputs(inputs, nin, outs, 2, err);
	if (!rc)
		rc = outputs_open(r->o, rq->output, rq->per_cpu, rq->opt.cpus, rq->force, rq->form,
				  rq->threads, err);
	return rc;
}

/* Stage the report (already run) beside the streams. */
static int report_stage(const char *path, const lp_sched_report *rep, lp_staged **staged,
			lp_error *err)
{
	GString *yaml = lp_sched_report_yaml(rep, err);
	lp_output *out = yaml ? lp_output_open(path, LP_COMPRESS_NONE, err) : NULL;
	int rc = out ? lp_output_stage(out, lp_output_write(out, yaml->str, yaml->len, err), staged, err)
		     : err->status;
	if (yaml)
		g_string_free(yaml, TRUE);
	return rc;
}

int lp_schedule_write(const lp_schedule_request *rq, lp_sched_report *rep, lp_error *err)
{
	unsigned nout = rq->per_cpu ? rq->opt.cpus : 1;
	outputs o = {0};
	lp_sched_dir_options dopt = {
		.sched = rq->opt,
		.user_only = rq->user_only,
		.max_open = lp_schedule_fd_budget(nout),
		.threads = rq->threads,
		.ready = outputs_ready,
		.ready_ctx = &(outputs_ready_ctx){.rq = rq, .o = &o},
	};
	memset(rep, 0, sizeof *rep);
	if (!dopt.max_open)
		return lp_fail(err, LP_EUSAGE, "too few file descriptors (ulimit -n) for %u output%s",
			       nout, nout == 1 ? "" : "s");
	int rc = lp_schedule_check_dir(rq->dir, err);
	if (rc)
		return rc;
	lp_sched_sink sink = {.ctx = &o, .refs = outputs_refs, .buffer = outputs_buffer};
	rc = lp_sched_dir_run(rq->dir, &dopt, &sink, rep, err);
	lp_staged **staged = g_new0(lp_staged *, o.nstreams + 2);
	rc = outputs_finish(&o, rc, staged, err);
	if (!rc && rq->report)
		rc = report_stage(rq->report, rep, &staged[o.nstreams + 1], err);
	if (!rc)
		rc = lp_stage_publish(staged, o.nstreams + 2, err);
	else
		for (unsigned i = 0; i < o.nstreams + 2; i++)
			lp_staged_discard(staged[i]);
	g_free(staged);
	outputs_free(&o);
	if (rc && rep->cpu)
		lp_sched_report_free(rep);
	return rc;
}
