/* laplace lru: LRU behaviour sequences, from a basic merge stream or by
 * re-reducing a page-image trace to a larger memory. */
#include <inttypes.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "formats/legacy.h"
#include "analysis/lru.h"
#include "core/numbers.h"

/* The options as given: NULL or FALSE when not. */
typedef struct lru_args {
	gchar *frames, *from, *to, *output, *level;
	gboolean strict;
} lru_args;

static GOptionContext *lru_options(lru_args *a)
{
	const GOptionEntry entries[] = {
		{"frames", 'm', 0, G_OPTION_ARG_STRING, &a->frames,
		 "Pages of the LRU memory (required; decimal)", "M"},
		{"from", 0, 0, G_OPTION_ARG_STRING, &a->from,
		 "Input: basic (a basic merge stream, the default) or page-image", "FORMAT"},
		{"to", 0, 0, G_OPTION_ARG_STRING, &a->to,
		 "Output: binary (page-image records, the default for page-image input) "
		 "or text", "FORM"},
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &a->output,
		 "Write to FILE (default: standard output)", "FILE"},
		{"level", 0, 0, G_OPTION_ARG_STRING, &a->level,
		 "Compression level of FILE.gz (0-3, default 1) or FILE.zst (1-19 or -7 to -1, "
		 "default 1)", "N"},
		cli_strict_entry(&a->strict),
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("FILE");
	g_option_context_set_summary(ctx,
		"Write the LRU behaviour sequence of a memory of M pages: from a basic\n"
		"merge stream (type canonical lines) as text, one line per fault\n"
		"(tag page dirt evicted); or from the page-image trace of a memory of\n"
		"fewer pages, the exact page-image trace of the M-page memory, images\n"
		"included. FILE may be '-' and may be gzip or zstd compressed.\n"
		"See laplace-lru(1).");
	g_option_context_set_description(ctx,
		"Exit status 1 also when M is smaller than the memory of a page-image\n"
		"input: re-reduction only goes to larger memories.\n\n"
		"Examples:\n"
		"  laplace merge refs.bin kernel.txt | laplace lru --frames 1000 -\n"
		"  laplace lru --from page-image --frames 4096 -o big.pi small.pi\n");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_sync_option(ctx);
	return ctx;
}

/* The parsed options a as a request for input; on a usage error print it
 * and return false. */
static bool lru_request_apply(const lru_args *a, const char *input, lp_lru_request *rq)
{
	*rq = (lp_lru_request){.input = input, .output = a->output,
			       .policy = {.strict = a->strict, .warn = cli_warn}};
	if (!a->frames) {
		cli_usage_error("--frames is required");
		return false;
	}
	if (!cli_decimal_apply("--frames", a->frames, 1, UINT64_MAX, &rq->frames))
		return false;
	rq->page_image = a->from && !strcmp(a->from, "page-image");
	if (a->from && !rq->page_image && strcmp(a->from, "basic")) {
		cli_usage_error("--from must be basic or page-image, not '%s'", a->from);
		return false;
	}
	if (a->to && strcmp(a->to, "binary") && strcmp(a->to, "text")) {
		cli_usage_error("--to must be binary or text, not '%s'", a->to);
		return false;
	}
	rq->text = a->to ? !strcmp(a->to, "text") : !rq->page_image;
	if (!rq->page_image && !rq->text) {
		cli_usage_error("binary output needs page images, which a basic merge stream "
				"does not have; use --to text");
		return false;
	}
	if (!cli_level_apply(a->level, a->output, LP_COMPRESS_AUTO, &rq->level))
		return false;
	if (rq->page_image && rq->frames > UINT32_MAX) {
		cli_usage_error("--frames must be at most %" PRIu32 " for page-image traces",
				UINT32_MAX);
		return false;
	}
	return true;
}

int cmd_lru(int argc, char **argv)
{
	cli_set_command("laplace lru");
	lru_args a = {0};
	GOptionContext *ctx = lru_options(&a);
	int rc = LP_EUSAGE;
	lp_error err = {0};
	lp_lru_request rq;
	if (!cli_parse_one_input(ctx, &argc, &argv) || !lru_request_apply(&a, argv[1], &rq))
		goto out;
	const char *inputs[] = {argv[1]}, *outputs[] = {a.output ? a.output : "-"};
	if ((rc = lp_check_outputs(inputs, 1, outputs, 1, &err))) {
		cli_fail(&err);
		goto out;
	}
	/* LP_EUSAGE: --frames below the page-image input's memory. */
	if ((rc = lp_lru_run(&rq, &err)) == LP_EUSAGE)
		cli_usage_error("%s", err.msg);
	else if (rc)
		cli_fail(&err);
out:
	g_option_context_free(ctx);
	g_free(a.frames);
	g_free(a.from);
	g_free(a.to);
	g_free(a.output);
	g_free(a.level);
	return rc;
}
