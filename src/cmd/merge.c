/* laplace merge: the basic merge, or the per-process directory. */
#include <stdio.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "pipeline/job.h"
#include "formats/stats.h"
#include "cmd/progress.h"

int cmd_merge(int argc, char **argv)
{
	cli_set_command("laplace merge");
	gchar *stats_path = NULL, *output = NULL, *per_process = NULL, *compress = NULL;
	gchar *by = NULL, *form = NULL, *level = NULL;
	gboolean user_only = FALSE, quiet = FALSE, force = FALSE;
	gchar *threads = NULL;
	cli_capture capture = {0};
	GOptionEntry entries[] = {
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
		 "Write the basic merge to FILE (default: standard output)", "FILE"},
		{"format", 0, 0, G_OPTION_ARG_STRING, &form,
		 "The form of the output: basic (the default), addr, din or bin; with "
		 "--per-process, bin: the binary task form", "FORM"},
		{"per-process", 0, 0, G_OPTION_ARG_FILENAME, &per_process,
		 "Write one file per task into directory DIR instead", "DIR"},
		{"by", 0, 0, G_OPTION_ARG_STRING, &by,
		 "With --per-process, one file per task (the default) or per process", "task|process"},
		{"force", 0, 0, G_OPTION_ARG_NONE, &force,
		 "With --per-process, replace an existing DIR once the new one is complete", NULL},
		{"user-only", 0, 0, G_OPTION_ARG_NONE, &user_only,
		 "Leave kernel references (R W I) out of the output", NULL},
		{"stats", 0, 0, G_OPTION_ARG_FILENAME, &stats_path,
		 "Write the statistics as YAML to FILE", "FILE"},
		{"compress", 0, 0, G_OPTION_ARG_STRING, &compress,
		 "Compress the output, or with --per-process every task file: gzip, zstd or none "
		 "(default: by the output's suffix)", "METHOD"},
		{"threads", 'j', 0, G_OPTION_ARG_STRING, &threads,
		 "Read, merge and write in N threads; 1: all in one (default: the processors "
		 "available)", "N"},
		{"level", 0, 0, G_OPTION_ARG_STRING, &level,
		 "Compression level: gzip 0-3 (default 1), zstd 1-19 or -7 to -1, its fast modes "
		 "(default 1)", "N"},
		{"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet,
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
	cli_capture_add_options(&capture, ctx);

	int rc = LP_EUSAGE;
	lp_merge_job job;
	lp_merge_job_init(&job);
	lp_error err = {0};
	lp_stats stats;
	if (!cli_parse(ctx, &argc, &argv))
		goto out;
	if (argc != 3) {
		cli_usage_error("expected two inputs, REF and KERN, got %d", argc - 1);
		goto out;
	}
	if (!cli_capture_apply(&capture, argv[1], argv[2], &job))
		goto out;
	if (compress && (int)(job.compress = lp_compress_parse(compress)) < 0) {
		cli_usage_error("--compress must be gzip, zstd or none, not '%s'", compress);
		goto out;
	}
	if (!cli_threads_apply(threads, &job.threads))
		goto out;
	if (!cli_level_apply(level, per_process ? NULL : output, job.compress, &job.level))
		goto out;
	if (per_process && output) {
		cli_usage_error("-o and --per-process exclude each other");
		goto out;
	}
	if (force && !per_process) {
		cli_usage_error("--force goes with --per-process");
		goto out;
	}
	if (form && per_process && strcmp(form, "bin")) {
		cli_usage_error("--format with --per-process must be bin (the binary task form), "
				"not '%s'", form);
		goto out;
	}
	if (form && (int)(job.form = lp_form_parse(form)) < 0) {
		cli_usage_error("--format must be basic, addr, din or bin, not '%s'", form);
		goto out;
	}
	if (by && !per_process) {
		cli_usage_error("--by goes with --per-process");
		goto out;
	}
	if (by && !strcmp(by, lp_layout_names[LP_LAYOUT_PROCESS]))
		job.layout = LP_LAYOUT_PROCESS;
	else if (by && strcmp(by, lp_layout_names[LP_LAYOUT_TASK])) {
		cli_usage_error("--by must be task or process, not '%s'", by);
		goto out;
	}
	job.user_only = user_only;
	job.per_process = per_process != NULL;
	job.output = per_process ? per_process : output;
	job.force = force;
	job.stats_path = stats_path;

	cli_progress *progress = cli_progress_new(quiet);
	job.progress = progress ? cli_progress_update : NULL;
	job.progress_ctx = progress;
	rc = lp_merge_job_run(&job, &stats, &err);
	cli_progress_free(progress);
	if (rc) {
		cli_fail(&err);
		goto out;
	}
	if (!quiet) {
		GString *summary = g_string_new(NULL);
		cli_print_stats(summary, &stats);
		fputs(summary->str, stderr);
		g_string_free(summary, TRUE);
	}
out:
	g_option_context_free(ctx);
	cli_capture_free(&capture);
	g_free(stats_path);
	g_free(threads);
	g_free(output);
	g_free(per_process);
	g_free(compress);
	g_free(by);
	g_free(form);
	g_free(level);
	return rc;
}
