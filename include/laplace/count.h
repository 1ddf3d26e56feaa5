/* A merge's statistics without its output: what `laplace stat REF KERN`
 * reports. */
#ifndef LAPLACE_COUNT_H
#define LAPLACE_COUNT_H

#include "laplace/job.h"

/* Run the merge described by job (its inputs, formats, page offset,
 * strictness and warnings; the output fields are ignored), writing
 * nothing. Returns 0 with *stats filled, or an lp_status with err set. */
int lp_count_capture(const lp_merge_job *job, lp_stats *stats, lp_error *err);

#endif
