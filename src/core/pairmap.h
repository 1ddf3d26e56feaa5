/* An open-addressing hash map from a pair of 64-bit integers to a 64-bit
 * value, for identities such as (file, index). Only the merge's slow path
 * (a page's first reference in an address space) consults it, but it holds
 * one entry per file or shared page, so it is kept compact: 24 bytes a slot,
 * no per-entry allocation. */
#ifndef LAPLACE_PAIRMAP_H
#define LAPLACE_PAIRMAP_H

#include <stdint.h>

typedef struct pairmap_slot {
	uint64_t a, b;
	uint64_t value; /* 0 marks an empty slot; callers store value + 1 */
} pairmap_slot;

typedef struct pairmap {
	pairmap_slot *slots;
	uint64_t mask; /* capacity - 1; capacity is a power of two */
	uint64_t count;
} pairmap;

void pairmap_init(pairmap *m);
void pairmap_free(pairmap *m);
/* The slot for (a, b): either the one holding it, or the empty slot where
 * it belongs (value 0: the caller fills in a, b, value, then calls
 * pairmap_added); NULL when the map must grow and memory is short. */
pairmap_slot *pairmap_find(pairmap *m, uint64_t a, uint64_t b);
void pairmap_added(pairmap *m);

#endif
