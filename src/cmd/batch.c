/* laplace batch: the options; the batch engine (laplace/batch.h) runs the
 * jobs. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "laplace/batch.h"

/* Larger than any sensible list of jobs, small enough to read at once. */
#define BATCH_FILE_MAX_BYTES (64u << 20)

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
	lp_batch b;
	lp_batch_init(&b, cli_command());
	/* Before anything is staged: the report's temporary file is removed
	 * on a signal like the jobs' outputs. */
	lp_batch_catch_signals(&b);
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

	lp_batch_set_jobs(&b, argv[1], specs, nspecs);
	if (shard)
		lp_batch_select_shard(&b, shard_k, shard_n);
	b.job_timeout = (unsigned)job_timeout;
	b.max_running = parallel != -1 ? (size_t)parallel : (size_t)g_get_num_processors();
	b.show_progress = !quiet && isatty(STDERR_FILENO);
	lp_batch_run(&b);
	if (b.stopped_by) {
		fprintf(stderr, "%s: interrupted by %s\n", cli_command(), g_strsignal(b.stopped_by));
		rc = 128 + b.stopped_by;
		goto out;
	}

	rc = LP_OK;
	for (size_t i = 0; i < b.njobs; i++) {
		const lp_batch_job *job = &b.jobs[i];
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
		int r = lp_batch_write_report(report_out, &b, shard, &err);
		report_out = NULL;
		if (r) {
			cli_fail(&err);
			if (r > rc)
				rc = r;
		}
	}
out:
	lp_batch_clear(&b);
	lp_output_abort(report_out);
	g_option_context_free(ctx);
	lp_job_specs_free(specs, nspecs);
	g_free(text);
	g_free(report);
	g_free(shard);
	return rc;
}
