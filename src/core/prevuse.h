/* Previous uses (policies.md §1: prev(t), the last reference before t to
 * the page of reference t; b_t = t - prev(t), its backward distance),
 * found by one forward walk over a stream of dense page numbers: the
 * twin of nextuse.h's backward walk. Every pass that needs backward
 * distances (laplace sim's windows: ws and vmin, the largest distance,
 * the window cap) walks with it.
 *
 * The references are handed one at a time in stream order, each with its
 * index t (0, 1, ...: the caller counts, so that its loop keeps t in a
 * register); the walk holds one 8-byte index a page (O(D)) and nothing a
 * reference. After the walk of n references, last[p] is page p's last
 * reference, so that n - last[p] is the gap from it to the end
 * (policies.md §3's g_s after a page's last reference). */
#ifndef LAPLACE_PREVUSE_H
#define LAPLACE_PREVUSE_H

#include <stdint.h>

#include "core/nextuse.h"

typedef struct lp_prev_use_walk {
	uint64_t *last; /* by page: its last reference walked, LP_NEVER before any */
} lp_prev_use_walk;

/* A walk of a stream of references to pages 0 .. pages - 1. */
void lp_prev_use_walk_init(lp_prev_use_walk *w, uint32_t pages);
/* Reference t, the next, to page: its backward distance b_t >= 1, or 0
 * at the page's first reference (prev(t) none). */
static inline uint64_t lp_prev_use_step(lp_prev_use_walk *w, uint32_t page, uint64_t t)
{
	uint64_t prev = w->last[page];
	w->last[page] = t;
	return prev == LP_NEVER ? 0 : t - prev;
}
void lp_prev_use_walk_clear(lp_prev_use_walk *w);

#endif
