/* Exact trace reduction (policies.md §5, laplace-reduce(1)): a shorter
 * stream with the same LRU behaviour sequence (faults, victims and the
 * dirt of each eviction) for every memory of at least K pages.
 *
 * The reductions see dense page numbers (policy.h) and the type of each
 * reference ("rwiRWI"); they do no I/O and never fail. Both keep the whole
 * input in the caller's arrays and build their output beside it. */
#ifndef LAPLACE_REDUCE_H
#define LAPLACE_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/policy.h"

/* A stream of references: page and type of each, n of them. */
typedef struct lp_refs {
	lp_pageno *pages;
	char *types;
	size_t n, cap;
} lp_refs;

/* Append one reference. */
void lp_refs_push(lp_refs *r, lp_pageno page, char type);
void lp_refs_clear(lp_refs *r);

/* The most references a reduction takes: its positions are 32 bits. */
#define LP_REDUCE_MAX_REFS (UINT32_MAX - 1)

/* Safely Allowed Drop: the subsequence of the n references (pages below
 * npages) that policies.md §5 keeps for frames >= 1, appended to out; a
 * dropped write makes the page's last kept reference before it a write. */
void lp_reduce_sad(const lp_pageno *pages, const char *types, size_t n, lp_pageno npages,
		   uint64_t frames, lp_refs *out);
/* Optimal LRU Reduction: the shortest stream with the same frames-page
 * behaviour, built from stays, points and requirements (policies.md §5),
 * appended to out. */
void lp_reduce_olr(const lp_pageno *pages, const char *types, size_t n, lp_pageno npages,
		   uint64_t frames, lp_refs *out);

#endif
