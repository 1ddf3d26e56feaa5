/* A study's page (report/study.h): its table read back (the header, then
 * rows of 19 fields), its manifest's cells, and SVG figures drawn with
 * the report's axes and colours (figure.h). */
#include "report/study.h"

#include <math.h>
#include <string.h>

#include <yaml.h>

#include "io/inbuf.h"
#include "io/yamlload.h"
#include "report/figure.h"

static const char header[] =
	"capture,experiment,policy,quantum,cpus,replacement,fault_ticks,seed,size,references,"
	"faults,miss_ratio,space_time,ticks,waits,evictions,busy_ticks,idle_ticks,utilization";
enum { F_CAPTURE, F_EXPERIMENT, F_POLICY, F_QUANTUM, F_CPUS, F_REPLACEMENT, F_FAULT_TICKS,
       F_SEED, F_SIZE, F_MISS_RATIO = 11, F_UTILIZATION = 18, NFIELDS };

/* A curve: one capture's points of one figure. */
typedef struct curve {
	char *capture;
	GArray *x, *y; /* doubles */
} curve;

/* A figure: a sim policy, or a schedule combination. */
typedef struct figure {
	char *key;       /* the policy, or the combination's values */
	GPtrArray *curves;
} figure;

static void curve_free(gpointer p)
{
	curve *c = p;
	g_free(c->capture);
	g_array_unref(c->x);
	g_array_unref(c->y);
	g_free(c);
}

static void figure_free(gpointer p)
{
	figure *f = p;
	g_free(f->key);
	g_ptr_array_unref(f->curves);
	g_free(f);
}

static void add_point(GPtrArray *figures, const char *key, const char *capture, double x, double y)
{
	figure *f = NULL;
	for (guint i = 0; i < figures->len && !f; i++)
		if (!strcmp(((figure *)figures->pdata[i])->key, key))
			f = figures->pdata[i];
	if (!f) {
		f = g_new0(figure, 1);
		f->key = g_strdup(key);
		f->curves = g_ptr_array_new_with_free_func(curve_free);
		g_ptr_array_add(figures, f);
	}
	curve *c = f->curves->len ? f->curves->pdata[f->curves->len - 1] : NULL;
	if (!c || strcmp(c->capture, capture)) {
		c = g_new0(curve, 1);
		c->capture = g_strdup(capture);
		c->x = g_array_new(FALSE, FALSE, sizeof(double));
		c->y = g_array_new(FALSE, FALSE, sizeof(double));
		g_ptr_array_add(f->curves, c);
	}
	g_array_append_val(c->x, x);
	g_array_append_val(c->y, y);
}

static bool parse_number(const char *s, double *v)
{
	char *end;
	if (!*s)
		return false;
	*v = g_ascii_strtod(s, &end);
	return !*end && isfinite(*v) && *v >= 0;
}

/* The table's rows into the sim and the schedule figures. */
static int read_table(const char *path, GPtrArray *sims, GPtrArray *schedules, lp_error *err)
{
	char *text;
	size_t len;
	int rc = lp_read_small_file(path, true, LP_STUDY_TABLE_MAX_BYTES, "study table", &text, &len,
				    err);
	if (rc)
		return rc;
	size_t line = 0;
	for (char *p = text, *end = text + len; !rc && p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *eol = nl ? nl : end;
		line++;
		if (eol - p > LP_LINE_MAX) {
			rc = (lp_inbuf_long_line(err, path, line), LP_EINPUT);
			break;
		}
		*eol = '\0';
		if (line == 1) {
			if (strcmp(p, header))
				rc = lp_fail(err, LP_EINPUT, "%s:1: not a study's table (laplace-study(1)): "
					     "expected the header %s", path, header);
		} else {
			char **f = g_strsplit(p, ",", -1);
			double size, y;
			bool sim = f[0] && f[1] && !strcmp(f[F_EXPERIMENT], "sim");
			if (g_strv_length(f) != NFIELDS)
				rc = lp_fail(err, LP_EINPUT, "%s:%zu: expected %d fields", path, line, NFIELDS);
			else if (!sim && strcmp(f[F_EXPERIMENT], "schedule"))
				rc = lp_fail(err, LP_EINPUT, "%s:%zu: field experiment: expected sim or "
					     "schedule", path, line);
			else if (!parse_number(f[F_SIZE], &size))
				rc = lp_fail(err, LP_EINPUT, "%s:%zu: field size: not a number", path, line);
			else if (!parse_number(f[sim ? F_MISS_RATIO : F_UTILIZATION], &y))
				rc = lp_fail(err, LP_EINPUT, "%s:%zu: field %s: not a number", path, line,
					     sim ? "miss_ratio" : "utilization");
			else if (sim)
				add_point(sims, f[F_POLICY], f[F_CAPTURE], size, y);
			else {
				char *key = g_strdup_printf(
					"%s, quantum %s, %s cpus, %s, fault ticks %s%s%s", f[F_POLICY],
					f[F_QUANTUM], f[F_CPUS], f[F_REPLACEMENT], f[F_FAULT_TICKS],
					f[F_SEED][0] ? ", seed " : "", f[F_SEED]);
				add_point(schedules, key, f[F_CAPTURE], size, y);
				g_free(key);
			}
			g_strfreev(f);
		}
		p = eol + 1;
	}
	if (!rc && !line)
		rc = lp_fail(err, LP_EINPUT, "%s: empty: not a study's table", path);
	g_free(text);
	return rc;
}

/* ---- drawing ---- */

enum { WIDTH = 720, HEIGHT = 380, LEFT = 64, RIGHT = 150, TOP = 16, BOTTOM = 44 };

typedef struct scale {
	bool log;
	double lo, hi; /* in the axis' units (log10 when log) */
	double from, to; /* pixels */
} scale;

static double place(const scale *s, double v)
{
	double u = s->log ? log10(v) : v;
	return s->from + (u - s->lo) / (s->hi - s->lo) * (s->to - s->from);
}

/* A figure: the curves of f, y a ratio (log axes for miss ratios). */
static void draw(GString *g, const figure *f, const char *caption, const char *xlabel,
		 const char *ylabel, bool log_y)
{
	double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
	for (guint c = 0; c < f->curves->len; c++) {
		const curve *cv = f->curves->pdata[c];
		for (guint i = 0; i < cv->x->len; i++) {
			double x = g_array_index(cv->x, double, i), y = g_array_index(cv->y, double, i);
			if (x > 0) {
				xmin = MIN(xmin, x);
				xmax = MAX(xmax, x);
			}
			if (y > 0)
				ymin = MIN(ymin, y);
			ymax = MAX(ymax, y);
		}
	}
	if (!(xmax > 0)) {
		add(g, "<p>%s: no point to draw.</p>\n", caption);
		return;
	}
	scale sx = {true, floor(log10(xmin)), ceil(log10(xmax)), LEFT, WIDTH - RIGHT};
	if (sx.hi <= sx.lo)
		sx.hi = sx.lo + 1;
	scale sy = {log_y, 0, 1, HEIGHT - BOTTOM, TOP};
	if (log_y) {
		/* Zero miss ratios are drawn at the floor. */
		sy.lo = isfinite(ymin) ? floor(log10(ymin)) : -6;
		sy.hi = ymax > 0 ? ceil(log10(ymax)) : 0;
		if (sy.hi <= sy.lo)
			sy.hi = sy.lo + 1;
	}
	add(g, "<figure><svg viewBox=\"0 0 %d %d\" role=\"img\"><rect class=\"bg\" width=\"%d\" "
	       "height=\"%d\"/><g class=\"grid axis\">", WIDTH, HEIGHT, WIDTH, HEIGHT);
	for (double e = sx.lo; e <= sx.hi + 1e-9; e++) {
		double x = place(&sx, pow(10, e));
		GString *label = g_string_new(NULL);
		lp_format_short(label, pow(10, e));
		add(g, "<line class=\"major\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
		       "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>",
		    x, TOP, x, HEIGHT - BOTTOM, x, HEIGHT - BOTTOM + 16, label->str);
		g_string_free(label, TRUE);
	}
	size_t nticks = log_y ? (size_t)(sy.hi - sy.lo) + 1 : 6;
	for (size_t i = 0; i < nticks; i++) {
		double v = log_y ? pow(10, sy.lo + (double)i) : (double)i / 5;
		double y = place(&sy, v);
		add(g, "<line class=\"major\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
		       "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>",
		    LEFT, y, WIDTH - RIGHT, y, LEFT - 6, y + 4, v);
	}
	add(g, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>"
	       "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>"
	       "<text transform=\"translate(14 %d) rotate(-90)\" text-anchor=\"middle\">%s</text></g>",
	    LEFT, TOP, WIDTH - RIGHT - LEFT, HEIGHT - BOTTOM - TOP, (LEFT + WIDTH - RIGHT) / 2,
	    HEIGHT - 6, xlabel, (TOP + HEIGHT - BOTTOM) / 2, ylabel);
	for (guint c = 0; c < f->curves->len; c++) {
		const curve *cv = f->curves->pdata[c];
		char colour[8];
		lp_report_colour(c, colour);
		add(g, "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"%s\" points=\"", colour);
		for (guint i = 0; i < cv->x->len; i++) {
			double x = g_array_index(cv->x, double, i), y = g_array_index(cv->y, double, i);
			if (x <= 0)
				continue;
			if (log_y && y < pow(10, sy.lo))
				y = pow(10, sy.lo);
			add(g, "%s%.1f,%.1f", i ? " " : "", place(&sx, x), place(&sy, y));
		}
		add(g, "\"/><text x=\"%d\" y=\"%d\" fill=\"%s\">", WIDTH - RIGHT + 10, TOP + 14 + 18 * (int)c,
		    colour);
		lp_html_escape(g, cv->capture);
		g_string_append(g, "</text>");
	}
	g_string_append(g, "</svg><figcaption>");
	lp_html_escape(g, caption);
	g_string_append(g, "</figcaption></figure>\n");
}

/* ---- the manifest's cells ---- */

static void cells_table(GString *g, const char *dir)
{
	char *path = g_build_filename(dir, "manifest.yaml", NULL);
	char *text = NULL;
	size_t len = 0;
	lp_error err;
	yaml_document_t doc;
	if (lp_read_small_file(path, true, LP_STUDY_TABLE_MAX_BYTES, "manifest", &text, &len, &err) ||
	    lp_yaml_load(path, text, len, &doc, NULL)) {
		if (text)
			yaml_document_delete(&doc);
		add(g, "<p class=\"note\">No manifest to show (%s).</p>\n", "manifest.yaml");
		g_free(text);
		g_free(path);
		return;
	}
	yaml_node_t *cells = lp_yaml_value(&doc, yaml_document_get_root_node(&doc), "cells");
	g_string_append(g, "<h2>Cells</h2>\n<div class=\"scroll\"><table><thead><tr><th>cell</th>"
			   "<th>status</th><th>wall s</th><th>CPU s</th><th>peak RSS KiB</th>"
			   "<th>job</th></tr></thead><tbody>\n");
	for (yaml_node_item_t *it = cells && cells->type == YAML_SEQUENCE_NODE ? cells->data.sequence.items.start : NULL;
	     it && it < cells->data.sequence.items.top; it++) {
		yaml_node_t *cell = yaml_document_get_node(&doc, *it);
		static const char *const keys[] = {"name", "status", "wall_seconds", "cpu_seconds",
						   "peak_rss_kib", "job_id"};
		g_string_append(g, "<tr>");
		for (size_t k = 0; k < G_N_ELEMENTS(keys); k++) {
			const char *v = lp_yaml_text(&doc, cell, keys[k]);
			g_string_append(g, k < 2 ? "<td style=\"text-align:left\">" : "<td>");
			lp_html_escape(g, v ? v : "");
			g_string_append(g, "</td>");
		}
		g_string_append(g, "</tr>\n");
	}
	g_string_append(g, "</tbody></table></div>\n");
	yaml_document_delete(&doc);
	g_free(text);
	g_free(path);
}

static const char style[] =
	"body{font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,sans-serif;color:#1a1a1a;"
	"background:#fff;margin:0 auto;max-width:52rem;padding:1rem;line-height:1.45}"
	"h1{font-size:1.5rem;margin:.5rem 0}h2{font-size:1.15rem;margin:1.4rem 0 .4rem}"
	"figure{margin:1.2rem 0;overflow-x:auto}figcaption{font-size:.9rem;color:#333}"
	"svg{display:block;width:100%;min-width:30rem;height:auto;font-size:13px}"
	"svg .bg{fill:#fff}svg .grid .major{stroke:#e3e3e3}svg .frame{fill:none;stroke:#444}"
	".scroll{overflow-x:auto}table{border-collapse:collapse;font-size:.85rem;"
	"font-variant-numeric:tabular-nums}th,td{padding:.2rem .4rem;border-bottom:1px solid #e3e3e3;"
	"text-align:right}.note,footer{font-size:.85rem;color:#555}";

int lp_study_page_write(const char *dir, const char *table, lp_output *out, lp_error *err)
{
	char *path = table ? g_strdup(table) : g_build_filename(dir, "table.csv", NULL);
	GPtrArray *sims = g_ptr_array_new_with_free_func(figure_free);
	GPtrArray *schedules = g_ptr_array_new_with_free_func(figure_free);
	int rc = read_table(path, sims, schedules, err);
	GString *g = g_string_sized_new(1 << 14);
	if (!rc) {
		g_string_append(g, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
				   "<title>laplace report: study ");
		lp_html_escape(g, dir);
		add(g, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>laplace report: a study</h1>\n"
		       "<p><code>", style);
		lp_html_escape(g, path);
		g_string_append(g, "</code>: its table (laplace-study(1)).</p>\n");
		if (sims->len)
			g_string_append(g, "<h2>Miss-ratio curves</h2>\n");
		for (guint i = 0; i < sims->len; i++) {
			const figure *f = sims->pdata[i];
			char *caption = g_strdup_printf("%s: miss ratio against memory size (frames, or "
							"window), log axes, one curve per capture", f->key);
			draw(g, f, caption, "size", "miss ratio", true);
			g_free(caption);
		}
		if (schedules->len)
			g_string_append(g, "<h2>Thrashing curves</h2>\n");
		for (guint i = 0; i < schedules->len; i++) {
			const figure *f = schedules->pdata[i];
			char *caption = g_strdup_printf("%s: utilization against memory (frames), one "
							"curve per capture", f->key);
			draw(g, f, caption, "memory", "utilization", false);
			g_free(caption);
		}
		cells_table(g, dir);
		add(g, "<footer><p>Made by laplace %s; see laplace-study(1).</p></footer>\n</body>\n"
		       "</html>\n", LP_VERSION);
		rc = lp_output_write(out, g->str, g->len, err);
	}
	g_string_free(g, TRUE);
	g_ptr_array_unref(sims);
	g_ptr_array_unref(schedules);
	g_free(path);
	return rc;
}

int lp_study_page(const char *dir, const char *table, const char *page, lp_error *err)
{
	lp_output *out = lp_output_open(page && strcmp(page, "-") ? page : NULL, LP_COMPRESS_NONE, err);
	if (!out)
		return err->status;
	int rc = lp_study_page_write(dir, table, out, err);
	if (rc) {
		lp_output_abort(out);
		return rc;
	}
	return lp_output_commit(out, err);
}
