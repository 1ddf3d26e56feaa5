/* laplace study: the options; the study engine (jobs/study.h) reads the
 * study file, runs its cells and makes the table. */
#include <stdio.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "jobs/study.h"
#include "report/study.h"

typedef struct study_options {
	gchar *parallel_arg, *dir, *output, *shard, *cell_arg, *submit, *max_running_arg, *page;
	gchar **sbatch_options;
	gboolean skip_done, redo, collect, quiet, wait;
	size_t parallel; /* -j, or its default */
	int cell;        /* -1: not given */
	int max_running; /* -1: not given */
} study_options;

static bool check_options(study_options *o, int argc, size_t *k, size_t *n)
{
	if (argc != 2)
		cli_usage_error("expected one study file, got %d", argc - 1);
	else if (!cli_max_running_apply(o->parallel_arg, &o->parallel) ||
		 !cli_count_apply("--cell", o->cell_arg, 0, G_MAXINT, &o->cell))
		return false;
	else if (o->skip_done && o->redo)
		cli_usage_error("--skip-done and --redo cannot be combined");
	else if (!cli_shard_apply(o->shard, k, n))
		return false;
	else if (o->shard && o->cell_arg)
		cli_usage_error("--shard and --cell cannot be combined");
	else if (o->collect && (o->shard || o->cell_arg || o->redo || o->parallel_arg))
		cli_usage_error("--collect runs nothing: not with %s",
				o->shard ? "--shard" : o->cell_arg ? "--cell" : o->redo ? "--redo" : "-j");
	else if (o->submit && strcmp(o->submit, "slurm"))
		cli_usage_error("--submit must be 'slurm', not '%s'", o->submit);
	else if (!o->submit && (o->wait || o->max_running_arg || o->sbatch_options))
		cli_usage_error("%s needs --submit slurm",
				o->wait ? "--wait" : o->max_running_arg ? "--max-running" : "--sbatch-option");
	else if (o->submit && (o->shard || o->cell_arg || o->collect || o->parallel_arg))
		cli_usage_error("--submit and %s cannot be combined",
				o->shard ? "--shard" : o->cell_arg ? "--cell" : o->collect ? "--collect" : "-j");
	else if (!cli_count_apply("--max-running", o->max_running_arg, 1, G_MAXINT, &o->max_running))
		return false;
	else
		return true;
	return false;
}

/* The table from the ok cells, and the page; 2 when some cell is not ok. */
static int finish(lp_study_run *run, const char *table, const char *page, bool quiet)
{
	size_t bad = lp_study_list_failures(run);
	lp_error err = {0};
	if (lp_study_write_table(run, table, &err) ||
	    (page && lp_study_page(run->dir, table, page, &err)))
		return cli_fail(&err);
	size_t ok = 0, before = 0;
	for (size_t i = 0; i < run->ncells; i++) {
		ok += run->cells[i].status == LP_CELL_OK;
		before += run->cells[i].done && run->cells[i].selected;
	}
	if (bad)
		fprintf(stderr, "%s: %zu of %zu cells not ok: %s has the rows of the others\n",
			cli_command(), run->ncells - ok, run->ncells, table);
	else if (!quiet)
		fprintf(stderr, "%s: %zu cells ok (%zu done before), table in %s\n", cli_command(),
			run->ncells, before, table);
	return bad ? LP_EINPUT : 0;
}

/* --submit slurm: the jobs submitted; with --wait, how they ended. */
static int submit(lp_study_run *run, const study_options *o, const char *table)
{
	lp_error err = {0};
	size_t pending = 0;
	for (size_t i = 0; i < run->ncells; i++)
		pending += !run->cells[i].done;
	if (!pending) {
		fprintf(stderr, "%s: nothing to submit: every cell is done\n", cli_command());
		return lp_study_collect(run, &err) ? cli_fail(&err) : finish(run, table, o->page, o->quiet);
	}
	char *program = g_file_read_link("/proc/self/exe", NULL);
	lp_study_submission sub = {
		.program = program ? program : "laplace",
		.study_file = run->study->file,
		.table = o->output ? table : NULL,
		.max_running = o->max_running == -1 ? 0 : (size_t)o->max_running,
		.sbatch_options = o->sbatch_options,
		.wait = o->wait,
	};
	/* Waiting for sbatch, a signal ends this process as it ends sbatch. */
	lp_job_pool_release_signals(&run->pool);
	int rc = lp_study_submit(run, &sub, &err);
	if (rc) {
		cli_fail(&err);
	} else {
		printf("%s%s%s %s\n", sub.merges_job_id ? sub.merges_job_id : "",
		       sub.merges_job_id ? " " : "", sub.cells_job_id ? sub.cells_job_id : "",
		       sub.collector_job_id);
		fflush(stdout);
		fprintf(stderr, "%s: cells submitted as %s%s%sarray job %s, collected by job %s\n",
			cli_command(), sub.merges_job_id ? "array job " : "",
			sub.merges_job_id ? sub.merges_job_id : "",
			sub.merges_job_id ? " (merges) and " : "",
			sub.cells_job_id ? sub.cells_job_id : "-", sub.collector_job_id);
	}
	if (!rc && o->wait) {
		/* What the collector wrote. */
		for (size_t i = 0; i < run->ncells; i++)
			run->cells[i].done = false;
		rc = lp_study_select(run, false, &err) ? cli_fail(&err) : finish(run, table, o->page, o->quiet);
	}
	lp_study_submission_clear(&sub);
	g_free(program);
	return rc;
}

static int study(const study_options *o, const char *given, size_t shard_k, size_t shard_n)
{
	lp_study s;
	lp_error err = {0};
	/* Slurm runs the scripts elsewhere: every path absolute. */
	char *path = o->submit ? g_canonicalize_filename(given, NULL) : g_strdup(given);
	int rc = lp_study_load(path, &s, &err);
	if (rc) {
		lp_study_clear(&s);
		g_free(path);
		return cli_fail(&err);
	}
	char *dir = o->dir ? g_strdup(o->dir) : lp_study_default_dir(path);
	char *table = o->output ? g_strdup(o->output) : g_build_filename(dir, "table.csv", NULL);
	if (o->submit) {
		char *abs_dir = g_canonicalize_filename(dir, NULL);
		char *abs_table = g_canonicalize_filename(table, NULL);
		g_free(dir);
		g_free(table);
		dir = abs_dir;
		table = abs_table;
	}
	lp_study_run run;
	lp_study_run_init(&run, cli_command(), &s, dir);
	lp_job_pool_catch_signals(&run.pool);
	if (o->cell != -1 && (size_t)o->cell >= run.ncells) {
		rc = cli_usage_error("--cell %d is past the last cell of %s (%zu cells, from 0)",
				     o->cell, path, run.ncells);
		goto out;
	}
	if ((rc = lp_study_select(&run, o->redo, &err))) {
		cli_fail(&err);
		goto out;
	}
	if (o->collect) {
		rc = lp_study_collect(&run, &err) ? cli_fail(&err) : finish(&run, table, o->page, o->quiet);
		goto out;
	}
	if (o->submit) {
		rc = submit(&run, o, table);
		goto out;
	}
	if (o->shard) {
		lp_study_select_shard(&run, shard_k, shard_n);
		run.part = g_strdup_printf("%s/shard-%zu-of-%zu.yaml", run.parts_dir, shard_k, shard_n);
	}
	if (o->cell != -1) {
		lp_study_select_index(&run, (size_t)o->cell);
		run.part = g_strdup_printf("%s/cell-%d.yaml", run.parts_dir, o->cell);
	}
	run.pool.max_running = o->parallel;
	if ((rc = lp_study_run_cells(&run, &err)))
		cli_fail(&err);
	if (run.pool.stopped_by) {
		fprintf(stderr, "%s: interrupted by %s\n", cli_command(), g_strsignal(run.pool.stopped_by));
		rc = 128 + run.pool.stopped_by;
	} else if (!rc && run.part) {
		/* --collect makes the table of the parts. */
		rc = lp_study_list_failures(&run) ? LP_EINPUT : 0;
	} else if (!rc) {
		rc = lp_study_collect(&run, &err) ? cli_fail(&err) : finish(&run, table, o->page, o->quiet);
	}
out:
	lp_study_run_clear(&run);
	lp_study_clear(&s);
	g_free(table);
	g_free(dir);
	g_free(path);
	return rc;
}

int cmd_study(int argc, char **argv)
{
	cli_set_command("laplace study");
	study_options o = {.cell = -1, .max_running = -1};
	GOptionEntry entries[] = {
		{"jobs", 'j', 0, G_OPTION_ARG_STRING, &o.parallel_arg,
		 "Run N cells at a time (default: $SLURM_CPUS_PER_TASK, else $SLURM_CPUS_ON_NODE, "
		 "else the number of processors)", "N"},
		{"directory", 'd', 0, G_OPTION_ARG_FILENAME, &o.dir,
		 "The work directory (default: STUDY.d beside STUDY.yaml)", "DIR"},
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output,
		 "Write the table to FILE (default: DIR/table.csv)", "FILE"},
		{"skip-done", 0, 0, G_OPTION_ARG_NONE, &o.skip_done,
		 "Run only the cells not done: missing, not ok, or with changed inputs, and those "
		 "that depend on them (the default)", NULL},
		{"redo", 0, 0, G_OPTION_ARG_NONE, &o.redo, "Run every cell again", NULL},
		{"report", 0, 0, G_OPTION_ARG_FILENAME, &o.page,
		 "Draw the table and the cells as one HTML page, PAGE", "PAGE.html"},
		{"shard", 0, 0, G_OPTION_ARG_STRING, &o.shard,
		 "Run only the cells whose index is K modulo N (K from 0)", "K/N"},
		{"cell", 0, 0, G_OPTION_ARG_STRING, &o.cell_arg,
		 "Run only cell I (from 0, in the manifest's order)", "I"},
		{"collect", 0, 0, G_OPTION_ARG_NONE, &o.collect,
		 "Run nothing: make the manifest and the table from what the cells left", NULL},
		{"submit", 0, 0, G_OPTION_ARG_STRING, &o.submit,
		 "Submit the cells to Slurm: an array job of the merges, one of the other cells "
		 "after it, and a job that collects the table", "slurm"},
		{"wait", 0, 0, G_OPTION_ARG_NONE, &o.wait,
		 "With --submit: wait until the table is collected; exit as a run here would", NULL},
		{"max-running", 0, 0, G_OPTION_ARG_STRING, &o.max_running_arg,
		 "With --submit: run at most N array elements at once", "N"},
		{"sbatch-option", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.sbatch_options,
		 "With --submit: pass OPT to sbatch (repeatable)", "OPT"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("STUDY.yaml");
	g_option_context_set_summary(ctx,
		"Run a study (see laplace-study(5)): the same sim runs and schedule sweeps over\n"
		"several captures, each cell one laplace process, N at a time, resumable, and\n"
		"one table of every result, DIR/table.csv.");
	g_option_context_set_description(ctx,
		"Cells are written to DIR/cells/, the manifest (each cell's command, inputs,\n"
		"status, times and memory) to DIR/manifest.yaml. A failed cell fails alone;\n"
		"the exit status is 0 only when every cell is ok. A second run runs only what\n"
		"is missing, failed, interrupted or stale. See laplace-study(1).");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_quiet_option(ctx);
	cli_add_sync_option(ctx);
	int rc = LP_EUSAGE;
	size_t k = 0, n = 1;
	if (cli_parse(ctx, &argc, &argv) && check_options(&o, argc, &k, &n)) {
		o.quiet = cli_quiet();
		rc = study(&o, argv[1], k, n);
	}
	g_option_context_free(ctx);
	g_free(o.parallel_arg);
	g_free(o.dir);
	g_free(o.output);
	g_free(o.shard);
	g_free(o.cell_arg);
	g_free(o.submit);
	g_free(o.max_running_arg);
	g_free(o.page);
	g_strfreev(o.sbatch_options);
	return rc;
}
