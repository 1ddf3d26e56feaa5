/* laplace report --sweep: the table of a laplace schedule --memory sweep
 * (laplace-formats(5), 9.4.6) read back, and drawn as a page: the
 * thrashing curve, utilization and faults against memory size, with its
 * knee. */
#ifndef LAPLACE_REPORT_SWEEP_H
#define LAPLACE_REPORT_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/numbers.h"
#include "io/io.h"

/* The rows a table may hold, and the longest line. */
#define LP_SWEEP_MAX_ROWS 100000
#define LP_SWEEP_LINE_MAX 256

typedef struct lp_sweep_row {
	uint64_t memory, ticks, references, faults, waits, evictions, busy_ticks;
	lp_u128 idle_ticks; /* ticks x processors can pass 2^64 - 1 */
	double utilization; /* as printed */
} lp_sweep_row;

typedef struct lp_sweep {
	char *name;         /* the file's, for the page */
	lp_sweep_row *rows; /* in the table's order */
	size_t nrows;
} lp_sweep;

/* Read the table at path, as laplace schedule writes it: its header, then
 * rows of nine decimal fields, utilization with six decimals and equal to
 * busy_ticks / (busy_ticks + idle_ticks) so printed, busy_ticks equal to
 * references, evictions no more than faults, memory at least 1. NULL with
 * err set: LP_EINPUT naming file, line and field, LP_EIO when it cannot
 * be read. */
lp_sweep *lp_sweep_read(const char *path, lp_error *err);
void lp_sweep_free(lp_sweep *s);

/* The knee of the curve: the smallest memory whose utilization reaches 90%
 * of the highest in the table; its row's index, or SIZE_MAX for a table
 * with no rows or no utilization. */
size_t lp_sweep_knee(const lp_sweep *s);

/* The page: both curves, the knee, the table. */
int lp_sweep_write_html(const lp_sweep *s, lp_output *out, lp_error *err);

#endif
