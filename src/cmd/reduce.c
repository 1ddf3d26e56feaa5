/* laplace reduce: a shorter basic merge stream with the same LRU behaviour
 * for every memory of at least K pages (policies.md §5). The reductions
 * are src/analysis/reduce.c; here are the options, the input (a stream or
 * a capture, held whole) and the output, written by the basic merge's own
 * sink in the basic or bin form. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/reducetrace.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/progress.h"
#include "core/numbers.h"
#include "formats/forms.h"
#include "formats/registry.h"

/* References handed to the sink at a time. */
#define REDUCE_BATCH 65536

typedef struct reduce_args {
	gchar *method, *frames, *format, *output;
	gboolean user_only;
	char *forms, *format_help; /* the registry's forms that need no address */
} reduce_args;

static GOptionContext *reduce_options(reduce_args *a)
{
	a->forms = lp_form_names_list(false);
	a->format_help = g_strdup_printf("Output form: %s (default basic, type canonical lines)",
					 a->forms);
	const GOptionEntry entries[] = {
		{"method", 0, 0, G_OPTION_ARG_STRING, &a->method,
		 "sad (a subsequence of the input) or olr (the shortest stream); required",
		 "METHOD"},
		{"frames", 'm', 0, G_OPTION_ARG_STRING, &a->frames,
		 "K: the behaviour is kept for every LRU memory of at least K pages "
		 "(required; decimal, at least 1)", "K"},
		{"format", 0, 0, G_OPTION_ARG_STRING, &a->format, a->format_help, "FORM"},
		{"user-only", 0, 0, G_OPTION_ARG_NONE, &a->user_only,
		 "Drop kernel references (R W I) before reducing", NULL},
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &a->output,
		 "Write to FILE, compressed by its suffix .gz or .zst (default: standard output)",
		 "FILE"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("STREAM | REF KERN");
	g_option_context_set_summary(ctx,
		"Write a reduced basic merge stream: for every LRU memory of at least K\n"
		"pages it has exactly the input's behaviour sequence (each fault's page,\n"
		"victim, and whether the victim was written during its stay).\n\n"
		"  sad   Safely Allowed Drop: a subsequence of the input, which also\n"
		"        keeps OPT's fault counts for every memory of at least K pages\n"
		"  olr   Optimal LRU Reduction: the shortest stream with that behaviour\n\n"
		"The input is a basic merge stream (any form, '-': standard input) or a\n"
		"capture REF KERN, merged here. 'references N kept R' goes to standard\n"
		"error (not with -q); miss ratios of the reduced stream are taken over N.");
	g_option_context_set_description(ctx,
		"Examples:\n"
		"  laplace reduce --method olr --frames 256 -o small.txt trace.txt\n"
		"  laplace reduce --method sad --frames 64 --format bin -o s.bin refs.bin kernel.txt\n\n"
		"See laplace-reduce(1).");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_quiet_option(ctx);
	cli_add_sync_option(ctx);
	return ctx;
}

/* The reduced stream out, of the input's canonical numbers, in form to
 * path (NULL: standard output), published only when whole. */
static int write_reduced(const lp_refs *out, const lp_trace *in, enum lp_form form,
			 const char *path, lp_error *err)
{
	lp_output *o = lp_output_open_level(path, LP_COMPRESS_AUTO, LP_LEVEL_DEFAULT, err);
	if (!o)
		return err->status;
	lp_basic_sink *sink = lp_basic_sink_new(o, false, form);
	lp_ref *refs = g_new0(lp_ref, REDUCE_BATCH);
	uint64_t *canon = g_new(uint64_t, REDUCE_BATCH);
	int rc = 0;
	for (size_t at = 0; at < out->n && !rc; at += REDUCE_BATCH) {
		size_t k = MIN(out->n - at, (size_t)REDUCE_BATCH);
		for (size_t i = 0; i < k; i++) {
			refs[i].type = out->types[at + i];
			canon[i] = in->canonical[out->pages[at + i]];
		}
		rc = lp_basic_sink_ops.refs(sink, refs, canon, k, NULL, err);
	}
	if (!rc)
		rc = lp_basic_sink_ops.finish(sink, NULL, err);
	rc = rc ? (lp_output_abort(o), rc) : lp_output_commit(o, err);
	lp_basic_sink_free(sink);
	g_free(refs);
	g_free(canon);
	return rc;
}

static int reduce_run(const reduce_args *a, bool olr, uint64_t frames, enum lp_form form,
		      const char *stream, const lp_merge_job *capture)
{
	lp_error err = {0};
	lp_trace in;
	cli_progress *loading = cli_progress_new(cli_quiet());
	cli_progress_set_work(loading, "reference", "read");
	lp_progress hook = cli_progress_hook(loading);
	int loaded = cli_trace_load(stream, capture, a->user_only ? LP_TRACE_USER_ONLY : 0, &hook,
				    &in, &err);
	cli_progress_free(loading);
	if (loaded)
		return cli_fail(&err);
	const char *name = capture ? capture->reference : strcmp(stream, "-") ? stream : "<stdin>";
	lp_refs out = {0};
	if (lp_reduce_trace(&in, name, olr, frames, lp_stream_forms[form].canon_max,
			    lp_stream_forms[form].name, &out, &err)) {
		lp_trace_clear(&in);
		return cli_fail(&err);
	}
	int rc = write_reduced(&out, &in, form, a->output, &err);
	if (rc)
		cli_fail(&err);
	else if (!cli_quiet())
		fprintf(stderr, "references %" PRIu64 " kept %zu\n", in.n, out.n);
	lp_refs_clear(&out);
	lp_trace_clear(&in);
	return rc;
}

int cmd_reduce(int argc, char **argv)
{
	cli_set_command("laplace reduce");
	reduce_args a = {0};
	cli_capture capture = {0};
	GOptionContext *ctx = reduce_options(&a);
	cli_capture_add_options(&capture, ctx);
	int rc = LP_EUSAGE;
	lp_error err = {0};
	lp_merge_job job;
	lp_merge_job_init(&job);
	uint64_t frames;
	if (!cli_parse(ctx, &argc, &argv))
		goto out;
	if (argc != 2 && argc != 3) {
		cli_usage_error("expected STREAM or REF KERN, got %d arguments", argc - 1);
		goto out;
	}
	bool olr;
	if (lp_reduce_method_parse(a.method, &olr, &err)) {
		cli_usage_error("%s", err.msg);
		goto out;
	}
	if (!a.frames) {
		cli_usage_error("--frames is required");
		goto out;
	}
	if (!cli_decimal_apply("--frames", a.frames, 1, UINT64_MAX, &frames))
		goto out;
	enum lp_form form = LP_FORM_BASIC;
	if (!cli_form_apply(a.format, false, &form))
		goto out;
	if (argc == 2 && !cli_capture_stream_check(&capture))
		goto out;
	if (argc == 3 && !cli_capture_apply(&capture, argv[1], argv[2], &job))
		goto out;
	const char *outputs[] = {a.output ? a.output : "-"};
	if ((rc = lp_check_outputs((const char *const *)argv + 1, (size_t)argc - 1, outputs, 1,
				   &err))) {
		cli_fail(&err);
		goto out;
	}
	rc = reduce_run(&a, olr, frames, form, argv[1], argc == 3 ? &job : NULL);
out:
	g_option_context_free(ctx);
	cli_capture_free(&capture);
	g_free(a.method);
	g_free(a.frames);
	g_free(a.format);
	g_free(a.output);
	g_free(a.forms);
	g_free(a.format_help);
	return rc;
}
