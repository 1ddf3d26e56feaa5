/* What a schedule's run shows: its report as YAML (laplace-formats(5),
 * "RE-SCHEDULING", "Output and report") and a picture of it, as
 * drmemtrace's schedule_stats draws one. */
#ifndef LAPLACE_SCHED_SUMMARY_H
#define LAPLACE_SCHED_SUMMARY_H

#include <glib.h>

#include "core/error.h"
#include "sched/schedule.h"

/* The report; NULL with err set (LP_EIO) when the emitter fails. */
GString *lp_sched_report_yaml(const lp_sched_report *rep, lp_error *err);
/* One line per processor, a letter per slice of the first
 * LP_SCHED_PICTURE_SLICES, then the legend. */
GString *lp_sched_report_picture(const lp_sched_report *rep);

#endif
