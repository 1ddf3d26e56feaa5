/* laplace dump: print a trace of any format the project reads as text. */
#include <stdbool.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "formats/legacy.h"
#include "formats/refio.h"

#define DUMP_BATCH 65536

/* A raw reference trace, binary or text, in its text form. */
static int dump_ref(const char *path, enum lp_endian endian, const lp_torn_policy *policy,
		    lp_output *out, lp_error *err)
{
	lp_ref_source *reader = lp_ref_reader_open(path, LP_REF_AUTO, endian, err);
	if (!reader)
		return err->status;
	lp_ref_writer *writer = lp_ref_writer_new(out, LP_REF_TEXT, endian);
	lp_ref *batch = g_new(lp_ref, DUMP_BATCH);
	ssize_t n;
	int rc = 0;
	while ((n = lp_ref_source_read(reader, batch, DUMP_BATCH, err)) > 0)
		if ((rc = lp_ref_writer_write(writer, batch, (size_t)n, err)))
			break;
	g_free(batch);
	if (!rc && n < 0)
		rc = err->status;
	if (!rc)
		rc = lp_ref_writer_finish(writer, err);
	else
		lp_ref_writer_free(writer);
	size_t torn = lp_ref_source_torn_bytes(reader);
	if (!rc && torn) /* binary: text is never torn */
		rc = lp_torn_record(policy, lp_ref_source_name(reader), lp_ref_source_index(reader),
				    torn, err);
	lp_ref_source_close(reader);
	return rc;
}

int cmd_dump(int argc, char **argv)
{
	cli_set_command("laplace dump");
	gchar *format = NULL, *endian = NULL;
	gboolean strict = FALSE;
	GOptionEntry entries[] = {
		{"format", 'f', 0, G_OPTION_ARG_STRING, &format,
		 "Input format: ref, byu, p6, page-image, basic or auto (default)", "FORMAT"},
		{"endian", 0, 0, G_OPTION_ARG_STRING, &endian,
		 "Byte order of the input: little or big (default: big for p6, else little)",
		 "ORDER"},
		{"strict", 0, 0, G_OPTION_ARG_NONE, &strict,
		 "Treat a torn last record as an error", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("FILE");
	g_option_context_set_summary(ctx,
		"Print a trace as text on standard output, one line per record: a raw\n"
		"reference trace (ref, binary or text), a BYU address trace (byu), a\n"
		"Pentium bus trace (p6, exactly as its original decoder prints it), a\n"
		"page-image LRU behaviour sequence (page-image) or a basic merge stream\n"
		"(basic, text or binary). FILE may be '-' and may be gzip or zstd\n"
		"compressed. See laplace-dump(1).");
	g_option_context_set_description(ctx,
		"Auto-detection recognises page-image traces, raw reference traces\n"
		"(binary or text) and basic merge streams; BYU and p6 traces need\n"
		"--format, and so does a raw reference trace on standard input.\n\n"
		"Examples:\n"
		"  laplace dump --format byu trace.tr | head\n"
		"  laplace dump behaviour.pi\n"
		"  laplace dump trace.bin.zst\n");
	g_option_context_add_main_entries(ctx, entries, NULL);

	int rc = LP_EUSAGE;
	int fmt = -1;
	int order = -1;
	lp_byte_source *src = NULL;
	lp_error err = {0};
	if (!cli_parse_one_input(ctx, &argc, &argv))
		goto out;
	if (format && strcmp(format, "auto") && (fmt = lp_legacy_format_parse(format)) < 0) {
		cli_usage_error("--format must be ref, byu, p6, page-image, basic or auto, not '%s'",
				format);
		goto out;
	}
	if (endian && (order = lp_endian_parse(endian)) < 0) {
		cli_usage_error("--endian must be little or big, not '%s'", endian);
		goto out;
	}
	const char *path = argv[1];
	/* `dump x >> x` would never end. */
	const char *to_stdout = "-";
	if (lp_check_outputs(&path, 1, &to_stdout, 1, &err)) {
		rc = cli_fail(&err);
		goto out;
	}
	if (fmt != LP_LEGACY_REF) {
		if (!(src = lp_byte_source_open(path, &err))) {
			rc = cli_fail(&err);
			goto out;
		}
		if (fmt < 0) {
			fmt = lp_legacy_detect(src, &err);
			if (fmt == -2) {
				rc = cli_fail(&err);
				goto out;
			}
			if (fmt == LP_LEGACY_UNKNOWN) {
				cli_usage_error("cannot tell the format of %s; give --format "
						"(ref, byu, p6, page-image or basic)",
						lp_byte_source_name(src));
				goto out;
			}
			if (fmt == LP_LEGACY_REF && !strcmp(path, "-")) {
				cli_usage_error("standard input holds a raw reference trace; give "
						"--format ref to read it");
				goto out;
			}
		}
	}
	if (order < 0)
		order = fmt == LP_LEGACY_P6 ? LP_BIG : LP_LITTLE;
	lp_output *output = lp_output_open(NULL, LP_COMPRESS_NONE, &err);
	if (!output) {
		rc = cli_fail(&err);
		goto out;
	}
	lp_torn_policy policy = {.strict = strict, .warn = cli_warn};
	if (fmt == LP_LEGACY_REF) {
		/* the raw reference reader opens the file itself */
		lp_byte_source_close(src);
		src = NULL;
		rc = dump_ref(path, (enum lp_endian)order, &policy, output, &err);
	} else {
		rc = lp_legacy_dump(src, (enum lp_legacy_format)fmt, (enum lp_endian)order, &policy,
				    output, &err);
		src = NULL;
	}
	if (rc == 0)
		rc = lp_output_commit(output, &err);
	else
		lp_output_abort(output);
	if (rc)
		cli_fail(&err);
out:
	lp_byte_source_close(src);
	g_option_context_free(ctx);
	g_free(format);
	g_free(endian);
	return rc;
}
