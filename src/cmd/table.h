/* Aligned tables for the human summaries (merge, stat, batch): each row a
 * label, left-aligned, then cells right-aligned in columns as wide as
 * their widest cell, two spaces apart; no trailing spaces. Scripts read
 * the --stats and --report YAML instead, so the layout is free to change. */
#ifndef LAPLACE_CMD_TABLE_H
#define LAPLACE_CMD_TABLE_H

#include <glib.h>
#include <stdint.h>

#include "core/merge.h"
#include "core/record.h"

typedef struct cli_table cli_table;

cli_table *cli_table_new(void);
/* Start a row; the cells that follow fill its columns left to right. */
void cli_table_row(cli_table *t, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
void cli_table_text(cli_table *t, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
void cli_table_count(cli_table *t, uint64_t n);
/* A count and, in the next cell, its share of whole (cli_table_percent). */
void cli_table_share(cli_table *t, uint64_t part, uint64_t whole);
/* A cell left blank. */
void cli_table_empty(cli_table *t);
/* part as a percentage of whole, two decimals ("57.14%"); "-" when whole
 * is 0. */
void cli_table_percent(cli_table *t, uint64_t part, uint64_t whole);
/* A line of its own between the rows, in no column. */
void cli_table_note(cli_table *t, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* Append the table to `to` and free it. */
void cli_table_finish(cli_table *t, GString *to);

#endif
