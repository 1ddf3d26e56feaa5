/* laplace report: one self-contained HTML page of figures and tables for
 * a capture, a per-process directory or a basic merge stream. The work is
 * src/report/; here are options and the output. */
#include <string.h>

#include "analysis/simlist.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/progress.h"
#include "core/numbers.h"
#include "report/collect.h"
#include "report/page.h"
#include "report/study.h"
#include "report/sweep.h"

/* Check the arguments and options (the capture's into job); on a usage
 * error print it and return false. */
static bool check_options(int argc, char **argv, bool is_dir, const cli_capture *capture,
			  const char *threads, const char *schedule, const char *seed,
			  uint64_t *seed_value, lp_merge_job *job)
{
	if (argc != 2 && argc != 3)
		cli_usage_error("expected REF KERN, DIR or STREAM, got %d arguments", argc - 1);
	else if (argc == 2 && !cli_capture_stream_check(capture))
		return false;
	else if (argc == 2 && threads)
		cli_usage_error("-j goes with a capture (REF KERN)");
	else if (!cli_threads_apply(threads, &job->threads))
		return false;
	else if (schedule && !is_dir)
		cli_usage_error("--schedule goes with a per-process directory, the one scheduled");
	else if (seed && !schedule)
		cli_usage_error("--seed goes with --schedule");
	else if (!cli_decimal_apply("--seed", seed, 0, UINT64_MAX, seed_value))
		return false;
	else if (argc == 3 && !cli_capture_apply(capture, argv[1], argv[2], job))
		return false;
	else
		return true;
	return false;
}

/* The fixed-space policies of --policies into *policies (g_free'd by the
 * caller); on a usage error print it and return false. */
static bool check_policies(const char *list, const lp_policy_info ***policies, size_t *n)
{
	lp_error err = {0};
	if (lp_sim_parse_policies(list, policies, n, &err)) {
		/* The list is --policies' here, not sim's --policy. */
		const char *prefix = "--policy:";
		cli_usage_error("--policies:%s", g_str_has_prefix(err.msg, prefix)
							 ? err.msg + strlen(prefix) : err.msg);
		return false;
	}
	for (size_t i = 0; i < *n; i++)
		if ((*policies)[i]->space != LP_SPACE_FIXED) {
			cli_usage_error("--policies: %s is a variable-space policy: ws and vmin are "
					"always drawn, in the lifetime curve", (*policies)[i]->name);
			g_free(*policies);
			*policies = NULL;
			return false;
		}
	return true;
}

/* The report of the inputs (a capture, a directory with its schedule, or
 * a stream), written as a page to output. */
static int report_page(int argc, char **argv, bool is_dir, const lp_merge_job *job,
		       const char *output, const char *schedule, uint64_t seed,
		       const lp_policy_info *const *policies, size_t npolicies)
{
	lp_error err = {0};
	lp_report *report = NULL;
	const char *inputs[] = {argv[1], argc == 3 ? argv[2] : schedule};
	const char *outputs[] = {output ? output : "-"};
	int rc = lp_check_outputs(inputs, (size_t)(argc == 3 || schedule ? 2 : 1), outputs, 1, &err);
	if (rc)
		return cli_fail(&err);
	cli_progress *reading = cli_progress_new(cli_quiet());
	cli_progress_set_work(reading, "reference", "read");
	lp_progress read_hook = cli_progress_hook(reading);
	if (argc == 3) {
		char *title = g_strconcat(argv[1], " ", argv[2], NULL);
		report = lp_report_from_capture(job, title, &read_hook, &err);
		g_free(title);
	} else if (is_dir) {
		report = lp_report_from_directory(argv[1], &read_hook, &err);
	} else {
		report = lp_report_from_stream(argv[1], &read_hook, &err);
	}
	cli_progress_free(reading);
	lp_output *out = NULL;
	if (!report || (schedule && (lp_report_read_schedule(report, schedule, &err) ||
				     lp_report_replay_schedule(report, argv[1], seed, &err))) ||
	    !(out = lp_output_open(output, LP_COMPRESS_NONE, &err))) {
		lp_report_free(report);
		return cli_fail(&err);
	}
	cli_progress *progress = cli_progress_new(cli_quiet());
	cli_progress_set_work(progress, "reference", "simulated");
	lp_progress hook = cli_progress_hook(progress);
	lp_report_simulate(report, policies, npolicies,
			   job->threads ? job->threads : g_get_num_processors(), &hook);
	cli_progress_free(progress);
	rc = lp_report_write_html(report, out, &err);
	if (rc)
		lp_output_abort(out);
	else
		rc = lp_output_commit(out, &err);
	if (rc)
		cli_fail(&err);
	lp_report_free(report);
	return rc;
}

/* The page of a sweep's table (laplace schedule --memory M1,M2,...). */
static int sweep_page(const char *sweep, const char *output)
{
	lp_error err = {0};
	const char *inputs[] = {sweep};
	const char *outputs[] = {output ? output : "-"};
	if (lp_check_outputs(inputs, 1, outputs, 1, &err))
		return cli_fail(&err);
	lp_sweep *s = lp_sweep_read(sweep, &err);
	lp_output *out = s ? lp_output_open(output, LP_COMPRESS_NONE, &err) : NULL;
	if (!out) {
		lp_sweep_free(s);
		return cli_fail(&err);
	}
	int rc = lp_sweep_write_html(s, out, &err);
	if (rc)
		lp_output_abort(out);
	else
		rc = lp_output_commit(out, &err);
	if (rc)
		cli_fail(&err);
	lp_sweep_free(s);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	cli_set_command("laplace report");
	gchar *output = NULL, *schedule = NULL, *seed = NULL, *threads = NULL, *sweep = NULL;
	gchar *study = NULL;
	gchar *policies = NULL;
	cli_capture capture = {0};
	GOptionEntry entries[] = {
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
		 "Write the page (HTML) to FILE, as named (default: standard output)", "FILE"},
		{"schedule", 0, 0, G_OPTION_ARG_FILENAME, &schedule,
		 "Add the per-CPU timeline of a laplace schedule --report file (the schedule is "
		 "run again)", "REPORT.yaml"},
		{"seed", 0, 0, G_OPTION_ARG_STRING, &seed,
		 "With --schedule of a random schedule: its --seed (default 0)", "N"},
		{"policies", 0, 0, G_OPTION_ARG_STRING, &policies,
		 "The fixed-space policies of laplace sim drawn side by side in the miss-ratio "
		 "figure (default: lru,opt,clock,arc)", "LIST"},
		{"threads", 'j', 0, G_OPTION_ARG_STRING, &threads,
		 "A capture: read, merge, gather and simulate in N threads; 1: all in one "
		 "(default: the processors available)", "N"},
		{"sweep", 0, 0, G_OPTION_ARG_FILENAME, &sweep,
		 "Instead of an input: draw the table of laplace schedule --memory M1,M2,... "
		 "(utilization and faults against memory size, the knee marked)", "FILE.csv"},
		{"study", 0, 0, G_OPTION_ARG_FILENAME, &study,
		 "Instead of an input: draw a study's table and cells (laplace study's work "
		 "directory DIR)", "DIR"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("REF KERN | DIR | STREAM | --sweep FILE.csv");
	g_option_context_set_summary(ctx,
		"Write one self-contained HTML page (no script, nothing fetched) with\n"
		"inline SVG figures: the miss-ratio curves of page-replacement policies\n"
		"side by side, with LRU's working-set knees, and the lifetime curve of\n"
		"the working set and VMIN; for a capture or a per-process directory\n"
		"also the task timeline, canonical pages by kind, the totals of the\n"
		"merge statistics and a table of processes.\n\n"
		"  REF KERN   a capture, merged on the way (nothing else is written)\n"
		"  DIR        a per-process merge directory (one file per task)\n"
		"  STREAM     a basic merge stream, any form, gzip or zstd allowed");
	g_option_context_set_description(ctx,
		"Examples:\n"
		"  laplace report -o demo.html fixtures/demo/demo.ref fixtures/demo/demo.kern\n"
		"  laplace schedule --policy rr --cpus 2 --report rr.yaml -o /dev/null pp\n"
		"  laplace report --schedule rr.yaml -o pp.html pp\n"
		"  laplace schedule --policy rr --memory 64,128,256,512 pp > sweep.csv\n"
		"  laplace report --sweep sweep.csv -o sweep.html\n"
		"See laplace-report(1).");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_sync_option(ctx);
	cli_add_quiet_option(ctx);
	cli_capture_add_options(&capture, ctx);

	int rc = LP_EUSAGE;
	lp_merge_job job;
	lp_merge_job_init(&job);
	job.warn = cli_warn;
	uint64_t seed_value = 0;
	const lp_policy_info **list = NULL;
	size_t nlist = 0;
	if (!cli_parse(ctx, &argc, &argv)) {
		/* said */
	} else if (study) {
		lp_error err = {0};
		if (argc != 1 || sweep || schedule || seed || threads || policies ||
		    cli_capture_given(&capture))
			cli_usage_error("--study DIR goes with -o only");
		else
			rc = lp_study_page(study, NULL, output, &err) ? cli_fail(&err) : 0;
	} else if (sweep) {
		if (argc != 1)
			cli_usage_error("--sweep takes no other input, got %d", argc - 1);
		else if (schedule || seed || threads || policies || cli_capture_given(&capture))
			cli_usage_error("--sweep goes with -o only");
		else
			rc = sweep_page(sweep, output);
	} else {
		bool is_dir = argc == 2 && g_file_test(argv[1], G_FILE_TEST_IS_DIR);
		if (check_options(argc, argv, is_dir, &capture, threads, schedule, seed, &seed_value,
				  &job) &&
		    check_policies(policies ? policies : "lru,opt,clock,arc", &list, &nlist))
			rc = report_page(argc, argv, is_dir, &job, output, schedule, seed_value, list,
					 nlist);
	}
	g_free(list);
	g_free(policies);
	g_option_context_free(ctx);
	cli_capture_free(&capture);
	g_free(output);
	g_free(schedule);
	g_free(seed);
	g_free(threads);
	g_free(sweep);
	g_free(study);
	return rc;
}
