/* laplace batch: run the jobs of a batch file, N at a time, each in its own
 * process; a failed job does not stop the others. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib-unix.h>

#include "cli.h"
#include "commands.h"
#include "laplace/jobfile.h"

/* Larger than any sensible list of jobs, small enough to read at once. */
#define BATCH_FILE_MAX_BYTES (64u << 20)
#define PROGRESS_REDRAW_MS 200

typedef struct batch_job {
	struct batch *batch;
	size_t index;          /* in the batch file */
	lp_job_outcome outcome;
	lp_job_proc *proc;     /* while it runs */
	bool finished;
	uint64_t refs_done;
} batch_job;

typedef struct batch {
	const char *file;
	lp_job_spec *specs;
	batch_job *jobs;   /* the ones this shard runs */
	size_t njobs;
	size_t next;       /* the next job to start */
	size_t running;
	size_t succeeded, failed;
	size_t max_running;
	unsigned job_timeout; /* --job-timeout, 0 for none */
	bool show_progress;
	bool progress_shown;
	int stopped_by;    /* the signal that interrupted the batch, or 0 */
	GMainLoop *loop;
} batch;

static void erase_progress(batch *b)
{
	if (b->progress_shown)
		fputs("\r\033[K", stderr);
	b->progress_shown = false;
}

static void draw_progress(batch *b)
{
	uint64_t refs = 0;
	for (size_t i = 0; i < b->njobs; i++)
		refs += b->jobs[i].refs_done;
	fprintf(stderr, "\r\033[K%s: %zu/%zu done, %zu failed, %zu running, %" G_GUINT64_FORMAT
		" references", cli_command(), b->succeeded + b->failed, b->njobs, b->failed,
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
	batch_job *job = ctx;
	(void)events_done;
	job->refs_done = refs_done;
}

static void on_warning(void *ctx, const char *msg)
{
	batch_job *job = ctx;
	erase_progress(job->batch);
	fprintf(stderr, "%s: job %zu (%s:%zu): warning: %s\n", cli_command(), job->index,
		job->batch->file, job->batch->specs[job->index].line, msg);
}

static void start_jobs(batch *b);

static void on_done(void *ctx, const lp_job_outcome *outcome)
{
	batch_job *job = ctx;
	batch *b = job->batch;
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

static void start_jobs(batch *b)
{
	while (b->running < b->max_running && b->next < b->njobs) {
		batch_job *job = &b->jobs[b->next++];
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

/* SIGINT, SIGTERM, SIGHUP: start nothing more, pass the signal on to the
 * running jobs (each removes its temporary outputs and ends), and end the
 * batch once they have. */
typedef struct batch_signal {
	batch *b;
	int sig;
} batch_signal;

static gboolean on_signal(gpointer data)
{
	batch_signal *bs = data;
	batch *b = bs->b;
	if (!b->stopped_by)
		b->stopped_by = bs->sig;
	b->next = b->njobs;
	for (size_t i = 0; i < b->njobs; i++)
		if (b->jobs[i].proc)
			kill(lp_job_proc_pid(b->jobs[i].proc), bs->sig);
	if (!b->running)
		g_main_loop_quit(b->loop);
	return G_SOURCE_CONTINUE;
}

/* Write the report into out, opened before the jobs ran, and commit it;
 * frees out. */
static int write_report(lp_output *out, const batch *b, const char *shard, lp_error *err)
{
	GString *text = g_string_new(NULL);
	yaml_emitter_t em;
	int bad = lp_yaml_start(&em, text) || lp_yaml_pair(&em, "batch", b->file) ||
		  (shard && lp_yaml_pair(&em, "shard", shard)) ||
		  lp_yaml_pair_u64(&em, "succeeded", b->succeeded) ||
		  lp_yaml_pair_u64(&em, "failed", b->failed) || lp_yaml_key(&em, "jobs") ||
		  lp_yaml_begin(&em, true);
	for (size_t i = 0; !bad && i < b->njobs; i++) {
		const batch_job *job = &b->jobs[i];
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

static bool parse_shard(const char *s, size_t *k, size_t *n)
{
	unsigned long long a, b;
	char end;
	if (sscanf(s, "%llu/%llu%c", &a, &b, &end) != 2 || b == 0 || a >= b ||
	    strchr(s, '-') || strchr(s, '+') || strchr(s, ' '))
		return false;
	*k = (size_t)a;
	*n = (size_t)b;
	return true;
}

int cmd_batch(int argc, char **argv)
{
	cli_set_command("laplace batch");
	gint parallel = -1; /* not given */
	gint job_timeout = 0;
	gchar *report = NULL, *shard = NULL;
	gboolean quiet = FALSE;
	GOptionEntry entries[] = {
		{"jobs", 'j', 0, G_OPTION_ARG_INT, &parallel,
		 "Run N jobs at a time (default: the number of processors)", "N"},
		{"job-timeout", 0, 0, G_OPTION_ARG_INT, &job_timeout,
		 "Kill and fail a job still running after SECONDS (default: none; a job's own "
		 "timeout key wins)", "SECONDS"},
		{"report", 0, 0, G_OPTION_ARG_FILENAME, &report,
		 "Write each job's status, duration and statistics as YAML to FILE", "FILE"},
		{"shard", 0, 0, G_OPTION_ARG_STRING, &shard,
		 "Run only the jobs whose index is K modulo N (K from 0)", "K/N"},
		{"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Show no progress line", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("JOBS.yaml");
	g_option_context_set_summary(ctx,
		"Run the merge jobs listed in JOBS.yaml (see laplace-jobs(5)), N at a time,\n"
		"each in its own process. A failed job does not stop the others; the exit\n"
		"status is 0 only when every job succeeded.");
	g_option_context_set_description(ctx,
		"Relative paths in JOBS.yaml are relative to the directory of JOBS.yaml.\n"
		"With --shard K/N, several machines can share one batch: each runs the\n"
		"jobs whose index (from 0, in file order) is K modulo N. See laplace-batch(1).");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_sync_option(ctx);

	int rc = LP_EUSAGE;
	size_t shard_k = 0, shard_n = 1;
	lp_job_spec *specs = NULL;
	size_t nspecs = 0;
	char *text = NULL;
	size_t len;
	lp_error err = {0};
	lp_output *report_out = NULL;
	batch b;
	memset(&b, 0, sizeof b);
	/* Before anything is staged: the report's temporary file is removed
	 * on a signal like the jobs' outputs. */
	batch_signal signals[] = {{&b, SIGINT}, {&b, SIGTERM}, {&b, SIGHUP}};
	guint signal_sources[G_N_ELEMENTS(signals)] = {0};
	for (size_t i = 0; i < G_N_ELEMENTS(signals); i++)
		if (signals[i].sig != SIGHUP || !lp_signal_ignored(SIGHUP))
			signal_sources[i] = g_unix_signal_add(signals[i].sig, on_signal, &signals[i]);
	if (!cli_parse(ctx, &argc, &argv))
		goto out;
	if (argc != 2) {
		cli_usage_error("expected one batch file, got %d", argc - 1);
		goto out;
	}
	if (job_timeout < 0) {
		cli_usage_error("--job-timeout must not be negative, not %d", job_timeout);
		goto out;
	}
	if (parallel != -1 && parallel < 1) {
		cli_usage_error("-j must be at least 1, not %d", parallel);
		goto out;
	}
	if (shard && !parse_shard(shard, &shard_k, &shard_n)) {
		cli_usage_error("--shard must be K/N with 0 <= K < N, not '%s'", shard);
		goto out;
	}
	char *base_dir = g_path_get_dirname(argv[1]);
	rc = lp_jobfile_read(argv[1], BATCH_FILE_MAX_BYTES, &text, &len, &err);
	if (!rc)
		rc = lp_jobfile_parse_batch(argv[1], text, len, base_dir, &specs, &nspecs, &err);
	g_free(base_dir);
	if (rc) {
		cli_fail(&err);
		goto out;
	}

	if (report) {
		/* The report must not replace an input of the batch, and a report
		 * that cannot be written is found before any job runs. */
		const char **inputs = g_new(const char *, 2 * nspecs + 1);
		inputs[0] = argv[1];
		for (size_t i = 0; i < nspecs; i++) {
			inputs[1 + 2 * i] = specs[i].reference;
			inputs[2 + 2 * i] = specs[i].kernel;
		}
		const char *outputs[] = {report};
		rc = lp_check_outputs(inputs, 2 * nspecs + 1, outputs, 1, &err);
		g_free(inputs);
		if (!rc && !(report_out = lp_output_open(report, LP_COMPRESS_NONE, &err)))
			rc = err.status;
		if (rc) {
			cli_fail(&err);
			goto out;
		}
	}

	b.file = argv[1];
	b.specs = specs;
	b.jobs = g_new0(batch_job, nspecs);
	for (size_t i = shard_k; i < nspecs; i += shard_n) {
		b.jobs[b.njobs].batch = &b;
		b.jobs[b.njobs++].index = i;
	}
	b.job_timeout = (unsigned)job_timeout;
	b.max_running = parallel != -1 ? (size_t)parallel : (size_t)g_get_num_processors();
	b.show_progress = !quiet && isatty(STDERR_FILENO);
	b.loop = g_main_loop_new(NULL, FALSE);
	start_jobs(&b);
	if (b.running) {
		guint redraw = 0;
		if (b.show_progress)
			redraw = g_timeout_add(PROGRESS_REDRAW_MS, on_redraw, &b);
		g_main_loop_run(b.loop);
		if (redraw)
			g_source_remove(redraw);
	}
	g_main_loop_unref(b.loop);
	erase_progress(&b);
	if (b.stopped_by) {
		fprintf(stderr, "%s: interrupted by %s\n", cli_command(), g_strsignal(b.stopped_by));
		rc = 128 + b.stopped_by;
		goto out;
	}

	rc = LP_OK;
	for (size_t i = 0; i < b.njobs; i++) {
		const batch_job *job = &b.jobs[i];
		if (job->outcome.status == LP_OK)
			continue;
		fprintf(stderr, "%s: job %zu (%s:%zu) failed: %s\n", cli_command(), job->index,
			b.file, specs[job->index].line, job->outcome.msg);
		if (job->outcome.status > rc)
			rc = job->outcome.status;
	}
	fprintf(stderr, "%s: %zu job%s: %zu succeeded, %zu failed\n", cli_command(), b.njobs,
		b.njobs == 1 ? "" : "s", b.succeeded, b.failed);
	if (report_out) {
		int r = write_report(report_out, &b, shard, &err);
		report_out = NULL;
		if (r) {
			cli_fail(&err);
			if (r > rc)
				rc = r;
		}
	}
out:
	for (size_t i = 0; i < G_N_ELEMENTS(signals); i++)
		if (signal_sources[i])
			g_source_remove(signal_sources[i]);
	lp_output_abort(report_out);
	g_option_context_free(ctx);
	lp_job_specs_free(specs, nspecs);
	g_free(b.jobs);
	g_free(text);
	g_free(report);
	g_free(shard);
	return rc;
}
