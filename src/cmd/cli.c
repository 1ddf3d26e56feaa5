#include "cli.h"

#include <stdarg.h>
#include <stdio.h>

static const char *command_name = "laplace";

void cli_set_command(const char *name) { command_name = name; }
const char *cli_command(void) { return command_name; }

bool cli_parse(GOptionContext *ctx, int *argc, char ***argv)
{
	GError *gerr = NULL;
	if (g_option_context_parse(ctx, argc, argv, &gerr))
		return true;
	cli_usage_error("%s", gerr->message);
	g_error_free(gerr);
	return false;
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
}
