/* laplace convert: raw reference traces between their binary and text forms,
 * and the other formats (registry.h, --from) into them or into a basic
 * merge stream. */
#include <stdbool.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "io/io.h"
#include "formats/registry.h"
#include "analysis/lru.h"
#include "formats/refio.h"
#include "formats/forms.h"
#include "formats/taskline.h"

/* References decoded and encoded per step: big enough to amortise calls. */
#define CONVERT_BATCH 65536

/* Everything a source needs to run one conversion. */
typedef struct convert_request {
	const char *input;             /* "-" is standard input */
	const char *output;            /* NULL or "-" is standard output */
	enum lp_ref_format to;         /* LP_REF_BIN or LP_REF_TEXT */
	enum lp_ref_format ref_format; /* form of a raw reference input */
	enum lp_endian endian;         /* binary input and output byte order */
	bool endian_given;             /* --endian was given (p6 defaults to big) */
	bool to_basic;                 /* --to basic: a basic merge stream */
	bool to_task, to_task_bin;     /* --to task or task-bin: a task file */
	bool from_bin;                 /* --from bin: the input must be one */
	enum lp_compress compress;
	int level;
	bool strict;                   /* a torn last record is an error */
} convert_request;

/* Copy every reference from reader to writer; then deal with a torn record. */
static int copy_refs(lp_ref_source *reader, lp_ref_writer *writer, bool strict, lp_error *err)
{
	lp_ref *batch = g_new(lp_ref, CONVERT_BATCH);
	ssize_t n;
	int rc = 0;
	while ((n = lp_ref_source_read(reader, batch, CONVERT_BATCH, err)) > 0)
		if ((rc = lp_ref_writer_write(writer, batch, (size_t)n, err)))
			break;
	g_free(batch);
	if (n < 0)
		return err->status;
	if (rc)
		return rc;
	size_t torn = lp_ref_source_torn_bytes(reader);
	if (!torn)
		return 0;
	const lp_torn_policy policy = {.strict = strict, .warn = cli_warn};
	return lp_torn_record(&policy, lp_ref_source_name(reader), lp_ref_source_index(reader), torn,
			      err);
}

static int convert_ref(const convert_request *rq, const lp_format *format, lp_error *err)
{
	(void)format;
	lp_ref_source *reader = lp_ref_reader_open(rq->input, rq->ref_format, rq->endian, err);
	if (!reader)
		return err->status;
	lp_output *out = lp_output_open_level(rq->output, rq->compress, rq->level, err);
	if (!out) {
		lp_ref_source_close(reader);
		return err->status;
	}
	lp_ref_writer *writer = lp_ref_writer_new(out, rq->to, rq->endian);
	int rc = copy_refs(reader, writer, rq->strict, err);
	if (rc) {
		lp_ref_writer_free(writer);
		lp_output_abort(out);
	} else if (!(rc = lp_ref_writer_finish(writer, err))) {
		rc = lp_output_commit(out, err);
	} else {
		lp_output_abort(out);
	}
	lp_ref_source_close(reader);
	return rc;
}

/* BYU and p6 traces to raw references: the input's byte order is
 * rq->endian, the binary output is always little-endian; a summary of the
 * references written and the records skipped goes to stderr. */
static int convert_to_refs(const convert_request *rq, const lp_format *format, lp_error *err)
{
	lp_byte_source *src = lp_byte_source_open(rq->input, err);
	if (!src)
		return err->status;
	lp_output *out = lp_output_open_level(rq->output, rq->compress, rq->level, err);
	if (!out) {
		lp_byte_source_close(src);
		return err->status;
	}
	enum lp_endian order = rq->endian_given ? rq->endian : format->byte_order;
	lp_ref_writer *writer = lp_ref_writer_new(out, rq->to, LP_LITTLE);
	lp_torn_policy policy = {.strict = rq->strict, .warn = cli_warn};
	lp_legacy_summary sum;
	int rc = lp_legacy_to_refs(src, format->id, order, &policy, writer, &sum, err);
	if (rc)
		lp_ref_writer_free(writer);
	else
		rc = lp_ref_writer_finish(writer, err);
	if (rc) {
		lp_output_abort(out);
		return rc;
	}
	if ((rc = lp_output_commit(out, err)))
		return rc;
	char line[1024];
	lp_legacy_summary_text(&sum, format->id, line, sizeof line);
	fprintf(stderr, "%s: %s\n", cli_command(), line);
	return 0;
}

/* A page-image trace to the basic merge stream that reproduces it. */
static int convert_page_image(const convert_request *rq, const lp_format *format, lp_error *err)
{
	(void)format;
	lp_byte_source *src = lp_byte_source_open(rq->input, err);
	if (!src)
		return err->status;
	lp_output *out = lp_output_open_level(rq->output, rq->compress, rq->level, err);
	if (!out) {
		lp_byte_source_close(src);
		return err->status;
	}
	lp_torn_policy policy = {.strict = rq->strict, .warn = cli_warn};
	int rc = lp_pi_to_basic(src, &policy, out, err);
	if (rc)
		lp_output_abort(out);
	else
		rc = lp_output_commit(out, err);
	return rc;
}

/* A basic merge stream in one form to the other (--to basic or bin). */
static int convert_basic(const convert_request *rq, const lp_format *format, lp_error *err)
{
	(void)format;
	lp_basic_reader *reader = lp_basic_open(rq->input, err);
	if (!reader)
		return err->status;
	if (rq->from_bin && !lp_basic_reader_binary(reader)) {
		lp_fail(err, LP_EINPUT, "%s: not a bin stream: no LPBASIC header",
			strcmp(rq->input, "-") ? rq->input : "<stdin>");
		lp_basic_close(reader);
		return err->status;
	}
	lp_output *out = lp_output_open_level(rq->output, rq->compress, rq->level, err);
	if (!out) {
		lp_basic_close(reader);
		return err->status;
	}
	lp_basic_sink *sink = lp_basic_sink_new(out, false, rq->to_basic ? LP_FORM_BASIC : LP_FORM_BIN);
	lp_basic_ref *batch = g_new(lp_basic_ref, CONVERT_BATCH);
	lp_ref *refs = g_new0(lp_ref, CONVERT_BATCH);
	uint64_t *canon = g_new(uint64_t, CONVERT_BATCH);
	ssize_t n;
	int rc = 0;
	while (!rc && (n = lp_basic_read(reader, batch, CONVERT_BATCH, err)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			refs[i].type = batch[i].type;
			canon[i] = batch[i].canonical;
		}
		rc = lp_basic_sink_ops.refs(sink, refs, canon, (size_t)n, NULL, err);
	}
	if (!rc && n < 0)
		rc = err->status;
	if (!rc)
		rc = lp_basic_sink_ops.finish(sink, NULL, err);
	rc = rc ? (lp_output_abort(out), rc) : lp_output_commit(out, err);
	lp_basic_sink_free(sink);
	g_free(batch);
	g_free(refs);
	g_free(canon);
	lp_basic_close(reader);
	return rc;
}

/* A per-process task file in one form to the other (laplace-formats(5),
 * "PER-PROCESS MERGE OUTPUT"). */
static int convert_task(const convert_request *rq, const lp_format *format, lp_error *err)
{
	lp_byte_source *src = lp_byte_source_open(rq->input, err);
	if (!src)
		return err->status;
	lp_output *out = lp_output_open_level(rq->output, rq->compress, rq->level, err);
	int rc = out ? lp_task_convert(src, format->id == LP_LEGACY_TASK_BIN, rq->to_task_bin, out, err)
		     : err->status;
	if (out)
		rc = rc ? (lp_output_abort(out), rc) : lp_output_commit(out, err);
	lp_byte_source_close(src);
	return rc;
}

typedef int convert_fn(const convert_request *rq, const lp_format *format, lp_error *err);

/* What each format (registry.h) converts by: into raw references, or
 * into a basic merge stream for the pages without addresses. */
static convert_fn *converter(const lp_format *f)
{
	static convert_fn *const by_id[] = {
		[LP_LEGACY_REF] = convert_ref,
		[LP_LEGACY_PAGE_IMAGE] = convert_page_image,
		[LP_LEGACY_BASIC] = convert_basic,
		[LP_LEGACY_TASK] = convert_task,
		[LP_LEGACY_TASK_BIN] = convert_task,
	};
	return f->to_refs ? convert_to_refs : by_id[f->id];
}

int cmd_convert(int argc, char **argv)
{
	cli_set_command("laplace convert");
	gchar *from = NULL, *to = NULL, *ref_format = NULL, *endian = NULL;
	gchar *output = NULL, *compress = NULL, *level = NULL;
	gboolean strict = FALSE;
	char *ref_forms = lp_ref_format_names();
	char *ref_format_help = g_strdup_printf("Form of the reference input: %s (default)", ref_forms);
	GOptionEntry entries[] = {
		{"to", 0, 0, G_OPTION_ARG_STRING, &to,
		 "Output form: text or bin (required); basic for page-image input; task or "
		 "task-bin for task files", "FORM"},
		{"from", 0, 0, G_OPTION_ARG_STRING, &from,
		 "Input format: ref, a raw reference trace (default), byu, p6, page-image, "
		 "basic (a basic merge stream, text or bin), bin, task (a per-process task file, "
		 "either form) or task-bin",
		 "FORMAT"},
		{"ref-format", 0, 0, G_OPTION_ARG_STRING, &ref_format, ref_format_help, "FORM"},
		{"endian", 0, 0, G_OPTION_ARG_STRING, &endian,
		 "Byte order of binary input and output: little (default) or big", "ORDER"},
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
		 "Write to FILE (default: standard output)", "FILE"},
		{"compress", 0, 0, G_OPTION_ARG_STRING, &compress,
		 "Compress the output: gzip, zstd or none (default: by the name's suffix)", "METHOD"},
		{"level", 0, 0, G_OPTION_ARG_STRING, &level,
		 "Compression level: gzip 0-3 (default 1), zstd 1-19 or -7 to -1, its fast modes "
		 "(default 1)", "N"},
		{"strict", 0, 0, G_OPTION_ARG_NONE, &strict,
		 "Treat a torn last binary record as an error", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("INPUT");
	g_option_context_set_summary(ctx,
		"Convert a raw reference trace INPUT between its binary form (18-byte\n"
		"records) and its text form (type timestamp length vas address), losslessly\n"
		"both ways. With --from byu or p6, convert a BYU address trace or a\n"
		"Pentium bus trace to a raw reference trace (other request types are\n"
		"skipped and counted on stderr); with --from page-image --to basic, write\n"
		"the basic merge stream on which every LRU memory at least as large\n"
		"behaves as the trace says. INPUT may be '-' (standard input) and may be\n"
		"gzip or zstd compressed. See laplace-convert(1).");
	g_option_context_set_description(ctx,
		"Examples:\n"
		"  laplace convert --to text trace.bin > trace.txt\n"
		"  laplace convert --to bin --endian big -o trace.bin trace.txt\n");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_sync_option(ctx);

	int rc = LP_EUSAGE;
	convert_request rq = {
		.ref_format = LP_REF_AUTO,
		.endian = LP_LITTLE,
		.compress = LP_COMPRESS_AUTO,
	};
	const lp_format *source = lp_format_find("ref");
	char *names = lp_format_names("bin");
	lp_error err = {0};
	if (!cli_parse_one_input(ctx, &argc, &argv))
		goto out;
	if (!to) {
		cli_usage_error("--to is required (text or bin)");
		goto out;
	}
	int form = lp_ref_format_parse(to);
	rq.to_task_bin = !strcmp(to, "task-bin");
	rq.to_task = rq.to_task_bin || !strcmp(to, "task");
	if (form != LP_REF_TEXT && form != LP_REF_BIN && !rq.to_task) {
		if (!(rq.to_basic = !strcmp(to, "basic"))) {
			cli_usage_error("--to must be text, bin, basic, task or task-bin, not '%s'", to);
			goto out;
		}
	}
	rq.to = (enum lp_ref_format)form;
	/* --from bin: a basic merge stream that must be in the bin form. */
	rq.from_bin = from && !strcmp(from, "bin");
	if (from && !(source = lp_format_find(rq.from_bin ? "basic" : from))) {
		cli_usage_error("--from must be %s, not '%s'", names, from);
		goto out;
	}
	convert_fn *run = converter(source);
	if (rq.to_task != (run == convert_task)) {
		cli_usage_error(rq.to_task ? "--to %s needs --from task or task-bin"
				: "--from %s converts only --to task or task-bin", rq.to_task ? to : from);
		goto out;
	}
	/* Pages without addresses (a page-image trace, a basic merge stream)
	 * become a basic merge stream, and only they do; a basic stream may
	 * also become the bin form. */
	bool pages = run == convert_page_image || run == convert_basic;
	if (rq.to_basic != pages && !(run == convert_basic && rq.to == LP_REF_BIN)) {
		cli_usage_error(rq.to_basic ? "--to basic needs --from page-image, basic or bin"
				: "--from %s converts only --to basic%s", from,
				run == convert_basic ? " or bin" : "");
		goto out;
	}
	if (rq.from_bin && !rq.to_basic) {
		cli_usage_error("--from bin converts only --to basic");
		goto out;
	}
	if (ref_format && (int)(rq.ref_format = lp_ref_format_parse(ref_format)) < 0) {
		cli_usage_error("--ref-format must be %s, not '%s'", ref_forms, ref_format);
		goto out;
	}
	if (endian && (int)(rq.endian = lp_endian_parse(endian)) < 0) {
		cli_usage_error("--endian must be little or big, not '%s'", endian);
		goto out;
	}
	if (compress && (int)(rq.compress = lp_compress_parse(compress)) < 0) {
		cli_usage_error("--compress must be gzip, zstd or none, not '%s'", compress);
		goto out;
	}
	if (!cli_level_apply(level, output, rq.compress, &rq.level))
		goto out;
	rq.input = argv[1];
	rq.output = output;
	rq.strict = strict;
	rq.endian_given = endian != NULL;
	const char *inputs[] = {rq.input}, *outputs[] = {rq.output ? rq.output : "-"};
	rc = lp_check_outputs(inputs, 1, outputs, 1, &err);
	if (!rc)
		rc = run(&rq, source, &err);
	if (rc)
		cli_fail(&err);
out:
	g_option_context_free(ctx);
	g_free(from);
	g_free(to);
	g_free(ref_format);
	g_free(endian);
	g_free(output);
	g_free(compress);
	g_free(level);
	g_free(names);
	g_free(ref_forms);
	g_free(ref_format_help);
	return rc;
}
