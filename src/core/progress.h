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

/* A progress callback where one may be given (NULL, or fn NULL: none). */
typedef struct lp_progress {
	lp_progress_fn fn;
	void *ctx;
} lp_progress;
/* Tell p that records are done, of an unknown total. */
static inline void lp_progress_records(const lp_progress *p, uint64_t records)
{
	if (p && p->fn) {
		lp_progress_info info = {.records = records, .fraction = -1};
		p->fn(p->ctx, &info);
	}
}

#endif
