/* The batch engine (laplace/batch.h): a batch file's jobs run N at a time,
 * each in its own process; a failed job does not stop the others. */
#include "laplace/batch.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <glib-unix.h>

#include "laplace/staging.h"

void lp_batch_init(lp_batch *b, const char *command)
{
	memset(b, 0, sizeof *b);
	b->command = command;
	b->max_running = 1;
}

static void erase_progress(lp_batch *b)
{
	if (b->progress_shown)
		fputs("\r\033[K", stderr);
	b->progress_shown = false;
}

static void draw_progress(lp_batch *b)
{
	uint64_t refs = 0;
	for (size_t i = 0; i < b->njobs; i++)
		refs += b->jobs[i].refs_done;
	fprintf(stderr, "\r\033[K%s: %zu/%zu done, %zu failed, %zu running, %" G_GUINT64_FORMAT
		" references", b->command, b->succeeded + b->failed, b->njobs, b->failed,
		b->running, refs);
	fflush(stderr);
	b->progress_shown = true;
}

static gboolean on_redraw(gpointer data)
{
	draw_progress(data);
	return G_SOURCE_CONTINUE;
}

static void on_progress(void *ctx, uint64_t refs_done, uint64_t events_done)
{
	lp_batch_job *job = ctx;
	(void)events_done;
	job->refs_done = refs_done;
}

static void on_warning(void *ctx, const char *msg)
{
	lp_batch_job *job = ctx;
	erase_progress(job->batch);
	fprintf(stderr, "%s: job %zu (%s:%zu): warning: %s\n", job->batch->command, job->index,
		job->batch->file, job->batch->specs[job->index].line, msg);
}

static void start_jobs(lp_batch *b);

static void on_done(void *ctx, const lp_job_outcome *outcome)
{
	lp_batch_job *job = ctx;
	lp_batch *b = job->batch;
	job->outcome = *outcome;
	job->proc = NULL;
	job->finished = true;
	b->running--;
	if (outcome->status == LP_OK)
		b->succeeded++;
	else
		b->failed++;
	start_jobs(b);
	if (b->show_progress)
		draw_progress(b);
	if (!b->running && b->next == b->njobs)
		g_main_loop_quit(b->loop);
}

static const lp_job_proc_ops batch_job_ops = {on_progress, on_warning, on_done};

static void start_jobs(lp_batch *b)
{
	while (b->running < b->max_running && b->next < b->njobs) {
		lp_batch_job *job = &b->jobs[b->next++];
		lp_merge_job mj;
		lp_job_spec_to_merge(&b->specs[job->index], &mj);
		lp_error err = {0};
		const lp_job_spec *spec = &b->specs[job->index];
		unsigned timeout = spec->timeout ? spec->timeout : b->job_timeout;
		if ((job->proc = lp_job_proc_start(&mj, LP_NO_OWNER, NULL, timeout, &batch_job_ops, job, &err))) {
			b->running++;
			continue;
		}
		job->finished = true;
		job->outcome.status = err.status;
		g_strlcpy(job->outcome.msg, err.msg, sizeof job->outcome.msg);
		b->failed++;
	}
}

/* The signals that stop a batch, in the order of b->signal_sources. */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
G_STATIC_ASSERT(G_N_ELEMENTS(stop_signals) == G_N_ELEMENTS(((lp_batch *)0)->signal_sources));

static void on_stop_signal(lp_batch *b, int sig)
{
	if (!b->stopped_by)
		b->stopped_by = sig;
	b->next = b->njobs;
	for (size_t i = 0; i < b->njobs; i++)
		if (b->jobs[i].proc)
			kill(lp_job_proc_pid(b->jobs[i].proc), sig);
	if (!b->running && b->loop)
		g_main_loop_quit(b->loop);
}

static gboolean on_sigint(gpointer data) { on_stop_signal(data, SIGINT); return G_SOURCE_CONTINUE; }
static gboolean on_sigterm(gpointer data) { on_stop_signal(data, SIGTERM); return G_SOURCE_CONTINUE; }
static gboolean on_sighup(gpointer data) { on_stop_signal(data, SIGHUP); return G_SOURCE_CONTINUE; }

void lp_batch_catch_signals(lp_batch *b)
{
	static const GSourceFunc handlers[] = {on_sigint, on_sigterm, on_sighup};
	for (size_t i = 0; i < G_N_ELEMENTS(stop_signals); i++)
		if (stop_signals[i] != SIGHUP || !lp_signal_ignored(SIGHUP))
			b->signal_sources[i] = g_unix_signal_add(stop_signals[i], handlers[i], b);
}

void lp_batch_set_jobs(lp_batch *b, const char *file, lp_job_spec *specs, size_t nspecs)
{
	b->file = file;
	b->specs = specs;
	b->nspecs = nspecs;
	g_free(b->jobs);
	b->jobs = g_new0(lp_batch_job, nspecs);
	b->njobs = 0;
	for (size_t i = 0; i < nspecs; i++) {
		b->jobs[b->njobs].batch = b;
		b->jobs[b->njobs++].index = i;
	}
}

void lp_batch_select_shard(lp_batch *b, size_t k, size_t n)
{
	size_t kept = 0;
	for (size_t i = 0; i < b->njobs; i++)
		if (b->jobs[i].index % n == k)
			b->jobs[kept++] = b->jobs[i];
	b->njobs = kept;
}

void lp_batch_run(lp_batch *b)
{
	b->loop = g_main_loop_new(NULL, FALSE);
	start_jobs(b);
	if (b->running) {
		guint redraw = 0;
		if (b->show_progress)
			redraw = g_timeout_add(LP_BATCH_PROGRESS_REDRAW_MS, on_redraw, b);
		g_main_loop_run(b->loop);
		if (redraw)
			g_source_remove(redraw);
	}
	g_main_loop_unref(b->loop);
	b->loop = NULL;
	erase_progress(b);
}

int lp_batch_write_report(lp_output *out, const lp_batch *b, const char *shard, lp_error *err)
{
	GString *text = g_string_new(NULL);
	yaml_emitter_t em;
	int bad = lp_yaml_start(&em, text) || lp_yaml_pair(&em, "batch", b->file) ||
		  (shard && lp_yaml_pair(&em, "shard", shard)) ||
		  lp_yaml_pair_u64(&em, "succeeded", b->succeeded) ||
		  lp_yaml_pair_u64(&em, "failed", b->failed) || lp_yaml_key(&em, "jobs") ||
		  lp_yaml_begin(&em, true);
	for (size_t i = 0; !bad && i < b->njobs; i++) {
		const lp_batch_job *job = &b->jobs[i];
		const lp_job_spec *spec = &b->specs[job->index];
		bad = lp_yaml_begin(&em, false) || lp_yaml_pair_u64(&em, "index", job->index) ||
		      lp_yaml_pair_u64(&em, "line", spec->line) ||
		      lp_job_report_emit(&em, spec, &job->outcome) || lp_yaml_end(&em, false);
	}
	bad = bad || lp_yaml_end(&em, true) || lp_yaml_finish(&em);
	int r = bad ? lp_fail(err, LP_EIO, "cannot format the report for %s", lp_output_name(out))
		    : lp_output_write(out, text->str, text->len, err);
	g_string_free(text, TRUE);
	if (r) {
		lp_output_abort(out);
		return r;
	}
	return lp_output_commit(out, err);
}

void lp_batch_clear(lp_batch *b)
{
	for (size_t i = 0; i < G_N_ELEMENTS(b->signal_sources); i++)
		if (b->signal_sources[i])
			g_source_remove(b->signal_sources[i]);
	g_free(b->jobs);
	memset(b->signal_sources, 0, sizeof b->signal_sources);
	b->jobs = NULL;
	b->njobs = 0;
}
