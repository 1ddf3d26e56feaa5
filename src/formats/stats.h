/* Statistics as YAML (laplace-formats(5), "STATISTICS"). */
#ifndef LAPLACE_STATS_H
#define LAPLACE_STATS_H

#include <yaml.h>

#include "io/io.h"
#include "core/merge.h"

/* Emit the section-6 keys (references, events, canonical_pages, cow_copies,
 * unmapped_pages, orphan_spaces, mismatches, warnings) as entries of the
 * mapping the emitter is inside. Returns 0, or -1 on an emitter error. */
int lp_stats_emit(yaml_emitter_t *em, const lp_stats *st);
/* Write a YAML document holding just those keys into out (which the caller
 * commits). Returns 0 or an lp_status with err set. */
int lp_stats_write_yaml(lp_output *out, const lp_stats *st, lp_error *err);

#endif
