/* LRU stack distances one reference at a time, fast where the stream has
 * locality: the FRONT most recent pages are an array searched and moved
 * in place (most references of a program land there, and cost no tree
 * work), every deeper page a mark in a Fenwick tree over stamps
 * (stamptree.h), which counts the pages between a deep page and the front
 * in O(log D). A page that leaves the front enters the tree as its most
 * recent mark. Memory is O(D) and nothing is allocated per reference.
 * Pages are dense numbers (policy.h), below the count given at init or to
 * lp_stackdist_grow: the one structure of every exact LRU curve (laplace
 * sim's, stat --mrc's and the report's, through mrc.h). */
#ifndef LAPLACE_STACKDIST_H
#define LAPLACE_STACKDIST_H

#include <stdint.h>

#include "analysis/policy.h"
#include "analysis/stamptree.h"

#define LP_STACKDIST_FRONT 32

typedef struct lp_stackdist {
	lp_pageno front[LP_STACKDIST_FRONT]; /* the most recent first */
	unsigned nfront;
	lp_stamptree tree; /* a mark for each page behind the front */
	uint32_t *stamp;   /* page -> stamp, or two values beyond (stackdist.c) */
	uint64_t marks;
	lp_pageno pages;   /* entries of stamp */
} lp_stackdist;

/* The most pages (callers check their input against it first: sim.h's
 * lp_sim_check_curves): stamps, twice the pages and a power of two, stay
 * below 2^31, beside the two values above them in a page's uint32 stamp. */
#define LP_STACKDIST_MAX_PAGES (UINT64_C(1) << 30)

void lp_stackdist_init(lp_stackdist *s, lp_pageno pages);
void lp_stackdist_clear(lp_stackdist *s);
/* Make room for pages below pages (amortized O(1) a page added). */
void lp_stackdist_grow(lp_stackdist *s, lp_pageno pages);
/* Reference page: its stack distance (policies.md §1: 1 + the distinct
 * pages referenced since its last reference), 0 for a first reference. */
uint64_t lp_stackdist_access(lp_stackdist *s, lp_pageno page);
/* Reference pages[0, n) in turn, each adding one to hist at its stack
 * distance (hist[0]: first references): the whole curve's loop. */
void lp_stackdist_count(lp_stackdist *s, const lp_pageno *pages, size_t n, uint64_t *hist);

#endif
