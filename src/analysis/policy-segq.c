/* segq: a FIFO front of F = K - S frames before an LRU back of S frames
 * (policies.md §2). A page leaving the front enters the back at its most
 * recent end; a hit in the back brings the page to the front's tail. */
#include <glib.h>

#include "analysis/plist.h"

enum { OUT, FRONT, BACK };

typedef struct segq {
	uint64_t front_max, back_max; /* F, S */
	lp_plist front, back;         /* head: oldest, least recent */
	lp_plink *links;
	uint8_t *where;
} segq;

static void *segq_create(const lp_policy_params *params)
{
	segq *q = g_new0(segq, 1);
	q->back_max = params->segq_lru_frames;
	q->front_max = params->frames - q->back_max;
	lp_plist_init(&q->front);
	lp_plist_init(&q->back);
	q->links = g_new(lp_plink, params->pages ? params->pages : 1);
	q->where = g_new0(uint8_t, params->pages ? params->pages : 1);
	return q;
}

static void segq_destroy(void *state)
{
	segq *q = state;
	g_free(q->links);
	g_free(q->where);
	g_free(q);
}

/* page enters the front's tail; what overflows moves on or out. */
static lp_pageno segq_enter(segq *q, lp_pageno page)
{
	lp_plist_push(&q->front, q->links, page);
	q->where[page] = FRONT;
	if (q->front.len <= q->front_max)
		return LP_NO_PAGE;
	lp_pageno old = lp_plist_pop(&q->front, q->links);
	if (!q->back_max) {
		q->where[old] = OUT;
		return old;
	}
	lp_plist_push(&q->back, q->links, old);
	q->where[old] = BACK;
	if (q->back.len <= q->back_max)
		return LP_NO_PAGE;
	lp_pageno victim = lp_plist_pop(&q->back, q->links);
	q->where[victim] = OUT;
	return victim;
}

static bool segq_access(void *state, lp_pageno page, uint64_t t, lp_pageno *victim)
{
	(void)t;
	segq *q = state;
	switch (q->where[page]) {
	case FRONT:
		return true;
	case BACK:
		/* Its leaving makes room for the front's overflow: no victim. */
		lp_plist_remove(&q->back, q->links, page);
		segq_enter(q, page);
		return true;
	default:
		*victim = segq_enter(q, page);
		return false;
	}
}

const lp_policy_ops lp_policy_segq_ops = {
	.create = segq_create,
	.destroy = segq_destroy,
	.access = segq_access,
};
