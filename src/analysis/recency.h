/* The recency list of every page referenced so far, as an order-statistics
 * structure: each page has a stamp, the time of its last reference, marked
 * in a Fenwick tree over stamps (stamptree.h), so that a page's recency
 * position (1: the most recent) is a prefix count, O(log D), and the page
 * at a position a descent. Stamps are renumbered when they run out, so the
 * tree stays O(D) however long the stream, and nothing is allocated per
 * reference. A second set of marks over the same stamps may mark a subset
 * of the pages (the resident ones: EELRU's victims are chosen by
 * position). Pages are dense numbers (policy.h). */
#ifndef LAPLACE_RECENCY_H
#define LAPLACE_RECENCY_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/policy.h"
#include "analysis/stamptree.h"

typedef struct lp_recency {
	lp_stamptree all;     /* a mark for each page referenced */
	lp_stampset *sub;     /* the subset's marks, over all's stamps; may be NULL */
	uint64_t *stamp;      /* page -> stamp; UINT64_MAX: never referenced */
	uint8_t *in_sub;      /* page -> marked in sub */
	lp_pageno pages;      /* pages the arrays hold */
	uint64_t marks;       /* pages referenced so far */
} lp_recency;

/* For pages dense pages; with_sub: keep the second tree. */
void lp_recency_init(lp_recency *r, lp_pageno pages, bool with_sub);
void lp_recency_clear(lp_recency *r);
/* Room for pages pages (for a stream whose pages are learnt as it goes);
 * amortised O(1) a page when grown one page at a time. */
void lp_recency_grow(lp_recency *r, lp_pageno pages);
/* page's recency position, 1 .. marks; 0 if never referenced. */
uint64_t lp_recency_position(const lp_recency *r, lp_pageno page);
/* page becomes the most recent. */
void lp_recency_touch(lp_recency *r, lp_pageno page);
/* Mark or unmark page (referenced already) in the second tree. */
void lp_recency_sub_set(lp_recency *r, lp_pageno page, bool on);
/* The marked page of largest recency position (the least recent), or
 * LP_NO_PAGE. */
lp_pageno lp_recency_sub_last(const lp_recency *r);
/* The marked page of smallest recency position greater than pos, or
 * LP_NO_PAGE. */
lp_pageno lp_recency_sub_after(const lp_recency *r, uint64_t pos);

#endif
