/* Approximate LRU miss-ratio curves by spatial sampling (SHARDS:
 * Waldspurger, Park, Garthwaite and Ahmad, FAST 2015; policies.md §7).
 *
 * A page is sampled iff h(page) < R * 2^64, h the splitmix64 finalizer
 * (laplace-formats(5) 9.2) of its canonical number: the same pages for
 * every run and every stream. The stack distances of sampled references,
 * among sampled pages, are scaled by 1/R; each sampled reference stands
 * for 1/R references, so the curve is over the whole stream's N.
 *
 * With a fixed size S, the sample is the S pages of smallest h seen so
 * far: R starts at 1 and falls to (the largest kept h + 1) / 2^64 each
 * time a page of smaller h pushes the largest out. A reference counts with the
 * weight 1/R of its own moment, which is the paper's rescaling of the
 * histogram done once, at the end.
 *
 * Memory: O(S) with a fixed size (the sampled pages' table and marks, and
 * a histogram of LP_SHARDS_BUCKETS buckets, or of up to twice the sampled
 * pages when more, whose width doubles as the distances grow past it);
 * O(R * D) with a fixed rate. Every page sampled (R = 1, or S at least
 * D), every distance has its own bucket: the exact curve. No I/O, no
 * failure. */
#ifndef LAPLACE_SHARDS_H
#define LAPLACE_SHARDS_H

#include <stdint.h>

#include "core/numbers.h"

#define LP_SHARDS_BUCKETS 65536
/* Fewer pages sampled than this make a curve whose error can be large
 * (SHARDS's bounds assume a few hundred at least): laplace stat warns. */
#define LP_SHARDS_FEW_PAGES 200

typedef struct lp_shards lp_shards;

/* Fixed rate 0 < rate <= 1 (pages 0), or fixed size pages >= 1 (rate 1). */
lp_shards *lp_shards_new(double rate, uint64_t pages);
void lp_shards_free(lp_shards *s);
/* splitmix64's finalizer (laplace-formats(5) 9.2, without the step). */
static inline uint64_t lp_shards_hash(uint64_t x)
{
	return lp_mix64(x);
}
/* Account the next reference, to the canonical page. */
void lp_shards_access(lp_shards *s, uint64_t page);

typedef struct lp_shards_summary {
	uint64_t references;  /* N, every reference */
	uint64_t sampled;     /* the references of sampled pages */
	uint64_t kept;        /* pages in the sample at the end */
	double rate;          /* R at the end */
	uint64_t frames;      /* the curve's sizes: 1 .. frames */
} lp_shards_summary;
void lp_shards_summarize(const lp_shards *s, lp_shards_summary *sum);

/* The curve, size after size: lp_shards_curve_next gives the estimated
 * misses of an LRU memory of 1, 2, ... frames (up to sum.frames), never
 * more than the size before and never below 0. */
typedef struct lp_shards_curve {
	const lp_shards *s;
	uint64_t frames, bucket;
	double hits_before; /* of the buckets before bucket */
	uint64_t last;
} lp_shards_curve;
void lp_shards_curve_start(lp_shards_curve *c, const lp_shards *s);
uint64_t lp_shards_curve_next(lp_shards_curve *c);

#endif
