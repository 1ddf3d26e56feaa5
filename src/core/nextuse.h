/* Next uses (policies.md §1: next(t), the index of the next reference to
 * the page of reference t, or LP_NEVER), found by one backward walk over a
 * stream of dense page numbers: every writer of next uses (opt's array,
 * lp_trace_next_use; oracle-general's records, oracle.c) walks with it.
 *
 * The stream is handed from its end to its start in blocks, each block the
 * references just before those already walked; within a block, the pages
 * in stream order. The walk holds one 8-byte index a page (O(D)) and
 * nothing a reference: the caller keeps the blocks where it likes (in
 * memory, in a file read backwards). Its twin, the forward walk of
 * previous uses, is prevuse.h. */
#ifndef LAPLACE_NEXTUSE_H
#define LAPLACE_NEXTUSE_H

#include <stddef.h>
#include <stdint.h>

/* next(t) of a reference never made again (policies.md §1: infinity). */
#define LP_NEVER UINT64_MAX

typedef struct lp_next_use_walk {
	uint64_t *after; /* by page: its first reference among those walked */
	uint64_t from;   /* the first reference walked (n before any) */
} lp_next_use_walk;

/* A walk of a stream of n references to pages 0 .. pages - 1. */
void lp_next_use_walk_init(lp_next_use_walk *w, uint32_t pages, uint64_t n);
/* The len references before those walked, to pages page[0 .. len): next[k]
 * is next(from - len + k), from the first reference walked before. */
void lp_next_use_walk_back(lp_next_use_walk *w, const uint32_t *page, size_t len,
			   uint64_t *next);
void lp_next_use_walk_clear(lp_next_use_walk *w);

#endif
