/* What a schedule's run shows: its report as YAML (laplace-formats(5),
 * "RE-SCHEDULING", "Output and report"), written and read back, and a
 * picture of it, as drmemtrace's schedule_stats draws one. */
#ifndef LAPLACE_SCHED_SCHEDREPORT_H
#define LAPLACE_SCHED_SCHEDREPORT_H

#include <glib.h>

#include "core/error.h"
#include "sched/schedule.h"

/* The report; NULL with err set (LP_EIO) when the emitter fails. */
GString *lp_sched_report_yaml(const lp_sched_report *rep, lp_error *err);
/* Read back the report at path of a directory whose units, in report
 * order (lp_sched_unit_order), are units[0, nunits) (their pid, tid and
 * incarnation): *rep as the run gave it, but with the units as listed
 * (unit_order the identity) and no slices; free it with
 * lp_sched_report_free. LP_EINPUT naming file, line and field when it is
 * not one as laplace schedule writes it, keys and values, or lists other
 * units or in another order; LP_EIO when it cannot be read. The file may
 * be no larger than such a report of nunits units can be. On failure
 * *rep holds nothing. */
int lp_sched_report_read(const char *path, const lp_sched_unit *units, size_t nunits,
			 lp_sched_report *rep, lp_error *err);
/* One line per processor, a letter per slice of the first
 * LP_SCHED_PICTURE_SLICES, then the legend. */
GString *lp_sched_report_picture(const lp_sched_report *rep);

#endif
