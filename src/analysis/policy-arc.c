/* arc: Megiddo and Modha's ARC (FAST 2003, Fig. 4) with c = K, exactly as
 * policies.md §2 words it: p and its steps are doubles, computed as
 * libCacheSim's ARC.c computes them, so that both count the same faults. */
#include <glib.h>

#include "analysis/plist.h"

enum { OUT, T1, T2, B1, B2 };

typedef struct arc {
	uint64_t c;
	double p;
	lp_plist list[5]; /* by where[]; head: least recent */
	lp_plink *links;
	uint8_t *where;
} arc;

static void *arc_create(const lp_policy_params *params)
{
	arc *a = g_new0(arc, 1);
	a->c = params->frames;
	for (int i = 0; i < 5; i++)
		lp_plist_init(&a->list[i]);
	a->links = g_new(lp_plink, params->pages ? params->pages : 1);
	a->where = g_new0(uint8_t, params->pages ? params->pages : 1);
	return a;
}

static void arc_destroy(void *state)
{
	arc *a = state;
	g_free(a->links);
	g_free(a->where);
	g_free(a);
}

static void move_to(arc *a, lp_pageno page, int to)
{
	if (a->where[page] != OUT)
		lp_plist_remove(&a->list[a->where[page]], a->links, page);
	a->where[page] = (uint8_t)to;
	if (to != OUT)
		lp_plist_push(&a->list[to], a->links, page);
}

/* Drop the least recent page of ghost list g. */
static void drop(arc *a, int g)
{
	move_to(a, a->list[g].head, OUT);
}

/* REPLACE(x): the victim, moved to its ghost list. */
static lp_pageno replace(arc *a, bool in_b2)
{
	double t1 = (double)a->list[T1].len;
	lp_pageno victim;
	if (a->list[T1].len >= 1 && (t1 > a->p || (in_b2 && t1 == a->p))) {
		victim = a->list[T1].head;
		move_to(a, victim, B1);
	} else {
		victim = a->list[T2].head;
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
		double step = (double)a->list[B2].len / (double)a->list[B1].len;
		a->p = MIN(a->p + MAX(step, 1.0), c);
		*victim = replace(a, false);
		move_to(a, page, T2);
		return false;
	}
	case B2: {
		double step = (double)a->list[B1].len / (double)a->list[B2].len;
		a->p = MAX(a->p - MAX(step, 1.0), 0.0);
		*victim = replace(a, true);
		move_to(a, page, T2);
		return false;
	}
	default:
		break;
	}
	uint64_t t1 = a->list[T1].len, b1 = a->list[B1].len;
	uint64_t total = t1 + a->list[T2].len + b1 + a->list[B2].len;
	*victim = LP_NO_PAGE;
	if (t1 + b1 == a->c) {
		if (t1 < a->c) {
			drop(a, B1);
			*victim = replace(a, false);
		} else {
			*victim = a->list[T1].head;
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

const lp_policy_ops lp_policy_arc_ops = {
	.create = arc_create,
	.destroy = arc_destroy,
	.access = arc_access,
};
