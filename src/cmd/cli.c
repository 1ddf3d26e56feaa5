#include "cmd/cli.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "io/staging.h"
#include "formats/refio.h"
#include "formats/registry.h"
#include "io/taskcodec.h"
#include "core/numbers.h"
#include "jobs/pool.h"
#include "cmd/table.h"

static const char *command_name = "laplace";
static gboolean no_sync, quiet;

void cli_add_sync_option(GOptionContext *ctx)
{
	static const GOptionEntry entries[] = {
		{"no-sync", 0, 0, G_OPTION_ARG_NONE, &no_sync,
		 "Do not flush outputs to disk before putting them in place (faster; a power "
		 "cut may then lose them)", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	g_option_context_add_main_entries(ctx, entries, NULL);
}

void cli_add_quiet_option(GOptionContext *ctx)
{
	static const GOptionEntry entries[] = {
		{"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet,
		 "Print no progress or summary on standard error (errors and warnings still)", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	g_option_context_add_main_entries(ctx, entries, NULL);
}

bool cli_quiet(void) { return quiet; }

void cli_set_command(const char *name)
{
	command_name = name;
	g_set_prgname(name); /* GOption's usage line names the command */
}
const char *cli_command(void) { return command_name; }

/* argv with each -jN split into -j and N, as getopt would take it (GLib
 * takes a short option's value only as the next argument). Options end at
 * "--", and under strict POSIX at the first argument that is no option:
 * what follows is not ours (laplace record -- make -j2). The new vector is
 * kept for the life of the process, as argv is. */
static char **split_attached_threads(GOptionContext *ctx, int *argc, char **argv)
{
	/* What was made, vectors and strings: parsing drops the strings it
	 * takes from the vector, and they stay in reach here. */
	static GPtrArray *kept;
	bool posix = g_option_context_get_strict_posix(ctx), options = true;
	GPtrArray *out = NULL;
	for (int i = 0; i < *argc; i++) {
		const char *a = argv[i];
		if (i > 0 && options && (!strcmp(a, "--") || (posix && a[0] != '-')))
			options = false;
		bool attached = i > 0 && options && !strncmp(a, "-j", 2) && a[2];
		if (attached && !out) {
			out = g_ptr_array_new();
			for (int k = 0; k < i; k++)
				g_ptr_array_add(out, argv[k]);
		}
		if (attached) {
			if (!kept)
				kept = g_ptr_array_new();
			g_ptr_array_add(kept, g_strdup("-j"));
			g_ptr_array_add(out, kept->pdata[kept->len - 1]);
			g_ptr_array_add(kept, g_strdup(a + 2));
			g_ptr_array_add(out, kept->pdata[kept->len - 1]);
		} else if (out)
			g_ptr_array_add(out, argv[i]);
	}
	if (!out)
		return argv;
	*argc = (int)out->len;
	g_ptr_array_add(out, NULL);
	g_ptr_array_add(kept, out);
	return (char **)out->pdata;
}

/* The arguments that are not options, collected by GLib as
 * G_OPTION_REMAINING: that way "--" ends the options and is dropped
 * wherever it is (left alone, GLib keeps it among the arguments when one
 * after it starts with '-'). Kept for the life of the process, as argv. */
static gchar **operands;

bool cli_parse(GOptionContext *ctx, int *argc, char ***argv)
{
	const GOptionEntry rest[] = {
		{G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &operands, NULL, NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	g_option_context_add_main_entries(ctx, rest, NULL);
	GError *gerr = NULL;
	*argv = split_attached_threads(ctx, argc, *argv);
	if (g_option_context_parse(ctx, argc, argv, &gerr)) {
		lp_stage_set_sync(!no_sync);
		/* argv[0], then the operands */
		static GPtrArray *args;
		if (!args)
			args = g_ptr_array_new();
		g_ptr_array_set_size(args, 0);
		g_ptr_array_add(args, (*argv)[0]);
		for (gchar **op = operands; op && *op; op++)
			g_ptr_array_add(args, *op);
		*argc = (int)args->len;
		g_ptr_array_add(args, NULL);
		*argv = (char **)args->pdata;
		return true;
	}
	cli_usage_error("%s", gerr->message);
	g_error_free(gerr);
	return false;
}

bool cli_parse_one_input(GOptionContext *ctx, int *argc, char ***argv)
{
	if (!cli_parse(ctx, argc, argv))
		return false;
	if (*argc != 2) {
		cli_usage_error("expected one input, got %d", *argc - 1);
		return false;
	}
	return true;
}

bool cli_decimal_apply(const char *name, const char *text, uint64_t min, uint64_t max,
		       uint64_t *value)
{
	if (!text)
		return true;
	if (lp_parse_decimal(text, min, max, value))
		return true;
	/* Which bound it misses, if it is a number at all. */
	bool negative = text[0] == '-';
	const char *digits = text + negative;
	GError *gerr = NULL;
	guint64 magnitude;
	bool number = g_ascii_isdigit(digits[0]) &&
		      (g_ascii_string_to_unsigned(digits, 10, 0, G_MAXUINT64, &magnitude, &gerr) ||
		       g_error_matches(gerr, G_NUMBER_PARSER_ERROR,
				       G_NUMBER_PARSER_ERROR_OUT_OF_BOUNDS)); /* past 64 bits */
	g_clear_error(&gerr);
	if (!number)
		cli_usage_error("%s must be a whole number, not '%s'", name, text);
	else if (negative && min == 0)
		cli_usage_error("%s must not be negative, not %s", name, text);
	else if (min == 0)
		cli_usage_error("%s is out of range (at most %" PRIu64 "), not %s", name, max, text);
	else if (max == UINT64_MAX)
		cli_usage_error("%s is out of range (at least %" PRIu64 "), not %s", name, min, text);
	else
		cli_usage_error("%s is out of range (%" PRIu64 " to %" PRIu64 "), not %s", name, min,
				max, text);
	return false;
}

bool cli_count_apply(const char *name, const char *text, int min, int max, int *value)
{
	uint64_t v;
	if (!text)
		return true;
	if (!cli_decimal_apply(name, text, (uint64_t)min, (uint64_t)max, &v))
		return false;
	*value = (int)v;
	return true;
}

bool cli_threads_apply(const char *text, unsigned *threads)
{
	int given = 0;
	if (!cli_count_apply("-j", text, 1, G_MAXINT, &given))
		return false;
	*threads = text ? (unsigned)given : g_get_num_processors();
	return true;
}

bool cli_max_running_apply(const char *text, size_t *max_running)
{
	int given = 0;
	if (!cli_count_apply("-j", text, 1, G_MAXINT, &given))
		return false;
	*max_running = text ? (size_t)given : lp_job_pool_default_max_running();
	return true;
}

bool cli_form_apply(const char *text, bool with_addresses, enum lp_form *form)
{
	if (!text)
		return true;
	int found = lp_form_parse(text);
	if (found >= 0 && (with_addresses || !lp_stream_forms[found].addresses)) {
		*form = (enum lp_form)found;
		return true;
	}
	char *forms = lp_form_names_list(with_addresses);
	cli_usage_error("--format must be %s, not '%s'", forms, text);
	g_free(forms);
	return false;
}

bool cli_shard_apply(const char *text, size_t *k, size_t *n)
{
	const char *slash = text ? strchr(text, '/') : NULL;
	if (!text)
		return true;
	char *first = slash ? g_strndup(text, (size_t)(slash - text)) : NULL;
	uint64_t a, b;
	bool ok = slash && lp_parse_decimal(first, 0, SIZE_MAX, &a) &&
		  lp_parse_decimal(slash + 1, 1, SIZE_MAX, &b) && a < b;
	g_free(first);
	if (!ok) {
		cli_usage_error("--shard must be K/N with 0 <= K < N, not '%s'", text);
		return false;
	}
	*k = (size_t)a;
	*n = (size_t)b;
	return true;
}

bool cli_level_apply(const char *text, const char *output, enum lp_compress compress,
		     int *level)
{
	*level = LP_LEVEL_DEFAULT;
	if (!text)
		return true;
	gint64 v;
	GError *gerr = NULL;
	if (!g_ascii_string_to_signed(text, 10, G_MININT64, G_MAXINT64, &v, &gerr)) {
		/* a number past 64 bits is out of every codec's range, below */
		bool number = g_error_matches(gerr, G_NUMBER_PARSER_ERROR,
					      G_NUMBER_PARSER_ERROR_OUT_OF_BOUNDS);
		g_error_free(gerr);
		if (!number) {
			cli_usage_error("--level must be a number, not '%s'", text);
			return false;
		}
		v = text[0] == '-' ? G_MININT64 : G_MAXINT64;
	}
	enum lp_compress codec = lp_compress_for(output, compress);
	int lowest, highest;
	if (!lp_compress_levels(codec, &lowest, &highest)) {
		cli_usage_error("--level goes with a compressed output (gzip or zstd)");
		return false;
	}
	const char *name = codec == LP_COMPRESS_GZIP ? "gzip" : "zstd";
	/* zstd's negative levels are its fast modes; its 0 would mean 3. */
	if (lowest < 0 && (v == 0 || v < lowest || v > highest)) {
		cli_usage_error("--level must be %d to -1 or 1 to %d for %s, not %s", lowest, highest,
				name, text);
		return false;
	}
	if (v < lowest || v > highest) {
		cli_usage_error("--level must be %d to %d for %s, not %s", lowest, highest, name, text);
		return false;
	}
	*level = (int)v;
	return true;
}

/* A decimal fraction 0 < R <= 1 (digits, a point, an exponent: no hex,
 * no inf). */
static bool parse_rate(const char *text, double *rate)
{
	char *end;
	if (!text[0] || text[strspn(text, "0123456789.eE+-")])
		return false;
	*rate = g_ascii_strtod(text, &end);
	return !*end && *rate > 0 && *rate <= 1;
}

bool cli_sample_apply(const char *rate_text, const char *pages_text, double *rate,
		      uint64_t *pages)
{
	if (rate_text && pages_text) {
		cli_usage_error("--sample-rate and --sample-pages cannot both be given");
		return false;
	}
	if (rate_text && !parse_rate(rate_text, rate)) {
		cli_usage_error("--sample-rate must be a decimal number above 0 and at most 1, "
				"not '%s'", rate_text);
		return false;
	}
	return cli_decimal_apply("--sample-pages", pages_text, 1, UINT32_MAX - 1, pages);
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", command_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", command_name);
	return LP_EUSAGE;
}

int cli_fail(const lp_error *err)
{
	fprintf(stderr, "%s: %s\n", command_name, err->msg);
	return err->status ? err->status : LP_EIO;
}

void cli_warn(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "%s: warning: %s\n", command_name, msg);
}

GOptionEntry cli_strict_entry(gboolean *strict)
{
	return (GOptionEntry){"strict", 0, 0, G_OPTION_ARG_NONE, strict,
			      "Treat a torn last record as an error, not a warning (in a basic "
			      "stream it always is)", NULL};
}

void cli_capture_add_options(cli_capture *c, GOptionContext *ctx)
{
	char *forms = lp_ref_format_names();
	c->ref_format_help = g_strdup_printf("Reference trace form: %s (default)", forms);
	g_free(forms);
	const GOptionEntry entries[] = {
		{"ref-format", 0, 0, G_OPTION_ARG_STRING, &c->ref_format, c->ref_format_help, "FORMAT"},
		{"endian", 0, 0, G_OPTION_ARG_STRING, &c->endian,
		 "Byte order of binary references: little (default) or big", "ORDER"},
		{"page-offset", 0, 0, G_OPTION_ARG_STRING, &c->page_offset,
		 "Start of kernel memory, hex (default c0000000, or ffff888000000000 in a "
		 "64-bit capture)", "HEX"},
		cli_strict_entry(&c->strict),
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	memcpy(c->entries, entries, sizeof entries);
	g_option_context_add_main_entries(ctx, c->entries, NULL);
}

bool cli_capture_given(const cli_capture *c)
{
	return c->ref_format || c->endian || c->page_offset || c->strict;
}

bool cli_capture_stream_check(const cli_capture *c)
{
	if (!c->ref_format && !c->endian && !c->page_offset)
		return true;
	cli_usage_error("--ref-format, --endian and --page-offset go with a capture (REF KERN)");
	return false;
}

bool cli_capture_apply(const cli_capture *c, const char *ref, const char *kern, lp_merge_job *job)
{
	if (!strcmp(ref, "-") && !strcmp(kern, "-")) {
		cli_usage_error("REF and KERN cannot both be standard input");
		return false;
	}
	if (c->ref_format && (int)(job->ref_format = lp_ref_format_parse(c->ref_format)) < 0) {
		char *forms = lp_ref_format_names();
		cli_usage_error("--ref-format must be %s, not '%s'", forms, c->ref_format);
		g_free(forms);
		return false;
	}
	if (c->endian && (int)(job->endian = lp_endian_parse(c->endian)) < 0) {
		cli_usage_error("--endian must be little or big, not '%s'", c->endian);
		return false;
	}
	int hex = c->page_offset ? lp_parse_hex(c->page_offset, strlen(c->page_offset),
						&job->page_offset) : 0;
	if (hex) {
		cli_usage_error(hex == LP_HEX_OVERFLOW ? "--page-offset is out of range (at most 64 "
							 "bits), not '%s'"
						       : "--page-offset must be a hex number, not '%s'",
				c->page_offset);
		return false;
	}
	job->page_offset_set = c->page_offset != NULL;
	job->reference = ref;
	job->kernel = kern;
	job->strict = c->strict;
	job->warn = cli_warn;
	return true;
}

void cli_capture_free(cli_capture *c)
{
	g_free(c->ref_format);
	g_free(c->endian);
	g_free(c->page_offset);
	g_free(c->ref_format_help);
}

int cli_trace_load(const char *path, const lp_merge_job *capture, unsigned flags,
		   const lp_progress *progress, lp_trace *t, lp_error *err)
{
	if (!capture)
		return lp_trace_load(t, path, flags, progress, err);
	lp_capture_options opt;
	lp_capture_options_init(&opt);
	opt.ref_format = capture->ref_format;
	opt.endian = capture->endian;
	if (capture->page_offset_set)
		opt.page_offset = capture->page_offset;
	opt.user_only = flags & LP_TRACE_USER_ONLY;
	opt.strict = capture->strict;
	opt.warn = capture->warn;
	opt.warn_ctx = capture->warn_ctx;
	lp_capture *c = lp_capture_open(capture->reference, capture->kernel, &opt, err);
	if (!c)
		return err->status;
	enum { BATCH = 4096 };
	lp_merged_ref *batch = g_new(lp_merged_ref, BATCH);
	lp_trace_init(t, flags);
	ssize_t got;
	int rc = 0;
	uint64_t read = 0;
	while (!rc && (got = lp_capture_read(c, batch, BATCH, err)) > 0) {
		for (ssize_t k = 0; k < got && !rc; k++)
			if ((rc = lp_trace_add(t, batch[k].type, batch[k].canonical, err)))
				lp_trace_name_failure(path, err);
		lp_progress_records(progress, read += (uint64_t)got);
	}
	if (!rc && got < 0)
		rc = err->status;
	g_free(batch);
	lp_capture_close(c);
	if (rc)
		lp_trace_clear(t);
	else
		lp_trace_done(t);
	return rc;
}

void cli_print_stats(GString *to, const lp_stats *st)
{
	cli_table *t = cli_table_new();
	uint64_t refs = lp_stats_total_refs(st);
	cli_table_row(t, "references");
	cli_table_count(t, refs);
	for (int i = 0; i < 6; i++) {
		cli_table_row(t, "  %s (%c)", lp_ref_type_words[i], lp_ref_types[i]);
		cli_table_share(t, st->refs[i], refs);
	}
	uint64_t events = 0;
	for (int k = 0; k < LP_TAG_COUNT; k++)
		events += st->events[k];
	cli_table_row(t, "kernel events");
	cli_table_count(t, events);
	for (int k = 0; k < LP_TAG_COUNT; k++) {
		if (!st->events[k])
			continue;
		cli_table_row(t, "  %s (%c)", lp_tag_words[k], lp_tag_chars[k]);
		cli_table_share(t, st->events[k], events);
	}
	if (!events) {
		cli_table_note(t, "  none, as in a legacy trace: with no regions, %s%"
			       G_GUINT64_FORMAT " vas is", st->orphan_spaces == 1 ? "the " : "each of the ",
			       st->orphan_spaces);
		cli_table_note(t, "  an address space of its own and %s%" G_GUINT64_FORMAT
			       " user page%s private to it", st->unmapped_pages == 1 ? "the " : "each of the ",
			       st->unmapped_pages, st->unmapped_pages == 1 ? " is" : "s is");
	}
	uint64_t pages = lp_stats_total_pages(st);
	cli_table_row(t, "canonical pages");
	cli_table_count(t, pages);
	for (int k = 0; k < LP_PAGE_KIND_COUNT; k++) {
		cli_table_row(t, "  %s", lp_page_kind_words[k]);
		cli_table_share(t, st->pages[k], pages);
	}
	cli_table_row(t, "copy-on-write copies");
	cli_table_count(t, st->cow_copies);
	/* Without kernel events (a legacy trace merged with an empty kernel
	 * trace) there are no regions: every vas is an orphan space and every
	 * user page unmapped, which is expected, not a problem to chase. */
	if (events) {
		cli_table_row(t, "unmapped pages");
		cli_table_count(t, st->unmapped_pages);
		cli_table_row(t, "orphan address spaces");
		cli_table_count(t, st->orphan_spaces);
	}
	cli_table_row(t, "mismatches");
	cli_table_count(t, st->mismatches);
	cli_table_row(t, "warnings");
	cli_table_count(t, st->warnings);
	cli_table_finish(t, to);
}
