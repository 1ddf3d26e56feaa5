/* laplace record: a capture of a real program's run (record.md), made by
 * the recorder's front end (src/record/record.h). */
#include <inttypes.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/table.h"
#include "core/record.h"
#include "record/record.h"

/* The summary on stderr: what the capture holds, and what it cost. */
static void print_summary(const lp_record_result *res)
{
	const lp_record_summary *sum = &res->sum;
	uint64_t refs = 0, events = 0;
	for (const char *t = lp_ref_types; *t; t++)
		refs += sum->refs[(uint8_t)*t];
	for (const char *t = lp_tag_chars; *t; t++)
		events += sum->events[(uint8_t)*t];
	cli_table *t = cli_table_new();
	cli_table_note(t, "%s: wrote %s and %s, recorded by laplace-record %s (a Valgrind tool)",
		       cli_command(), res->ref_path, res->kern_path, LP_RECORD_TOOL_VERSION);
	if (res->cpus_allowed > 0) {
		cli_table_row(t, "processor");
		if (res->cpus_allowed > 1)
			cli_table_text(t, "%u (the least loaded of %u allowed)", res->cpu, res->cpus_allowed);
		else
			cli_table_text(t, "%u (the only one allowed)", res->cpu);
	}
	cli_table_row(t, "processes");
	cli_table_count(t, sum->processes);
	cli_table_row(t, "tasks");
	cli_table_count(t, sum->tasks);
	cli_table_row(t, "references");
	cli_table_count(t, refs);
	for (const char *type = "irwRW"; *type; type++) {
		cli_table_row(t, "  %c", *type);
		cli_table_share(t, sum->refs[(uint8_t)*type], refs);
	}
	cli_table_row(t, "events");
	cli_table_count(t, events);
	for (const char *tag = lp_tag_chars; *tag; tag++)
		if (sum->events[(uint8_t)*tag]) {
			cli_table_row(t, "  %c", *tag);
			cli_table_count(t, sum->events[(uint8_t)*tag]);
		}
	cli_table_row(t, "torn records");
	cli_table_text(t, "%" PRIu64 " (%" PRIu64 " bytes dropped)", sum->torn_records, sum->torn_bytes);
	cli_table_row(t, "bytes a reference");
	cli_table_text(t, "%.2f", refs ? (double)res->bytes / (double)refs : 0.0);
	cli_table_row(t, "wall time");
	cli_table_text(t, "%.2f s", res->wall_seconds);
	GString *out = g_string_new(NULL);
	cli_table_finish(t, out);
	fputs(out->str, stderr);
	g_string_free(out, TRUE);
}

int cmd_record(int argc, char **argv)
{
	cli_set_command("laplace record");
	gchar *prefix = NULL, *compress = NULL;
	gboolean force = FALSE;
	GOptionEntry entries[] = {
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &prefix,
		 "Write PREFIX.ref.zst and PREFIX.kern (default: capture)", "PREFIX"},
		{"force", 0, 0, G_OPTION_ARG_NONE, &force, "Replace outputs that exist", NULL},
		{"compress", 0, 0, G_OPTION_ARG_STRING, &compress,
		 "zstd (default: PREFIX.ref.zst) or none (PREFIX.ref)", "METHOD"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("[--] COMMAND [ARG...]");
	g_option_context_set_summary(ctx,
		"Run COMMAND under the recorder (a Valgrind tool) and write a capture of its\n"
		"run: every memory reference of it and of every process and thread it starts\n"
		"(the 64-bit binary raw reference trace), and the kernel events that change\n"
		"their address spaces (the kernel event trace). Exits with the command's\n"
		"status. See laplace-record(1).");
	g_option_context_set_description(ctx,
		"Example:\n"
		"  laplace record -o build -- make -j2\n"
		"  laplace merge --strict --per-process build.d build.ref.zst build.kern\n");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_quiet_option(ctx);
	/* Options end at the command: its own are its. */
	g_option_context_set_strict_posix(ctx, TRUE);

	int rc = LP_EUSAGE;
	lp_error err = {0};
	lp_record_result res = {0};
	lp_record_request rq = {.prefix = "capture", .compress = LP_COMPRESS_ZSTD};
	if (!cli_parse(ctx, &argc, &argv))
		goto out;
	int first = 1; /* cli_parse dropped the "--" before COMMAND */
	if (first >= argc) {
		cli_usage_error("no COMMAND to record");
		goto out;
	}
	if (compress) {
		int c = lp_compress_parse(compress);
		if (c != LP_COMPRESS_ZSTD && c != LP_COMPRESS_NONE) {
			cli_usage_error("--compress must be zstd or none, not '%s'", compress);
			goto out;
		}
		rq.compress = (enum lp_compress)c;
	}
	if (prefix && (!*prefix || g_str_has_suffix(prefix, "/"))) {
		cli_usage_error("-o PREFIX must end in a name (the outputs are PREFIX.ref.zst and "
				"PREFIX.kern), not '%s'", prefix);
		goto out;
	}
	if (prefix)
		rq.prefix = prefix;
	rq.force = force;
	rq.argv = argv + first;
	rc = lp_record_run(&rq, &res, &err);
	if (rc) {
		cli_fail(&err);
		goto out;
	}
	for (guint i = 0; i < res.sum.untraced->len; i++) {
		char *msg = g_strdup_printf("%s ran untraced (set-user-id, set-group-id, with "
					    "capabilities or 32-bit): its references are not in the "
					    "capture",
					    (char *)g_ptr_array_index(res.sum.untraced, i));
		cli_warn(NULL, msg);
		g_free(msg);
	}
	GPtrArray *lines[] = {res.sum.torn, res.sum.limits};
	for (size_t k = 0; k < G_N_ELEMENTS(lines); k++)
		for (guint i = 0; i < lines[k]->len; i++)
			cli_warn(NULL, g_ptr_array_index(lines[k], i));
	if (res.interrupted)
		cli_warn(NULL, "the command was interrupted: the capture holds what ran until then");
	if (res.sigint_elsewhere) {
		char *sender = res.sigint_sender > 0 ? g_strdup_printf(" from process %d", (int)res.sigint_sender)
						     : g_strdup("");
		char *msg = g_strdup_printf("SIGINT%s, not from the terminal, did not end the "
					    "command (exit status %d): the capture holds its whole run",
					    sender, res.command_status);
		cli_warn(NULL, msg);
		g_free(msg);
		g_free(sender);
	}
	if (!cli_quiet())
		print_summary(&res);
	rc = res.command_status;
out:
	lp_record_result_clear(&res);
	g_option_context_free(ctx);
	g_free(prefix);
	g_free(compress);
	return rc;
}
