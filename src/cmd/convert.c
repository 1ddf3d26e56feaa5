/* laplace convert: raw reference traces between their binary and text forms,
 * and the other formats (registry.h, --from) into them or into a basic
 * merge stream. */
#include <stdbool.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/progress.h"
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
	enum lp_form form;             /* of a basic merge stream written */
	bool to_task_bin;              /* --to task-bin, not task */
	bool from_bin;                 /* --from bin: the input must be one */
	enum lp_compress compress;
	int level;
	bool strict;                   /* a torn last record is an error */
} convert_request;

/* References decoded and encoded per step: big enough to amortise calls. */
#define CONVERT_BATCH 65536

/* Under a terminal (and not -q), a progress display of a conversion:
 * what the converter tells it, with the share of the input read (of a
 * regular file) that fraction gives. */
typedef struct convert_progress {
	cli_progress *display; /* NULL: none */
	double (*fraction)(const void *input); /* from 0 to 1, or -1 if unknown */
	const void *input;
} convert_progress;

static double byte_source_fraction(const void *input)
{
	const lp_byte_source *src = input;
	int64_t size = lp_input_file_size(src->in);
	return size > 0 ? (double)lp_input_file_offset(src->in) / (double)size : -1;
}

static double ref_source_fraction(const void *input)
{
	return lp_ref_source_fraction(input);
}

static void convert_progress_start(convert_progress *p, double (*fraction)(const void *),
				   const void *input)
{
	*p = (convert_progress){cli_progress_new(cli_quiet()), fraction, input};
}

/* An lp_progress_fn (ctx a convert_progress). */
static void convert_progress_show(void *ctx, const lp_progress_info *info)
{
	const convert_progress *p = ctx;
	lp_progress_info shown = *info;
	shown.fraction = p->fraction(p->input);
	cli_progress_update(p->display, &shown);
}

/* p as an lp_progress: none without a display. */
static lp_progress convert_progress_hook(convert_progress *p)
{
	return (lp_progress){.fn = p->display ? convert_progress_show : NULL, .ctx = p};
}

/* A raw reference trace into the form of rq->to and the width asked for,
 * or its own. */
static int convert_ref(const convert_request *rq, const lp_format *format, lp_byte_source *src,
		       lp_error *err)
{
	(void)format;
	lp_ref_source *reader = lp_ref_open_source(src, rq->ref_format, rq->endian, err);
	if (!reader)
		return err->status;
	lp_output *out = lp_output_open_level(rq->output, rq->compress, rq->level, err);
	int rc = out ? 0 : err->status;
	if (out) {
		unsigned width = rq->width ? rq->width : lp_ref_source_width(reader);
		const lp_torn_policy policy = {.strict = rq->strict, .warn = cli_warn};
		convert_progress progress;
		convert_progress_start(&progress, ref_source_fraction, reader);
		lp_progress hook = convert_progress_hook(&progress);
		rc = lp_ref_copy(reader, lp_ref_row(rq->to, width), rq->endian, &policy, &hook, out,
				 err);
		cli_progress_free(progress.display);
		rc = rc ? (lp_output_abort(out), rc) : lp_output_commit(out, err);
	}
	lp_ref_source_close(reader);
	return rc;
}

/* BYU and p6 traces to raw references: the input's byte order is
 * rq->endian, the binary output is always little-endian; a summary of the
 * references written and the records skipped goes to stderr. */
static int convert_to_refs(const convert_request *rq, const lp_format *format,
			   lp_byte_source *src, lp_error *err)
{
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
static int convert_page_image(const convert_request *rq, const lp_format *format,
			      lp_byte_source *src, lp_error *err)
{
	(void)format;
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

/* Every reference that next reads from reader, written to the output in
 * the form asked for; under a terminal, progress as src is read. */
typedef ssize_t read_fn(void *reader, lp_basic_ref *refs, size_t cap, lp_error *err);

static int write_stream(const convert_request *rq, read_fn *next, void *reader,
			const lp_byte_source *src, lp_error *err)
{
	lp_output *out = lp_output_open_level(rq->output, rq->compress, rq->level, err);
	if (!out)
		return err->status;
	lp_basic_sink *sink = lp_basic_sink_new(out, false, rq->form);
	lp_basic_ref *batch = g_new(lp_basic_ref, CONVERT_BATCH);
	lp_ref *refs = g_new0(lp_ref, CONVERT_BATCH);
	uint64_t *canon = g_new(uint64_t, CONVERT_BATCH);
	convert_progress progress;
	convert_progress_start(&progress, byte_source_fraction, src);
	lp_progress_info done = {.fraction = -1};
	ssize_t n;
	int rc = 0;
	while (!rc && (n = next(reader, batch, CONVERT_BATCH, err)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			refs[i].type = batch[i].type;
			canon[i] = batch[i].canonical;
		}
		rc = lp_basic_sink_ops.refs(sink, refs, canon, (size_t)n, NULL, err);
		done.records += (uint64_t)n;
		if (progress.display)
			convert_progress_show(&progress, &done);
	}
	if (!rc && n < 0)
		rc = err->status;
	if (!rc)
		rc = lp_basic_sink_ops.finish(sink, NULL, err);
	cli_progress_free(progress.display);
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
static int convert_oracle(const convert_request *rq, const lp_format *format,
			  lp_byte_source *src, lp_error *err)
{
	(void)format;
	lp_oracle_reader *reader = lp_oracle_reader_new(src);
	int rc = write_stream(rq, read_oracle, reader, src, err);
	lp_oracle_reader_close(reader);
	return rc;
}

/* A basic merge stream in one form to another (--to basic, bin or
 * oracle-general). */
static int convert_basic(const convert_request *rq, const lp_format *format,
			 lp_byte_source *src, lp_error *err)
{
	(void)format;
	lp_basic_reader *reader = lp_basic_reader_new(src, err);
	if (!reader)
		return err->status;
	if (rq->from_bin && !lp_basic_reader_binary(reader)) {
		lp_fail(err, LP_EINPUT, "%s: not a bin stream: no LPBASIC header",
			strcmp(rq->input, "-") ? rq->input : "<stdin>");
		lp_basic_close(reader);
		return err->status;
	}
	int rc = write_stream(rq, read_basic, reader, src, err);
	lp_basic_close(reader);
	return rc;
}

/* A per-process task file in one form to the other (laplace-formats(5),
 * "PER-PROCESS MERGE OUTPUT"). */
static int convert_task(const convert_request *rq, const lp_format *format, lp_byte_source *src,
			lp_error *err)
{
	lp_output *out = lp_output_open_level(rq->output, rq->compress, rq->level, err);
	int rc = err->status;
	if (out) {
		convert_progress progress;
		convert_progress_start(&progress, byte_source_fraction, src);
		lp_progress hook = convert_progress_hook(&progress);
		rc = lp_task_convert(src, format->id == LP_FORMAT_TASK_BIN, rq->to_task_bin, &hook,
				     out, err);
		cli_progress_free(progress.display);
		rc = rc ? (lp_output_abort(out), rc) : lp_output_commit(out, err);
	}
	lp_byte_source_close(src);
	return rc;
}

typedef int convert_fn(const convert_request *rq, const lp_format *format, lp_byte_source *src,
			lp_error *err);

/* What a format converts into, each kind the names of its registry rows:
 * raw references (the forms of lp_ref_forms), a basic merge stream in
 * its text form (page-image) or in any form without addresses
 * (lp_stream_forms), a task file (the task rows of lp_formats). */
enum target { TO_REFS, TO_BASIC_TEXT, TO_STREAM, TO_TASK, TO_KINDS };

typedef struct converter {
	convert_fn *run;
	enum target to;
} converter;

static converter converter_of(const lp_format *f)
{
	static const converter by_id[] = {
		[LP_FORMAT_REF] = {convert_ref, TO_REFS},
		[LP_FORMAT_PAGE_IMAGE] = {convert_page_image, TO_BASIC_TEXT},
		[LP_FORMAT_BASIC] = {convert_basic, TO_STREAM},
		[LP_FORMAT_TASK] = {convert_task, TO_TASK},
		[LP_FORMAT_TASK_BIN] = {convert_task, TO_TASK},
		[LP_FORMAT_ORACLE] = {convert_oracle, TO_STREAM},
	};
	return f->to_refs ? (converter){convert_to_refs, TO_REFS} : by_id[f->id];
}

/* Whether name is already among names[0, n). */
static bool listed(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* The --to names of kind to (but bin when from_bin: that would be a
 * copy) appended to names[*n ..], each once. */
static void target_names(enum target to, bool from_bin, const char **names, size_t *n)
{
	switch (to) {
	case TO_REFS:
		for (size_t i = 0; i < lp_nref_forms; i++)
			if (!listed(names, *n, lp_ref_forms[i].encoding_name))
				names[(*n)++] = lp_ref_forms[i].encoding_name;
		break;
	case TO_BASIC_TEXT:
		if (!listed(names, *n, lp_stream_forms[LP_FORM_BASIC].name))
			names[(*n)++] = lp_stream_forms[LP_FORM_BASIC].name;
		break;
	case TO_STREAM:
		for (int f = 0; f < LP_FORM_COUNT; f++)
			if (!lp_stream_forms[f].addresses && !(from_bin && f == LP_FORM_BIN) &&
			    !listed(names, *n, lp_stream_forms[f].name))
				names[(*n)++] = lp_stream_forms[f].name;
		break;
	case TO_TASK:
		for (size_t i = 0; i < lp_nformats; i++)
			if ((lp_formats[i].id == LP_FORMAT_TASK || lp_formats[i].id == LP_FORMAT_TASK_BIN) &&
			    !listed(names, *n, lp_formats[i].name))
				names[(*n)++] = lp_formats[i].name;
		break;
	case TO_KINDS:
		for (int k = 0; k < TO_KINDS; k++)
			target_names((enum target)k, false, names, n);
		break;
	}
}

/* The names of kind to (TO_KINDS: all) as "a, b or c"; g_free it. */
static char *targets(enum target to, bool from_bin)
{
	const char *names[LP_FORM_COUNT + 16];
	size_t n = 0;
	target_names(to, from_bin, names, &n);
	return lp_name_list(names, n);
}

/* --to name among the names of kind to: rq's output form set. */
static bool take_target(const char *name, enum target to, convert_request *rq)
{
	const char *names[LP_FORM_COUNT + 16];
	size_t n = 0;
	target_names(to, rq->from_bin, names, &n);
	if (!listed(names, n, name))
		return false;
	rq->to = (enum lp_ref_format)lp_ref_format_parse(name);
	rq->form = to == TO_STREAM ? (enum lp_form)lp_form_parse(name) : LP_FORM_BASIC;
	rq->to_task_bin = !strcmp(name, lp_format_of(LP_FORMAT_TASK_BIN)->name);
	return true;
}

/* The options as given. */
typedef struct convert_options {
	gchar *from, *to, *ref_format, *endian, *output, *compress, *level;
	gboolean strict, wide, narrow;
	char *ref_forms; /* --ref-format's names */
	char *names;     /* --from's */
} convert_options;

/* rq and the input's format (NULL: found by content, as the input is
 * opened) from the options; false after a usage message. */
static bool check_options(const convert_options *o, convert_request *rq, const lp_format **source)
{
	if (!o->to) {
		char *all = targets(TO_KINDS, false);
		cli_usage_error("--to is required (%s)", all);
		g_free(all);
		return false;
	}
	if (!take_target(o->to, TO_KINDS, rq)) {
		char *all = targets(TO_KINDS, false);
		cli_usage_error("--to must be %s, not '%s'", all, o->to);
		g_free(all);
		return false;
	}
	/* --from bin: a basic merge stream that must be in the bin form. */
	rq->from_bin = o->from && !strcmp(o->from, "bin");
	if (o->from && !(*source = lp_format_find(rq->from_bin ? "basic" : o->from)))
		return !cli_usage_error("--from must be %s, not '%s'", o->names, o->from);
	/* --ref-format says the input is a raw reference trace. */
	if (!o->from && o->ref_format)
		*source = lp_format_find("ref");
	if (o->wide && o->narrow)
		return !cli_usage_error("--wide and --narrow cannot both be given");
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

/* --to and --wide or --narrow for the input's format (detected when
 * src is given: the messages then name the input); rq's output form set.
 * false after a usage message. */
static bool check_target(const convert_options *o, convert_request *rq, const lp_format *source,
			 const lp_byte_source *src)
{
	enum target to = converter_of(source).to;
	if (!take_target(o->to, to, rq)) {
		char *names = targets(to, rq->from_bin);
		if (src)
			cli_usage_error("%s holds %s: it converts only --to %s (give --from if not)",
					lp_byte_source_name(src), source->what, names);
		else
			cli_usage_error("--from %s converts only --to %s", o->from, names);
		g_free(names);
		return false;
	}
	if ((o->wide || o->narrow) && to != TO_REFS) {
		char *names = targets(TO_REFS, false);
		cli_usage_error("--%s converts only to raw references (--to %s)",
				o->wide ? "wide" : "narrow", names);
		g_free(names);
		return false;
	}
	return true;
}

/* Open the input, find its format by content unless given, check --to
 * against it and convert: 0, a status with err set, or LP_EUSAGE after a
 * usage message (err's message empty). */
static int convert(const convert_options *o, convert_request *rq, const lp_format *source,
		   lp_error *err)
{
	if (source && !check_target(o, rq, source, NULL))
		return LP_EUSAGE;
	lp_byte_source *src = lp_byte_source_open(rq->input, err);
	if (!src)
		return err->status;
	if (!source) {
		bool failed;
		source = lp_format_detect(src, &failed, err);
		if (failed) {
			lp_byte_source_close(src);
			return err->status;
		}
		if (!source) /* any bytes are a raw reference trace's 32-bit binary form */
			source = lp_format_find("ref");
		if (!check_target(o, rq, source, src)) {
			lp_byte_source_close(src);
			return LP_EUSAGE;
		}
	}
	return converter_of(source).run(rq, source, src, err);
}

int cmd_convert(int argc, char **argv)
{
	cli_set_command("laplace convert");
	convert_options o = {.ref_forms = lp_ref_format_names(), .names = lp_format_names("bin")};
	char *ref_format_help = g_strdup_printf("Form of the reference input: %s (default); the "
						"input says which width", o.ref_forms);
	char *from_help = g_strdup_printf("Input format: %s (default: found by content, else ref, a "
					  "raw reference trace; bin: a basic merge stream in its bin "
					  "form)", o.names);
	char *to_refs = targets(TO_REFS, false), *to_basic = targets(TO_BASIC_TEXT, false),
	     *to_stream = targets(TO_STREAM, false), *to_task = targets(TO_TASK, false);
	char *to_help = g_strdup_printf("Output form (required): %s for a raw reference, BYU or p6 "
					"trace; %s for page-image input; %s for a basic stream or "
					"an oracle-general trace; %s for task files", to_refs,
					to_basic, to_stream, to_task);
	GOptionEntry entries[] = {
		{"to", 0, 0, G_OPTION_ARG_STRING, &o.to, to_help, "FORM"},
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
		"  laplace convert --to bin --wide -o trace64.bin trace.bin\n"
		"  laplace convert --to oracle-general -o trace.oracleGeneral merged.bin\n");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_sync_option(ctx);
	cli_add_quiet_option(ctx);

	int rc = LP_EUSAGE;
	convert_request rq = {.ref_format = LP_REF_AUTO, .endian = LP_LITTLE,
			      .compress = LP_COMPRESS_AUTO};
	const lp_format *source = NULL;
	lp_error err = {0};
	if (cli_parse_one_input(ctx, &argc, &argv) && check_options(&o, &rq, &source)) {
		rq.input = argv[1];
		const char *inputs[] = {rq.input}, *outputs[] = {rq.output ? rq.output : "-"};
		rc = lp_check_outputs(inputs, 1, outputs, 1, &err);
		if (!rc)
			rc = convert(&o, &rq, source, &err);
		if (rc && err.msg[0]) /* else convert printed its usage error */
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
	g_free(to_help);
	g_free(to_refs);
	g_free(to_basic);
	g_free(to_stream);
	g_free(to_task);
	return rc;
}
