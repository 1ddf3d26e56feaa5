/* laplace lru: LRU behaviour sequences, from a basic merge stream or by
 * re-reducing a page-image trace to a larger memory. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "formats/legacy.h"
#include "analysis/lru.h"
#include "core/numbers.h"

int cmd_lru(int argc, char **argv)
{
	cli_set_command("laplace lru");
	gchar *frames_arg = NULL, *from = NULL, *to = NULL, *output = NULL, *level_arg = NULL;
	gboolean strict = FALSE;
	GOptionEntry entries[] = {
		{"frames", 'm', 0, G_OPTION_ARG_STRING, &frames_arg,
		 "Pages of the LRU memory (required; decimal)", "M"},
		{"from", 0, 0, G_OPTION_ARG_STRING, &from,
		 "Input: basic (a basic merge stream, the default) or page-image", "FORMAT"},
		{"to", 0, 0, G_OPTION_ARG_STRING, &to,
		 "Output: binary (page-image records, the default for page-image input) "
		 "or text", "FORM"},
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
		 "Write to FILE (default: standard output)", "FILE"},
		{"level", 0, 0, G_OPTION_ARG_STRING, &level_arg,
		 "Compression level of FILE.gz (0-3, default 1) or FILE.zst (1-19 or -7 to -1, "
		 "default 1)", "N"},
		{"strict", 0, 0, G_OPTION_ARG_NONE, &strict,
		 "Treat a torn last page-image record as an error", NULL},
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

	int rc = LP_EUSAGE;
	lp_error err = {0};
	if (!cli_parse_one_input(ctx, &argc, &argv))
		goto out;
	if (!frames_arg) {
		cli_usage_error("--frames is required");
		goto out;
	}
	uint64_t frames;
	if (!lp_parse_decimal(frames_arg, 1, UINT64_MAX, &frames)) {
		cli_usage_error("--frames must be a positive decimal number, not '%s'", frames_arg);
		goto out;
	}
	bool page_image = from && !strcmp(from, "page-image");
	if (from && !page_image && strcmp(from, "basic")) {
		cli_usage_error("--from must be basic or page-image, not '%s'", from);
		goto out;
	}
	if (to && strcmp(to, "binary") && strcmp(to, "text")) {
		cli_usage_error("--to must be binary or text, not '%s'", to);
		goto out;
	}
	bool text = to ? !strcmp(to, "text") : !page_image;
	if (!page_image && !text) {
		cli_usage_error("binary output needs page images, which a basic merge stream "
				"does not have; use --to text");
		goto out;
	}
	int level;
	if (!cli_level_apply(level_arg, output, LP_COMPRESS_AUTO, &level))
		goto out;
	if (page_image && frames > UINT32_MAX) {
		cli_usage_error("--frames must be at most %" PRIu32 " for page-image traces",
				UINT32_MAX);
		goto out;
	}
	const char *inputs[] = {argv[1]}, *outputs[] = {output ? output : "-"};
	if ((rc = lp_check_outputs(inputs, 1, outputs, 1, &err))) {
		cli_fail(&err);
		goto out;
	}
	lp_byte_source *src = NULL;
	if (page_image && !(src = lp_byte_source_open(argv[1], &err))) {
		rc = cli_fail(&err);
		goto out;
	}
	lp_output *out = lp_output_open_level(output, LP_COMPRESS_AUTO, level, &err);
	if (!out) {
		lp_byte_source_close(src);
		rc = cli_fail(&err);
		goto out;
	}
	lp_torn_policy policy = {.strict = strict, .warn = cli_warn};
	if (page_image)
		rc = lp_pi_reduce_trace(src, (uint32_t)frames, text, &policy, out, &err);
	else
		rc = lp_lru_basic_trace(argv[1], frames, out, &err);
	if (rc == 0)
		rc = lp_output_commit(out, &err);
	else
		lp_output_abort(out);
	if (rc == LP_EUSAGE)
		cli_usage_error("%s", err.msg);
	else if (rc)
		cli_fail(&err);
out:
	g_option_context_free(ctx);
	g_free(frames_arg);
	g_free(from);
	g_free(to);
	g_free(output);
	g_free(level_arg);
	return rc;
}
