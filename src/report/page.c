/* The report as one HTML page: no script, no file or address outside it;
 * the figures are inline SVG drawn in a fixed coordinate system (VIEW_W
 * units wide) that the browser scales to the page's width, so the same
 * page serves a wide screen and a phone. */
#include "report/page.h"
#include "report/figure.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "analysis/sim.h"
#include "core/merge.h"
#include "core/record.h"

#define VIEW_W 640.0
#define MAX_TICKS 7
#define MAX_KNEES 4
#define CURVE_POINTS 480
#define MAX_LEGEND 24
#define PROGRAM_LABEL_MAX 26
#define UNKNOWN_COLOUR "#a0a0a0"

typedef struct plot {
	double left, right, top, bottom; /* the plotting area, in view units */
} plot;

static void add_short(GString *s, double v)
{
	lp_format_short(s, v);
}

/* A name from the input, escaped and cut to max characters (UTF-8 aware). */
static void add_name(GString *s, const char *name, size_t max)
{
	glong length = g_utf8_validate(name, -1, NULL) ? g_utf8_strlen(name, -1) : 0;
	if (length > (glong)max) {
		/* The end tells programs apart (/usr/lib/gcc/x86_64-linux-gnu/12/cc1
		 * and .../collect2): the start gives way. */
		char *cut = g_utf8_substring(name, length - (glong)max + 1, length);
		g_string_append(s, "\u2026");
		lp_html_escape(s, cut);
		g_free(cut);
	} else if (g_utf8_validate(name, -1, NULL)) {
		lp_html_escape(s, name);
	} else {
		char *valid = g_utf8_make_valid(name, -1);
		add_name(s, valid, max);
		g_free(valid);
	}
}

static void svg_open(GString *s, const char *id, double height, const char *title, const char *desc)
{
	add(s, "<svg id=\"%s\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
	       "aria-labelledby=\"%s-title %s-desc\">\n"
	       "<title id=\"%s-title\">%s</title>\n<desc id=\"%s-desc\">",
	    id, VIEW_W, ceil(height), id, id, id, title, id);
	g_string_append(s, desc);
	g_string_append(s, "</desc>\n<rect class=\"bg\" width=\"100%\" height=\"100%\"/>\n");
}

/* ---- curves: miss ratio against memory ---- */

/* A curve to draw: n points (x pages, y a ratio of references), x
 * ascending. */
typedef struct series {
	const char *name;
	size_t n;
	double *x, *y;
} series;

/* Axes of a curve figure: x logarithmic from 1 page to the footprint (no
 * further: there every page fits), y logarithmic from the decade at or
 * below the smallest ratio to the one at or above the largest when they
 * span a decade or more, else linear from 0. */
typedef struct axes {
	plot p;
	double x_decades; /* log10 of the right edge */
	bool log_y;
	double y_lo, y_hi; /* log: exponents of the decades; linear: 0, top tick */
	double y_ticks[MAX_TICKS];
	size_t ny;
} axes;

static double ax_x(const axes *a, double pages)
{
	return a->p.left + (a->p.right - a->p.left) * log10(pages) / a->x_decades;
}

static double ax_y(const axes *a, double ratio)
{
	double v = a->log_y ? log10(fmax(ratio, pow(10, a->y_lo))) : ratio;
	return a->p.bottom - (a->p.bottom - a->p.top) * (v - a->y_lo) / (a->y_hi - a->y_lo);
}

/* Fit the axes to the curves; right is the footprint (pages). */
static void axes_fit(axes *a, const series *c, size_t nc, double right)
{
	a->x_decades = log10(fmax(2, right));
	double lo = INFINITY, hi = 0;
	for (size_t i = 0; i < nc; i++)
		for (size_t k = 0; k < c[i].n; k++) {
			if (c[i].y[k] > 0)
				lo = fmin(lo, c[i].y[k]);
			hi = fmax(hi, c[i].y[k]);
		}
	a->log_y = lo < INFINITY && hi >= 10 * lo;
	if (a->log_y) {
		a->y_lo = floor(log10(lo));
		a->y_hi = fmax(ceil(log10(hi)), a->y_lo + 1);
		return;
	}
	a->ny = lp_axis_ticks(0, hi, 6, a->y_ticks);
	a->y_lo = 0;
	a->y_hi = a->y_ticks[a->ny - 1] > 0 ? a->y_ticks[a->ny - 1] : 1;
}

/* A decade's label: 1, 0.1, 0.01, 0.001, then 1e-4, 1e-5... */
static void add_decade(GString *s, int k)
{
	if (k >= -3)
		add(s, "%g", pow(10, k));
	else
		add(s, "1e%d", k);
}

static void axes_draw(GString *s, const axes *a, const char *x_label, const char *y_label,
		      double right)
{
	const plot *p = &a->p;
	int xd = (int)floor(a->x_decades + 1e-9);
	bool minor_x = (p->right - p->left) / a->x_decades >= 60;
	g_string_append(s, "<g class=\"grid\">\n");
	for (int d = 0; d <= xd; d++)
		for (int k = 1; k <= (minor_x ? 9 : 1); k++) {
			double f = k * pow(10, d);
			if (f > right)
				break;
			double x = ax_x(a, f);
			add(s, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			    k == 1 ? "major" : "minor", x, p->top, x, p->bottom);
		}
	if (a->log_y) {
		bool minor_y = (p->bottom - p->top) / (a->y_hi - a->y_lo) >= 60;
		for (int d = (int)a->y_lo; d <= (int)a->y_hi; d++)
			for (int k = 1; k <= (minor_y && d < (int)a->y_hi ? 9 : 1); k++) {
				double y = ax_y(a, k * pow(10, d));
				add(s, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
				    k == 1 ? "major" : "minor", p->left, y, p->right, y);
			}
	} else {
		for (size_t i = 0; i < a->ny; i++) {
			double y = ax_y(a, a->y_ticks[i]);
			add(s, "<line class=\"major\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			    p->left, y, p->right, y);
		}
	}
	g_string_append(s, "</g>\n<g class=\"axis\">\n");
	/* Every decade labelled but one too close to the footprint's own
	 * label at the right edge. */
	double end_x = ax_x(a, fmax(2, right));
	for (int d = 0; d <= xd; d++) {
		double x = ax_x(a, pow(10, d));
		if (pow(10, d) > right || (pow(10, d) < right && end_x - x < 40))
			continue;
		add(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, p->bottom + 18);
		add_short(s, pow(10, d));
		g_string_append(s, "</text>\n");
	}
	if (right >= 2 && fabs(right - pow(10, round(log10(right)))) > 0.5) {
		add(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", end_x, p->bottom + 18);
		add_short(s, right);
		g_string_append(s, "</text>\n");
	}
	if (a->log_y) {
		for (int d = (int)a->y_lo; d <= (int)a->y_hi; d++) {
			add(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", p->left - 6,
			    ax_y(a, pow(10, d)) + 4.5);
			add_decade(s, d);
			g_string_append(s, "</text>\n");
		}
	} else {
		for (size_t i = 0; i < a->ny; i++)
			add(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", p->left - 6,
			    ax_y(a, a->y_ticks[i]) + 4.5, a->y_ticks[i]);
	}
	add(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
	    (p->left + p->right) / 2, p->bottom + 44, x_label);
	add(s, "<text transform=\"translate(18 %.1f) rotate(-90)\" text-anchor=\"middle\">%s%s</text>\n",
	    (p->top + p->bottom) / 2, y_label, a->log_y ? " (log scale)" : "");
	add(s, "<path class=\"frame\" d=\"M%.1f %.1fV%.1fH%.1f\"/>\n", p->left, p->top, p->bottom,
	    p->right);
	g_string_append(s, "</g>\n");
}

/* The dash pattern of a policy's curve: its row's (policy.h); any other
 * curve solid. */
static const char *series_dash(const series *c)
{
	const lp_policy_info *policy = lp_policy_find(c->name);
	return policy ? policy->dash : "";
}

/* A polyline through the points, skipping those closer than a tenth of
 * a unit to the last drawn, so that a curve of every size of a large
 * footprint stays small. */
static void series_draw(GString *s, const axes *a, const series *c, const char *colour)
{
	if (!c->n)
		return;
	const char *dash = series_dash(c);
	add(s, "<path class=\"curve\" stroke=\"%s\"", colour);
	if (*dash)
		add(s, " stroke-dasharray=\"%s\"", dash);
	g_string_append(s, " d=\"");
	double lx = 0, ly = 0;
	for (size_t k = 0; k < c->n; k++) {
		double x = ax_x(a, c->x[k]), y = ax_y(a, c->y[k]);
		if (k && k + 1 < c->n && fabs(x - lx) < 0.1 && fabs(y - ly) < 0.1)
			continue;
		add(s, "%s%.2f %.2f", k ? "L" : "M", x, y);
		lx = x, ly = y;
	}
	g_string_append(s, "\"/>\n");
}

/* The colour of a policy: its row's in the registry, the same in every
 * figure. */
static void policy_colour(const lp_policy_info *policy, char out[8])
{
	g_strlcpy(out, policy->colour, 8);
}

/* The names of the curves along the top of the plot, each after a
 * stretch of its curve (colour and dashes). */
static void series_legend(GString *s, const axes *a, const series *c, const char (*colour)[8],
			  size_t nc)
{
	g_string_append(s, "<g class=\"legend\">\n");
	double x = a->p.left;
	for (size_t i = 0; i < nc; i++) {
		const char *dash = series_dash(&c[i]);
		add(s, "<path class=\"curve\" stroke=\"%s\"", colour[i]);
		if (*dash)
			add(s, " stroke-dasharray=\"%s\"", dash);
		add(s, " d=\"M%.1f %.1fh28\"/><text x=\"%.1f\" y=\"%.1f\">", x, a->p.top - 28, x + 33,
		    a->p.top - 24);
		lp_html_escape(s, c[i].name);
		g_string_append(s, "</text>\n");
		x += 46 + 8.5 * (double)strlen(c[i].name);
	}
	g_string_append(s, "</g>\n");
}

/* A policy's curve: x its sizes (frames) or, with resident, the mean
 * pages resident (space_time / references); y its fault rate. */
static series curve_series(const lp_report *r, const lp_report_curve *c, bool resident)
{
	series out = {.name = c->policy->name, .n = c->n, .x = g_new(double, c->n + 1),
		      .y = g_new(double, c->n + 1)};
	double refs = (double)r->references;
	for (size_t k = 0; k < c->n; k++) {
		out.x[k] = resident ? (double)c->space_time[k] / refs : (double)c->size[k];
		out.y[k] = (double)c->faults[k] / refs;
	}
	return out;
}

/* The LRU curve at about CURVE_POINTS log-spaced sizes, and the last. */
static series lru_series(const lp_report *r)
{
	series c = {.name = "lru", .x = g_new(double, CURVE_POINTS + 1),
		    .y = g_new(double, CURVE_POINTS + 1)};
	uint64_t last = 0;
	for (int i = 0; i <= CURVE_POINTS; i++) {
		double f = pow((double)r->distinct, (double)i / CURVE_POINTS);
		uint64_t frames = i == CURVE_POINTS ? r->distinct : (uint64_t)f;
		if (frames < 1 || frames == last)
			continue;
		c.x[c.n] = (double)frames;
		c.y[c.n++] = (double)r->misses[frames] / (double)r->references;
		last = frames;
	}
	return c;
}

static void figure_mrc(GString *s, const lp_report *r)
{
	add(s, "<figure id=\"figure-mrc\">\n");
	if (!r->references) {
		add(s, "<p>No references: no miss-ratio curve.</p></figure>\n");
		return;
	}
	const uint64_t *m = r->misses;
	double refs = (double)r->references;
	uint64_t knees[MAX_KNEES];
	size_t nknees = lp_mrc_knees(m, r->distinct, r->references, knees, MAX_KNEES);
	/* The policies simulated, else (more pages than a trace holds) LRU's
	 * curve alone. */
	size_t nc = r->ncurves ? r->ncurves : 1;
	series *c = g_new(series, nc);
	char (*colour)[8] = g_malloc(nc * sizeof *colour);
	for (size_t i = 0; i < nc; i++) {
		c[i] = r->ncurves ? curve_series(r, &r->curves[i], false) : lru_series(r);
		policy_colour(r->ncurves ? r->curves[i].policy : lp_policy_find("lru"), colour[i]);
	}
	axes a = {.p = {.left = 70, .right = VIEW_W - 18, .top = 58, .bottom = 380}};
	axes_fit(&a, c, nc, (double)r->distinct);

	GString *desc = g_string_new(NULL);
	add(desc, "Miss ratio of");
	for (size_t i = 0; i < nc; i++)
		add(desc, "%s %s", i ? "," : "", c[i].name);
	add(desc, " over %" PRIu64 " reference%s to %" PRIu64
	    " distinct page%s against memory size in pages from 1 to %" PRIu64 ", log scale%s; "
	    "LRU's knees at", r->references, r->references == 1 ? "" : "s", r->distinct,
	    r->distinct == 1 ? "" : "s", r->distinct, a.log_y ? " on both axes" : "");
	for (size_t k = 0; k < nknees; k++)
		add(desc, "%s %" PRIu64, k ? "," : "", knees[k]);
	g_string_append(desc, nknees ? " pages." : " no size.");
	svg_open(s, "mrc", 440, "Miss-ratio curve", desc->str);
	g_string_free(desc, TRUE);
	axes_draw(s, &a, "memory size (pages, log scale)", "miss ratio", (double)r->distinct);
	/* The first (lru's, solid) at the bottom: the dashed ones over it
	 * leave it seen where they coincide. */
	for (size_t i = 0; i < nc; i++)
		series_draw(s, &a, &c[i], colour[i]);
	series_legend(s, &a, c, (const char (*)[8])colour, nc);
	add(s, "<circle class=\"end\" cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\"/>\n",
	    ax_x(&a, fmax(1, (double)r->distinct)), ax_y(&a, (double)m[r->distinct] / refs));

	for (size_t k = 0; k < nknees; k++) {
		double x = ax_x(&a, (double)knees[k]);
		double y = ax_y(&a, (double)m[knees[k]] / refs);
		/* Labels above the plot, staggered so that neighbours do not
		 * overlap; anchored inward at the edges. */
		double label_y = a.p.top - 4 - (k % 2) * 12;
		const char *anchor = x > a.p.right - 60 ? "end" : x < a.p.left + 60 ? "start" : "middle";
		add(s, "<g class=\"knee\"><line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\"/>"
		       "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\"/><text x=\"%.2f\" y=\"%.1f\" "
		       "text-anchor=\"%s\">knee ", x, label_y + 4, x, a.p.bottom, x, y, x, label_y, anchor);
		add_short(s, (double)knees[k]);
		g_string_append(s, "</text></g>\n");
	}
	for (size_t i = 0; i < nc; i++) {
		g_free(c[i].x);
		g_free(c[i].y);
	}
	g_free(c);
	g_free(colour);
	g_string_append(s, "</svg>\n<figcaption>Miss ratio against memory size of ");
	if (r->ncurves) {
		for (size_t i = 0; i < r->ncurves; i++)
			add(s, "%s<code>%s</code>", i ? ", " : "", r->curves[i].policy->name);
		g_string_append(s, " (laplace sim's policies, each a fixed memory of that many "
				   "pages under demand paging; LRU's curve at every size drawn, "
				   "from stack distances, the others' at 8 sizes a decade): ");
		if (r->sampled_pages) {
			size_t k = 0;
			for (size_t i = 0; i < r->ncurves; i++)
				if (lp_sim_miniature(r->curves[i].policy))
					add(s, "%s<code>%s</code>", k++ ? ", " : "",
					    r->curves[i].policy->name);
			add(s, " from miniature simulations, estimates (as <code>laplace sim "
			       "--sample-pages %d</code>: the %" PRIu64 " pages of smallest hash "
			       "sampled, R = %.6g, every size scaled by R and the faults by 1/R). ",
			    LP_REPORT_SAMPLE_PAGES, r->sampled_pages, r->sample_rate);
		}
	} else {
		g_string_append(s, "LRU (more pages than laplace sim holds: no other policy): ");
	}
	add(s, "%" PRIu64 " reference%s, %" PRIu64 " distinct page%s (all of them fit in %" PRIu64
	       " page%s, the right edge, where only first references miss: ratio %.4f). ",
	    r->references, r->references == 1 ? "" : "s", r->distinct, r->distinct == 1 ? "" : "s",
	    r->distinct, r->distinct == 1 ? "" : "s", (double)m[r->distinct] / refs);
	if (nknees) {
		g_string_append(s, "LRU's working-set knees (dashed), where its curve, falling "
				   "steeply, flattens: ");
		for (size_t k = 0; k < nknees; k++)
			add(s, "%s%" PRIu64 " page%s (miss ratio %.4f)", k ? ", " : "", knees[k],
			    knees[k] == 1 ? "" : "s", (double)m[knees[k]] / refs);
		g_string_append(s, ".");
	} else {
		g_string_append(s, "No working-set knee: LRU's curve never flattens sharply.");
	}
	g_string_append(s, "</figcaption>\n</figure>\n");
}

/* Denning's lifetime curve: the fault rate of ws and vmin against the
 * mean pages they hold, one point per window. */
static void figure_lifetime(GString *s, const lp_report *r)
{
	if (!r->nlifetime || !r->lifetime[0].n)
		return;
	add(s, "<figure id=\"figure-lifetime\">\n");
	series c[2];
	char colour[2][8];
	for (size_t i = 0; i < 2; i++) {
		c[i] = curve_series(r, &r->lifetime[i], true);
		policy_colour(r->lifetime[i].policy, colour[i]);
	}
	const lp_report_curve *ws = &r->lifetime[0];
	axes a = {.p = {.left = 70, .right = VIEW_W - 18, .top = 58, .bottom = 380}};
	axes_fit(&a, c, 2, (double)r->distinct);
	GString *desc = g_string_new(NULL);
	add(desc, "Fault rate of the working set (ws) and VMIN against the mean pages they "
		  "hold, for windows of 1 to %" PRIu64 " references, log scale%s.",
	    ws->size[ws->n - 1], a.log_y ? " on both axes" : "");
	svg_open(s, "lifetime", 440, "Lifetime curve", desc->str);
	g_string_free(desc, TRUE);
	axes_draw(s, &a, "mean resident pages (log scale)", "faults per reference",
		  (double)r->distinct);
	for (size_t i = 2; i-- > 0;)
		series_draw(s, &a, &c[i], colour[i]);
	series_legend(s, &a, c, (const char (*)[8])colour, 2);
	for (size_t i = 0; i < 2; i++) {
		g_free(c[i].x);
		g_free(c[i].y);
	}
	add(s, "</svg>\n<figcaption>Denning's lifetime curve: for each window &#964; (%zu "
	       "windows from 1 to %" PRIu64 " references, the largest backward distance), the "
	       "faults per reference of the working set (the pages of the last &#964; "
	       "references) and of VMIN (a page stays while its next use is within &#964;) "
	       "against the pages each holds on average. They fault alike; VMIN holds fewer "
	       "pages for it. A fixed memory's miss ratio (above) at the same number of pages "
	       "compares a policy with them.</figcaption>\n</figure>\n", ws->n,
	    ws->size[ws->n - 1]);
}

/* ---- the task timeline ---- */

/* Programs ranked by time run (longest first): the colour of each. */
static size_t *program_ranks(const lp_report *r)
{
	size_t n = r->programs->len;
	double *time = g_new0(double, n);
	size_t *order = g_new(size_t, n), *rank = g_new(size_t, n);
	for (guint i = 0; i < r->runs->len; i++) {
		const lp_report_run *run = &g_array_index(r->runs, lp_report_run, i);
		if (run->program != LP_REPORT_NO_PROGRAM)
			time[run->program] += (double)(run->end - run->start);
	}
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	for (size_t a = 1; a < n; a++) /* insertion sort: stable, few programs */
		for (size_t b = a; b > 0 && time[order[b - 1]] < time[order[b]]; b--) {
			size_t z = order[b];
			order[b] = order[b - 1];
			order[b - 1] = z;
		}
	for (size_t i = 0; i < n; i++)
		rank[order[i]] = i;
	g_free(time);
	g_free(order);
	return rank;
}

static void run_colour(const size_t *rank, size_t program, char out[8])
{
	if (program == LP_REPORT_NO_PROGRAM || rank[program] >= MAX_LEGEND)
		g_strlcpy(out, UNKNOWN_COLOUR, 8);
	else
		lp_report_colour(rank[program], out);
}

/* The time axis under a plot of [0, span] timestamp units from first. */
static void time_axis(GString *s, const plot *p, double span, uint64_t first, const char *unit)
{
	double ticks[MAX_TICKS];
	size_t n = lp_axis_ticks(0, span, MAX_TICKS, ticks);
	double scale = ticks[n - 1] > 0 ? ticks[n - 1] : 1;
	g_string_append(s, "<g class=\"grid\">\n");
	for (size_t i = 0; i < n; i++) {
		double x = p->left + (p->right - p->left) * ticks[i] / scale;
		add(s, "<line class=\"major\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x,
		    p->top, x, p->bottom);
	}
	g_string_append(s, "</g>\n<g class=\"axis\">\n");
	for (size_t i = 0; i < n; i++) {
		double x = p->left + (p->right - p->left) * ticks[i] / scale;
		add(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, p->bottom + 18);
		add_short(s, ticks[i]);
		g_string_append(s, "</text>\n");
	}
	if (unit)
		add(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
		    (p->left + p->right) / 2, p->bottom + 40, unit);
	else
		add(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time since timestamp 0x%" PRIx64
		       " (trace units)</text>\n", (p->left + p->right) / 2, p->bottom + 40, first);
	add(s, "<path class=\"frame\" d=\"M%.1f %.1fV%.1fH%.1f\"/>\n</g>\n", p->left, p->top,
	    p->bottom, p->right);
}

/* The replayed schedule, one row per processor: which task it ran when
 * (laplace-report(1), "--schedule"), coloured as in the task timeline. */
static void figure_schedule(GString *s, const lp_report *r, const size_t *rank)
{
	const lp_report_schedule *sc = r->schedule;
	/* A task's colour: the program of its last run. */
	size_t *program = g_new(size_t, r->tasks->len);
	for (guint t = 0; t < r->tasks->len; t++)
		program[t] = LP_REPORT_NO_PROGRAM;
	for (guint i = 0; i < r->runs->len; i++) {
		const lp_report_run *run = &g_array_index(r->runs, lp_report_run, i);
		program[run->task] = run->program;
	}
	const double row = 22;
	plot q = {.left = 70, .right = VIEW_W - 18, .top = 12};
	q.bottom = q.top + row * (double)sc->ncpus;
	GString *d = g_string_new(NULL);
	add(d, "laplace schedule, policy %s, quantum %" PRIu64 ", on %zu processor%s: which task "
	       "each ran in each of %" PRIu64 " tick%s.", sc->policy, sc->quantum, sc->ncpus,
	    sc->ncpus == 1 ? "" : "s", sc->ticks, sc->ticks == 1 ? "" : "s");
	svg_open(s, "schedule", q.bottom + 52, "Task timeline per CPU", d->str);
	g_string_free(d, TRUE);
	time_axis(s, &q, (double)sc->ticks, 0, "ticks of the schedule");
	double ticks[MAX_TICKS];
	size_t n = lp_axis_ticks(0, (double)sc->ticks, MAX_TICKS, ticks);
	double scale = ticks[n - 1] > 0 ? ticks[n - 1] : 1;
	const uint64_t cols = LP_REPORT_SCHEDULE_COLUMNS;
	for (size_t c = 0; c < sc->ncpus; c++) {
		double y = q.top + row * (double)c;
		add(s, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">cpu %zu</text>\n",
		    q.left - 6, y + row * 0.5 + 4, c);
		/* Runs of columns with the same task, one rectangle each. */
		for (uint64_t a = 0; a < cols;) {
			uint64_t b = a + 1;
			while (b < cols && sc->columns[c][b] == sc->columns[c][a])
				b++;
			uint32_t task = sc->columns[c][a];
			if (task) {
				char colour[8];
				run_colour(rank, program[task - 1], colour);
				/* Column c shows tick c * ticks / cols (rounded down). */
				uint64_t t0 = a * sc->ticks / cols, t1 = (b - 1) * sc->ticks / cols + 1;
				const lp_report_task *rt = &g_array_index(r->tasks, lp_report_task, task - 1);
				/* data-: what the rectangle stands for, for scripts and tests. */
				add(s, "<rect data-cpu=\"%zu\" data-task=\"%" PRIx64 "/%" PRIx64 "\" "
				       "data-ticks=\"%" PRIu64 "-%" PRIu64 "\" x=\"%.2f\" y=\"%.1f\" "
				       "width=\"%.2f\" height=\"%.1f\" fill=\"%s\"/>\n", c, rt->pid, rt->tid,
				    t0, t1 - 1, q.left + (q.right - q.left) * (double)t0 / scale, y + 2,
				    (q.right - q.left) * (double)(t1 - t0) / scale, row - 4, colour);
			}
			a = b;
		}
	}
	g_string_append(s, "</svg>\n<figcaption>");
	add(s, "The tasks re-scheduled by <code>laplace schedule</code> (policy %s, quantum %" PRIu64
	       ", %zu CPU%s), run again to see which task each CPU ran when: one row per CPU, "
	       "coloured by program as above; blank where it was idle. CPUs:", sc->policy,
	    sc->quantum, sc->ncpus, sc->ncpus == 1 ? "" : "s");
	for (size_t c = 0; c < sc->ncpus; c++) {
		const lp_report_cpu *cpu = &sc->cpu[c];
		add(s, "%s cpu %zu %" PRIu64 " reference%s, %" PRIu64 " idle tick%s, %" PRIu64
		       " slice%s", c ? ";" : "", c, cpu->references, cpu->references == 1 ? "" : "s",
		    cpu->idle_ticks, cpu->idle_ticks == 1 ? "" : "s", cpu->slices,
		    cpu->slices == 1 ? "" : "s");
	}
	g_string_append(s, ".</figcaption>\n");
	g_free(program);
}


/* Bars of one row, merged where they touch at this scale, so that a
 * long trace draws at most a few rectangles a pixel. */
typedef struct bar_row {
	double x0, x1, y, h;
	char colour[8];
	bool open;
} bar_row;

static void bar_flush(GString *s, bar_row *b)
{
	if (b->open)
		add(s, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n", b->x0,
		    b->y, fmax(b->x1 - b->x0, 0.6), b->h, b->colour);
	b->open = false;
}

static void bar_add(GString *s, bar_row *b, double x0, double x1, const char *colour)
{
	if (b->open && x0 <= b->x1 + 0.3 && !strcmp(colour, b->colour)) {
		b->x1 = fmax(b->x1, x1);
		return;
	}
	bar_flush(s, b);
	*b = (bar_row){.x0 = x0, .x1 = x1, .y = b->y, .h = b->h, .open = true};
	g_strlcpy(b->colour, colour, sizeof b->colour);
}

static double legend(GString *s, const lp_report *r, const size_t *rank, double y)
{
	size_t n = r->programs->len, shown = n < MAX_LEGEND ? n : MAX_LEGEND;
	const double item_w = 200, left = 16;
	size_t per_row = (size_t)((VIEW_W - left) / item_w);
	size_t *by_rank = g_new(size_t, n);
	for (size_t i = 0; i < n; i++)
		by_rank[rank[i]] = i;
	g_string_append(s, "<g class=\"legend\">\n");
	size_t items = shown + (n > shown);
	for (size_t k = 0; k < items; k++) {
		double x = left + (double)(k % per_row) * item_w, iy = y + (double)(k / per_row) * 20;
		char colour[8];
		if (k < shown)
			lp_report_colour(k, colour);
		else
			g_strlcpy(colour, UNKNOWN_COLOUR, sizeof colour);
		add(s, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
		       "<text x=\"%.1f\" y=\"%.1f\">", x, iy, colour, x + 17, iy + 11);
		if (k < shown)
			add_name(s, g_ptr_array_index(r->programs, by_rank[k]), PROGRAM_LABEL_MAX);
		else
			add(s, "%zu other program%s, unknown", n - shown, n - shown == 1 ? "" : "s");
		g_string_append(s, "</text>\n");
	}
	g_string_append(s, "</g>\n");
	g_free(by_rank);
	return y + (double)((items + per_row - 1) / per_row) * 20;
}

static void figure_timeline(GString *s, const lp_report *r)
{
	add(s, "<figure id=\"figure-timeline\">\n");
	if (r->source == LP_REPORT_STREAM) {
		add(s, "<p>Task timeline: a basic merge stream has no kernel events, so no "
		       "record of which task ran when.</p>\n</figure>\n");
		return;
	}
	size_t ntasks = r->tasks->len, nproc = r->processes->len;
	if (!r->runs->len || !r->has_time) {
		add(s, "<p>Task timeline: no task ever ran (no S event).</p>\n</figure>\n");
		return;
	}
	/* Rows share about 330 units, each between 2 and 16; a gap between
	 * processes; labels only where a row or group is tall enough. */
	double row_h = fmin(22, fmax(2, 330.0 / (double)ntasks));
	double gap = row_h >= 6 ? 5 : 2;
	double rows_h = row_h * (double)ntasks + gap * (double)(nproc - 1);
	size_t *rank = program_ranks(r);
	size_t legend_rows = ((r->programs->len < MAX_LEGEND ? r->programs->len : MAX_LEGEND + 1) + 2) / 3;
	plot p = {.left = 104, .right = VIEW_W - 18, .top = 12, .bottom = 12 + rows_h};
	double height = p.bottom + 56 + (double)legend_rows * 20 + 8;
	GString *desc = g_string_new(NULL);
	add(desc, "Which task ran when: %zu task%s of %zu process%s, one row per task grouped by "
		  "process, coloured by program (%u program%s).", ntasks, ntasks == 1 ? "" : "s",
	    nproc, nproc == 1 ? "" : "es", r->programs->len, r->programs->len == 1 ? "" : "s");
	svg_open(s, "timeline", height, "Task timeline", desc->str);
	g_string_free(desc, TRUE);

	double span = (double)(r->last_ts - r->first_ts);
	double ticks[MAX_TICKS];
	size_t n = lp_axis_ticks(0, span, MAX_TICKS, ticks);
	double scale = ticks[n - 1] > 0 ? ticks[n - 1] : 1;
	time_axis(s, &p, span, r->first_ts, NULL);

	double *row_y = g_new(double, ntasks);
	g_string_append(s, "<g class=\"labels\">\n");
	for (size_t pi = 0; pi < nproc; pi++) {
		const lp_report_process *proc = &g_array_index(r->processes, lp_report_process, pi);
		double group_top = p.top + (double)proc->first_task * row_h + (double)pi * gap;
		for (size_t t = 0; t < proc->ntasks; t++) {
			size_t row = proc->first_task + t;
			row_y[row] = group_top + (double)t * row_h;
			const lp_report_task *task = &g_array_index(r->tasks, lp_report_task, row);
			if (row_h >= 11)
				add(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%" PRIu64 "/%" PRIu64
				       "</text>\n", p.left - 6, row_y[row] + row_h * 0.5 + 4, task->pid,
				    task->tid);
		}
		double group_h = row_h * (double)proc->ntasks;
		if (row_h < 11 && group_h >= 11)
			add(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">pid %" PRIu64 "</text>\n",
			    p.left - 6, group_top + group_h * 0.5 + 4, proc->pid);
		if (pi)
			add(s, "<line class=\"sep\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			    p.left, group_top - gap / 2, p.right, group_top - gap / 2);
	}
	if (row_h < 11)
		add(s, "<text transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\">"
		       "tasks by process</text>\n", (p.top + p.bottom) / 2);
	g_string_append(s, "</g>\n<g class=\"runs\">\n");

	/* Runs are in time order; a bar per row is kept open. */
	bar_row *bars = g_new0(bar_row, ntasks);
	double inner = row_h >= 6 ? row_h - 2 : row_h;
	for (size_t t = 0; t < ntasks; t++) {
		bars[t].y = row_y[t] + (row_h - inner) / 2;
		bars[t].h = inner;
	}
	double width = p.right - p.left;
	for (guint i = 0; i < r->runs->len; i++) {
		const lp_report_run *run = &g_array_index(r->runs, lp_report_run, i);
		char colour[8];
		run_colour(rank, run->program, colour);
		double x0 = p.left + width * (double)(run->start - r->first_ts) / scale;
		double x1 = p.left + width * (double)(run->end - r->first_ts) / scale;
		bar_add(s, &bars[run->task], x0, x1, colour);
	}
	for (size_t t = 0; t < ntasks; t++)
		bar_flush(s, &bars[t]);
	g_string_append(s, "</g>\n");
	legend(s, r, rank, p.bottom + 56);
	g_string_append(s, "</svg>\n");
	add(s, "<figcaption>Which task was current (from its <code>S</code> event to the next "
	       "switch or its exit), one row per task labelled pid/tid in decimal, as the system shows them (the table of processes "
	       "gives them in hex too, as traces write them), grouped by process; "
	       "colour: the program the task ran. %u run%s of %zu task%s.</figcaption>\n",
	    r->runs->len, r->runs->len == 1 ? "" : "s", ntasks, ntasks == 1 ? "" : "s");
	g_free(bars);
	g_free(row_y);

	if (r->schedule && r->schedule->columns)
		figure_schedule(s, r, rank);
	g_free(rank);
	g_string_append(s, "</figure>\n");
}

/* ---- canonical pages by kind ---- */

static void figure_kinds(GString *s, const lp_report *r)
{
	add(s, "<figure id=\"figure-kinds\">\n");
	if (!r->has_stats) {
		add(s, "<p>Canonical pages by kind: %s say what kind of page each is.</p>\n"
		       "</figure>\n", r->source == LP_REPORT_DIRECTORY
					 ? "this directory's index.yaml has no merge statistics, "
					   "and its task files do not"
					 : "a basic merge stream does not");
		return;
	}
	uint64_t most = 0;
	for (int k = 0; k < LP_PAGE_KIND_COUNT; k++)
		most = r->stats.pages[k] > most ? r->stats.pages[k] : most;
	const double row = 34;
	/* Room for the longest label: about 0.6 em a character at 14 px. */
	size_t longest = 0;
	for (int k = 0; k < LP_PAGE_KIND_COUNT; k++)
		longest = MAX(longest, strlen(lp_page_kind_words[k]));
	plot p = {.left = 16 + 8.5 * (double)longest, .right = VIEW_W - 60, .top = 10};
	p.bottom = p.top + row * LP_PAGE_KIND_COUNT;
	GString *desc = g_string_new(NULL);
	uint64_t pages = lp_stats_total_pages(&r->stats);
	add(desc, "%" PRIu64 " canonical page%s:", pages, pages == 1 ? "" : "s");
	for (int k = 0; k < LP_PAGE_KIND_COUNT; k++)
		add(desc, "%s %s %" PRIu64, k ? "," : "", lp_page_kind_words[k], r->stats.pages[k]);
	svg_open(s, "kinds", p.bottom + 52, "Canonical pages by kind", desc->str);
	g_string_free(desc, TRUE);
	double ticks[MAX_TICKS];
	size_t n = lp_axis_ticks(0, (double)(most ? most : 1), 6, ticks);
	double scale = ticks[n - 1];
	g_string_append(s, "<g class=\"grid\">\n");
	for (size_t i = 0; i < n; i++) {
		double x = p.left + (p.right - p.left) * ticks[i] / scale;
		add(s, "<line class=\"major\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x,
		    p.top, x, p.bottom);
	}
	g_string_append(s, "</g>\n<g class=\"axis\">\n");
	for (size_t i = 0; i < n; i++) {
		add(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
		    p.left + (p.right - p.left) * ticks[i] / scale, p.bottom + 18);
		add_short(s, ticks[i]);
		g_string_append(s, "</text>\n");
	}
	add(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">canonical pages</text>\n",
	    (p.left + p.right) / 2, p.bottom + 40);
	for (int k = 0; k < LP_PAGE_KIND_COUNT; k++) {
		double y = p.top + row * k;
		char colour[8];
		lp_report_colour((size_t)k, colour);
		double w = (p.right - p.left) * (double)r->stats.pages[k] / scale;
		add(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", p.left - 8,
		    y + row / 2 + 5, lp_page_kind_words[k]);
		add(s, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"/>\n",
		    p.left, y + 6, w, row - 12, colour);
		add(s, "<text x=\"%.1f\" y=\"%.1f\">%" PRIu64 "</text>\n", p.left + w + 5,
		    y + row / 2 + 5, r->stats.pages[k]);
	}
	add(s, "<path class=\"frame\" d=\"M%.1f %.1fV%.1fH%.1f\"/>\n</g>\n</svg>\n", p.left, p.top,
	    p.bottom, p.right);
	add(s, "<figcaption>Canonical pages (distinct page identities referenced) by kind, as the "
	       "merge counted them: %" PRIu64 " in all.</figcaption>\n</figure>\n",
	    lp_stats_total_pages(&r->stats));
}

/* ---- tables ---- */

static void total_row(GString *s, const char *label, const char *key, uint64_t value)
{
	add(s, "<tr><th scope=\"row\">%s</th><td data-total=\"%s\">%" PRIu64 "</td></tr>\n", label,
	    key, value);
}

/* Three small tables side by side (one under another on a phone). */
static void totals(GString *s, const lp_report *r)
{
	g_string_append(s, "<section id=\"totals\">\n<h2>Totals</h2>\n<div class=\"totals\">\n"
			   "<table>\n");
	uint64_t refs = 0;
	const uint64_t *by_type = r->has_stats ? r->stats.refs : r->refs_by_type;
	for (int t = 0; t < 6; t++)
		refs += by_type[t];
	total_row(s, "references", "references", refs);
	for (int t = 0; t < 6; t++) {
		char label[64], key[32];
		g_snprintf(label, sizeof label, "&#160;&#160;%s (%c)", lp_ref_type_words[t],
			   lp_ref_types[t]);
		g_snprintf(key, sizeof key, "references-%c", lp_ref_types[t]);
		total_row(s, label, key, by_type[t]);
	}
	if (!r->has_stats) {
		total_row(s, "distinct pages", "distinct-pages", r->distinct);
		g_string_append(s, "</table>\n</div>\n</section>\n");
		return;
	}
	const lp_stats *st = &r->stats;
	g_string_append(s, "</table>\n<table>\n");
	total_row(s, "canonical pages", "canonical-pages", lp_stats_total_pages(st));
	for (int k = 0; k < LP_PAGE_KIND_COUNT; k++) {
		char label[48], key[48];
		g_snprintf(label, sizeof label, "&#160;&#160;%s", lp_page_kind_words[k]);
		g_snprintf(key, sizeof key, "canonical-pages-%s", lp_page_kind_names[k]);
		total_row(s, label, key, st->pages[k]);
	}
	total_row(s, "copy-on-write copies", "cow-copies", st->cow_copies);
	total_row(s, "unmapped pages", "unmapped-pages", st->unmapped_pages);
	total_row(s, "orphan address spaces", "orphan-spaces", st->orphan_spaces);
	total_row(s, "mismatches", "mismatches", st->mismatches);
	total_row(s, "warnings", "warnings", st->warnings);
	g_string_append(s, "</table>\n<table>\n");
	uint64_t events = 0;
	for (int t = 0; t < LP_TAG_COUNT; t++)
		events += st->events[t];
	total_row(s, "kernel events", "events", events);
	for (int t = 0; t < LP_TAG_COUNT; t++) {
		char label[64], key[32];
		g_snprintf(label, sizeof label, "&#160;&#160;%s (%c)", lp_tag_words[t], lp_tag_chars[t]);
		g_snprintf(key, sizeof key, "events-%c", lp_tag_chars[t]);
		total_row(s, label, key, st->events[t]);
	}
	g_string_append(s, "</table>\n</div>\n<p class=\"note\">The merge statistics "
			   "(laplace-formats(5), \"STATISTICS\").</p>\n</section>\n");
}

static void processes(GString *s, const lp_report *r)
{
	if (r->source == LP_REPORT_STREAM)
		return;
	if (!r->processes->len) {
		g_string_append(s, "<section id=\"processes\">\n<h2>Processes</h2>\n<p>None: no "
				   "kernel event named a task.</p>\n</section>\n");
		return;
	}
	g_string_append(s, "<section id=\"processes\">\n<h2>Processes</h2>\n<div class=\"scroll\">"
			   "<table class=\"processes\">\n<thead><tr><th>pid</th><th>pid (hex)</th><th>programs</th>"
			   "<th>tasks</th><th>references</th><th>pages touched</th></tr></thead>\n"
			   "<tbody>\n");
	for (guint i = 0; i < r->processes->len; i++) {
		const lp_report_process *p = &g_array_index(r->processes, lp_report_process, i);
		add(s, "<tr><td>%" PRIu64 "</td><td>%" PRIx64 "</td><td class=\"programs\">", p->pid,
		    p->pid);
		for (guint k = 0; k < p->programs->len; k++) {
			if (k)
				g_string_append(s, ", ");
			add_name(s, g_ptr_array_index(p->programs, k), 200);
		}
		add(s, "</td><td>%zu</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td></tr>\n", p->ntasks,
		    p->references, p->pages);
	}
	g_string_append(s, "</tbody></table></div>\n<p class=\"note\">References and pages of "
			   "user references only: a task's kernel references are the kernel's "
			   "(laplace-formats(5), \"PER-PROCESS MERGE OUTPUT\").</p>\n</section>\n");
}

static const char style[] =
	"body{font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,sans-serif;color:#1a1a1a;"
	"background:#fff;margin:0 auto;max-width:52rem;padding:1rem;line-height:1.45}"
	"h1{font-size:1.5rem;margin:.5rem 0}h2{font-size:1.2rem;margin:1.6rem 0 .5rem}"
	".input{color:#444;word-break:break-all}"
	"figure{margin:1.6rem 0;overflow-x:auto}figcaption{font-size:.9rem;color:#333;margin-top:.3rem}"
	"svg{display:block;width:100%;min-width:30rem;height:auto;font-family:inherit;font-size:14px}"
	"svg .bg{fill:#fff}svg .grid .major{stroke:#e3e3e3;stroke-width:1}"
	"svg .grid .minor{stroke:#f1f1f1;stroke-width:1}svg .frame{fill:none;stroke:#444}"
	"svg .axis text,svg .labels text,svg .legend text{fill:#222}"
	"svg .curve{fill:none;stroke-width:2.2;stroke-linejoin:round}svg .end{fill:#444}"
	"svg .knee line{stroke:#c0392b;stroke-width:1.3;stroke-dasharray:5 4}"
	"svg .knee circle{fill:#fff;stroke:#c0392b;stroke-width:2}svg .knee text{fill:#c0392b;"
	"font-size:12px}svg .sep{stroke:#bbb;stroke-width:.6}svg .unit{fill:#777}"
	".scroll{overflow-x:auto}table{border-collapse:collapse;font-variant-numeric:tabular-nums}"
	"th,td{padding:.2rem .7rem;border-bottom:1px solid #e3e3e3;text-align:right;vertical-align:top}"
	"th{font-weight:600}#totals th{text-align:left;font-weight:normal}"
	".totals{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:0 2rem;"
	"align-items:start}.totals table{width:100%}"
	"td.programs{text-align:left;word-break:break-all;min-width:8rem}"
	".note,footer{font-size:.85rem;color:#555}"
	"@media (max-width:30rem){body{padding:.5rem}th,td{padding:.2rem .35rem}}";

static const char *const source_names[] = {
	[LP_REPORT_CAPTURE] = "capture (reference and kernel event traces)",
	[LP_REPORT_DIRECTORY] = "per-process merge directory",
	[LP_REPORT_STREAM] = "basic merge stream",
};

int lp_report_write_html(const lp_report *r, lp_output *out, lp_error *err)
{
	GString *s = g_string_sized_new(1 << 16);
	g_string_append(s, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
			   "<title>laplace report: ");
	add_name(s, r->title, 200);
	add(s, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>laplace report</h1>\n"
	       "<p class=\"input\"><code>", style);
	add_name(s, r->title, 400);
	add(s, "</code>: a %s.</p>\n", source_names[r->source]);
	figure_mrc(s, r);
	figure_lifetime(s, r);
	figure_timeline(s, r);
	figure_kinds(s, r);
	totals(s, r);
	processes(s, r);
	add(s, "<footer><p>Made by laplace %s report; see laplace-report(1) for how each figure "
	       "is computed.</p></footer>\n</body>\n</html>\n", LP_VERSION);
	int rc = lp_output_write(out, s->str, s->len, err);
	g_string_free(s, TRUE);
	return rc;
}
