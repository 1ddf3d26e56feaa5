#include "cmd/table.h"

#include <stdarg.h>
#include <string.h>

typedef struct table_row {
	bool note;
	GPtrArray *cells; /* the label first; a note's text alone */
} table_row;

struct cli_table {
	GArray *rows; /* of table_row */
};

static void free_row(gpointer p)
{
	g_ptr_array_free(((table_row *)p)->cells, TRUE);
}

cli_table *cli_table_new(void)
{
	cli_table *t = g_new(cli_table, 1);
	t->rows = g_array_new(FALSE, FALSE, sizeof(table_row));
	g_array_set_clear_func(t->rows, free_row);
	return t;
}

static void add_row(cli_table *t, bool note, char *first)
{
	table_row row = {note, g_ptr_array_new_with_free_func(g_free)};
	g_ptr_array_add(row.cells, first);
	g_array_append_val(t->rows, row);
}

static void add_cell(cli_table *t, char *text)
{
	g_assert(t->rows->len && !g_array_index(t->rows, table_row, t->rows->len - 1).note);
	g_ptr_array_add(g_array_index(t->rows, table_row, t->rows->len - 1).cells, text);
}

void cli_table_row(cli_table *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_row(t, false, g_strdup_vprintf(fmt, ap));
	va_end(ap);
}

void cli_table_note(cli_table *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_row(t, true, g_strdup_vprintf(fmt, ap));
	va_end(ap);
}

void cli_table_text(cli_table *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_cell(t, g_strdup_vprintf(fmt, ap));
	va_end(ap);
}

void cli_table_count(cli_table *t, uint64_t n)
{
	add_cell(t, g_strdup_printf("%" G_GUINT64_FORMAT, n));
}

void cli_table_empty(cli_table *t)
{
	add_cell(t, g_strdup(""));
}

void cli_table_percent(cli_table *t, uint64_t part, uint64_t whole)
{
	add_cell(t, whole ? g_strdup_printf("%.2f%%", 100.0 * (double)part / (double)whole)
			  : g_strdup("-"));
}

void cli_table_share(cli_table *t, uint64_t part, uint64_t whole)
{
	cli_table_count(t, part);
	cli_table_percent(t, part, whole);
}

void cli_table_finish(cli_table *t, GString *to)
{
	GArray *widths = g_array_new(FALSE, TRUE, sizeof(size_t));
	for (guint r = 0; r < t->rows->len; r++) {
		const table_row *row = &g_array_index(t->rows, table_row, r);
		if (row->note)
			continue;
		if (widths->len < row->cells->len)
			g_array_set_size(widths, row->cells->len);
		for (guint c = 0; c < row->cells->len; c++) {
			size_t len = strlen(g_ptr_array_index(row->cells, c));
			if (len > g_array_index(widths, size_t, c))
				g_array_index(widths, size_t, c) = len;
		}
	}
	for (guint r = 0; r < t->rows->len; r++) {
		const table_row *row = &g_array_index(t->rows, table_row, r);
		size_t start = to->len;
		for (guint c = 0; c < row->cells->len; c++) {
			const char *cell = g_ptr_array_index(row->cells, c);
			int width = row->note ? 0 : (int)g_array_index(widths, size_t, c);
			if (c == 0)
				g_string_append_printf(to, "%-*s", width, cell);
			else
				g_string_append_printf(to, "  %*s", width, cell);
		}
		/* A row that ends early, or in empty cells, leaves no padding. */
		while (to->len > start && to->str[to->len - 1] == ' ')
			g_string_truncate(to, to->len - 1);
		g_string_append_c(to, '\n');
	}
	g_array_free(widths, TRUE);
	g_array_free(t->rows, TRUE);
	g_free(t);
}
