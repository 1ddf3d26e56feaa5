/* What every subcommand shares: option parsing, messages, exit statuses. */
#ifndef LAPLACE_CLI_H
#define LAPLACE_CLI_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/error.h"
#include "analysis/trace.h"
#include "io/io.h"
#include "pipeline/job.h"
#include "core/merge.h"
#include "formats/forms.h"

/* Name used in messages: "laplace merge". Set once by each command. */
void cli_set_command(const char *name);
const char *cli_command(void);

/* Add --no-sync, for commands that write files: outputs are then not
 * flushed to disk before they are put in place. */
void cli_add_sync_option(GOptionContext *ctx);
/* Add -q, --quiet, for commands that print progress or a summary on
 * standard error; cli_quiet() says whether it was given. */
void cli_add_quiet_option(GOptionContext *ctx);
bool cli_quiet(void);
/* Parse options (and apply --no-sync); -jN is taken as -j N. On a usage
 * error print it with a hint and return false. */
bool cli_parse(GOptionContext *ctx, int *argc, char ***argv);
/* cli_parse, then require exactly one input argument (argv[1]). */
bool cli_parse_one_input(GOptionContext *ctx, int *argc, char ***argv);
/* The whole-number option name, read as G_OPTION_ARG_STRING into text
 * (NULL: not given, *value untouched): decimal digits only, from min to
 * max (min >= 0). GLib's G_OPTION_ARG_INT is not used: it takes hex,
 * octal, blanks and signs, and leaves no value free to mean "not given".
 * On a usage error print it and return false. */
bool cli_count_apply(const char *name, const char *text, int min, int max, int *value);
/* cli_count_apply for a 64-bit value: the one parser of every decimal
 * option, whose messages say whether the text is no number or a number
 * out of range. */
bool cli_decimal_apply(const char *name, const char *text, uint64_t min, uint64_t max,
		       uint64_t *value);
/* -j N, read as G_OPTION_ARG_STRING into text (NULL: not given): the
 * threads into *threads, the processors available by default; on a usage
 * error print it and return false. */
bool cli_threads_apply(const char *text, unsigned *threads);
/* -j N of the commands that run children at once (batch, study), read as
 * G_OPTION_ARG_STRING into text (NULL: not given): N into *max_running,
 * lp_job_pool_default_max_running() by default; on a usage error print
 * it and return false. */
bool cli_max_running_apply(const char *text, size_t *max_running);
/* --shard K/N (NULL: not given, *k and *n untouched): 0 <= K < N into
 * *k and *n; on a usage error print it and return false. */
bool cli_shard_apply(const char *text, size_t *k, size_t *n);
/* --format FORM (NULL: not given, *form untouched): one of the registry's
 * output forms (with_addresses: also those that carry addresses) into
 * *form; else the usage error naming them, and false. */
bool cli_form_apply(const char *text, bool with_addresses, enum lp_form *form);
/* --level TEXT (NULL when not given) for the output named output (NULL:
 * standard output) under compress: the level into *level, LP_LEVEL_DEFAULT
 * without one; on a usage error (not a number, no codec, out of the
 * codec's range) print it and return false. */
bool cli_level_apply(const char *text, const char *output, enum lp_compress compress,
		     int *level);
/* --sample-rate R and --sample-pages S (sim, stat; NULL when not
 * given): R a decimal 0 < R <= 1 into *rate, S from 1 to 2^32 - 2 into
 * *pages, at most one of them; on a usage error print it and return
 * false. */
bool cli_sample_apply(const char *rate_text, const char *pages_text, double *rate,
		      uint64_t *pages);
/* "laplace CMD: message" on stderr, then a hint to --help; returns LP_EUSAGE. */
int cli_usage_error(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* Report err on stderr and return its status. */
int cli_fail(const lp_error *err);
/* lp_warn_fn that prints "laplace CMD: warning: MSG" on stderr. */
void cli_warn(void *ctx, const char *msg);

/* --strict, one entry with one meaning in every command that reads a
 * trace (laplace(1), INPUT OPTIONS): a torn last record is an error. */
GOptionEntry cli_strict_entry(gboolean *strict);

/* The options that say how to read a capture (REF KERN), shared by every
 * command that merges: --ref-format, --endian, --page-offset, --strict. */
typedef struct cli_capture {
	gchar *ref_format, *endian, *page_offset;
	gboolean strict;
	GOptionEntry entries[5];
	char *ref_format_help;
} cli_capture;
/* Add the capture options to ctx's main group; c must outlive parsing. */
void cli_capture_add_options(cli_capture *c, GOptionContext *ctx);
/* Whether any capture option was given. */
bool cli_capture_given(const cli_capture *c);
/* For an input that is no capture (a stream, a directory): --strict has
 * its meaning there too (a torn last record is an error; in a basic
 * stream it always is), the others are a usage error, printed, false. */
bool cli_capture_stream_check(const cli_capture *c);
/* Check the options and the inputs REF and KERN and set them in job; on a
 * usage error print it and return false. */
bool cli_capture_apply(const cli_capture *c, const char *ref, const char *kern, lp_merge_job *job);
void cli_capture_free(cli_capture *c);

/* The input of sim and reduce, held whole in t: the basic merge stream
 * path, or, when capture is not NULL (set up by cli_capture_apply), that
 * capture merged here, nothing written in between; flags as
 * lp_trace_init's (R W I dropped with LP_TRACE_USER_ONLY); progress (may be NULL) told the references read. 0, or an
 * lp_status with err set (t then cleared). */
int cli_trace_load(const char *path, const lp_merge_job *capture, unsigned flags,
		   const lp_progress *progress, lp_trace *t, lp_error *err);

/* The statistics summary of a merge (printed on stderr by merge, on
 * stdout by stat), an aligned table appended to `to`. */
void cli_print_stats(GString *to, const lp_stats *st);

#endif
