/* OPT stack distances one reference at a time, online, in O(log D) a
 * reference (amortized): the smallest memory in which Belady's MIN
 * (policies.md §2) hits the reference, for every reference of a stream
 * fed in order, without next uses. The rule is Bilardi, Ekanadham and
 * Pattnaik's critical stack algorithm (Computing Frontiers 2017), in
 * times rather than stack positions:
 *
 *  - each capacity c >= 2 keeps a marker, the time of the last reference
 *    whose OPT distance was c (or, before any, the first reference of
 *    the c-th page);
 *  - a reference to page x, last referenced at p, not at the time just
 *    before: walking back in time from now, the balance after a time is
 *    the markers after it minus the pages last referenced after it; it
 *    is never negative at a page's last reference. Let b be the earliest
 *    last reference after p where the balance is 0 (the latest one, just
 *    before now, always is). The distance is the least c >= 2 whose
 *    marker is at b or before; then c's marker moves to now;
 *  - a reference at distance 1 (the same page just before) changes
 *    nothing.
 *
 * Times are stamps on a timeline of room for 3D of them and more, in a
 * segment tree holding the balance's sums and minima (a leaf sums up a
 * block of stamps), renumbered when they run out (O(1) a reference,
 * amortized); markers are in a min tree over capacities (the smallest
 * capacities, most answers, found by a scan of their leaves). Memory O(D)
 * (about 20 bytes a page, 20 more while renumbering); nothing is
 * allocated per reference.
 * Pages are dense numbers below the count given at init (policy.h). The
 * distance of every reference is that of Mattson's priority stack with
 * policies.md §2's key (lp_opt_key; tests/unit/test_optdist.c): which
 * page never referenced again goes first changes no fault. */
#ifndef LAPLACE_OPTDIST_H
#define LAPLACE_OPTDIST_H

#include <stdint.h>

#include "analysis/policy.h"

typedef struct lp_optdist_node {
	int32_t sum; /* the balance's steps over the node's stamps */
	int32_t min; /* over the node's pages' stamps: the steps after it, within the node */
} lp_optdist_node;

/* Stamps a leaf of the balance's tree sums up, as bits (a page's last
 * reference, a marker) read eight stamps at a time from a table (128
 * KiB, optdist.c): cheaper than five more levels of tree. */
#define LP_OPTDIST_BLOCK 32

typedef struct lp_optdist {
	uint64_t *bits;        /* block -> its pages' and markers' stamps (optdist.c) */
	lp_optdist_node *tree; /* leaves at cap / BLOCK + block */
	uint32_t cap, now;     /* stamps: room, and the next one */
	uint32_t *stamp;       /* page -> its last reference's stamp, or UINT32_MAX */
	uint32_t *mark;        /* min tree over capacities: leaves at ccap + c */
	uint32_t ccap;
	lp_pageno pages, seen;
} lp_optdist;

/* Room for pages below pages (fewer than 2^29). */
/* The most pages (callers check their input against it first: sim.h's
 * lp_sim_check_curves): balances stay within +-2D, so int32 holds them,
 * and uint32 the stamps, 3D at most. */
#define LP_OPTDIST_MAX_PAGES ((UINT64_C(1) << 29) - 1)

void lp_optdist_init(lp_optdist *o, lp_pageno pages);
/* Room for pages below pages too (the stream's distances unchanged):
 * for a stream whose pages are counted as it is read. */
void lp_optdist_grow(lp_optdist *o, lp_pageno pages);
void lp_optdist_clear(lp_optdist *o);
/* Reference page: its OPT stack distance, 0 for a first reference. */
uint64_t lp_optdist_access(lp_optdist *o, lp_pageno page);
/* Reference page[0 .. len) in order, hist[distance]++ for each: the
 * pages ahead are known, so their stamps and blocks are fetched into the
 * cache while the one before is worked on. */
void lp_optdist_count(lp_optdist *o, const lp_pageno *page, size_t len, uint64_t *hist);

#endif
