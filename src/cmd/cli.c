#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "laplace/staging.h"
#include "laplace/numbers.h"

static const char *command_name = "laplace";
static gboolean no_sync;

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

void cli_set_command(const char *name)
{
	command_name = name;
	g_set_prgname(name); /* GOption's usage line names the command */
}
const char *cli_command(void) { return command_name; }

bool cli_parse(GOptionContext *ctx, int *argc, char ***argv)
{
	GError *gerr = NULL;
	if (g_option_context_parse(ctx, argc, argv, &gerr)) {
		lp_stage_set_sync(!no_sync);
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

bool cli_level_apply(const char *text, const char *output, enum lp_compress compress,
		     int *level)
{
	*level = LP_LEVEL_DEFAULT;
	if (!text)
		return true;
	gint64 v;
	if (!g_ascii_string_to_signed(text, 10, G_MININT, G_MAXINT, &v, NULL)) {
		cli_usage_error("--level must be a number, not '%s'", text);
		return false;
	}
	enum lp_compress codec = lp_compress_for(output, compress);
	int lowest, highest;
	if (!lp_compress_levels(codec, &lowest, &highest)) {
		cli_usage_error("--level goes with a compressed output (gzip or zstd)");
		return false;
	}
	if (v < lowest || v > highest) {
		cli_usage_error("--level must be %d to %d for %s, not %s", lowest, highest,
				codec == LP_COMPRESS_GZIP ? "gzip" : "zstd", text);
		return false;
	}
	*level = (int)v;
	return true;
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

void cli_capture_add_options(cli_capture *c, GOptionContext *ctx)
{
	const GOptionEntry entries[] = {
		{"ref-format", 0, 0, G_OPTION_ARG_STRING, &c->ref_format,
		 "Reference trace form: bin, text or auto (default)", "FORMAT"},
		{"endian", 0, 0, G_OPTION_ARG_STRING, &c->endian,
		 "Byte order of binary references: little (default) or big", "ORDER"},
		{"page-offset", 0, 0, G_OPTION_ARG_STRING, &c->page_offset,
		 "Start of kernel memory, hex (default c0000000)", "HEX"},
		{"strict", 0, 0, G_OPTION_ARG_NONE, &c->strict,
		 "Treat a torn last reference record as an error", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	memcpy(c->entries, entries, sizeof entries);
	g_option_context_add_main_entries(ctx, c->entries, NULL);
}

bool cli_capture_given(const cli_capture *c)
{
	return c->ref_format || c->endian || c->page_offset || c->strict;
}

bool cli_capture_apply(const cli_capture *c, const char *ref, const char *kern, lp_merge_job *job)
{
	if (!strcmp(ref, "-") && !strcmp(kern, "-")) {
		cli_usage_error("REF and KERN cannot both be standard input");
		return false;
	}
	if (c->ref_format && (int)(job->ref_format = lp_ref_format_parse(c->ref_format)) < 0) {
		cli_usage_error("--ref-format must be bin, text or auto, not '%s'", c->ref_format);
		return false;
	}
	if (c->endian && (int)(job->endian = lp_endian_parse(c->endian)) < 0) {
		cli_usage_error("--endian must be little or big, not '%s'", c->endian);
		return false;
	}
	if (c->page_offset && lp_parse_hex(c->page_offset, strlen(c->page_offset), &job->page_offset)) {
		cli_usage_error("--page-offset must be a hex number, not '%s'", c->page_offset);
		return false;
	}
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
}

void cli_print_stats(FILE *to, const lp_stats *st)
{
	fprintf(to, "references: %" G_GUINT64_FORMAT, lp_stats_total_refs(st));
	for (int i = 0; i < 6; i++)
		fprintf(to, " %c=%" G_GUINT64_FORMAT, lp_ref_types[i], st->refs[i]);
	uint64_t nev = 0;
	for (int t = 0; t < LP_TAG_COUNT; t++)
		nev += st->events[t];
	fprintf(to, "\nevents: %" G_GUINT64_FORMAT, nev);
	for (int t = 0; t < LP_TAG_COUNT; t++)
		if (st->events[t])
			fprintf(to, " %c=%" G_GUINT64_FORMAT, lp_tag_chars[t], st->events[t]);
	fprintf(to, "\ncanonical pages: %" G_GUINT64_FORMAT, lp_stats_total_pages(st));
	for (int k = 0; k < LP_PAGE_KIND_COUNT; k++)
		fprintf(to, " %s=%" G_GUINT64_FORMAT, lp_page_kind_names[k], st->pages[k]);
	fprintf(to, "\ncow copies: %" G_GUINT64_FORMAT ", unmapped pages: %" G_GUINT64_FORMAT
		    ", orphan spaces: %" G_GUINT64_FORMAT ", mismatches: %" G_GUINT64_FORMAT
		    ", warnings: %" G_GUINT64_FORMAT "\n",
		st->cow_copies, st->unmapped_pages, st->orphan_spaces, st->mismatches, st->warnings);
	/* A legacy trace merged with an empty kernel trace: every user page is
	 * outside any region, which is expected, not a problem to chase. */
	if (nev == 0 && st->unmapped_pages)
		fprintf(to, "no kernel events: a trace without them (a legacy trace, say) has no "
			    "regions, so each of its %" G_GUINT64_FORMAT " user pages is private "
			    "to its address space and counted as unmapped\n", st->unmapped_pages);
}
