/* What `laplace stat` says of a basic merge stream (laplace-stat(1)):
 * references and distinct pages by type, the LRU miss-ratio curve (mrc.h)
 * and reuse distances by type in power-of-two buckets, in one pass. */
#ifndef LAPLACE_REUSE_H
#define LAPLACE_REUSE_H

#include <stdint.h>

#include "analysis/shards.h"
#include "core/error.h"
#include "core/progress.h"
#include "io/io.h"

/* Bucket b holds stack distances 2^b .. 2^(b+1)-1. */
#define LP_REUSE_BUCKETS 64

/* Per reference type in lp_ref_types order, and in all. */
typedef struct lp_reuse {
	uint64_t references, distinct; /* all types */
	uint64_t refs[6];
	uint64_t distinct_of[6];       /* pages that type referenced */
	uint64_t first[6];             /* first references (no distance) */
	uint64_t buckets[LP_REUSE_BUCKETS][6];
	uint64_t *misses; /* LRU misses with f frames, f = 0 .. distinct */
} lp_reuse;

/* Read the basic merge stream path ('-': standard input; any form, gzip or
 * zstd) to its end, telling progress (may be NULL) the references read. 0, or the reader's lp_status with err set. */
int lp_reuse_of_stream(const char *path, const lp_progress *progress, lp_reuse *r,
		       lp_error *err);
void lp_reuse_clear(lp_reuse *r);
/* The whole curve as CSV ("frames,misses,miss_ratio") to path, staged in
 * *done for the caller to publish or discard. */
int lp_reuse_stage_curve(const lp_reuse *r, const char *path, lp_staged **done, lp_error *err);

/* The approximate curve instead (shards.h): a fixed rate 0 < rate <= 1
 * (pages 0) or a fixed size of pages, and references by type. */
typedef struct lp_sampled {
	lp_shards *shards;
	uint64_t refs[6]; /* lp_ref_types order */
} lp_sampled;
/* Read path as lp_reuse_of_stream does; 0, or the reader's lp_status with
 * err set. */
int lp_sampled_of_stream(const char *path, double rate, uint64_t pages,
			 const lp_progress *progress, lp_sampled *r, lp_error *err);
void lp_sampled_clear(lp_sampled *r);
/* Its curve as lp_reuse_stage_curve writes the exact one, the same header. */
int lp_sampled_stage_curve(const lp_sampled *r, const char *path, lp_staged **done,
			   lp_error *err);

#endif
