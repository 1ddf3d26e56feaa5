/* lru (policies.md §2): evict the page referenced least recently. The
 * recency order is a list over page numbers, oldest end least recent. */
#include "analysis/pagelist.h"
#include "analysis/policy.h"
#include "analysis/sim.h"
#include "analysis/stackdist.h"

#include <glib.h>

typedef struct lru_state {
	lp_pagelist list;
	uint64_t frames;
} lru_state;

static void *lru_create(const lp_policy_params *params)
{
	lru_state *s = g_new(lru_state, 1);
	lp_pagelist_init(&s->list, params->pages);
	s->frames = params->frames;
	return s;
}

static void lru_destroy(void *state)
{
	lru_state *s = state;
	lp_pagelist_clear(&s->list);
	g_free(s);
}

static void lru_arrive(void *state, lp_pageno page)
{
	lru_state *s = state;
	lp_pagelist_push(&s->list, page);
}

static void lru_hit(void *state, lp_pageno page)
{
	lru_state *s = state;
	lp_pagelist_move_newest(&s->list, page);
}

static lp_pageno lru_victim(void *state, const uint8_t *held)
{
	lru_state *s = state;
	return lp_pagelist_take_oldest(&s->list, held);
}

static bool lru_access(void *state, lp_pageno page, uint64_t t, lp_pageno *victim)
{
	lru_state *s = state;
	(void)t;
	if (lp_pagelist_has(&s->list, page)) {
		lru_hit(s, page);
		return true;
	}
	*victim = s->list.count >= s->frames ? lru_victim(s, NULL) : LP_NO_PAGE;
	lru_arrive(s, page);
	return false;
}

static const lp_policy_ops lru_ops = {
	.create = lru_create,
	.destroy = lru_destroy,
	.access = lru_access,
	.arrive = lru_arrive,
	.hit = lru_hit,
	.victim = lru_victim,
};

static void lru_curve(const lp_policy_curve *c)
{
	uint64_t *hist = lp_sim_lru_distances(c->t, c->tick);
	lp_sim_stack_faults(hist, c->t->pages, c->sizes, c->nsizes, c->faults);
	g_free(hist);
}

const lp_policy_info lp_policy_lru = {
	.name = "lru",
	.space = LP_SPACE_FIXED,
	.rule = "evict the page referenced least recently",
	.ops = &lru_ops,
	.curve = lru_curve,
	.curve_pages = LP_STACKDIST_MAX_PAGES,
	.colour = "#296bae",
	.dash = "",
};
