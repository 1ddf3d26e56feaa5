/* Canonical page numbers to dense ones, 0, 1, ... in order of first sight:
 * the one numbering of laplace sim's and reduce's streams (trace.h), stat
 * --mrc's exact curve (mrc.c) and the schedule's memory (schedule.c).
 *
 * A merge numbers its canonical pages 0, 1, ... in order of first
 * reference (laplace-formats(5) §3.5), so its numbers are dense already:
 * every canonical number below a bound of DIRECT_SLACK times the pages
 * seen (at least DIRECT_MIN) is looked up in an array, one load, 4 bytes
 * a number, where a hash probe was a cache miss once the pages passed the
 * L2 cache. Numbers past the bound (a hand-made stream's, sparse ones)
 * go to an open-addressing hash, the pages met last before it. Memory is
 * O(pages) whatever the numbers; nothing is allocated but as pages come. */
#ifndef LAPLACE_PAGENUMBERS_H
#define LAPLACE_PAGENUMBERS_H

#include <stdint.h>

#include "analysis/policy.h"

#define LP_PAGE_NUMBERS_RECENT 256

typedef struct lp_page_slot {
	uint64_t canonical;
	lp_pageno page; /* LP_NO_PAGE: an empty slot */
} lp_page_slot;

typedef struct lp_page_numbers {
	lp_pageno *direct;   /* canonical -> page below direct_cap, LP_NO_PAGE: unseen */
	uint64_t direct_cap;
	lp_page_slot *slots; /* the numbers at or past direct_cap */
	uint64_t slot_mask, hashed;
	uint64_t pages;      /* numbered so far */
	/* The hashed pages met last, by the low bits of their numbers: most
	 * of a sparse stream's references are found here without a probe. A
	 * slot's key starts as one no number of its slot can be. */
	uint64_t recent_key[LP_PAGE_NUMBERS_RECENT];
	lp_pageno recent_page[LP_PAGE_NUMBERS_RECENT];
} lp_page_numbers;

void lp_page_numbers_init(lp_page_numbers *m);
void lp_page_numbers_clear(lp_page_numbers *m);
/* A number past the array's. */
lp_pageno lp_page_numbers_find_hashed(lp_page_numbers *m, uint64_t canonical);
/* canonical's page, LP_NO_PAGE when not numbered yet. */
static inline lp_pageno lp_page_numbers_find(lp_page_numbers *m, uint64_t canonical)
{
	if (canonical < m->direct_cap)
		return m->direct[canonical];
	return lp_page_numbers_find_hashed(m, canonical);
}
/* canonical, not numbered yet, becomes page m->pages (the caller keeps
 * the count within its own limit, at most LP_NO_PAGE - 1). */
lp_pageno lp_page_numbers_add(lp_page_numbers *m, uint64_t canonical);

#endif
