/* A doubly linked list of dense page numbers threaded through arrays
 * indexed by page (policy.h): the order of LRU's recency and FIFO's
 * arrivals, with O(1) insertion at the newest end and removal anywhere.
 * Shared by policy-lru.c and policy-fifo.c, which differ only in hit(). */
#ifndef LAPLACE_PAGELIST_H
#define LAPLACE_PAGELIST_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "analysis/policy.h"

typedef struct lp_pagelist {
	lp_pageno *prev, *next;  /* toward the oldest / the newest end */
	uint8_t *in;             /* 1 when the page is in the list */
	lp_pageno oldest, newest;
	uint64_t count;
	size_t cap;              /* pages the arrays hold */
} lp_pagelist;

static inline void lp_pagelist_init(lp_pagelist *l, lp_pageno pages)
{
	/* One extra slot: pages may be 0, g_new0 of 0 gives NULL. */
	l->prev = g_new(lp_pageno, (gsize)pages + 1);
	l->next = g_new(lp_pageno, (gsize)pages + 1);
	l->in = g_new0(uint8_t, (gsize)pages + 1);
	l->oldest = l->newest = LP_NO_PAGE;
	l->count = 0;
	l->cap = (size_t)pages + 1;
}

/* Room for page p: a memory that learns its pages as it goes (policy.h,
 * arrive) grows the arrays, doubling. */
static inline void lp_pagelist_reserve(lp_pagelist *l, lp_pageno p)
{
	if (p < l->cap)
		return;
	size_t cap = MAX(l->cap * 2, (size_t)p + 1);
	l->prev = g_renew(lp_pageno, l->prev, cap);
	l->next = g_renew(lp_pageno, l->next, cap);
	l->in = g_renew(uint8_t, l->in, cap);
	memset(l->in + l->cap, 0, cap - l->cap);
	l->cap = cap;
}

static inline void lp_pagelist_clear(lp_pagelist *l)
{
	g_free(l->prev);
	g_free(l->next);
	g_free(l->in);
}

static inline bool lp_pagelist_has(const lp_pagelist *l, lp_pageno p)
{
	return p < l->cap && l->in[p];
}

static inline void lp_pagelist_push(lp_pagelist *l, lp_pageno p)
{
	lp_pagelist_reserve(l, p);
	l->prev[p] = l->newest;
	l->next[p] = LP_NO_PAGE;
	if (l->newest != LP_NO_PAGE)
		l->next[l->newest] = p;
	else
		l->oldest = p;
	l->newest = p;
	l->in[p] = 1;
	l->count++;
}

static inline void lp_pagelist_remove(lp_pagelist *l, lp_pageno p)
{
	lp_pageno a = l->prev[p], b = l->next[p];
	if (a != LP_NO_PAGE)
		l->next[a] = b;
	else
		l->oldest = b;
	if (b != LP_NO_PAGE)
		l->prev[b] = a;
	else
		l->newest = a;
	l->in[p] = 0;
	l->count--;
}

/* Page p, in the list, becomes the newest (as a remove and a push, with
 * less work: it stays in the list, and the count is the same). */
static inline void lp_pagelist_move_newest(lp_pagelist *l, lp_pageno p)
{
	lp_pageno a = l->prev[p], b = l->next[p];
	if (b == LP_NO_PAGE)
		return; /* already the newest */
	if (a != LP_NO_PAGE)
		l->next[a] = b;
	else
		l->oldest = b;
	l->prev[b] = a;
	l->prev[p] = l->newest;
	l->next[p] = LP_NO_PAGE;
	l->next[l->newest] = p;
	l->newest = p;
}

/* Remove and return the oldest page p with held[p] == 0 (held NULL: none
 * held), or LP_NO_PAGE. Held pages keep their places; the walk past them
 * is bounded by the pages held, which are few (each is waited for by a
 * unit that will emit it, laplace-formats(5) §9.4.2). */
static inline lp_pageno lp_pagelist_take_oldest(lp_pagelist *l, const uint8_t *held)
{
	lp_pageno p = l->oldest;
	if (held)
		while (p != LP_NO_PAGE && held[p])
			p = l->next[p];
	if (p != LP_NO_PAGE)
		lp_pagelist_remove(l, p);
	return p;
}

#endif
