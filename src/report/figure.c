/* What the figures are computed from rather than tuned by hand: round
 * axis ticks, the knees of a miss-ratio curve, short numbers, colours,
 * and HTML escaping. */
#include "report/figure.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

size_t lp_axis_ticks(double lo, double hi, size_t max, double *ticks)
{
	if (max < 2)
		return 0;
	if (!(hi > lo)) {
		ticks[0] = lo;
		return 1;
	}
	double raw = (hi - lo) / (double)(max - 1);
	double magnitude = pow(10, floor(log10(raw)));
	static const double multiples[] = {1, 2, 5, 10, 20};
	for (size_t m = 0; m < sizeof multiples / sizeof multiples[0]; m++) {
		double step = multiples[m] * magnitude;
		double first = floor(lo / step + 1e-9) * step;
		double last = ceil(hi / step - 1e-9) * step;
		size_t n = (size_t)llround((last - first) / step) + 1;
		if (n > max)
			continue;
		for (size_t i = 0; i < n; i++) {
			ticks[i] = first + (double)i * step;
			/* -0 and 1e-17 print badly */
			if (fabs(ticks[i]) < step * 1e-9)
				ticks[i] = 0;
		}
		return n;
	}
	return 0; /* not reached: 20 times the magnitude is at least twice raw */
}

/* log10 of the miss ratio of a memory of x pages (x real, rounded down;
 * every page fits beyond the last). A curve never reaches 0 (first
 * references miss), but one given by hand may: half a miss stands in. */
static double log_ratio_at(const uint64_t *misses, uint64_t distinct, uint64_t refs, double x)
{
	uint64_t f = x < 1 ? 0 : x >= (double)distinct ? distinct : (uint64_t)x;
	return log10(fmax((double)misses[f], 0.5) / (double)refs);
}

/* The rule of laplace-report(1), "KNEES", on the curve drawn with both
 * axes logarithmic, where a memory that divides the misses by ten is as
 * far down at 0.1 as at 0.001: sizes on a grid of 16 a decade; the fall of log10 of the miss ratio over the quarter
 * decade below (L) and above (R), from 10 pages up (below, a memory holds
 * little more than the page of code and the page of data each moment
 * needs: every program's curve falls there, and a knee of 2 or 3 pages
 * tells a reader nothing); a size is a candidate when L >= log10 2
 * (the misses at least halve) and R <= L / 4, and each run of
 * neighbouring candidates gives one knee, where L - R is largest. The
 * largest such differences are kept. */
#define GRID_PER_DECADE 16
#define WINDOW_STEPS 4
#define FIRST_STEP GRID_PER_DECADE /* 10 pages */
#define MIN_FALL 0.30102999566398120 /* log10 2 */
#define FLATTENING 4.0

size_t lp_mrc_knees(const uint64_t *misses, uint64_t distinct, uint64_t refs, uint64_t *knees,
		    size_t max)
{
	if (!refs || !distinct || !max)
		return 0;
	double window = pow(10, (double)WINDOW_STEPS / GRID_PER_DECADE);
	size_t found = 0, cap = 16;
	uint64_t *size = g_new(uint64_t, cap);
	double *score = g_new(double, cap);
	bool in_run = false;
	for (int i = FIRST_STEP;; i++) {
		double x = pow(10, (double)i / GRID_PER_DECADE);
		if (x > (double)distinct * window)
			break;
		double here = log_ratio_at(misses, distinct, refs, x);
		double left = log_ratio_at(misses, distinct, refs, x / window) - here;
		double right = here - log_ratio_at(misses, distinct, refs, x * window);
		bool candidate = left >= MIN_FALL && right * FLATTENING <= left;
		if (!candidate) {
			in_run = false;
			continue;
		}
		uint64_t at = x >= (double)distinct ? distinct : (uint64_t)x;
		if (!in_run) {
			if (found == cap) {
				cap *= 2;
				size = g_renew(uint64_t, size, cap);
				score = g_renew(double, score, cap);
			}
			size[found] = at;
			score[found++] = left - right;
			in_run = true;
		} else if (left - right > score[found - 1]) {
			size[found - 1] = at;
			score[found - 1] = left - right;
		}
	}
	/* Keep the max best, then put them back in order of size. */
	size_t kept = 0;
	while (kept < max && kept < found) {
		size_t best = kept;
		for (size_t k = kept + 1; k < found; k++)
			if (score[k] > score[best])
				best = k;
		double s = score[kept];
		uint64_t z = size[kept];
		score[kept] = score[best], size[kept] = size[best];
		score[best] = s, size[best] = z;
		kept++;
	}
	for (size_t a = 1; a < kept; a++)
		for (size_t b = a; b > 0 && size[b - 1] > size[b]; b--) {
			uint64_t z = size[b];
			size[b] = size[b - 1];
			size[b - 1] = z;
		}
	for (size_t k = 0; k < kept; k++)
		knees[k] = size[k];
	g_free(size);
	g_free(score);
	return kept;
}

void lp_format_short(GString *to, double v)
{
	static const char units[] = " kMGTPE";
	double a = fabs(v);
	size_t u = 0;
	while (a >= 1000 && u + 1 < sizeof units - 1) {
		a /= 1000;
		v /= 1000;
		u++;
	}
	char num[32];
	g_snprintf(num, sizeof num, "%.3g", v);
	g_string_append(to, num);
	if (u)
		g_string_append_c(to, units[u]);
}

void lp_html_escape(GString *to, const char *text)
{
	for (const char *p = text; *p; p++) {
		switch (*p) {
		case '&': g_string_append(to, "&amp;"); break;
		case '<': g_string_append(to, "&lt;"); break;
		case '>': g_string_append(to, "&gt;"); break;
		case '"': g_string_append(to, "&quot;"); break;
		case '\'': g_string_append(to, "&#39;"); break;
		default: g_string_append_c(to, *p); break;
		}
	}
}

/* HSL to RGB, s and l in [0, 1], h in degrees. */
static double channel(double h, double s, double l, double n)
{
	double k = fmod(n + h / 30, 12);
	double a = s * fmin(l, 1 - l);
	return l - a * fmax(-1, fmin(fmin(k - 3, 9 - k), 1));
}

void lp_report_colour(size_t i, char out[8])
{
	/* The golden angle spreads any number of hues evenly enough; the
	 * lightness alternates so that neighbours differ in grey too. */
	double h = fmod(210 + 137.50776 * (double)i, 360);
	double s = 0.62, l = i % 2 ? 0.60 : 0.42;
	int rgb[3];
	for (int c = 0; c < 3; c++)
		rgb[c] = (int)lround(255 * channel(h, s, l, c == 0 ? 0 : c == 1 ? 8 : 4));
	g_snprintf(out, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}
