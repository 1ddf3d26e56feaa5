/* A sweep's table read back and drawn (laplace-report(1), "SWEEP"). */
#include "report/sweep.h"
#include "report/figure.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/numbers.h"
#include "io/inbuf.h"

static const char header[] =
	"memory,ticks,references,faults,waits,evictions,busy_ticks,idle_ticks,utilization";
static const char *const fields[] = {"memory",    "ticks",      "references",
				     "faults",    "waits",      "evictions",
				     "busy_ticks", "idle_ticks", "utilization"};
enum { F_MEMORY, F_TICKS, F_REFERENCES, F_FAULTS, F_WAITS, F_EVICTIONS, F_BUSY, F_IDLE, F_UTIL, NFIELDS };

static int bad(lp_error *err, const char *path, size_t line, const char *field, const char *what)
{
	return lp_fail(err, LP_EINPUT, "%s:%zu: field %s: %s", path, line, field, what);
}

/* Row line (NUL-terminated, its newline gone) into *row. */
static int parse_row(char *text, const char *path, size_t line, lp_sweep_row *row, lp_error *err)
{
	uint64_t v[F_UTIL];
	lp_u128 idle = 0; /* ticks x processors can pass 2^64 - 1 */
	char *field = text;
	for (int f = 0; f < NFIELDS; f++) {
		char *comma = strchr(field, ',');
		if (f < F_UTIL && !comma)
			return bad(err, path, line, fields[f + 1], "missing (a row has nine fields)");
		if (f == F_UTIL && comma)
			return bad(err, path, line, fields[f], "more than nine fields");
		if (comma)
			*comma = '\0';
		if (f == F_IDLE ? !lp_parse_decimal128(field, ~(lp_u128)0 >> 1, &idle)
				: f < F_UTIL && !lp_parse_decimal(field, 0, UINT64_MAX, &v[f]))
			return bad(err, path, line, fields[f], "not a decimal count");
		if (f == F_UTIL) {
			/* As laplace schedule prints it: %.6f of busy over all. */
			lp_u128 all = v[F_BUSY] + idle;
			char want[32];
			snprintf(want, sizeof want, "%.6f", all ? (double)v[F_BUSY] / (double)all : 0.0);
			if (strcmp(field, want))
				return bad(err, path, line, fields[f],
					   "not busy_ticks / (busy_ticks + idle_ticks) with six decimals");
			row->utilization = strtod(field, NULL);
		} else {
			field = comma + 1;
		}
	}
	if (!v[F_MEMORY])
		return bad(err, path, line, "memory", "0 (laplace schedule --memory is at least 1)");
	if (v[F_BUSY] != v[F_REFERENCES])
		return bad(err, path, line, "busy_ticks", "not the references");
	if (v[F_EVICTIONS] > v[F_FAULTS])
		return bad(err, path, line, "evictions", "more than faults");
	/* busy + idle is ticks x processors, 1 to 1024 of them. */
	lp_u128 all = v[F_BUSY] + idle;
	if (v[F_TICKS] ? all % v[F_TICKS] || !all || all / v[F_TICKS] > 1024 : all)
		return bad(err, path, line, "idle_ticks",
			   "busy_ticks + idle_ticks is not ticks x 1 to 1024 processors");
	*row = (lp_sweep_row){v[F_MEMORY], v[F_TICKS], v[F_REFERENCES], v[F_FAULTS], v[F_WAITS],
			      v[F_EVICTIONS], v[F_BUSY], idle, row->utilization};
	return 0;
}

lp_sweep *lp_sweep_read(const char *path, lp_error *err)
{
	char *text = NULL;
	size_t len = 0;
	if (lp_read_small_file(path, true, (size_t)(LP_SWEEP_MAX_ROWS + 1) * LP_SWEEP_LINE_MAX,
			       "sweep table", &text, &len, err))
		return NULL;
	lp_sweep *s = g_new0(lp_sweep, 1);
	s->name = g_strdup(path);
	int rc = 0;
	size_t line = 0, cap = 0;
	for (char *p = text; !rc && p < text + len; line++) {
		char *nl = memchr(p, '\n', (size_t)(text + len - p));
		if (!nl) {
			rc = bad(err, path, line + 1, line ? "utilization" : "header",
				 "the last line has no newline");
			break;
		}
		if ((size_t)(nl - p) >= LP_SWEEP_LINE_MAX) {
			rc = bad(err, path, line + 1, line ? "memory" : "header", "a line too long");
			break;
		}
		*nl = '\0';
		if (memchr(p, '\0', (size_t)(nl - p))) {
			rc = bad(err, path, line + 1, line ? "memory" : "header", "a NUL byte");
			break;
		}
		if (!line) {
			if (strcmp(p, header))
				rc = bad(err, path, 1, "header",
					 "not that of laplace schedule --memory M1,M2,... (" "memory,ticks,...)");
		} else if (line > LP_SWEEP_MAX_ROWS) {
			/* the first row past the limit */
			rc = bad(err, path, line + 1, "memory", "more than 100000 rows");
		} else {
			if (s->nrows == cap) {
				cap = cap ? cap * 2 : 16;
				s->rows = g_renew(lp_sweep_row, s->rows, cap);
			}
			rc = parse_row(p, path, line + 1, &s->rows[s->nrows], err);
			s->nrows += !rc;
		}
		p = nl + 1;
	}
	if (!rc && !line)
		rc = bad(err, path, 1, "header", "missing (an empty file)");
	g_free(text);
	if (rc) {
		lp_sweep_free(s);
		return NULL;
	}
	return s;
}

void lp_sweep_free(lp_sweep *s)
{
	if (!s)
		return;
	g_free(s->name);
	g_free(s->rows);
	g_free(s);
}

size_t lp_sweep_knee(const lp_sweep *s)
{
	double best = 0;
	for (size_t i = 0; i < s->nrows; i++)
		best = fmax(best, s->rows[i].utilization);
	size_t knee = SIZE_MAX;
	for (size_t i = 0; best > 0 && i < s->nrows; i++)
		if (s->rows[i].utilization >= 0.9 * best &&
		    (knee == SIZE_MAX || s->rows[i].memory < s->rows[knee].memory))
			knee = i;
	return knee;
}

/* ---- the page ---- */

#define VIEW_W 640.0

typedef struct plot {
	double left, right, top, bottom;
	double x_lo, x_hi; /* log10 of the memory sizes at the edges */
	bool log_y;        /* faults: log scale */
	double y_lo, y_hi; /* values (log10 for log_y) at bottom and top */
} plot;

static double px(const plot *p, double memory)
{
	double span = p->x_hi - p->x_lo;
	return p->left + (p->right - p->left) * (span > 0 ? (log10(memory) - p->x_lo) / span : 0.5);
}

static double py(const plot *p, double v)
{
	double y = p->log_y ? log10(fmax(v, 1)) : v;
	return p->bottom - (p->bottom - p->top) * (y - p->y_lo) / (p->y_hi - p->y_lo);
}

/* The rows' indexes by memory, each size once (its first row). */
static size_t *by_memory(const lp_sweep *s, size_t *n)
{
	size_t *order = g_new(size_t, s->nrows ? s->nrows : 1);
	*n = 0;
	for (size_t i = 0; i < s->nrows; i++) {
		size_t at = *n;
		while (at > 0 && s->rows[order[at - 1]].memory > s->rows[i].memory)
			at--;
		if (at > 0 && s->rows[order[at - 1]].memory == s->rows[i].memory)
			continue;
		memmove(order + at + 1, order + at, (*n - at) * sizeof *order);
		order[at] = i;
		++*n;
	}
	return order;
}

/* A memory size under the axis. */
static void size_label(GString *g, uint64_t memory)
{
	if (memory < 100000)
		g_string_append_printf(g, "%" PRIu64, memory);
	else
		lp_format_short(g, (double)memory);
}

/* One curve: its axes, the points and the knee. */
static void figure(GString *g, const lp_sweep *s, const size_t *order, size_t n, size_t knee,
		   bool faults)
{
	const char *id = faults ? "faults" : "utilization";
	plot p = {.left = 78, .right = VIEW_W - 18, .top = 38, .bottom = 300, .log_y = faults};
	p.x_lo = log10((double)s->rows[order[0]].memory);
	p.x_hi = log10((double)s->rows[order[n - 1]].memory);
	/* Faults: a tick at each power of ten up to the most, at most
	 * 10^20 (a count of 64 bits is below it). */
	double ticks[21];
	size_t nt;
	if (faults) {
		uint64_t most = 1;
		for (size_t i = 0; i < n; i++)
			most = MAX(most, s->rows[order[i]].faults);
		p.y_lo = 0;
		p.y_hi = fmax(1, ceil(log10((double)most)));
		nt = (size_t)p.y_hi + 1;
		for (size_t k = 0; k < nt; k++)
			ticks[k] = pow(10, (double)k);
	} else {
		nt = lp_axis_ticks(0, 1, 6, ticks);
		p.y_lo = 0;
		p.y_hi = 1;
	}
	add(g, "<figure id=\"figure-%s\">\n<svg id=\"%s\" viewBox=\"0 0 %.0f 360\" role=\"img\" "
	       "aria-labelledby=\"%s-title\">\n<title id=\"%s-title\">%s against memory size</title>\n"
	       "<rect class=\"bg\" width=\"100%%\" height=\"100%%\"/>\n<g class=\"grid\">\n",
	    id, id, VIEW_W, id, id, faults ? "Faults" : "Utilization");
	for (size_t k = 0; k < nt; k++)
		add(g, "<line class=\"major\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
		    p.left, py(&p, ticks[k]), p.right, py(&p, ticks[k]));
	for (size_t i = 0; i < n; i++) {
		double x = px(&p, (double)s->rows[order[i]].memory);
		add(g, "<line class=\"minor\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x,
		    p.top, x, p.bottom);
	}
	g_string_append(g, "</g>\n<g class=\"axis\">\n");
	for (size_t k = 0; k < nt; k++) {
		add(g, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", p.left - 6,
		    py(&p, ticks[k]) + 4.5);
		lp_format_short(g, ticks[k]);
		g_string_append(g, "</text>\n");
	}
	/* Sizes along the axis, exact below 100000 (1536, not 1.54k: a
	 * reader looks for the sizes swept), as many as fit without
	 * overlapping (a character about 8 units wide); the largest is
	 * always there, anchored at its end, and the others give way to it. */
	GString *label = g_string_new(NULL);
	double end_left = p.right;
	for (size_t pass = 0; pass < 2; pass++) {
		double last_right = -1e9;
		for (size_t i = pass ? 0 : n - 1; i < n; i++) {
			if (pass && i == n - 1)
				break;
			double x = px(&p, (double)s->rows[order[i]].memory);
			g_string_truncate(label, 0);
			size_label(label, s->rows[order[i]].memory);
			double width = 8.0 * (double)label->len;
			bool at_end = x > p.right - width / 2;
			double left = at_end ? x - width : x - width / 2;
			double right = at_end ? x : x + width / 2;
			if (!pass)
				end_left = n > 1 ? left : p.right + 1e9;
			else if (left < last_right + 6 || right + 6 > end_left)
				continue;
			add(g, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s</text>\n", x,
			    p.bottom + 18, at_end ? "end" : "middle", label->str);
			last_right = right;
			if (!pass)
				break;
		}
	}
	g_string_free(label, TRUE);
	add(g, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">memory (frames, log scale)</text>\n",
	    (p.left + p.right) / 2, p.bottom + 44);
	add(g, "<text transform=\"translate(18 %.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n",
	    (p.top + p.bottom) / 2, faults ? "faults (log scale)" : "utilization");
	add(g, "<path class=\"frame\" d=\"M%.1f %.1fV%.1fH%.1f\"/>\n</g>\n<path class=\"curve\" d=\"",
	    p.left, p.top, p.bottom, p.right);
	for (size_t i = 0; i < n; i++) {
		const lp_sweep_row *r = &s->rows[order[i]];
		add(g, "%s%.2f %.2f", i ? "L" : "M", px(&p, (double)r->memory),
		    py(&p, faults ? (double)r->faults : r->utilization));
	}
	g_string_append(g, "\"/>\n");
	for (size_t i = 0; i < n; i++) {
		const lp_sweep_row *r = &s->rows[order[i]];
		add(g, "<circle class=\"end\" cx=\"%.2f\" cy=\"%.2f\" r=\"3\"/>\n", px(&p, (double)r->memory),
		    py(&p, faults ? (double)r->faults : r->utilization));
	}
	if (knee != SIZE_MAX) {
		const lp_sweep_row *r = &s->rows[knee];
		double x = px(&p, (double)r->memory);
		double y = py(&p, faults ? (double)r->faults : r->utilization);
		const char *anchor = x > p.right - 60 ? "end" : x < p.left + 60 ? "start" : "middle";
		add(g, "<g class=\"knee\"><line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\"/>"
		       "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\"/><text x=\"%.2f\" y=\"%.1f\" "
		       "text-anchor=\"%s\">knee %" PRIu64 "</text></g>\n",
		    x, p.top - 4, x, p.bottom, x, y, x, p.top - 8, anchor, r->memory);
	}
	g_string_append(g, "</svg>\n<figcaption>");
	if (faults)
		g_string_append(g, "Faults (references that found their page absent) against the "
				   "memory's frames, both on log scales.");
	else
		g_string_append(g, "Utilization (the processors' busy ticks over all their ticks) "
				   "against the memory's frames: below the knee the tasks thrash.");
	g_string_append(g, "</figcaption>\n</figure>\n");
}

static const char style[] =
	"body{font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,sans-serif;color:#1a1a1a;"
	"background:#fff;margin:0 auto;max-width:52rem;padding:1rem;line-height:1.45}"
	"h1{font-size:1.5rem;margin:.5rem 0}.input{color:#444;word-break:break-all}"
	"figure{margin:1.6rem 0;overflow-x:auto}figcaption{font-size:.9rem;color:#333;margin-top:.3rem}"
	"svg{display:block;width:100%;min-width:30rem;height:auto;font-family:inherit;font-size:14px}"
	"svg .bg{fill:#fff}svg .grid .major{stroke:#e3e3e3;stroke-width:1}"
	"svg .grid .minor{stroke:#f1f1f1;stroke-width:1}svg .frame{fill:none;stroke:#444}"
	"svg .axis text{fill:#222}"
	"svg .curve{fill:none;stroke:#1f5fa8;stroke-width:2.2;stroke-linejoin:round}"
	"svg .end{fill:#1f5fa8}svg .knee line{stroke:#c0392b;stroke-width:1.3;stroke-dasharray:5 4}"
	"svg .knee circle{fill:#fff;stroke:#c0392b;stroke-width:2}svg .knee text{fill:#c0392b;"
	"font-size:12px}.scroll{overflow-x:auto}"
	"table{border-collapse:collapse;font-variant-numeric:tabular-nums}"
	"table{font-size:.8rem}th,td{padding:.2rem .3rem;border-bottom:1px solid #e3e3e3;"
	"text-align:right}td{white-space:nowrap}"
	"th{font-weight:600}tr.knee td{color:#c0392b}.note,footer{font-size:.85rem;color:#555}";

int lp_sweep_write_html(const lp_sweep *s, lp_output *out, lp_error *err)
{
	GString *g = g_string_sized_new(1 << 14);
	g_string_append(g, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
			   "<title>laplace report: sweep ");
	lp_html_escape(g, s->name);
	add(g, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>laplace report: a memory sweep</h1>\n"
	       "<p class=\"input\"><code>", style);
	lp_html_escape(g, s->name);
	g_string_append(g, "</code>: a table of laplace schedule --memory M1,M2,...</p>\n");
	size_t n;
	size_t *order = by_memory(s, &n);
	size_t knee = lp_sweep_knee(s);
	if (!n) {
		g_string_append(g, "<p>No rows: nothing to draw.</p>\n");
	} else {
		if (knee != SIZE_MAX)
			add(g, "<p>Knee at %" PRIu64 " frames: the smallest memory whose utilization "
			       "(%.6f) reaches 90%% of the highest of the table.</p>\n",
			    s->rows[knee].memory, s->rows[knee].utilization);
		else
			g_string_append(g, "<p>No knee: no row has any utilization.</p>\n");
		figure(g, s, order, n, knee, false);
		figure(g, s, order, n, knee, true);
	}
	g_string_append(g, "<div class=\"scroll\"><table id=\"rows\"><thead><tr>");
	/* Headers break after an underscore: with counts of 20 digits
	 * (idle_ticks past 2^64) the table still fits the page's width, and
	 * scrolls within itself on a narrower screen. */
	for (int f = 0; f < NFIELDS; f++) {
		gchar **parts = g_strsplit(fields[f], "_", 0);
		char *head = g_strjoinv("_<wbr>", parts);
		g_strfreev(parts);
		add(g, "<th>%s</th>", head);
		g_free(head);
	}
	g_string_append(g, "</tr></thead><tbody>\n");
	for (size_t i = 0; i < s->nrows; i++) {
		const lp_sweep_row *r = &s->rows[i];
		char idle[LP_U128_DIGITS];
		add(g, "<tr%s><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64
		       "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%s"
		       "</td><td>%.6f</td></tr>\n",
		    knee != SIZE_MAX && r->memory == s->rows[knee].memory ? " class=\"knee\"" : "",
		    r->memory, r->ticks, r->references, r->faults, r->waits, r->evictions,
		    r->busy_ticks, lp_fmt_u128(idle, r->idle_ticks), r->utilization);
	}
	add(g, "</tbody></table></div>\n<footer><p>Made by laplace %s report --sweep; see "
	       "laplace-report(1) and laplace-schedule(1).</p></footer>\n</body>\n</html>\n",
	    LP_VERSION);
	g_free(order);
	int rc = lp_output_write(out, g->str, g->len, err);
	g_string_free(g, TRUE);
	return rc;
}
