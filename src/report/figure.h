/* What the report's figures are computed with: axes, knees, numbers,
 * escapes and colours. */
#ifndef LAPLACE_REPORT_FIGURE_H
#define LAPLACE_REPORT_FIGURE_H

#include <glib.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Up to max ticks at round values (1, 2 or 5 times a power of ten) that
 * cover [lo, hi], the first at or below lo and the last at or above hi.
 * Returns how many were stored in ticks (at least 2 when hi > lo). */
size_t lp_axis_ticks(double lo, double hi, size_t max, double *ticks);
/* The working-set knees of a miss-ratio curve (laplace-report(1),
 * "KNEES"): up to max memory sizes, in increasing order; returns how many. */
size_t lp_mrc_knees(const uint64_t *misses, uint64_t distinct, uint64_t refs, uint64_t *knees,
		    size_t max);
/* A short number for an axis: 1, 20, 500, 1k, 2.5M... */
void lp_format_short(GString *to, double v);
/* Append text with & < > " ' escaped. */
void lp_html_escape(GString *to, const char *text);
/* Append printf-style to a page being written: how page.c and sweep.c
 * write their HTML and figures. */
static inline void add(GString *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static inline void add(GString *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_string_append_vprintf(s, fmt, ap);
	va_end(ap);
}
/* The colour of item i of n, as "#rrggbb": hues spread by the golden
 * angle so that neighbours differ. */
void lp_report_colour(size_t i, char out[8]);

#endif
