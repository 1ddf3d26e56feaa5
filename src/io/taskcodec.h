/* Compression for files written in pieces, as the per-process merge writes
 * its task files (laplace-formats(5), "PER-PROCESS MERGE OUTPUT"): each
 * piece becomes a complete gzip member or zstd frame. Concatenated, they
 * are one valid stream of either format (RFC 1952 allows members one after
 * another; zstd decoders read frame after frame), so no compressor state
 * outlives a piece: one coder serves any number of files, whichever of
 * them are open. */
#ifndef LAPLACE_TASKCODEC_H
#define LAPLACE_TASKCODEC_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "io/io.h"

/* The levels codec accepts, in [*lowest, *highest]; false for no codec. */
bool lp_compress_levels(enum lp_compress codec, int *lowest, int *highest);
/* level, or under LP_LEVEL_DEFAULT codec's default (chosen for speed). */
int lp_compress_level(enum lp_compress codec, int level);

typedef struct lp_piece_coder lp_piece_coder;

/* A coder for method (LP_COMPRESS_GZIP or LP_COMPRESS_ZSTD) at level (in
 * lp_compress_levels's range, or LP_LEVEL_DEFAULT: the codec's default), for
 * pieces of at most max_piece bytes. NULL if the compressor cannot start. */
lp_piece_coder *lp_piece_coder_new(enum lp_compress method, int level, size_t max_piece);
void lp_piece_coder_free(lp_piece_coder *c);
/* data[0, n) (n <= max_piece; 0 gives an empty member or frame) as one
 * member or frame in *out, valid until the next call: its length, or -1
 * with err set (LP_EIO, naming path). */
ssize_t lp_piece_encode(lp_piece_coder *c, const void *data, size_t n, const char *path,
			const void **out, lp_error *err);
/* Pieces compressed by up to threads workers (lp_workpool) and written in
 * the order they were given, through write (called in the caller's thread
 * only, from give and drain): pieces go to the workers in batches
 * of up to 1 MiB (one piece at least), at most 2 * threads + 2 batches in
 * flight. */
typedef struct lp_piece_pool lp_piece_pool;
typedef int (*lp_piece_write_fn)(void *ctx, void *file, const void *data, size_t n, lp_error *err);
/* NULL if a compressor cannot start. */
lp_piece_pool *lp_piece_pool_new(enum lp_compress method, int level, size_t max_piece,
				 unsigned threads, lp_piece_write_fn write, void *ctx);
/* Queue the piece in *buf (g_malloc'd, max_piece bytes, its first n the
 * piece) for file, path naming it in messages, without a copy: *buf
 * becomes the pool's, and is set to a buffer of the pool's, as large, for
 * the caller's next piece. Pieces done by now may be written. 0, or the
 * status of a failed compression or write (err set), in the order of the
 * pieces. */
int lp_piece_pool_give(lp_piece_pool *p, void *file, const char *path, void **buf, size_t n,
		       lp_error *err);
/* Compress and write every piece queued. 0 or a status, as give. */
int lp_piece_pool_drain(lp_piece_pool *p, lp_error *err);
/* Pieces not yet written are dropped. */
void lp_piece_pool_free(lp_piece_pool *p);

/* The file name suffix of method: ".gz", ".zst", or "" for none. */
const char *lp_compress_suffix(enum lp_compress method);

#endif
