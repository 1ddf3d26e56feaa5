#include "laplace/error.h"

#include <stdarg.h>
#include <stdio.h>

int lp_fail(lp_error *err, int status, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
		err->status = status;
	}
	return status;
}
