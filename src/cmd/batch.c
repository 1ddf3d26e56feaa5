/* laplace batch: the options; the batch engine (jobs/batch.h) runs the
 * jobs, here, in Slurm array elements, or collects what they reported. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "jobs/batch.h"
#include "jobs/gather.h"
#include "cmd/table.h"

/* Larger than any sensible list of jobs, small enough to read at once. */
#define BATCH_FILE_MAX_BYTES (64u << 20)

typedef struct batch_options {
	/* The numbers as given (NULL: not given), then as read. */
	gchar *parallel_arg, *job_timeout_arg, *index_arg, *max_running_arg;
	size_t parallel;     /* -j, or its default */
	int job_timeout;
	int index;           /* -1: not given */
	int max_running;     /* -1: not given */
	gchar *report, *shard, *shard_by, *submit, *collect;
	gboolean quiet, skip_done, wait;
	gchar **sbatch_options;
} batch_options;

/* The first option of a pair given together that must not be, or NULL. */
static const char *conflict(const batch_options *o, const char **second)
{
	struct {
		bool given;
		const char *name;
	} opts[] = {
		{o->submit != NULL, "--submit"}, {o->collect != NULL, "--collect"},
		{o->index_arg != NULL, "--index"},  {o->shard != NULL, "--shard"},
		{o->parallel_arg != NULL, "-j"},    {o->skip_done, "--skip-done"},
	};
	/* Which pairs may meet: --index with -j and --skip-done, --shard with
	 * -j and --skip-done, -j with --skip-done; nothing else. */
	static const bool allowed[6][6] = {
		/* submit collect index shard  j      skip */
		{false, false, false, false, false, true},  /* --submit */
		{false, false, false, false, false, false}, /* --collect */
		{false, false, false, false, true,  true},  /* --index */
		{false, false, false, false, true,  true},  /* --shard */
		{false, false, true,  true,  false, true},  /* -j */
		{true,  false, true,  true,  true,  false}, /* --skip-done */
	};
	for (size_t i = 0; i < G_N_ELEMENTS(opts); i++)
		for (size_t j = i + 1; j < G_N_ELEMENTS(opts); j++)
			if (opts[i].given && opts[j].given && !allowed[i][j]) {
				*second = opts[j].name;
				return opts[i].name;
			}
	return NULL;
}

static bool check_options(batch_options *o, int argc, size_t *shard_k, size_t *shard_n)
{
	const char *second = NULL;
	const char *first = conflict(o, &second);
	if (argc != 2)
		cli_usage_error("expected one batch file, got %d", argc - 1);
	else if (!cli_count_apply("--job-timeout", o->job_timeout_arg, 0, G_MAXINT, &o->job_timeout) ||
		 !cli_max_running_apply(o->parallel_arg, &o->parallel))
		return false;
	else if (!cli_shard_apply(o->shard, shard_k, shard_n))
		return false;
	else if (o->shard_by && strcmp(o->shard_by, "size") && strcmp(o->shard_by, "index"))
		cli_usage_error("--shard-by must be 'size' or 'index', not '%s'", o->shard_by);
	else if (o->shard_by && !o->shard)
		cli_usage_error("--shard-by needs --shard");
	else if (!cli_count_apply("--index", o->index_arg, 0, G_MAXINT, &o->index))
		return false;
	else if (o->submit && strcmp(o->submit, "slurm"))
		cli_usage_error("--submit must be 'slurm', not '%s'", o->submit);
	else if (!o->submit && (o->wait || o->max_running_arg || o->sbatch_options))
		cli_usage_error("%s needs --submit slurm",
				o->wait ? "--wait" : o->max_running_arg ? "--max-running" : "--sbatch-option");
	else if (!cli_count_apply("--max-running", o->max_running_arg, 1, G_MAXINT, &o->max_running))
		return false;
	else if (first)
		cli_usage_error("%s and %s cannot be combined", first, second);
	else if (!o->report && (o->submit || o->collect || o->skip_done))
		cli_usage_error("%s needs --report FILE",
				o->submit ? "--submit" : o->collect ? "--collect" : "--skip-done");
	else
		return true;
	return false;
}

/* The jobs that did not succeed, then how many ended how (laplace-batch(1),
 * SUMMARY); returns the highest exit status of a job. */
static int summarize(const lp_batch *b)
{
	int rc = lp_batch_list_failures(b);
	lp_batch_counts c;
	lp_batch_count(b, &c);
	cli_table *t = cli_table_new();
	cli_table_row(t, "  succeeded");
	cli_table_share(t, c.succeeded, b->njobs);
	if (c.done_before) {
		cli_table_row(t, "    done before");
		cli_table_share(t, c.done_before, b->njobs);
	}
	cli_table_row(t, "  failed");
	cli_table_share(t, c.failed, b->njobs);
	if (c.interrupted) {
		cli_table_row(t, "  interrupted");
		cli_table_share(t, c.interrupted, b->njobs);
	}
	GString *summary = g_string_new(NULL);
	g_string_printf(summary, "%s: %zu job%s\n", cli_command(), b->njobs, b->njobs == 1 ? "" : "s");
	cli_table_finish(t, summary);
	fputs(summary->str, stderr);
	g_string_free(summary, TRUE);
	return rc;
}

/* --collect DIR: the reports of DIR, collected (lp_batch_collect) into
 * the report. */
static int collect(lp_batch *b, const char *dir, const char *report, lp_error *err)
{
	GPtrArray *reports = lp_batch_collect(b, dir, report, cli_warn, NULL, err);
	if (!reports)
		return cli_fail(err);
	int rc = summarize(b);
	lp_output *out = lp_output_open(report, LP_COMPRESS_NONE, err);
	int r = out ? lp_batch_write_report(out, b, NULL, g_getenv("SLURM_JOB_ID"), err) : err->status;
	g_ptr_array_free(reports, TRUE);
	if (r) {
		cli_fail(err);
		return r > rc ? r : rc;
	}
	return rc;
}

/* --submit slurm: submit, and with --wait read back what the collector
 * wrote. */
static int submit(lp_batch *b, const batch_options *o, const char *report, lp_error *err)
{
	size_t to_run = lp_batch_pending(b);
	if (!to_run) {
		fprintf(stderr, "%s: nothing to submit: %s %zu job%s done (%s)\n", cli_command(),
			b->njobs == 1 ? "its" : "all", b->njobs, b->njobs == 1 ? " is" : "s are",
			report);
		return 0;
	}
	lp_slurm_submission s = {
		.batch_file = b->file,
		.report = report,
		.max_running = o->max_running == -1 ? 0 : (size_t)o->max_running,
		.sbatch_options = o->sbatch_options,
		.job_timeout = (unsigned)o->job_timeout,
		.wait = o->wait,
	};
	if (lp_batch_submit(b, &s, err)) {
		lp_slurm_submission_clear(&s);
		return cli_fail(err);
	}
	printf("%s %s\n", s.array_job_id, s.collector_job_id);
	fflush(stdout);
	fprintf(stderr, "%s: %zu job%s submitted as array job %s, collected by job %s into %s\n",
		cli_command(), to_run, to_run == 1 ? "" : "s", s.array_job_id, s.collector_job_id,
		report);
	int rc = 0;
	if (o->wait) {
		lp_batch_report *collected = lp_batch_take_collected(b, report, s.collector_job_id, err);
		if (!collected) {
			rc = cli_fail(err);
		} else {
			rc = summarize(b);
			lp_batch_report_free(collected);
		}
	}
	lp_slurm_submission_clear(&s);
	return rc;
}

/* Run the jobs here, the report written as they end. */
static int run_here(lp_batch *b, const batch_options *o, const char *report, lp_error *err)
{
	lp_output *report_out = NULL;
	if (report && !(report_out = lp_output_open(report, LP_COMPRESS_NONE, err)))
		return cli_fail(err);
	b->job_timeout = (unsigned)o->job_timeout;
	b->pool.max_running = o->parallel;
	b->show_progress = !o->quiet && isatty(STDERR_FILENO);
	lp_batch_run(b);
	int rc;
	if (b->pool.stopped_by) {
		fprintf(stderr, "%s: interrupted by %s\n", cli_command(), g_strsignal(b->pool.stopped_by));
		rc = 128 + b->pool.stopped_by;
	} else {
		rc = summarize(b);
	}
	if (report_out) {
		int r = lp_batch_write_report(report_out, b, o->shard, NULL, err);
		if (r) {
			cli_fail(err);
			if (r > rc)
				rc = r;
		}
	}
	return rc;
}

/* The batch file read, its jobs selected, then run, collected or
 * submitted as the options say. */
static int batch(const batch_options *o, const char *path, size_t shard_k, size_t shard_n)
{
	lp_job_spec *specs = NULL;
	size_t nspecs = 0;
	char *text = NULL;
	lp_error err = {0};
	lp_batch_report *earlier = NULL;
	lp_batch b;
	lp_batch_init(&b, cli_command());
	/* Before anything is staged: the report's temporary file is removed
	 * on a signal like the jobs' outputs. */
	lp_job_pool_catch_signals(&b.pool);
	/* Slurm runs the scripts elsewhere: every path absolute. */
	char *file = o->submit ? g_canonicalize_filename(path, NULL) : g_strdup(path);
	char *report = !o->report ? NULL
		       : o->submit ? g_canonicalize_filename(o->report, NULL) : g_strdup(o->report);
	char *base_dir = g_path_get_dirname(file);
	size_t len;
	int rc = lp_jobfile_read(file, BATCH_FILE_MAX_BYTES, &text, &len, &err);
	if (!rc)
		rc = lp_jobfile_parse_batch(file, text, len, base_dir, &specs, &nspecs, &err);
	g_free(base_dir);
	if (!rc)
		rc = lp_batch_set_jobs(&b, file, specs, nspecs, &err);
	if (!rc && report)
		rc = lp_batch_check_report(&b, report, &err);
	if (rc) {
		cli_fail(&err);
		goto out;
	}
	if (o->index != -1 && (size_t)o->index >= nspecs) {
		rc = cli_usage_error("--index %d is past the last job of %s (%zu job%s, from 0)",
				     o->index, file, nspecs, nspecs == 1 ? "" : "s");
		goto out;
	}
	if (o->index != -1)
		lp_batch_select_index(&b, (size_t)o->index);
	if (o->shard)
		lp_batch_select_shard(&b, shard_k, shard_n, !o->shard_by || !strcmp(o->shard_by, "size"));
	if (o->skip_done && (rc = lp_batch_load_earlier(report, &earlier, &err))) {
		cli_fail(&err);
		goto out;
	}
	if (earlier)
		lp_batch_skip_done(&b, earlier);
	rc = o->collect ? collect(&b, o->collect, report, &err)
	     : o->submit ? submit(&b, o, report, &err) : run_here(&b, o, report, &err);
out:
	lp_batch_clear(&b);
	lp_batch_report_free(earlier);
	lp_job_specs_free(specs, nspecs);
	g_free(text);
	g_free(file);
	g_free(report);
	return rc;
}

int cmd_batch(int argc, char **argv)
{
	cli_set_command("laplace batch");
	batch_options o = {.index = -1, .max_running = -1};
	GOptionEntry entries[] = {
		{"jobs", 'j', 0, G_OPTION_ARG_STRING, &o.parallel_arg,
		 "Run N jobs at a time (default: $SLURM_CPUS_PER_TASK, else $SLURM_CPUS_ON_NODE, "
		 "else the number of processors)", "N"},
		{"job-timeout", 0, 0, G_OPTION_ARG_STRING, &o.job_timeout_arg,
		 "Kill and fail a job still running after SECONDS (default: none; a job's own "
		 "timeout key may only lower it)", "SECONDS"},
		{"report", 0, 0, G_OPTION_ARG_FILENAME, &o.report,
		 "Write each job's status, duration and statistics as YAML to FILE", "FILE"},
		{"skip-done", 0, 0, G_OPTION_ARG_NONE, &o.skip_done,
		 "Skip the jobs that the report FILE of an earlier run says succeeded, when their "
		 "output exists and their inputs have the same size and time", NULL},
		{"shard", 0, 0, G_OPTION_ARG_STRING, &o.shard,
		 "Run only shard K of N (K from 0): N machines given shards 0 to N-1 run every job "
		 "once", "K/N"},
		{"shard-by", 0, 0, G_OPTION_ARG_STRING, &o.shard_by,
		 "Share jobs by input size, largest first to the least loaded shard (size, the "
		 "default), or by index modulo N (index)", "size|index"},
		{"index", 0, 0, G_OPTION_ARG_STRING, &o.index_arg, "Run only job I (from 0, in file order)",
		 "I"},
		{"submit", 0, 0, G_OPTION_ARG_STRING, &o.submit,
		 "Submit the batch to Slurm as an array job, one element per job, and a job "
		 "collecting their reports into FILE (--report)", "slurm"},
		{"wait", 0, 0, G_OPTION_ARG_NONE, &o.wait,
		 "With --submit: wait until the report is collected; exit as a batch run here would",
		 NULL},
		{"max-running", 0, 0, G_OPTION_ARG_STRING, &o.max_running_arg,
		 "With --submit: run at most N array elements at once", "N"},
		{"sbatch-option", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.sbatch_options,
		 "With --submit: pass OPT to sbatch (repeatable), e.g. --sbatch-option=--partition=short",
		 "OPT"},
		{"collect", 0, 0, G_OPTION_ARG_FILENAME, &o.collect,
		 "Run nothing: collect the reports of DIR (one per array element) into FILE "
		 "(--report); jobs without one are interrupted", "DIR"},
		{"quiet", 'q', 0, G_OPTION_ARG_NONE, &o.quiet, "Show no progress line", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("JOBS.yaml");
	g_option_context_set_summary(ctx,
		"Run the merge jobs listed in JOBS.yaml (see laplace-jobs(5)), N at a time,\n"
		"each in its own process, or submit them to Slurm. A failed job does not stop\n"
		"the others; the exit status is 0 only when every job succeeded.");
	g_option_context_set_description(ctx,
		"Relative paths in JOBS.yaml are relative to the directory of JOBS.yaml.\n"
		"With --shard K/N, several machines can share one batch. With --submit slurm,\n"
		"Slurm runs it: scripts and the elements' reports go beside FILE. SIGTERM\n"
		"writes the report of the jobs that ended, the others interrupted; --skip-done\n"
		"then runs only those. See laplace-batch(1).");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_sync_option(ctx);

	int rc = LP_EUSAGE;
	size_t shard_k = 0, shard_n = 1;
	if (cli_parse(ctx, &argc, &argv) && check_options(&o, argc, &shard_k, &shard_n))
		rc = batch(&o, argv[1], shard_k, shard_n);
	g_option_context_free(ctx);
	g_free(o.report);
	g_free(o.shard);
	g_free(o.shard_by);
	g_free(o.submit);
	g_free(o.collect);
	g_free(o.parallel_arg);
	g_free(o.job_timeout_arg);
	g_free(o.index_arg);
	g_free(o.max_running_arg);
	g_strfreev(o.sbatch_options);
	return rc;
}
