/* arc: Megiddo and Modha's ARC (FAST 2003, Fig. 4) with c = K, exactly as
 * policies.md §2 words it: p and its steps are doubles, computed as
 * libCacheSim's ARC.c computes them, so that both count the same faults. */
#include <glib.h>

#include "analysis/pagelist.h"

enum { OUT, T1, T2, B1, B2 };

typedef struct arc {
	uint64_t c;
	double p;
	lp_pagelist list[5]; /* by where[] (OUT's unused); oldest: least recent */
	uint8_t *where;
} arc;

static void *arc_create(const lp_policy_params *params)
{
	arc *a = g_new0(arc, 1);
	a->c = params->frames;
	for (int i = T1; i <= B2; i++)
		lp_pagelist_init(&a->list[i], params->pages);
	a->where = g_new0(uint8_t, params->pages ? params->pages : 1);
	return a;
}

static void arc_destroy(void *state)
{
	arc *a = state;
	for (int i = T1; i <= B2; i++)
		lp_pagelist_clear(&a->list[i]);
	g_free(a->where);
	g_free(a);
}

static void move_to(arc *a, lp_pageno page, int to)
{
	if (a->where[page] != OUT)
		lp_pagelist_remove(&a->list[a->where[page]], page);
	a->where[page] = (uint8_t)to;
	if (to != OUT)
		lp_pagelist_push(&a->list[to], page);
}

/* Drop the least recent page of ghost list g. */
static void drop(arc *a, int g)
{
	move_to(a, a->list[g].oldest, OUT);
}

/* REPLACE(x): the victim, moved to its ghost list. */
static lp_pageno replace(arc *a, bool in_b2)
{
	double t1 = (double)a->list[T1].count;
	lp_pageno victim;
	if (a->list[T1].count >= 1 && (t1 > a->p || (in_b2 && t1 == a->p))) {
		victim = a->list[T1].oldest;
		move_to(a, victim, B1);
	} else {
		victim = a->list[T2].oldest;
		move_to(a, victim, B2);
	}
	return victim;
}

static bool arc_access(void *state, lp_pageno page, uint64_t t, lp_pageno *victim)
{
	(void)t;
	arc *a = state;
	double c = (double)a->c;
	switch (a->where[page]) {
	case T1:
	case T2:
		move_to(a, page, T2);
		return true;
	case B1: {
		double step = (double)a->list[B2].count / (double)a->list[B1].count;
		a->p = MIN(a->p + MAX(step, 1.0), c);
		*victim = replace(a, false);
		move_to(a, page, T2);
		return false;
	}
	case B2: {
		double step = (double)a->list[B1].count / (double)a->list[B2].count;
		a->p = MAX(a->p - MAX(step, 1.0), 0.0);
		*victim = replace(a, true);
		move_to(a, page, T2);
		return false;
	}
	default:
		break;
	}
	uint64_t t1 = a->list[T1].count, b1 = a->list[B1].count;
	uint64_t total = t1 + a->list[T2].count + b1 + a->list[B2].count;
	*victim = LP_NO_PAGE;
	if (t1 + b1 == a->c) {
		if (t1 < a->c) {
			drop(a, B1);
			*victim = replace(a, false);
		} else {
			*victim = a->list[T1].oldest;
			move_to(a, *victim, OUT);
		}
	} else if (total >= a->c) {
		if (total == 2 * a->c)
			drop(a, B2);
		*victim = replace(a, false);
	}
	move_to(a, page, T1);
	return false;
}

static const lp_policy_ops arc_ops = {
	.create = arc_create,
	.destroy = arc_destroy,
	.access = arc_access,
};

const lp_policy_info lp_policy_arc = {
	.name = "arc",
	.space = LP_SPACE_FIXED,
	.rule = "Megiddo and Modha's adaptive replacement cache",
	.ops = &arc_ops,
	.miniature = true,
	.colour = "#5ad8d3",
	.dash = "1.5 3.5",
};
