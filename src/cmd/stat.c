/* laplace stat: counts of a per-process directory (from its index.yaml), a
 * capture's merge statistics, or a basic merge stream's LRU miss-ratio
 * curve. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "laplace/job.h"
#include "laplace/legacy.h"
#include "laplace/mrc.h"
#include "laplace/procindex.h"
#include "laplace/stats.h"

#define STREAM_BATCH 65536

/* Write a report on standard output through lp_output, as every command
 * writes its output; then publish extra (a staged file, or
 * NULL), so that either both are written or the file is not left
 * (laplace(1), "OUTPUTS"). Any failure is reported; returns the
 * exit status. */
static int print_report(const char *text, size_t len, lp_staged *extra)
{
	lp_error err = {0};
	lp_output *out = lp_output_open(NULL, LP_COMPRESS_NONE, &err);
	int rc = out ? lp_output_write(out, text, len, &err) : err.status;
	if (out && rc)
		lp_output_abort(out);
	else if (out)
		rc = lp_output_commit(out, &err);
	if (rc) {
		lp_staged_discard(extra);
		return cli_fail(&err);
	}
	if (extra && (rc = lp_stage_publish(&extra, 1, &err)))
		return cli_fail(&err);
	return 0;
}

static void print_file(GString *to, const char *label, const lp_index_file *f)
{
	g_string_append_printf(to, "%s: %" G_GUINT64_FORMAT " records, %" G_GUINT64_FORMAT
			       " references", label, f->records, f->references);
	if (f->records)
		g_string_append_printf(to, ", timestamps %" G_GINT64_MODIFIER "x to %"
				       G_GINT64_MODIFIER "x", f->first_ts, f->last_ts);
	g_string_append_c(to, '\n');
}

static int stat_directory(const char *dir)
{
	lp_error err = {0};
	lp_index *ix = lp_index_read(dir, &err);
	if (!ix)
		return cli_fail(&err);
	GString *to = g_string_new(NULL);
	uint64_t tasks = 0, records = 0, refs = 0;
	for (size_t i = 0; i < ix->nprocesses; i++) {
		const lp_index_process *p = &ix->processes[i];
		uint64_t precords = 0, prefs = 0;
		for (size_t t = 0; t < p->ntasks; t++) {
			precords += p->tasks[t].file.records;
			prefs += p->tasks[t].file.references;
		}
		g_string_append_printf(to, "process %" G_GINT64_MODIFIER "x: %zu task%s, %"
				       G_GUINT64_FORMAT " records, %" G_GUINT64_FORMAT " references",
				       p->pid, p->ntasks, p->ntasks == 1 ? "" : "s", precords, prefs);
		for (size_t k = 0; p->programs[k]; k++)
			g_string_append_printf(to, "%s%s", k ? ", " : "; programs: ", p->programs[k]);
		g_string_append_c(to, '\n');
		for (size_t t = 0; t < p->ntasks; t++) {
			char *label = g_strconcat("  ", p->tasks[t].file.path, NULL);
			print_file(to, label, &p->tasks[t].file);
			g_free(label);
		}
		tasks += p->ntasks;
		records += precords;
		refs += prefs;
	}
	print_file(to, "kernel", &ix->kernel);
	if (ix->orphan.path)
		print_file(to, "orphan", &ix->orphan);
	else
		g_string_append(to, "orphan: none\n");
	records += ix->kernel.records + ix->orphan.records;
	refs += ix->kernel.references + ix->orphan.references;
	g_string_append_printf(to, "total: %zu process%s, %" G_GUINT64_FORMAT " tasks, %"
			       G_GUINT64_FORMAT " records, %" G_GUINT64_FORMAT " references\n",
			       ix->nprocesses, ix->nprocesses == 1 ? "" : "es", tasks, records, refs);
	lp_index_free(ix);
	int rc = print_report(to->str, to->len, NULL);
	g_string_free(to, TRUE);
	return rc;
}

/* The statistics of a capture's merge; the --stats file is staged here,
 * not by the job, to be published only once the summary is written. */
static int stat_capture(lp_merge_job *job, const char *stats_path)
{
	lp_error err = {0};
	lp_stats stats;
	job->discard = true;
	const char *inputs[] = {job->reference, job->kernel};
	int rc = lp_check_outputs(inputs, 2, &stats_path, 1, &err);
	if (!rc)
		rc = lp_merge_job_run(job, &stats, &err);
	if (rc)
		return cli_fail(&err);
	lp_staged *yaml = NULL;
	if (stats_path) {
		lp_output *out = lp_output_open(stats_path, LP_COMPRESS_NONE, &err);
		if (!out || lp_output_stage(out, lp_stats_write_yaml(out, &stats, &err), &yaml, &err))
			return cli_fail(&err);
	}
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	if (!mem) {
		lp_staged_discard(yaml);
		lp_fail(&err, LP_EIO, "cannot make the summary: %s", g_strerror(errno));
		return cli_fail(&err);
	}
	cli_print_stats(mem, &stats);
	fclose(mem);
	rc = print_report(text, len, yaml);
	free(text);
	return rc;
}

/* Write the whole curve to path: *done is to be published (or discarded)
 * by the caller. */
static int write_mrc_csv(const char *path, const uint64_t *misses, uint64_t distinct, uint64_t refs,
			 lp_staged **done, lp_error *err)
{
	lp_output *out = lp_output_open(path, LP_COMPRESS_AUTO, err);
	if (!out)
		return err->status;
	GString *buf = g_string_sized_new(1 << 16);
	g_string_append(buf, "frames,misses,miss_ratio\n");
	int rc = 0;
	for (uint64_t f = 1; f <= distinct && !rc; f++) {
		g_string_append_printf(buf, "%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%.6f\n", f,
				       misses[f], (double)misses[f] / (double)refs);
		if (buf->len >= 1 << 16) {
			rc = lp_output_write(out, buf->str, buf->len, err);
			g_string_truncate(buf, 0);
		}
	}
	if (!rc)
		rc = lp_output_write(out, buf->str, buf->len, err);
	g_string_free(buf, TRUE);
	return lp_output_stage(out, rc, done, err);
}

/* Per reference type (lp_ref_types order): references, distinct pages, and
 * stack distances in power-of-two buckets: bucket b holds distances
 * 2^b .. 2^(b+1)-1; first references are counted apart. */
#define REUSE_BUCKETS 64
typedef struct reuse_counts {
	uint64_t refs[6];
	uint64_t distinct[6];
	uint64_t first[6];
	uint64_t buckets[REUSE_BUCKETS][6];
	uint8_t *types_of_page; /* page id -> bit per type that referenced it */
	uint64_t pages_cap;
} reuse_counts;

static void reuse_count(reuse_counts *c, int type, uint64_t id, uint64_t distance)
{
	c->refs[type]++;
	if (distance)
		c->buckets[g_bit_nth_msf(distance, -1)][type]++;
	else
		c->first[type]++;
	if (id >= c->pages_cap) {
		uint64_t cap = c->pages_cap ? c->pages_cap * 2 : 4096;
		c->types_of_page = g_realloc_n(c->types_of_page, cap, 1);
		memset(c->types_of_page + c->pages_cap, 0, cap - c->pages_cap);
		c->pages_cap = cap;
	}
	uint8_t bit = (uint8_t)(1u << type);
	if (!(c->types_of_page[id] & bit)) {
		c->types_of_page[id] |= bit;
		c->distinct[type]++;
	}
}

/* The reuse-distance table: one row per bucket up to the last non-empty
 * one, then the first references; a column for all references and one per
 * type; then the fraction of first references ("-" for a type that never
 * occurs). */
static void print_reuse(GString *to, const reuse_counts *c, uint64_t refs, uint64_t distinct)
{
	g_string_append(to, "distinct pages by type:");
	for (int t = 0; t < 6; t++)
		g_string_append_printf(to, " %c=%" G_GUINT64_FORMAT, lp_ref_types[t], c->distinct[t]);
	g_string_append(to, "\nreuse distance (LRU stack distance, in pages):\n");
	g_string_append_printf(to, "%21s %12s", "distance", "all");
	for (int t = 0; t < 6; t++)
		g_string_append_printf(to, " %10c", lp_ref_types[t]);
	g_string_append_c(to, '\n');
	int last = -1;
	for (int b = 0; b < REUSE_BUCKETS; b++)
		for (int t = 0; t < 6; t++)
			if (c->buckets[b][t])
				last = b;
	for (int b = 0; b <= last + 1; b++) {
		const uint64_t *row = b <= last ? c->buckets[b] : c->first;
		uint64_t all = 0;
		for (int t = 0; t < 6; t++)
			all += row[t];
		if (b > last)
			g_string_append_printf(to, "%21s", "first");
		else if (b == 0)
			g_string_append_printf(to, "%21s", "1");
		else {
			uint64_t low = UINT64_C(1) << b, high = (low << 1) - 1;
			char *label = g_strdup_printf("%" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT,
						      low, b == 63 ? UINT64_MAX : high);
			g_string_append_printf(to, "%21s", label);
			g_free(label);
		}
		g_string_append_printf(to, " %12" G_GUINT64_FORMAT, all);
		for (int t = 0; t < 6; t++)
			g_string_append_printf(to, " %10" G_GUINT64_FORMAT, row[t]);
		g_string_append_c(to, '\n');
	}
	if (refs)
		g_string_append_printf(to, "first references: %.6f", (double)distinct / (double)refs);
	else
		g_string_append(to, "first references: -");
	for (int t = 0; t < 6; t++) {
		if (c->refs[t])
			g_string_append_printf(to, " %c=%.6f", lp_ref_types[t],
					       (double)c->first[t] / (double)c->refs[t]);
		else
			g_string_append_printf(to, " %c=-", lp_ref_types[t]);
	}
	g_string_append_c(to, '\n');
}

static int stat_stream(const char *path, const char *mrc_path)
{
	lp_error err = {0};
	if (lp_check_outputs(&path, 1, &mrc_path, 1, &err))
		return cli_fail(&err);
	lp_basic_reader *r = lp_basic_open(path, &err);
	if (!r)
		return cli_fail(&err);
	lp_mrc *mrc = lp_mrc_new();
	lp_basic_ref *batch = g_new(lp_basic_ref, STREAM_BATCH);
	reuse_counts counts = {0};
	ssize_t n;
	while ((n = lp_basic_read(r, batch, STREAM_BATCH, &err)) > 0) {
		for (ssize_t k = 0; k < n; k++) {
			uint64_t id;
			uint64_t distance = lp_mrc_access(mrc, batch[k].canonical, &id);
			reuse_count(&counts, lp_ref_type_index(batch[k].type), id, distance);
		}
	}
	g_free(batch);
	lp_basic_close(r);
	int rc = 0;
	if (n < 0) {
		rc = cli_fail(&err);
		goto out;
	}
	uint64_t refs = lp_mrc_references(mrc), distinct = lp_mrc_distinct_pages(mrc);
	uint64_t *misses = g_new(uint64_t, distinct + 1);
	lp_mrc_misses(mrc, misses);
	lp_staged *curve = NULL;
	if (mrc_path && (rc = write_mrc_csv(mrc_path, misses, distinct, refs, &curve, &err))) {
		cli_fail(&err);
	} else {
		GString *to = g_string_new(NULL);
		g_string_append_printf(to, "references: %" G_GUINT64_FORMAT, refs);
		for (int i = 0; i < 6; i++)
			g_string_append_printf(to, " %c=%" G_GUINT64_FORMAT, lp_ref_types[i],
					       counts.refs[i]);
		g_string_append_printf(to, "\ndistinct pages: %" G_GUINT64_FORMAT "\n%10s %12s %10s\n",
				       distinct, "frames", "misses", "miss_ratio");
		/* Powers of two, and the size that holds every page: the
		 * whole curve goes to --mrc. */
		for (uint64_t f = 1; f <= distinct; f = f < distinct && f * 2 > distinct ? distinct : f * 2)
			g_string_append_printf(to, "%10" G_GUINT64_FORMAT " %12" G_GUINT64_FORMAT
					       " %10.6f\n", f, misses[f],
					       (double)misses[f] / (double)refs);
		print_reuse(to, &counts, refs, distinct);
		rc = print_report(to->str, to->len, curve);
		g_string_free(to, TRUE);
	}
	g_free(misses);
out:
	g_free(counts.types_of_page);
	lp_mrc_free(mrc);
	return rc;
}

int cmd_stat(int argc, char **argv)
{
	cli_set_command("laplace stat");
	gchar *stats_path = NULL, *mrc_path = NULL;
	cli_capture capture = {0};
	GOptionEntry entries[] = {
		{"mrc", 0, 0, G_OPTION_ARG_FILENAME, &mrc_path,
		 "Stream: write the whole miss-ratio curve as CSV to FILE", "FILE"},
		{"stats", 0, 0, G_OPTION_ARG_FILENAME, &stats_path,
		 "Capture: also write the statistics as YAML to FILE", "FILE"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("DIR | REF KERN | STREAM");
	g_option_context_set_summary(ctx,
		"Report on a trace without writing one.\n\n"
		"  DIR        a per-process merge directory: counts per task, per process\n"
		"             and in total, read from DIR/index.yaml alone\n"
		"  REF KERN   a capture: the statistics its merge would report\n"
		"  STREAM     a basic merge stream ('-': standard input; gzip or zstd\n"
		"             allowed): references by type, distinct pages, the LRU\n"
		"             miss-ratio curve at powers of two (all sizes with --mrc),\n"
		"             and reuse distances by type in power-of-two buckets");
	g_option_context_set_description(ctx, "See laplace-stat(1).");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_sync_option(ctx);
	cli_capture_add_options(&capture, ctx);

	int rc = LP_EUSAGE;
	lp_merge_job job;
	lp_merge_job_init(&job);
	if (!cli_parse(ctx, &argc, &argv))
		goto out;
	bool capture_options = cli_capture_given(&capture) || stats_path;
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
		if (capture_options) {
			cli_usage_error("--ref-format, --endian, --page-offset, --strict and --stats "
					"go with a capture (REF KERN)");
			goto out;
		}
		if (is_dir && mrc_path) {
			cli_usage_error("--mrc goes with a basic merge stream, not a directory");
			goto out;
		}
		rc = is_dir ? stat_directory(argv[1]) : stat_stream(argv[1], mrc_path);
	} else {
		cli_usage_error("expected DIR, REF KERN or STREAM, got %d arguments", argc - 1);
	}
out:
	g_option_context_free(ctx);
	cli_capture_free(&capture);
	g_free(stats_path);
	g_free(mrc_path);
	return rc;
}
