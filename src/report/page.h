/* The report as one self-contained HTML page (laplace-report(1)). */
#ifndef LAPLACE_REPORT_PAGE_H
#define LAPLACE_REPORT_PAGE_H

#include "core/error.h"
#include "io/io.h"
#include "report/collect.h"

/* The page of r, written to out. */
int lp_report_write_html(const lp_report *r, lp_output *out, lp_error *err);

#endif
