/* laplace gen: write a synthetic capture (reference and kernel traces). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "gen/gen.h"
#include "cmd/progress.h"
#include "core/numbers.h"

/* The options as given: NULL or FALSE when not. */
typedef struct gen_args {
	gchar *seed, *refs, *processes, *threads, *files, *footprint, *jobs;
	gchar *prefix, *ref_path, *kern_path;
	gboolean quiet, wide;
	char *ref_out, *kern_out; /* where the traces go, from the options */
} gen_args;

static GOptionContext *gen_options(gen_args *a)
{
	const GOptionEntry entries[] = {
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &a->prefix,
		 "Write PREFIX.ref and PREFIX.kern", "PREFIX"},
		{"ref", 0, 0, G_OPTION_ARG_FILENAME, &a->ref_path,
		 "Write the reference trace to FILE instead ('-': standard output)", "FILE"},
		{"kern", 0, 0, G_OPTION_ARG_FILENAME, &a->kern_path,
		 "Write the kernel event trace to FILE instead ('-': standard output)", "FILE"},
		{"seed", 0, 0, G_OPTION_ARG_STRING, &a->seed,
		 "Seed of the random choices (default 1)", "N"},
		{"refs", 0, 0, G_OPTION_ARG_STRING, &a->refs,
		 "Number of references, user and kernel (default 1000000)", "N"},
		{"processes", 0, 0, G_OPTION_ARG_STRING, &a->processes,
		 "Programs running at once besides the shell, 1-64 (default 4)", "N"},
		{"threads", 0, 0, G_OPTION_ARG_STRING, &a->threads,
		 "Most tasks in a threaded program, 1-16 (default 4)", "N"},
		{"files", 0, 0, G_OPTION_ARG_STRING, &a->files,
		 "Data files read, written and mapped, 1-4096 (default 64)", "N"},
		{"footprint", 0, 0, G_OPTION_ARG_STRING, &a->footprint,
		 "Anonymous pages the programs touch in random order, at most 65536 per "
		 "process (default 0: none)", "PAGES"},
		{"wide", 0, 0, G_OPTION_ARG_NONE, &a->wide,
		 "A capture of an x86-64 machine, its references in the 64-bit binary form",
		 NULL},
		{"jobs", 'j', 0, G_OPTION_ARG_STRING, &a->jobs,
		 "Write the references on a thread of their own when N > 1 (default: the "
		 "processors available; the same bytes for any N)", "N"},
		{"quiet", 'q', 0, G_OPTION_ARG_NONE, &a->quiet,
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
	return ctx;
}

/* A count that fits an unsigned setting. */
static bool parse_setting(const char *name, const char *s, unsigned *setting)
{
	uint64_t v = *setting;
	if (!cli_decimal_apply(name, s, 0, UINT32_MAX, &v))
		return false;
	*setting = (unsigned)v;
	return true;
}

static bool is_stdout(const char *path) { return !strcmp(path, "-"); }

/* cfg and the outputs from the options; false after a usage message. */
static bool gen_apply(gen_args *a, int argc, char **argv, lp_gen_config *cfg)
{
	if (argc != 1)
		return !cli_usage_error("unexpected argument '%s'", argv[1]);
	if (!cli_threads_apply(a->jobs, &cfg->jobs) ||
	    !cli_decimal_apply("--seed", a->seed, 0, UINT64_MAX, &cfg->seed) ||
	    !cli_decimal_apply("--refs", a->refs, 0, UINT64_MAX, &cfg->refs) ||
	    !parse_setting("--processes", a->processes, &cfg->processes) ||
	    !parse_setting("--threads", a->threads, &cfg->threads) ||
	    !parse_setting("--files", a->files, &cfg->files) ||
	    !cli_decimal_apply("--footprint", a->footprint, 0, UINT64_MAX, &cfg->footprint))
		return false;
	cfg->wide = a->wide;
	lp_error err = {0};
	if (lp_gen_config_check(cfg, &err))
		return !cli_usage_error("--%s", err.msg);
	/* "" would write the hidden .ref and .kern */
	if (a->prefix && !a->prefix[0])
		return !cli_usage_error("-o PREFIX must not be empty");
	a->ref_out = a->ref_path ? g_strdup(a->ref_path)
		     : a->prefix ? g_strconcat(a->prefix, ".ref", NULL) : NULL;
	a->kern_out = a->kern_path ? g_strdup(a->kern_path)
		      : a->prefix ? g_strconcat(a->prefix, ".kern", NULL) : NULL;
	if (!a->ref_out || !a->kern_out)
		return !cli_usage_error("give -o PREFIX, or both --ref and --kern");
	if (is_stdout(a->ref_out) && is_stdout(a->kern_out))
		return !cli_usage_error("the two traces cannot both go to standard output");
	if (is_stdout(a->ref_out) && isatty(STDOUT_FILENO))
		return !cli_usage_error("will not write binary references to a terminal");
	return true;
}

int cmd_gen(int argc, char **argv)
{
	cli_set_command("laplace gen");
	gen_args a = {0};
	GOptionContext *ctx = gen_options(&a);
	lp_gen_config cfg;
	lp_gen_config_init(&cfg);
	lp_error err = {0};
	int rc = LP_EUSAGE;
	if (cli_parse(ctx, &argc, &argv) && gen_apply(&a, argc, argv, &cfg)) {
		const char *outputs[] = {a.ref_out, a.kern_out};
		rc = lp_check_outputs(NULL, 0, outputs, 2, &err);
		if (!rc) {
			cli_progress *pr = cli_progress_new(a.quiet);
			rc = lp_gen_write(&cfg, a.ref_out, a.kern_out, pr ? cli_progress_update : NULL,
					  pr, &err);
			cli_progress_free(pr);
		}
		if (rc)
			cli_fail(&err);
	}
	g_option_context_free(ctx);
	gchar *owned[] = {a.seed, a.refs, a.processes, a.threads, a.files, a.footprint, a.jobs,
			  a.prefix, a.ref_path, a.kern_path, a.ref_out, a.kern_out};
	for (size_t i = 0; i < G_N_ELEMENTS(owned); i++)
		g_free(owned[i]);
	return rc;
}
