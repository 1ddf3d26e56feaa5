/* laplace schedule's outputs (laplace-schedule(1)): the references of a
 * schedule of a per-process directory as one basic merge stream, or one
 * per processor in a directory, and the schedule's report, published
 * together once the run is through (laplace(1), "OUTPUTS"). */
#ifndef LAPLACE_SCHED_PUBLISH_H
#define LAPLACE_SCHED_PUBLISH_H

#include <stdbool.h>

#include "core/error.h"
#include "formats/forms.h"
#include "sched/schedule.h"

typedef struct lp_schedule_request {
	const char *dir;     /* the per-process directory */
	const char *output;  /* the stream; NULL: standard output */
	const char *per_cpu; /* or NULL, else the directory of cpu0 ... cpuK-1 */
	const char *report;  /* the YAML report, or NULL */
	lp_sched_options opt;
	enum lp_form form;   /* a form without addresses (registry.h) */
	bool user_only;      /* leave kernel references (R W I) out */
	bool force;          /* replace an existing per_cpu directory */
	unsigned threads;    /* > 1: task files parsed ahead in this many threads */
} lp_schedule_request;

/* Run rq and publish its outputs. Returns 0 with *report filled (free it
 * with lp_sched_report_free), or an lp_status with err set and nothing
 * published: LP_EUSAGE for too few file descriptors or an existing
 * per_cpu without force, LP_EINPUT for a directory that is not a
 * per-process one, else the run's or the outputs' status. */
int lp_schedule_write(const lp_schedule_request *rq, lp_sched_report *report, lp_error *err);

#endif
