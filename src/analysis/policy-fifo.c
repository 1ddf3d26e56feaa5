/* fifo (policies.md §2): evict the page that entered memory first; hits
 * change nothing. The arrival order is a list over page numbers. */
#include "analysis/pagelist.h"
#include "analysis/policy.h"

#include <glib.h>

typedef struct fifo_state {
	lp_pagelist list;
	uint64_t frames;
} fifo_state;

static void *fifo_create(const lp_policy_params *params)
{
	fifo_state *s = g_new(fifo_state, 1);
	lp_pagelist_init(&s->list, params->pages);
	s->frames = params->frames;
	return s;
}

static void fifo_destroy(void *state)
{
	fifo_state *s = state;
	lp_pagelist_clear(&s->list);
	g_free(s);
}

static void fifo_arrive(void *state, lp_pageno page)
{
	fifo_state *s = state;
	lp_pagelist_push(&s->list, page);
}

static void fifo_hit(void *state, lp_pageno page)
{
	(void)state;
	(void)page;
}

static lp_pageno fifo_victim(void *state, const uint8_t *held)
{
	fifo_state *s = state;
	return lp_pagelist_take_oldest(&s->list, held);
}

static bool fifo_access(void *state, lp_pageno page, uint64_t t, lp_pageno *victim)
{
	fifo_state *s = state;
	(void)t;
	if (lp_pagelist_has(&s->list, page))
		return true;
	*victim = s->list.count >= s->frames ? fifo_victim(s, NULL) : LP_NO_PAGE;
	fifo_arrive(s, page);
	return false;
}

static const lp_policy_ops fifo_ops = {
	.create = fifo_create,
	.destroy = fifo_destroy,
	.access = fifo_access,
	.arrive = fifo_arrive,
	.hit = fifo_hit,
	.victim = fifo_victim,
};

const lp_policy_info lp_policy_fifo = {
	.name = "fifo",
	.space = LP_SPACE_FIXED,
	.rule = "evict the page that entered memory first",
	.ops = &fifo_ops,
	.miniature = true,
	.colour = "#29ae34",
	.dash = "3 3",
};
