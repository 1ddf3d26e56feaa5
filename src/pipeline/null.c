/* The sink that writes nothing. */
#include "pipeline/pipeline.h"

static int null_refs(void *ctx, const lp_ref *refs, const uint64_t *canon, size_t n,
		     const lp_task_id *who, lp_error *err)
{
	(void)ctx, (void)refs, (void)canon, (void)n, (void)who, (void)err;
	return 0;
}

static int null_event(void *ctx, const lp_event *ev, const lp_event_route *route, lp_error *err)
{
	(void)ctx, (void)ev, (void)route, (void)err;
	return 0;
}

static int null_finish(void *ctx, const lp_stats *stats, lp_error *err)
{
	(void)ctx, (void)stats, (void)err;
	return 0;
}

const lp_sink lp_null_sink_ops = {null_refs, null_event, null_finish};
