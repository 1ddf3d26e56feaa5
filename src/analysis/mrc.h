/* The LRU miss-ratio curve of a page reference stream, for every memory
 * size at once, by stack distances (Mattson et al.): a reference whose page
 * was last used d distinct pages ago (counting itself) hits in every LRU
 * memory of at least d frames and misses in every smaller one. */
#ifndef LAPLACE_MRC_H
#define LAPLACE_MRC_H

#include <stdint.h>

typedef struct lp_mrc lp_mrc;

lp_mrc *lp_mrc_new(void);
void lp_mrc_free(lp_mrc *m);
/* Account one reference to page (any 64-bit identity). O(log n). Returns
 * its stack distance, 0 for the page's first reference; sets *page_id
 * (when not NULL) to the page's dense number, 0 .. distinct pages - 1 in
 * order of first reference. */
uint64_t lp_mrc_access(lp_mrc *m, uint64_t page, uint64_t *page_id);
uint64_t lp_mrc_references(const lp_mrc *m);
uint64_t lp_mrc_distinct_pages(const lp_mrc *m);
/* Fill misses[f] for f = 0 .. lp_mrc_distinct_pages(m): the misses of an
 * LRU memory of f frames, first references included (misses[0] is every
 * reference; the last entry counts first references only). */
void lp_mrc_misses(const lp_mrc *m, uint64_t *misses);

#endif
