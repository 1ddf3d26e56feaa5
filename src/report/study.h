/* laplace report --study DIR and laplace study --report PAGE: a study's
 * table and manifest (laplace-study(1)) read back and drawn as one page:
 * each sim policy's miss-ratio curves of every capture on log axes, each
 * schedule combination's utilization against memory, one curve per
 * capture, and the cells' status, time and memory. */
#ifndef LAPLACE_REPORT_STUDY_H
#define LAPLACE_REPORT_STUDY_H

#include "core/error.h"
#include "io/io.h"

/* Tables larger than this are refused. */
#define LP_STUDY_TABLE_MAX_BYTES (256u << 20)

/* Read DIR's table (table, or DIR/table.csv when NULL) and manifest, and
 * write the page to out (not committed). LP_EINPUT naming the file and
 * line when the table is not a study's table (its header, 19 fields a
 * row, lines of at most 4096 bytes), LP_EIO when it cannot be read. A
 * manifest that is missing or unreadable leaves the cells' table out. */
int lp_study_page_write(const char *dir, const char *table, lp_output *out, lp_error *err);
/* The same into the file page (NULL or "-": standard output), written
 * whole or not at all. */
int lp_study_page(const char *dir, const char *table, const char *page, lp_error *err);

#endif
