/* Errors carried from where they are found to the command that reports them. */
#ifndef LAPLACE_ERROR_H
#define LAPLACE_ERROR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

/* enum lp_status (the exit statuses of every command), lp_error and
 * lp_warn_fn are part of the library's interface. */
#include "laplace/laplace.h"

/* Record a failure in err (which may be NULL) and return status, so that
 * callers can write `return lp_fail(err, LP_EINPUT, ...)`. Every byte of
 * the message that is not printable ASCII is written as \xHH (two lowercase
 * hex digits), so no message carries a raw control byte to a terminal. */
int lp_fail(lp_error *err, int status, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

/* Copy src[0, len) into dst (size bytes, NUL-terminated), every byte that
 * is not printable ASCII as \xHH, stopping before the first byte whose
 * form would not fit: what lp_fail does to its messages, for other text
 * bound for a terminal or a log. */
void lp_escape(char *dst, size_t size, const char *src, size_t len);

/* Input bytes quoted in a message: at most LP_QUOTE_MAX of them, each byte
 * that is not printable ASCII (NUL included) as \xHH. lp_quote writes
 * s[0, len) so into buf and returns buf, for "'%s'" in an lp_fail format;
 * unlike "%.*s" it shows a NUL instead of stopping there. */
#define LP_QUOTE_MAX 40
#define LP_QUOTE_SIZE (4 * LP_QUOTE_MAX + 1)
const char *lp_quote(char buf[LP_QUOTE_SIZE], const char *s, size_t len);

/* What readers of fixed-size records do with a torn last record: warn
 * through warn (unless NULL), or fail when strict. */
typedef struct lp_torn_policy {
	bool strict;
	lp_warn_fn warn;
	void *warn_ctx;
} lp_torn_policy;
/* Report a torn last record (left bytes after whole_records records of
 * file name) under policy: 0 after a warning, LP_EINPUT with err set when
 * strict. The one wording of this message, for every
 * format of fixed-size records. */
int lp_torn_record(const lp_torn_policy *policy, const char *name, uint64_t whole_records,
		   size_t left, lp_error *err);

#endif
