/* laplace gen: write a synthetic capture (reference and kernel traces). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "gen/gen.h"
#include "cmd/progress.h"
#include "core/numbers.h"

/* Parse a decimal count for option name into *v. */
static bool parse_count(const char *name, const char *s, uint64_t max, uint64_t *v)
{
	if (!lp_parse_decimal(s, 0, max, v)) {
		cli_usage_error("--%s must be a decimal number up to %" G_GUINT64_FORMAT ", not '%s'",
				name, max, s);
		return false;
	}
	return true;
}

static bool is_stdout(const char *path) { return !strcmp(path, "-"); }

/* Write one trace (the references, or the kernel events) and finish it;
 * *staged is what is left to publish (NULL for standard output). */
static int write_trace(const lp_gen_config *cfg, const char *path, bool references,
		       cli_progress *pr, lp_staged **staged, lp_error *err)
{
	lp_output *out = lp_output_open(path, LP_COMPRESS_AUTO, err);
	if (!out)
		return err->status;
	int rc = lp_gen_run(cfg, references ? out : NULL, references ? NULL : out,
			    pr ? cli_progress_update : NULL, pr, err);
	return lp_output_stage(out, rc, staged, err);
}

int cmd_gen(int argc, char **argv)
{
	cli_set_command("laplace gen");
	gchar *seed = NULL, *refs = NULL, *processes = NULL, *threads = NULL, *files = NULL;
	gchar *footprint = NULL;
	gchar *prefix = NULL, *ref_path = NULL, *kern_path = NULL;
	gboolean quiet = FALSE, wide = FALSE;
	gchar *jobs = NULL;
	GOptionEntry entries[] = {
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &prefix,
		 "Write PREFIX.ref and PREFIX.kern", "PREFIX"},
		{"ref", 0, 0, G_OPTION_ARG_FILENAME, &ref_path,
		 "Write the reference trace to FILE instead ('-': standard output)", "FILE"},
		{"kern", 0, 0, G_OPTION_ARG_FILENAME, &kern_path,
		 "Write the kernel event trace to FILE instead ('-': standard output)", "FILE"},
		{"seed", 0, 0, G_OPTION_ARG_STRING, &seed,
		 "Seed of the random choices (default 1)", "N"},
		{"refs", 0, 0, G_OPTION_ARG_STRING, &refs,
		 "Number of references, user and kernel (default 1000000)", "N"},
		{"processes", 0, 0, G_OPTION_ARG_STRING, &processes,
		 "Programs running at once besides the shell, 1-64 (default 4)", "N"},
		{"threads", 0, 0, G_OPTION_ARG_STRING, &threads,
		 "Most tasks in a threaded program, 1-16 (default 4)", "N"},
		{"files", 0, 0, G_OPTION_ARG_STRING, &files,
		 "Data files read, written and mapped, 1-4096 (default 64)", "N"},
		{"footprint", 0, 0, G_OPTION_ARG_STRING, &footprint,
		 "Anonymous pages the programs touch in random order, at most 65536 per "
		 "process (default 0: none)", "PAGES"},
		{"wide", 0, 0, G_OPTION_ARG_NONE, &wide,
		 "A capture of an x86-64 machine, its references in the 64-bit binary form",
		 NULL},
		{"jobs", 'j', 0, G_OPTION_ARG_STRING, &jobs,
		 "Write the references on a thread of their own when N > 1 (default: the "
		 "processors available; the same bytes for any N)", "N"},
		{"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet,
		 "Show no progress display", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("");
	g_option_context_set_summary(ctx,
		"Generate a synthetic capture: a binary little-endian raw reference trace\n"
		"and its kernel event trace, as a multiprogrammed machine would record\n"
		"them. The same options and seed always give the same bytes.");
	g_option_context_set_description(ctx,
		"The kernel trace is complete and in place before the first reference is\n"
		"written, so the references can be piped straight into a merge:\n"
		"  laplace gen --refs 100000000 -o cap --ref - | laplace merge - cap.kern\n"
		"Output names ending in .gz or .zst are compressed. See laplace-gen(1).");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_sync_option(ctx);

	int rc = LP_EUSAGE;
	lp_gen_config cfg;
	lp_gen_config_init(&cfg);
	lp_error err = {0};
	uint64_t v = 0;
	char *ref_default = NULL, *kern_default = NULL;
	if (!cli_parse(ctx, &argc, &argv))
		goto out;
	if (argc != 1) {
		cli_usage_error("unexpected argument '%s'", argv[1]);
		goto out;
	}
	if (!cli_threads_apply(jobs, &cfg.jobs))
		goto out;
	if (seed && !parse_count("seed", seed, UINT64_MAX, &cfg.seed))
		goto out;
	if (refs && !parse_count("refs", refs, UINT64_MAX, &cfg.refs))
		goto out;
	if (processes && !parse_count("processes", processes, UINT32_MAX, &v))
		goto out;
	cfg.processes = processes ? (unsigned)v : cfg.processes;
	if (threads && !parse_count("threads", threads, UINT32_MAX, &v))
		goto out;
	cfg.threads = threads ? (unsigned)v : cfg.threads;
	if (files && !parse_count("files", files, UINT32_MAX, &v))
		goto out;
	cfg.files = files ? (unsigned)v : cfg.files;
	if (footprint && !parse_count("footprint", footprint, UINT64_MAX, &cfg.footprint))
		goto out;
	cfg.wide = wide;
	if (lp_gen_config_check(&cfg, &err)) {
		cli_usage_error("--%s", err.msg);
		goto out;
	}
	if (prefix) {
		ref_default = g_strconcat(prefix, ".ref", NULL);
		kern_default = g_strconcat(prefix, ".kern", NULL);
	}
	const char *ref_out = ref_path ? ref_path : ref_default;
	const char *kern_out = kern_path ? kern_path : kern_default;
	if (!ref_out || !kern_out) {
		cli_usage_error("give -o PREFIX, or both --ref and --kern");
		goto out;
	}
	if (is_stdout(ref_out) && is_stdout(kern_out)) {
		cli_usage_error("the two traces cannot both go to standard output");
		goto out;
	}
	if (is_stdout(ref_out) && isatty(STDOUT_FILENO)) {
		cli_usage_error("will not write binary references to a terminal");
		goto out;
	}

	const char *outputs[] = {ref_out, kern_out};
	if ((rc = lp_check_outputs(NULL, 0, outputs, 2, &err))) {
		cli_fail(&err);
		goto out;
	}
	/* The kernel trace first (a fast pass that skips the references), so
	 * that it is complete when a reader of the reference stream opens it;
	 * it is removed again if the references fail or a signal comes: a
	 * kernel trace without its references is no capture. */
	lp_staged *kern_staged = NULL, *ref_staged = NULL;
	rc = write_trace(&cfg, kern_out, false, NULL, &kern_staged, &err);
	if (!rc && kern_staged)
		rc = lp_stage_publish_early(kern_staged, &err);
	if (!rc) {
		cli_progress *pr = cli_progress_new(quiet);
		rc = write_trace(&cfg, ref_out, true, pr, &ref_staged, &err);
		cli_progress_free(pr);
	}
	if (!rc)
		rc = lp_stage_publish(&ref_staged, 1, &err);
	if (rc) {
		lp_staged_discard(kern_staged);
		cli_fail(&err);
	} else if (kern_staged) {
		lp_staged_keep(kern_staged);
	}
out:
	g_option_context_free(ctx);
	g_free(seed);
	g_free(refs);
	g_free(processes);
	g_free(threads);
	g_free(jobs);
	g_free(files);
	g_free(footprint);
	g_free(prefix);
	g_free(ref_path);
	g_free(kern_path);
	g_free(ref_default);
	g_free(kern_default);
	return rc;
}
