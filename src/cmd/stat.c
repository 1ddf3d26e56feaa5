/* laplace stat: counts of a per-process directory (from its index.yaml, or
 * its files for what that does not give), a capture's merge statistics, or
 * a basic merge stream's LRU miss-ratio curve and reuse distances. The
 * counting is src/analysis/ (counts.h, reuse.h); here are the options and
 * the tables printed. */
#include <stdio.h>
#include <string.h>

#include "analysis/counts.h"
#include "analysis/reuse.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/progress.h"
#include "cmd/table.h"
#include "core/record.h"
#include "pipeline/job.h"

/* -o FILE: where the report goes (NULL: standard output). */
static const char *report_path;

/* Write a report to report_path through lp_output, as every command
 * writes its output, and publish it with extra (a staged file, or NULL),
 * so that either both are written or neither is left (laplace(1),
 * "OUTPUTS"). Any failure is reported; returns the exit status. */
static int print_report(const char *text, size_t len, lp_staged *extra)
{
	lp_error err = {0};
	lp_staged *staged[2] = {NULL, extra};
	lp_output *out = lp_output_open(report_path, LP_COMPRESS_AUTO, &err);
	int rc = out ? lp_output_write(out, text, len, &err) : err.status;
	if (out)
		rc = lp_output_stage(out, rc, &staged[0], &err);
	if (rc) {
		lp_staged_discard(extra);
		return cli_fail(&err);
	}
	/* Publishing discards every item when it fails. */
	if ((rc = lp_stage_publish(staged, 2, &err)))
		return cli_fail(&err);
	return 0;
}

/* A row of the directory's table: records, references and their share of
 * all references, first and last timestamps (none for an empty file). */
static void file_row(cli_table *t, const lp_index_file *f, uint64_t all_refs)
{
	cli_table_count(t, f->records);
	cli_table_share(t, f->references, all_refs);
	if (f->records) {
		cli_table_text(t, "0x%" G_GINT64_MODIFIER "x", f->first_ts);
		cli_table_text(t, "0x%" G_GINT64_MODIFIER "x", f->last_ts);
	}
}

/* Pids and tids in decimal, as ps shows them, and in hex, as the traces
 * and the file names have them. */
static int stat_directory(const char *dir)
{
	lp_error err = {0};
	lp_dir_counts c;
	if (lp_dir_counts_read(dir, &c, &err))
		return cli_fail(&err);
	const lp_index *ix = c.ix;
	uint64_t refs = c.references;
	cli_table *t = cli_table_new();
	cli_table_row(t, "%s", "");
	cli_table_text(t, "tasks");
	cli_table_text(t, "records");
	cli_table_text(t, "references");
	cli_table_text(t, "(%% of all)");
	cli_table_text(t, "first timestamp");
	cli_table_text(t, "last timestamp");
	for (size_t i = 0; i < ix->nprocesses; i++) {
		const lp_index_process *p = &ix->processes[i];
		cli_table_row(t, "pid %" G_GUINT64_FORMAT " (0x%" G_GINT64_MODIFIER "x)", p->pid, p->pid);
		cli_table_count(t, p->ntasks);
		cli_table_count(t, c.records_of[i]);
		cli_table_share(t, c.references_of[i], refs);
		if (p->programs[0]) {
			char *programs = g_strjoinv(", ", p->programs);
			cli_table_note(t, "  programs: %s", programs);
			g_free(programs);
		}
		for (size_t k = 0; k < p->ntasks; k++) {
			const lp_index_task *task = &p->tasks[k];
			cli_table_row(t, "  tid %" G_GUINT64_FORMAT " (0x%" G_GINT64_MODIFIER "x), file %s",
				      task->tid, task->tid, task->file.path);
			cli_table_empty(t);
			file_row(t, &task->file, refs);
		}
	}
	cli_table_row(t, "kernel");
	cli_table_empty(t);
	file_row(t, &ix->kernel, refs);
	if (ix->orphan.path) {
		cli_table_row(t, "orphan (no task current)");
		cli_table_empty(t);
		file_row(t, &ix->orphan, refs);
	} else {
		cli_table_note(t, "orphan: none (every user reference had a current task)");
	}
	cli_table_row(t, "total: %zu process%s", ix->nprocesses, ix->nprocesses == 1 ? "" : "es");
	cli_table_count(t, c.tasks);
	cli_table_count(t, c.records);
	cli_table_count(t, refs);
	lp_dir_counts_clear(&c);
	GString *to = g_string_new(NULL);
	cli_table_finish(t, to);
	int rc = print_report(to->str, to->len, NULL);
	g_string_free(to, TRUE);
	return rc;
}

/* The statistics of a capture's merge. */
static int stat_capture(lp_merge_job *job, const char *stats_path)
{
	lp_error err = {0};
	lp_stats stats;
	lp_staged *yaml;
	if (lp_merge_stats_only(job, stats_path, &stats, &yaml, &err))
		return cli_fail(&err);
	GString *summary = g_string_new(NULL);
	cli_print_stats(summary, &stats);
	int rc = print_report(summary->str, summary->len, yaml);
	g_string_free(summary, TRUE);
	return rc;
}

/* Per reference type: references, distinct pages, and first references
 * (of that type's references); the first row for all types. */
static void print_types(GString *to, const lp_reuse *c)
{
	cli_table *t = cli_table_new();
	cli_table_row(t, "type");
	cli_table_text(t, "references");
	cli_table_text(t, "(%% of all)");
	cli_table_text(t, "distinct pages");
	cli_table_text(t, "first references");
	cli_table_text(t, "(%% of type)");
	cli_table_row(t, "all");
	cli_table_count(t, c->references);
	cli_table_empty(t);
	cli_table_count(t, c->distinct);
	cli_table_count(t, c->distinct); /* one first reference a distinct page */
	cli_table_percent(t, c->distinct, c->references);
	for (int k = 0; k < 6; k++) {
		cli_table_row(t, "%s (%c)", lp_ref_type_words[k], lp_ref_types[k]);
		cli_table_share(t, c->refs[k], c->references);
		cli_table_count(t, c->distinct_of[k]);
		cli_table_share(t, c->first[k], c->refs[k]);
	}
	cli_table_finish(t, to);
}

/* The miss-ratio curve at powers of two, and at the size that holds every
 * page: the whole curve goes to --mrc. */
static void print_curve(GString *to, const lp_reuse *c)
{
	const uint64_t *misses = c->misses, refs = c->references, distinct = c->distinct;
	g_string_append(to, "\nLRU miss-ratio curve (misses of an LRU memory of each size):\n");
	cli_table *t = cli_table_new();
	cli_table_row(t, "%s", "");
	cli_table_text(t, "frames");
	cli_table_text(t, "misses");
	cli_table_text(t, "miss ratio");
	for (uint64_t f = 1; f <= distinct; f = f < distinct && f * 2 > distinct ? distinct : f * 2) {
		cli_table_row(t, "%s", "");
		cli_table_count(t, f);
		cli_table_share(t, misses[f], refs);
	}
	cli_table_finish(t, to);
}

/* The reuse-distance table: one row per bucket up to the last non-empty
 * one, then the first references; a column for all references, their
 * share, and one per type. */
static void print_reuse(GString *to, const lp_reuse *c)
{
	uint64_t refs = c->references;
	g_string_append(to, "\nreuse distance (LRU stack distance, in pages), references by type:\n");
	static const char *const user_or_kernel[6] = {"", "", "", "kernel", "kernel", "kernel"};
	static const char *const access[6] = {"read", "write", "fetch", "read", "write", "fetch"};
	cli_table *t = cli_table_new();
	cli_table_row(t, "%s", "");
	cli_table_empty(t);
	cli_table_empty(t);
	for (int k = 0; k < 6; k++)
		cli_table_text(t, "%s", user_or_kernel[k]);
	cli_table_row(t, "distance");
	cli_table_text(t, "all");
	cli_table_text(t, "(%% of all)");
	for (int k = 0; k < 6; k++)
		cli_table_text(t, "%s", access[k]);
	int last = -1;
	for (int b = 0; b < LP_REUSE_BUCKETS; b++)
		for (int k = 0; k < 6; k++)
			if (c->buckets[b][k])
				last = b;
	for (int b = 0; b <= last + 1; b++) {
		const uint64_t *row = b <= last ? c->buckets[b] : c->first;
		uint64_t all = 0;
		for (int k = 0; k < 6; k++)
			all += row[k];
		if (b > last)
			cli_table_row(t, "first");
		else if (b == 0)
			cli_table_row(t, "1");
		else {
			uint64_t low = UINT64_C(1) << b, high = (low << 1) - 1;
			cli_table_row(t, "%" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT, low,
				      b == 63 ? UINT64_MAX : high);
		}
		cli_table_share(t, all, refs);
		for (int k = 0; k < 6; k++)
			cli_table_count(t, row[k]);
	}
	cli_table_finish(t, to);
}

static int stat_stream(const char *path, const char *mrc_path)
{
	lp_error err = {0};
	lp_reuse c;
	lp_staged *curve = NULL;
	if (lp_check_outputs(&path, 1, &mrc_path, 1, &err))
		return cli_fail(&err);
	cli_progress *reading = cli_progress_new(cli_quiet());
	cli_progress_set_work(reading, "reference", "read");
	lp_progress hook = cli_progress_hook(reading);
	int read = lp_reuse_of_stream(path, &hook, &c, &err);
	cli_progress_free(reading);
	if (read)
		return cli_fail(&err);
	int rc;
	if (mrc_path && lp_reuse_stage_curve(&c, mrc_path, &curve, &err)) {
		rc = cli_fail(&err);
	} else {
		GString *to = g_string_new(NULL);
		print_types(to, &c);
		print_curve(to, &c);
		print_reuse(to, &c);
		rc = print_report(to->str, to->len, curve);
		g_string_free(to, TRUE);
	}
	lp_reuse_clear(&c);
	return rc;
}

/* References by type, what was sampled, and the approximate curve at
 * powers of two (policies.md §7): no distinct pages or reuse distances,
 * which would take the memory and time the sample saves. */
static void print_sampled(GString *to, const lp_sampled *c)
{
	lp_shards_summary sum;
	lp_shards_summarize(c->shards, &sum);
	cli_table *t = cli_table_new();
	cli_table_row(t, "type");
	cli_table_text(t, "references");
	cli_table_text(t, "(%% of all)");
	cli_table_row(t, "all");
	cli_table_count(t, sum.references);
	for (int k = 0; k < 6; k++) {
		cli_table_row(t, "%s (%c)", lp_ref_type_words[k], lp_ref_types[k]);
		cli_table_share(t, c->refs[k], sum.references);
	}
	cli_table_finish(t, to);
	g_string_append_printf(to, "\nsample: %" G_GUINT64_FORMAT " pages kept, rate %.6g, %"
			       G_GUINT64_FORMAT " references sampled\n", sum.kept, sum.rate,
			       sum.sampled);
	g_string_append(to, "\nLRU miss-ratio curve, approximate (SHARDS):\n");
	t = cli_table_new();
	cli_table_row(t, "%s", "");
	cli_table_text(t, "frames");
	cli_table_text(t, "misses");
	cli_table_text(t, "miss ratio");
	lp_shards_curve curve;
	lp_shards_curve_start(&curve, c->shards);
	uint64_t next = 1;
	for (uint64_t f = 1; f <= sum.frames; f++) {
		uint64_t misses = lp_shards_curve_next(&curve);
		if (f != next)
			continue;
		cli_table_row(t, "%s", "");
		cli_table_count(t, f);
		cli_table_share(t, misses, sum.references);
		next = f < sum.frames && f * 2 > sum.frames ? sum.frames : f * 2;
	}
	cli_table_finish(t, to);
}

/* lp_sampled_of_stream with a progress display. */
static int read_sampled(const char *path, double rate, uint64_t pages, lp_sampled *c,
			lp_error *err)
{
	cli_progress *reading = cli_progress_new(cli_quiet());
	cli_progress_set_work(reading, "reference", "read");
	lp_progress hook = cli_progress_hook(reading);
	int rc = lp_sampled_of_stream(path, rate, pages, &hook, c, err);
	cli_progress_free(reading);
	return rc;
}

static int stat_sampled(const char *path, const char *mrc_path, double rate, uint64_t pages)
{
	lp_error err = {0};
	lp_sampled c;
	lp_staged *curve = NULL;
	if (lp_check_outputs(&path, 1, &mrc_path, 1, &err) ||
	    read_sampled(path, rate, pages, &c, &err))
		return cli_fail(&err);
	/* A sample too small for SHARDS's error bounds is said to be one. */
	lp_shards_summary sum;
	lp_shards_summarize(c.shards, &sum);
	if (sum.rate < 1 && sum.kept < LP_SHARDS_FEW_PAGES) {
		char *msg = g_strdup_printf("%" G_GUINT64_FORMAT " page%s sampled, fewer than %d: "
					    "the curve's error can be large (sample more with "
					    "--sample-rate or --sample-pages)",
					    sum.kept, sum.kept == 1 ? "" : "s", LP_SHARDS_FEW_PAGES);
		cli_warn(NULL, msg);
		g_free(msg);
	}
	int rc;
	if (lp_sampled_stage_curve(&c, mrc_path, &curve, &err)) {
		rc = cli_fail(&err);
	} else {
		GString *to = g_string_new(NULL);
		print_sampled(to, &c);
		rc = print_report(to->str, to->len, curve);
		g_string_free(to, TRUE);
	}
	lp_sampled_clear(&c);
	return rc;
}

int cmd_stat(int argc, char **argv)
{
	cli_set_command("laplace stat");
	gchar *stats_path = NULL, *mrc_path = NULL, *rate_text = NULL, *pages_text = NULL,
	      *output = NULL;
	cli_capture capture = {0};
	GOptionEntry entries[] = {
		{"mrc", 0, 0, G_OPTION_ARG_FILENAME, &mrc_path,
		 "Stream: write the whole miss-ratio curve as CSV to FILE", "FILE"},
		{"sample-rate", 0, 0, G_OPTION_ARG_STRING, &rate_text,
		 "Stream, with --mrc: an approximate curve (SHARDS) sampling a share "
		 "0 < R <= 1 of the pages", "R"},
		{"sample-pages", 0, 0, G_OPTION_ARG_STRING, &pages_text,
		 "Stream, with --mrc: an approximate curve (SHARDS) sampling at most S "
		 "pages, in memory of their number", "S"},
		{"stats", 0, 0, G_OPTION_ARG_FILENAME, &stats_path,
		 "Capture: also write the statistics as YAML to FILE", "FILE"},
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
		 "Write the report to FILE (default: standard output)", "FILE"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("DIR | REF KERN | STREAM");
	g_option_context_set_summary(ctx,
		"Report on a trace without writing one (on standard output, or to -o FILE).\n\n"
		"  DIR        a per-process merge directory: counts per task, per process\n"
		"             and in total, read from DIR/index.yaml alone\n"
		"  REF KERN   a capture: the statistics its merge would report\n"
		"  STREAM     a basic merge stream ('-': standard input; gzip or zstd\n"
		"             allowed): references by type, distinct pages, the LRU\n"
		"             miss-ratio curve at powers of two (all sizes with --mrc),\n"
		"             and reuse distances by type in power-of-two buckets; when\n"
		"             sampled (--sample-rate, --sample-pages), references by type\n"
		"             and an approximate curve, for streams too large for the\n"
		"             exact one");
	g_option_context_set_description(ctx, "See laplace-stat(1).");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_sync_option(ctx);
	cli_add_quiet_option(ctx);
	cli_capture_add_options(&capture, ctx);

	int rc = LP_EUSAGE;
	lp_merge_job job;
	lp_merge_job_init(&job);
	if (!cli_parse(ctx, &argc, &argv))
		goto out;
	/* The report is checked against the inputs and the other outputs. */
	const char *outputs[] = {output ? output : "-", mrc_path, stats_path};
	lp_error err = {0};
	if ((rc = lp_check_outputs((const char *const *)argv + 1, (size_t)argc - 1, outputs,
				   G_N_ELEMENTS(outputs), &err))) {
		cli_fail(&err);
		goto out;
	}
	rc = LP_EUSAGE;
	report_path = output;
	double rate = 1;
	uint64_t pages = 0;
	bool sampled = rate_text || pages_text;
	if (!cli_sample_apply(rate_text, pages_text, &rate, &pages))
		goto out;
	if (sampled && (argc != 2 || !mrc_path || g_file_test(argv[1], G_FILE_TEST_IS_DIR))) {
		cli_usage_error("--sample-rate and --sample-pages go with --mrc and a basic "
				"merge stream");
		goto out;
	}
	if (argc == 3) {
		if (mrc_path) {
			cli_usage_error("--mrc goes with a basic merge stream, not a capture");
			goto out;
		}
		if (!cli_capture_apply(&capture, argv[1], argv[2], &job))
			goto out;
		rc = stat_capture(&job, stats_path);
	} else if (argc == 2) {
		bool is_dir = g_file_test(argv[1], G_FILE_TEST_IS_DIR);
		if (!cli_capture_stream_check(&capture))
			goto out;
		if (stats_path) {
			cli_usage_error("--stats goes with a capture (REF KERN)");
			goto out;
		}
		if (is_dir && mrc_path) {
			cli_usage_error("--mrc goes with a basic merge stream, not a directory");
			goto out;
		}
		rc = is_dir    ? stat_directory(argv[1])
		     : sampled ? stat_sampled(argv[1], mrc_path, rate, pages)
			       : stat_stream(argv[1], mrc_path);
	} else {
		cli_usage_error("expected DIR, REF KERN or STREAM, got %d arguments", argc - 1);
	}
out:
	g_option_context_free(ctx);
	cli_capture_free(&capture);
	g_free(stats_path);
	g_free(mrc_path);
	g_free(rate_text);
	g_free(pages_text);
	g_free(output);
	return rc;
}
