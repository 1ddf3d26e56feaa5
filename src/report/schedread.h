/* laplace schedule's report read back into a report (laplace-report(1)). */
#ifndef LAPLACE_REPORT_SCHEDREAD_H
#define LAPLACE_REPORT_SCHEDREAD_H

#include "core/error.h"
#include "report/collect.h"

/* Add laplace schedule's report of the directory r is of, the YAML file
 * at path: LP_EINPUT naming file, line and field when it is not one as
 * laplace schedule writes it, keys and values, or lists a unit other than
 * r's units in their order. The file may be no larger than such a report
 * of r's units can be; memory follows the directory, not the file. */
int lp_report_read_schedule(lp_report *r, const char *path, lp_error *err);

#endif
