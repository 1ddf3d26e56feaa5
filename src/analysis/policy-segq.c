/* segq: a FIFO front of F = K - S frames before an LRU back of S frames
 * (policies.md §2). A page leaving the front enters the back at its most
 * recent end; a hit in the back brings the page to the front's tail. */
#include <glib.h>
#include <inttypes.h>
#include <math.h>

#include "analysis/pagelist.h"

enum { LRU_FRAMES }; /* S */

typedef struct segq {
	uint64_t front_max, back_max; /* F, S */
	lp_pagelist front, back;      /* oldest: first in, least recent */
} segq;

static void *segq_create(const lp_policy_params *params)
{
	segq *q = g_new0(segq, 1);
	q->back_max = params->option[LRU_FRAMES];
	q->front_max = params->frames - q->back_max;
	lp_pagelist_init(&q->front, params->pages);
	lp_pagelist_init(&q->back, params->pages);
	return q;
}

static void segq_destroy(void *state)
{
	segq *q = state;
	lp_pagelist_clear(&q->front);
	lp_pagelist_clear(&q->back);
	g_free(q);
}

/* page enters the front's tail; what overflows moves on or out. */
static lp_pageno segq_enter(segq *q, lp_pageno page)
{
	lp_pagelist_push(&q->front, page);
	if (q->front.count <= q->front_max)
		return LP_NO_PAGE;
	lp_pageno old = lp_pagelist_take_oldest(&q->front, NULL);
	if (!q->back_max)
		return old;
	lp_pagelist_push(&q->back, old);
	if (q->back.count <= q->back_max)
		return LP_NO_PAGE;
	return lp_pagelist_take_oldest(&q->back, NULL);
}

static bool segq_access(void *state, lp_pageno page, uint64_t t, lp_pageno *victim)
{
	(void)t;
	segq *q = state;
	if (lp_pagelist_has(&q->front, page))
		return true;
	if (lp_pagelist_has(&q->back, page)) {
		/* Its leaving makes room for the front's overflow: no victim. */
		lp_pagelist_remove(&q->back, page);
		segq_enter(q, page);
		return true;
	}
	*victim = segq_enter(q, page);
	return false;
}

static const lp_policy_ops segq_ops = {
	.create = segq_create,
	.destroy = segq_destroy,
	.access = segq_access,
};

static const lp_policy_option segq_options[] = {
	{"segq-lru-frames", "S", "frames S of the LRU back, 0 <= S < K", "floor(K/2)"},
};

static int segq_parse(lp_policy_settings *s, size_t i, const char *text, lp_error *err)
{
	return lp_policy_parse_count(&segq_options[i], text, 0, &s->value[i], err);
}

static int segq_check(const lp_policy_settings *s, uint64_t from, uint64_t to, lp_error *err)
{
	(void)to;
	if (s->set[LRU_FRAMES] && s->value[LRU_FRAMES] >= from)
		return lp_fail(err, LP_EUSAGE, "--segq-lru-frames %" PRIu64 " must be below the "
			       "frames K (%" PRIu64 ")", s->value[LRU_FRAMES], from);
	return 0;
}

static void segq_resolve(const lp_policy_settings *s, uint64_t k, lp_policy_params *params)
{
	params->option[LRU_FRAMES] = s->set[LRU_FRAMES] ? MIN(s->value[LRU_FRAMES], k - 1) : k / 2;
}

/* The back scales as the memory (policies.md §8): S' = min(K' - 1,
 * round(S * R)), S as given at K frames. */
static void segq_mini_scale(const lp_policy_settings *s, uint64_t frames, double rate,
			    lp_policy_params *p)
{
	uint64_t back = s && s->set[LRU_FRAMES] ? s->value[LRU_FRAMES] : frames / 2;
	p->option[LRU_FRAMES] = MIN(p->frames - 1,
				    rate >= 1 ? back : (uint64_t)nearbyint((double)back * rate));
}

const lp_policy_info lp_policy_segq = {
	.name = "segq",
	.space = LP_SPACE_FIXED,
	.rule = "a FIFO front of K - S frames before an LRU back of S",
	.ops = &segq_ops,
	.options = segq_options,
	.noptions = G_N_ELEMENTS(segq_options),
	.parse = segq_parse,
	.check = segq_check,
	.resolve = segq_resolve,
	.miniature = true,
	.mini_scale = segq_mini_scale,
	.colour = "#ae8129",
	.dash = "6 2 1 2",
};
