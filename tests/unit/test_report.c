/* What the report's figures are computed with: axis ticks, knees of a
 * miss-ratio curve, short numbers, escaping. */
#include <criterion/criterion.h>

#include <math.h>

#include "report/figure.h"

/* 0 to 0.83 in at most 6 ticks: steps of 0.1 would need 10 (0 .. 0.9),
 * steps of 0.2 need 6 (0 .. 1). */
Test(report, ticks_round_up_to_cover)
{
	double t[8];
	size_t n = lp_axis_ticks(0, 0.83, 6, t);
	cr_assert_eq(n, 6);
	for (size_t i = 0; i < n; i++)
		cr_assert_float_eq(t[i], 0.2 * (double)i, 1e-12);
}

/* -7 to 13 in at most 5: steps of 5 need -10 .. 15, 6 ticks; steps of 10
 * need -10 .. 20, 4 ticks. */
Test(report, ticks_below_zero)
{
	double t[8];
	cr_assert_eq(lp_axis_ticks(-7, 13, 5, t), 4);
	double want[] = {-10, 0, 10, 20};
	for (size_t i = 0; i < 4; i++)
		cr_assert_float_eq(t[i], want[i], 1e-12);
}

Test(report, ticks_of_an_empty_range)
{
	double t[4];
	cr_assert_eq(lp_axis_ticks(3, 3, 4, t), 1);
	cr_assert_float_eq(t[0], 3, 0);
}

/* A curve of 1000 pages and a million references: miss ratio 1 up to 10
 * pages, falling evenly on the log axis to `low` at `edge` pages, then
 * flat. */
static uint64_t *ramp(double edge, double low)
{
	uint64_t *m = g_new(uint64_t, 1001);
	for (int f = 0; f <= 1000; f++) {
		double r = f <= 10 ? 1 : f >= edge ? low : 1 - (1 - low) * log10(f / 10.0) / log10(edge / 10);
		m[f] = (uint64_t)llround(r * 1e6);
	}
	return m;
}

/* Falling from 1 to 0.1 over the decade 10 .. 100, then flat: the one
 * knee is at 100 pages, where the fall of the log below is largest and
 * there is none above. */
Test(report, one_knee_where_the_curve_flattens)
{
	uint64_t *m = ramp(100, 0.1);
	uint64_t knees[4];
	cr_assert_eq(lp_mrc_knees(m, 1000, 1000000, knees, 4), 1);
	cr_assert_eq(knees[0], 100);
	g_free(m);
}

/* Falling evenly over two decades and a half to nothing at 1000 pages,
 * the last (half a miss stands in for none on the log axis): the curve
 * flattens only where every page fits. */
Test(report, knee_where_every_page_fits)
{
	uint64_t *m = ramp(1000, 0);
	uint64_t knees[4];
	cr_assert_eq(lp_mrc_knees(m, 1000, 1000000, knees, 4), 1);
	cr_assert_eq(knees[0], 1000);
	g_free(m);
}

/* A fall from 1 to 0.96 is far from the halving a knee needs. */
Test(report, no_knee_in_a_small_drop)
{
	uint64_t *m = ramp(100, 0.96);
	uint64_t knees[4];
	cr_assert_eq(lp_mrc_knees(m, 1000, 1000000, knees, 4), 0);
	g_free(m);
}

/* A steep fall over the first pages (0.8 to 0.1 by 3 pages), then the
 * miss ratio keeps falling by the same factor each decade, a straight line
 * on log axes, down to 10^-4 at 1000 pages: the curve bends, but never
 * flattens to a quarter of the fall before, so no knee (the old linear
 * rule put one at 3 pages, where the linear curve looks flat). */
Test(report, no_knee_where_the_log_curve_keeps_falling)
{
	uint64_t *m = g_new(uint64_t, 1001);
	m[0] = 1000000;
	for (int f = 1; f <= 1000; f++) {
		double r = f < 3 ? 0.8 * pow(0.125, (f - 1) / 2.0)
				 : 0.1 * pow(10, -3 * log10(f / 3.0) / log10(1000 / 3.0));
		m[f] = (uint64_t)llround(r * 1e6);
	}
	uint64_t knees[4];
	cr_assert_eq(lp_mrc_knees(m, 1000, 1000000, knees, 4), 0);
	g_free(m);
}

/* Knees are found on the log curve: a fall from 0.01 to 0.001 between
 * 100 and 177 pages, then flat, is a knee though the miss ratio falls by
 * less than 0.01 in all. */
Test(report, knee_low_on_the_curve)
{
	uint64_t *m = g_new(uint64_t, 1001);
	for (int f = 0; f <= 1000; f++)
		m[f] = f < 100 ? 10000 : f < 177 ? (uint64_t)llround(1e4 * pow(10, -(f - 100) / 77.0)) : 1000;
	uint64_t knees[4];
	cr_assert_eq(lp_mrc_knees(m, 1000, 1000000, knees, 4), 1);
	cr_assert_eq(knees[0], 177);
	g_free(m);
}

/* A program's curve falls steeply to the two or three pages of the code
 * and data it uses at each moment, then slowly: no knee is marked below
 * 10 pages, whatever the fall. */
Test(report, no_knee_below_ten_pages)
{
	uint64_t *m = g_new(uint64_t, 1001);
	for (int f = 0; f <= 1000; f++)
		m[f] = f < 2 ? 500000 : (uint64_t)llround(140000 * pow(2.0 / f, 0.3));
	uint64_t knees[4];
	cr_assert_eq(lp_mrc_knees(m, 1000, 1000000, knees, 4), 0);
	g_free(m);
}

Test(report, short_numbers)
{
	const struct { double v; const char *s; } cases[] = {
		{0, "0"}, {1, "1"}, {500, "500"}, {1000, "1k"}, {2500, "2.5k"},
		{20000000, "20M"}, {0.25, "0.25"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		GString *s = g_string_new(NULL);
		lp_format_short(s, cases[i].v);
		cr_assert_str_eq(s->str, cases[i].s);
		g_string_free(s, TRUE);
	}
}

Test(report, escaping)
{
	GString *s = g_string_new("x");
	lp_html_escape(s, "<a href='y'>&\"");
	cr_assert_str_eq(s->str, "x&lt;a href=&#39;y&#39;&gt;&amp;&quot;");
	g_string_free(s, TRUE);
}

/* Colours are #rrggbb, and neighbours differ. */
Test(report, colours)
{
	char a[8], b[8];
	lp_report_colour(0, a);
	lp_report_colour(1, b);
	cr_assert_eq(strlen(a), 7);
	cr_assert_eq(a[0], '#');
	cr_assert_str_neq(a, b);
}
