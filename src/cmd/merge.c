/* laplace merge: the basic merge, or the per-process directory. */
#include <stdio.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "pipeline/job.h"
#include "formats/registry.h"
#include "formats/stats.h"
#include "cmd/progress.h"

/* The options as given: NULL or FALSE when not. */
typedef struct merge_args {
	gchar *stats_path, *output, *per_process, *compress, *by, *form, *level, *threads;
	gboolean user_only, quiet, force;
	cli_capture capture;
	char *forms, *form_help; /* the registry's forms, and --format's help */
} merge_args;

static GOptionContext *merge_options(merge_args *a)
{
	a->forms = lp_form_names_list(true);
	a->form_help = g_strdup_printf("The form of the output: %s (default basic); with "
				       "--per-process, bin: the binary task form", a->forms);
	const GOptionEntry entries[] = {
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &a->output,
		 "Write the basic merge to FILE (default: standard output)", "FILE"},
		{"format", 0, 0, G_OPTION_ARG_STRING, &a->form, a->form_help, "FORM"},
		{"per-process", 0, 0, G_OPTION_ARG_FILENAME, &a->per_process,
		 "Write one file per task into directory DIR instead", "DIR"},
		{"by", 0, 0, G_OPTION_ARG_STRING, &a->by,
		 "With --per-process, one file per task (the default) or per process", "task|process"},
		{"force", 0, 0, G_OPTION_ARG_NONE, &a->force,
		 "With --per-process, replace an existing DIR once the new one is complete", NULL},
		{"user-only", 0, 0, G_OPTION_ARG_NONE, &a->user_only,
		 "Leave kernel references (R W I) out of the output", NULL},
		{"stats", 0, 0, G_OPTION_ARG_FILENAME, &a->stats_path,
		 "Write the statistics as YAML to FILE", "FILE"},
		{"compress", 0, 0, G_OPTION_ARG_STRING, &a->compress,
		 "Compress the output, or with --per-process every task file: gzip, zstd or none "
		 "(default: by the output's suffix)", "METHOD"},
		{"threads", 'j', 0, G_OPTION_ARG_STRING, &a->threads,
		 "Read, merge and write in N threads; 1: all in one (default: the processors "
		 "available)", "N"},
		{"level", 0, 0, G_OPTION_ARG_STRING, &a->level,
		 "Compression level: gzip 0-3 (default 1), zstd 1-19 or -7 to -1, its fast modes "
		 "(default 1)", "N"},
		{"quiet", 'q', 0, G_OPTION_ARG_NONE, &a->quiet,
		 "Do not print the statistics summary", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("REF KERN");
	g_option_context_set_summary(ctx,
		"Merge a raw reference trace REF with its kernel event trace KERN, giving\n"
		"every reference its canonical page. Either file may be '-' (standard\n"
		"input) and may be gzip or zstd compressed. See laplace-merge(1).");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_sync_option(ctx);
	cli_capture_add_options(&a->capture, ctx);
	return ctx;
}

/* The parsed command line a (argc arguments left in argv) into job; on a
 * usage error print it and return false. */
static bool merge_job_apply(const merge_args *a, int argc, char **argv, lp_merge_job *job)
{
	if (argc != 3) {
		cli_usage_error("expected two inputs, REF and KERN, got %d", argc - 1);
		return false;
	}
	if (!cli_capture_apply(&a->capture, argv[1], argv[2], job))
		return false;
	if (a->compress && (int)(job->compress = lp_compress_parse(a->compress)) < 0) {
		cli_usage_error("--compress must be gzip, zstd or none, not '%s'", a->compress);
		return false;
	}
	if (!cli_threads_apply(a->threads, &job->threads) ||
	    !cli_level_apply(a->level, a->per_process ? NULL : a->output, job->compress, &job->level))
		return false;
	if (a->per_process && a->output) {
		cli_usage_error("-o and --per-process exclude each other");
		return false;
	}
	if (a->force && !a->per_process) {
		cli_usage_error("--force goes with --per-process");
		return false;
	}
	if (a->form && a->per_process && strcmp(a->form, "bin")) {
		cli_usage_error("--format with --per-process must be bin (the binary task form), "
				"not '%s'", a->form);
		return false;
	}
	if (!cli_form_apply(a->form, true, &job->form))
		return false;
	if (a->by && !a->per_process) {
		cli_usage_error("--by goes with --per-process");
		return false;
	}
	if (a->by && !strcmp(a->by, lp_layout_names[LP_LAYOUT_PROCESS]))
		job->layout = LP_LAYOUT_PROCESS;
	else if (a->by && strcmp(a->by, lp_layout_names[LP_LAYOUT_TASK])) {
		cli_usage_error("--by must be task or process, not '%s'", a->by);
		return false;
	}
	job->user_only = a->user_only;
	job->per_process = a->per_process != NULL;
	job->output = a->per_process ? a->per_process : a->output;
	job->force = a->force;
	job->stats_path = a->stats_path;
	return true;
}

static void merge_args_free(merge_args *a)
{
	cli_capture_free(&a->capture);
	g_free(a->stats_path);
	g_free(a->threads);
	g_free(a->output);
	g_free(a->per_process);
	g_free(a->compress);
	g_free(a->by);
	g_free(a->form);
	g_free(a->level);
	g_free(a->forms);
	g_free(a->form_help);
}

int cmd_merge(int argc, char **argv)
{
	cli_set_command("laplace merge");
	merge_args a = {0};
	GOptionContext *ctx = merge_options(&a);
	int rc = LP_EUSAGE;
	lp_merge_job job;
	lp_merge_job_init(&job);
	lp_error err = {0};
	lp_stats stats;
	if (!cli_parse(ctx, &argc, &argv) || !merge_job_apply(&a, argc, argv, &job))
		goto out;
	cli_progress *progress = cli_progress_new(a.quiet);
	job.progress = progress ? cli_progress_update : NULL;
	job.progress_ctx = progress;
	rc = lp_merge_job_run(&job, &stats, &err);
	cli_progress_free(progress);
	if (rc)
		cli_fail(&err);
	else if (!a.quiet) {
		GString *summary = g_string_new(NULL);
		cli_print_stats(summary, &stats);
		fputs(summary->str, stderr);
		g_string_free(summary, TRUE);
	}
out:
	g_option_context_free(ctx);
	merge_args_free(&a);
	return rc;
}
