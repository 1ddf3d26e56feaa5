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
#include "formats/oracle.h"
#include "formats/taskline.h"

/* Everything a source needs to run one conversion. */
typedef struct convert_request {
	const char *input;             /* "-" is standard input */
	const char *output;            /* NULL or "-" is standard output */
	enum lp_ref_format to;         /* LP_REF_BIN or LP_REF_TEXT */
	unsigned width;                /* of raw references written: 32 (--narrow), 64
					* (--wide), or 0, the input's */
	enum lp_ref_format ref_format; /* form of a raw reference input */
	enum lp_endian endian;         /* binary input and output byte order */
	bool endian_given;             /* --endian was given (p6 defaults to big) */
	bool to_basic;                 /* --to basic: a basic merge stream */
	bool to_oracle;                /* --to oracle-general: one in that form */
	bool to_task, to_task_bin;     /* --to task or task-bin: a task file */
	bool from_bin;                 /* --from bin: the input must be one */
	enum lp_compress compress;
	int level;
	bool strict;                   /* a torn last record is an error */
} convert_request;

/* References decoded and encoded per step: big enough to amortise calls. */
#define CONVERT_BATCH 65536

/* A raw reference trace into the form of rq->to and the width asked for,
 * or its own. */
static int convert_ref(const convert_request *rq, const lp_format *format, lp_error *err)
{
	(void)format;
	lp_ref_source *reader = lp_ref_open(rq->input, rq->ref_format, rq->endian, err);
	if (!reader)
		return err->status;
	lp_output *out = lp_output_open_level(rq->output, rq->compress, rq->level, err);
	int rc = out ? 0 : err->status;
	if (out) {
		unsigned width = rq->width ? rq->width : lp_ref_source_width(reader);
		const lp_torn_policy policy = {.strict = rq->strict, .warn = cli_warn};
		rc = lp_ref_copy(reader, lp_ref_row(rq->to, width), rq->endian, &policy, out, err);
		rc = rc ? (lp_output_abort(out), rc) : lp_output_commit(out, err);
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
	const lp_format *form = lp_ref_row(rq->to, rq->width ? rq->width : 32);
	lp_ref_writer *writer = form->open_sink(out, LP_LITTLE);
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
	if (cli_quiet())
		return 0;
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

/* The form of basic stream that rq writes: --to basic, oracle-general or
 * bin. */
static enum lp_form stream_form(const convert_request *rq)
{
	return rq->to_basic ? LP_FORM_BASIC : rq->to_oracle ? LP_FORM_ORACLE : LP_FORM_BIN;
}

/* Every reference that next reads from reader, written to the output in
 * the form asked for. */
typedef ssize_t read_fn(void *reader, lp_basic_ref *refs, size_t cap, lp_error *err);

static int write_stream(const convert_request *rq, read_fn *next, void *reader, lp_error *err)
{
	lp_output *out = lp_output_open_level(rq->output, rq->compress, rq->level, err);
	if (!out)
		return err->status;
	lp_basic_sink *sink = lp_basic_sink_new(out, false, stream_form(rq));
	lp_basic_ref *batch = g_new(lp_basic_ref, CONVERT_BATCH);
	lp_ref *refs = g_new0(lp_ref, CONVERT_BATCH);
	uint64_t *canon = g_new(uint64_t, CONVERT_BATCH);
	ssize_t n;
	int rc = 0;
	while (!rc && (n = next(reader, batch, CONVERT_BATCH, err)) > 0) {
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
	return rc;
}

static ssize_t read_oracle(void *reader, lp_basic_ref *refs, size_t cap, lp_error *err)
{
	return lp_oracle_read(reader, refs, cap, err);
}

static ssize_t read_basic(void *reader, lp_basic_ref *refs, size_t cap, lp_error *err)
{
	return lp_basic_read(reader, refs, cap, err);
}

/* An oracle-general trace (policies.md §6) to a basic merge stream: each
 * record a read of canonical number object id - 1. */
static int convert_oracle(const convert_request *rq, const lp_format *format, lp_error *err)
{
	(void)format;
	lp_byte_source *src = lp_byte_source_open(rq->input, err);
	if (!src)
		return err->status;
	lp_oracle_reader *reader = lp_oracle_reader_new(src);
	int rc = write_stream(rq, read_oracle, reader, err);
	lp_oracle_reader_close(reader);
	return rc;
}

/* A basic merge stream in one form to another (--to basic, bin or
 * oracle-general). */
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
	int rc = write_stream(rq, read_basic, reader, err);
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
	int rc = out ? lp_task_convert(src, format->id == LP_FORMAT_TASK_BIN, rq->to_task_bin, out, err)
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
		[LP_FORMAT_REF] = convert_ref,
		[LP_FORMAT_PAGE_IMAGE] = convert_page_image,
		[LP_FORMAT_BASIC] = convert_basic,
		[LP_FORMAT_TASK] = convert_task,
		[LP_FORMAT_TASK_BIN] = convert_task,
		[LP_FORMAT_ORACLE] = convert_oracle,
	};
	return f->to_refs ? convert_to_refs : by_id[f->id];
}

/* The options as given. */
typedef struct convert_options {
	gchar *from, *to, *ref_format, *endian, *output, *compress, *level;
	gboolean strict, wide, narrow;
	char *ref_forms; /* --ref-format's names */
	char *names;     /* --from's */
} convert_options;

/* rq, its input's format and its converter from the options; false after
 * a usage message. */
static bool check_options(const convert_options *o, convert_request *rq, const lp_format **source,
			  convert_fn **run)
{
	if (!o->to)
		return !cli_usage_error("--to is required (text or bin)");
	int form = lp_ref_format_parse(o->to);
	rq->to_basic = !strcmp(o->to, "basic");
	rq->to_oracle = !strcmp(o->to, "oracle-general");
	rq->to_task_bin = !strcmp(o->to, "task-bin");
	rq->to_task = rq->to_task_bin || !strcmp(o->to, "task");
	if (form != LP_REF_TEXT && form != LP_REF_BIN && !rq->to_basic && !rq->to_oracle &&
	    !rq->to_task)
		return !cli_usage_error("--to must be text, bin, basic, oracle-general, task or "
					"task-bin, not '%s'", o->to);
	rq->to = (enum lp_ref_format)form;
	/* --from bin: a basic merge stream that must be in the bin form. */
	rq->from_bin = o->from && !strcmp(o->from, "bin");
	if (o->from && !(*source = lp_format_find(rq->from_bin ? "basic" : o->from)))
		return !cli_usage_error("--from must be %s, not '%s'", o->names, o->from);
	*run = converter(*source);
	if (rq->to_task != (*run == convert_task))
		return !cli_usage_error(rq->to_task ? "--to %s needs --from task or task-bin"
					: "--from %s converts only --to task or task-bin",
					rq->to_task ? o->to : o->from);
	/* Pages without addresses (a page-image trace, a basic merge stream)
	 * become a basic merge stream, and only they do; a basic stream may
	 * also become the bin form. */
	bool streams = *run == convert_basic || *run == convert_oracle;
	bool pages = *run == convert_page_image || streams;
	if (rq->to_oracle && !streams)
		return !cli_usage_error("--to oracle-general needs --from basic, bin or "
					"oracle-general");
	if (rq->to_basic != pages && !(streams && (rq->to == LP_REF_BIN || rq->to_oracle)))
		return !cli_usage_error(rq->to_basic ? "--to basic needs --from page-image, basic, "
					"bin or oracle-general"
					: "--from %s converts only --to basic%s", o->from,
					streams ? ", bin or oracle-general" : "");
	if (rq->from_bin && !rq->to_basic && !rq->to_oracle)
		return !cli_usage_error("--from bin converts only --to basic or oracle-general");
	if (o->wide && o->narrow)
		return !cli_usage_error("--wide and --narrow cannot both be given");
	if ((o->wide || o->narrow) && (pages || rq->to_task))
		return !cli_usage_error("--%s converts only to raw references (--to text or bin)",
					o->wide ? "wide" : "narrow");
	rq->width = o->wide ? 64 : o->narrow ? 32 : 0;
	if (o->ref_format && (int)(rq->ref_format = lp_ref_format_parse(o->ref_format)) < 0)
		return !cli_usage_error("--ref-format must be %s, not '%s'", o->ref_forms,
					o->ref_format);
	if (o->endian && (int)(rq->endian = lp_endian_parse(o->endian)) < 0)
		return !cli_usage_error("--endian must be little or big, not '%s'", o->endian);
	if (o->compress && (int)(rq->compress = lp_compress_parse(o->compress)) < 0)
		return !cli_usage_error("--compress must be gzip, zstd or none, not '%s'", o->compress);
	rq->output = o->output;
	rq->strict = o->strict;
	rq->endian_given = o->endian != NULL;
	return cli_level_apply(o->level, o->output, rq->compress, &rq->level);
}

int cmd_convert(int argc, char **argv)
{
	cli_set_command("laplace convert");
	convert_options o = {.ref_forms = lp_ref_format_names(), .names = lp_format_names("bin")};
	char *ref_format_help = g_strdup_printf("Form of the reference input: %s (default); the "
						"input says which width", o.ref_forms);
	char *from_help = g_strdup_printf("Input format: %s (default ref, a raw reference trace; "
					  "bin: a basic merge stream in its bin form)", o.names);
	GOptionEntry entries[] = {
		{"to", 0, 0, G_OPTION_ARG_STRING, &o.to,
		 "Output form: text or bin (required); basic for page-image input; basic, bin "
		 "or oracle-general for a basic stream or an oracle-general trace; task or "
		 "task-bin for task files", "FORM"},
		{"from", 0, 0, G_OPTION_ARG_STRING, &o.from, from_help, "FORMAT"},
		{"ref-format", 0, 0, G_OPTION_ARG_STRING, &o.ref_format, ref_format_help, "FORM"},
		{"wide", 0, 0, G_OPTION_ARG_NONE, &o.wide,
		 "Write the 64-bit form of raw references (default: the input's width)", NULL},
		{"narrow", 0, 0, G_OPTION_ARG_NONE, &o.narrow,
		 "Write the 32-bit form; a vas or address past 32 bits is an error", NULL},
		{"endian", 0, 0, G_OPTION_ARG_STRING, &o.endian,
		 "Byte order of 32-bit binary input and output: little (default) or big", "ORDER"},
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output,
		 "Write to FILE (default: standard output)", "FILE"},
		{"compress", 0, 0, G_OPTION_ARG_STRING, &o.compress,
		 "Compress the output: gzip, zstd or none (default: by the name's suffix)", "METHOD"},
		{"level", 0, 0, G_OPTION_ARG_STRING, &o.level,
		 "Compression level: gzip 0-3 (default 1), zstd 1-19 or -7 to -1, its fast modes "
		 "(default 1)", "N"},
		cli_strict_entry(&o.strict),
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("INPUT");
	g_option_context_set_summary(ctx,
		"Convert a raw reference trace INPUT between its binary form (18-byte\n"
		"records; 26-byte records after a header in the 64-bit form) and its text\n"
		"form (type timestamp length vas address), losslessly both ways, keeping\n"
		"its width unless --wide or --narrow says. With --from byu or p6, convert\n"
		"a BYU address trace or a Pentium bus trace to a raw reference trace\n"
		"(other request types are skipped and counted on stderr); with --from\n"
		"page-image --to basic, write the basic merge stream on which every LRU\n"
		"memory at least as large behaves as the trace says. INPUT may be '-'\n"
		"(standard input) and may be gzip or zstd compressed. See\n"
		"laplace-convert(1).");
	g_option_context_set_description(ctx,
		"Examples:\n"
		"  laplace convert --to text trace.bin > trace.txt\n"
		"  laplace convert --to bin --endian big -o trace.bin trace.txt\n"
		"  laplace convert --to bin --wide -o trace64.bin trace.bin\n");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_sync_option(ctx);
	cli_add_quiet_option(ctx);

	int rc = LP_EUSAGE;
	convert_request rq = {.ref_format = LP_REF_AUTO, .endian = LP_LITTLE,
			      .compress = LP_COMPRESS_AUTO};
	const lp_format *source = lp_format_find("ref");
	convert_fn *run = NULL;
	lp_error err = {0};
	if (cli_parse_one_input(ctx, &argc, &argv) && check_options(&o, &rq, &source, &run)) {
		rq.input = argv[1];
		const char *inputs[] = {rq.input}, *outputs[] = {rq.output ? rq.output : "-"};
		rc = lp_check_outputs(inputs, 1, outputs, 1, &err);
		if (!rc)
			rc = run(&rq, source, &err);
		if (rc)
			cli_fail(&err);
	}
	g_option_context_free(ctx);
	g_free(o.from);
	g_free(o.to);
	g_free(o.ref_format);
	g_free(o.endian);
	g_free(o.output);
	g_free(o.compress);
	g_free(o.level);
	g_free(o.names);
	g_free(o.ref_forms);
	g_free(ref_format_help);
	g_free(from_help);
	return rc;
}
