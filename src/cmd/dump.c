/* laplace dump: print a trace of any format the project reads as text. */
#include <stdbool.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "formats/registry.h"

/* The trace at path opened into *src (unless its format's reader opens
 * it itself) and its format told into *fmt when not given; 0, or an exit
 * status after a message. */
static int open_trace(const char *path, const lp_format **fmt, lp_byte_source **src,
		      const char *detectable)
{
	lp_error err = {0};
	if (*fmt && !(*fmt)->dump)
		return 0;
	if (!(*src = lp_byte_source_open(path, &err)))
		return cli_fail(&err);
	if (*fmt)
		return 0;
	bool failed;
	*fmt = lp_format_detect(*src, &failed, &err);
	if (failed)
		return cli_fail(&err);
	if (!*fmt)
		return cli_usage_error("cannot tell the format of %s; give --from (%s)",
				       lp_byte_source_name(*src), detectable);
	if ((*fmt)->dump_path && !strcmp(path, "-"))
		return cli_usage_error("standard input holds %s; give --from %s to read it",
				       (*fmt)->what, (*fmt)->name);
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	cli_set_command("laplace dump");
	gchar *format = NULL, *endian = NULL, *output = NULL;
	gboolean strict = FALSE;
	char *names = lp_format_names("auto"), *detectable = lp_format_names(NULL);
	char *format_help = g_strdup_printf("Input format: %s (default)", names);
	GOptionEntry entries[] = {
		{"from", 0, 0, G_OPTION_ARG_STRING, &format, format_help, "FORMAT"},
		{"endian", 0, 0, G_OPTION_ARG_STRING, &endian,
		 "Byte order of the input: little or big (default: big for p6, else little)",
		 "ORDER"},
		cli_strict_entry(&strict),
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
		 "Write to FILE (default: standard output)", "FILE"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("FILE");
	g_option_context_set_summary(ctx,
		"Print a trace as text (on standard output or to -o FILE), one line per\n"
		"record: a raw\n"
		"reference trace (ref, binary or text, 32-bit or 64-bit: the text form\n"
		"of its width), a BYU address trace (byu), a\n"
		"Pentium bus trace (p6, exactly as its original decoder prints it), a\n"
		"page-image LRU behaviour sequence (page-image) or a basic merge stream\n"
		"(basic, text or binary). FILE may be '-' and may be gzip or zstd\n"
		"compressed. See laplace-dump(1).");
	g_option_context_set_description(ctx,
		"Auto-detection recognises page-image traces, raw reference traces\n"
		"(any form) and basic merge streams; BYU and p6 traces need\n"
		"--from, and so does a raw reference trace on standard input.\n\n"
		"Examples:\n"
		"  laplace dump --from byu trace.tr | head\n"
		"  laplace dump behaviour.pi\n"
		"  laplace dump trace.bin.zst\n");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_sync_option(ctx);

	int rc = LP_EUSAGE;
	const lp_format *fmt = NULL;
	int order = -1;
	lp_byte_source *src = NULL;
	lp_error err = {0};
	if (!cli_parse_one_input(ctx, &argc, &argv))
		goto out;
	if (format && strcmp(format, "auto") && !(fmt = lp_format_find(format))) {
		cli_usage_error("--from must be %s, not '%s'", names, format);
		goto out;
	}
	if (endian && (order = lp_endian_parse(endian)) < 0) {
		cli_usage_error("--endian must be little or big, not '%s'", endian);
		goto out;
	}
	const char *path = argv[1];
	/* `dump x >> x` would never end. */
	const char *to = output ? output : "-";
	if (lp_check_outputs(&path, 1, &to, 1, &err)) {
		rc = cli_fail(&err);
		goto out;
	}
	if ((rc = open_trace(path, &fmt, &src, detectable)))
		goto out;
	if (order < 0)
		order = fmt->byte_order;
	lp_output *out = lp_output_open(output, LP_COMPRESS_AUTO, &err);
	if (!out) {
		rc = cli_fail(&err);
		goto out;
	}
	lp_torn_policy policy = {.strict = strict, .warn = cli_warn};
	if (fmt->dump_path) {
		/* the format's reader opens the file itself */
		lp_byte_source_close(src);
		src = NULL;
		rc = fmt->dump_path(path, (enum lp_endian)order, &policy, out, &err);
	} else {
		rc = fmt->dump(src, (enum lp_endian)order, &policy, out, &err);
		src = NULL;
	}
	if (rc == 0)
		rc = lp_output_commit(out, &err);
	else
		lp_output_abort(out);
	if (rc)
		cli_fail(&err);
out:
	lp_byte_source_close(src);
	g_option_context_free(ctx);
	g_free(format);
	g_free(endian);
	g_free(output);
	g_free(format_help);
	g_free(names);
	g_free(detectable);
	return rc;
}
