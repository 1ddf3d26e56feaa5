/* Doubly linked lists of dense page numbers (policy.h) over link arrays
 * indexed by page, shared by every list of a policy: a page is in at most
 * one list at a time, so moving it is O(1) and nothing is allocated per
 * reference. Head: the oldest end. */
#ifndef LAPLACE_PLIST_H
#define LAPLACE_PLIST_H

#include <stdint.h>

#include "analysis/policy.h"

typedef struct lp_plink {
	lp_pageno prev, next;
} lp_plink;

typedef struct lp_plist {
	lp_pageno head, tail;
	uint64_t len;
} lp_plist;

static inline void lp_plist_init(lp_plist *l) { *l = (lp_plist){LP_NO_PAGE, LP_NO_PAGE, 0}; }

/* Add p at the newest end. */
static inline void lp_plist_push(lp_plist *l, lp_plink *links, lp_pageno p)
{
	links[p] = (lp_plink){l->tail, LP_NO_PAGE};
	if (l->tail != LP_NO_PAGE)
		links[l->tail].next = p;
	else
		l->head = p;
	l->tail = p;
	l->len++;
}

static inline void lp_plist_remove(lp_plist *l, lp_plink *links, lp_pageno p)
{
	lp_plink k = links[p];
	if (k.prev != LP_NO_PAGE)
		links[k.prev].next = k.next;
	else
		l->head = k.next;
	if (k.next != LP_NO_PAGE)
		links[k.next].prev = k.prev;
	else
		l->tail = k.prev;
	l->len--;
}

/* Remove and return the oldest page (the list is not empty). */
static inline lp_pageno lp_plist_pop(lp_plist *l, lp_plink *links)
{
	lp_pageno p = l->head;
	lp_plist_remove(l, links, p);
	return p;
}

#endif
