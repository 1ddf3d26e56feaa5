#include "core/error.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static bool is_printable(unsigned char c) { return c >= 0x20 && c < 0x7f; }

void lp_escape(char *dst, size_t size, const char *src, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)src[i];
		size_t need = is_printable(c) ? 1 : 4;
		if (o + need >= size)
			break;
		if (need == 1) {
			dst[o++] = (char)c;
		} else {
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[c >> 4];
			dst[o++] = hex[c & 0xf];
		}
	}
	dst[o] = '\0';
}

/* Escaping here rather than at each call site covers every message at once,
 * file names and libyaml's texts included; lp_quote is needed only where
 * the quoted bytes may hold a NUL, which would end a "%s" early. */
int lp_fail(lp_error *err, int status, const char *fmt, ...)
{
	if (err) {
		char raw[sizeof err->msg];
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(raw, sizeof raw, fmt, ap);
		va_end(ap);
		size_t len = n < 0 ? 0 : MIN((size_t)n, sizeof raw - 1);
		lp_escape(err->msg, sizeof err->msg, raw, len);
		err->status = status;
	}
	return status;
}

const char *lp_quote(char buf[LP_QUOTE_SIZE], const char *s, size_t len)
{
	lp_escape(buf, LP_QUOTE_SIZE, s, MIN(len, (size_t)LP_QUOTE_MAX));
	return buf;
}

int lp_torn_record(const lp_torn_policy *policy, const char *name, uint64_t whole_records,
		   size_t left, lp_error *err)
{
	lp_error msg;
	lp_fail(&msg, LP_EINPUT, "%s: torn last record: %zu byte%s left over after %" PRIu64
		" whole record%s", name, left, left == 1 ? "" : "s", whole_records,
		whole_records == 1 ? "" : "s");
	if (policy && policy->strict) {
		*err = msg;
		return LP_EINPUT;
	}
	if (policy && policy->warn)
		policy->warn(policy->warn_ctx, msg.msg);
	return 0;
}
