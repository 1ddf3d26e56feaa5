/* Progress reports, shared by every long run (merges, the generator). */
#ifndef LAPLACE_CORE_PROGRESS_H
#define LAPLACE_CORE_PROGRESS_H

#include <stdint.h>

/* How far a long run has come; producers report it often, the callback
 * decides how often to show it. */
typedef struct lp_progress_info {
	uint64_t records;  /* references done */
	uint64_t events;   /* kernel events done */
	double fraction;   /* of the whole work, 0 to 1, or -1 when unknown */
} lp_progress_info;
typedef void (*lp_progress_fn)(void *ctx, const lp_progress_info *info);

#endif
