/* The LRU miss-ratio curve of a page reference stream, for every memory
 * size at once, by stack distances (Mattson et al.): a reference whose page
 * was last used d distinct pages ago (counting itself) hits in every LRU
 * memory of at least d frames and misses in every smaller one. */
#ifndef LAPLACE_MRC_H
#define LAPLACE_MRC_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"

typedef struct lp_mrc lp_mrc;

/* A curve of at most LP_STACKDIST_MAX_PAGES pages (2^30, 4 TiB of 4 KiB
 * pages); lp_mrc_new_within(max) of at most max (<= that), for tests. */
lp_mrc *lp_mrc_new(void);
lp_mrc *lp_mrc_new_within(uint64_t max_pages);
void lp_mrc_free(lp_mrc *m);
/* Account one reference to page (any 64-bit identity). O(log n). Returns
 * its stack distance, 0 for the page's first reference; sets *page_id
 * (when not NULL) to the page's dense number, 0 .. distinct pages - 1 in
 * order of first reference. */
uint64_t lp_mrc_access(lp_mrc *m, uint64_t page, uint64_t *page_id);
/* A page past the most the curve holds is not counted (its reference is
 * taken for page 0's first): the curve is then wrong, and this says so
 * with LP_EINPUT and a message naming input; 0 while it is whole. */
int lp_mrc_check(const lp_mrc *m, const char *input, lp_error *err);
uint64_t lp_mrc_references(const lp_mrc *m);
uint64_t lp_mrc_distinct_pages(const lp_mrc *m);
/* Fill misses[f] for f = 0 .. lp_mrc_distinct_pages(m): the misses of an
 * LRU memory of f frames, first references included (misses[0] is every
 * reference; the last entry counts first references only). */
void lp_mrc_misses(const lp_mrc *m, uint64_t *misses);

#endif
