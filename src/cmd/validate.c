/* laplace validate: check every rule of a page-image trace. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "formats/legacy.h"

/* Standard output, through the lp_output every command writes with; the
 * first write failure is kept and ends the run with status 3. */
typedef struct report_out {
	lp_output *out;
	int status;
	lp_error err;
} report_out;

static void print_problem(void *ctx, const char *msg)
{
	report_out *r = ctx;
	if (r->status)
		return;
	if (!(r->status = lp_output_write(r->out, msg, strlen(msg), &r->err)))
		r->status = lp_output_write(r->out, "\n", 1, &r->err);
}

int cmd_validate(int argc, char **argv)
{
	cli_set_command("laplace validate");
	gchar *format = NULL;
	GOptionEntry entries[] = {
		{"format", 'f', 0, G_OPTION_ARG_STRING, &format,
		 "Input format: page-image (the only one, and the default)", "FORMAT"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("FILE");
	g_option_context_set_summary(ctx,
		"Check a page-image LRU behaviour sequence: print one line per broken\n"
		"rule (file, record index, field, what is wrong), then a summary with\n"
		"the memory size M. Exit status 2 when any rule is broken. FILE may be\n"
		"'-' and may be gzip or zstd compressed. See laplace-validate(1).");
	g_option_context_add_main_entries(ctx, entries, NULL);

	int rc = LP_EUSAGE;
	lp_error err = {0};
	if (!cli_parse_one_input(ctx, &argc, &argv))
		goto out;
	if (format && strcmp(format, "page-image")) {
		cli_usage_error("--format must be page-image, not '%s'", format);
		goto out;
	}
	lp_byte_source *src = lp_byte_source_open(argv[1], &err);
	if (!src) {
		rc = cli_fail(&err);
		goto out;
	}
	char *name = g_strdup(lp_byte_source_name(src));
	report_out r = {.out = lp_output_open(NULL, LP_COMPRESS_NONE, &err)};
	if (!r.out) {
		lp_byte_source_close(src);
		rc = cli_fail(&err);
		g_free(name);
		goto out;
	}
	lp_pi_validation res;
	rc = lp_pi_validate(src, print_problem, &r, &res, &err);
	if (rc == 0) {
		char *summary = g_strdup_printf("%s: %" PRIu64 " record%s, memory of %s%" PRIu64
						" page%s, %" PRIu64 " broken rule%s",
						name, res.records, res.records == 1 ? "" : "s",
						res.evicted ? "" : "at least ", res.fills,
						res.fills == 1 ? "" : "s", res.problems,
						res.problems == 1 ? "" : "s");
		print_problem(&r, summary);
		g_free(summary);
	}
	if (r.status) {
		lp_output_abort(r.out);
		rc = cli_fail(&r.err);
	} else if (rc) {
		/* the broken rules found before the read failed, no summary */
		lp_error ignored;
		lp_output_commit(r.out, &ignored);
		cli_fail(&err);
	} else if ((rc = lp_output_commit(r.out, &err))) {
		cli_fail(&err);
	} else {
		rc = res.problems ? LP_EINPUT : 0;
	}
	g_free(name);
out:
	g_option_context_free(ctx);
	g_free(format);
	return rc;
}
