/* Basic merge streams read back as input (read with lp_basic_open). */
#ifndef LAPLACE_BASICIN_H
#define LAPLACE_BASICIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "laplace/laplace.h"
#include "core/error.h"
#include "io/bytesrc.h"

/* The reader of a basic merge stream whose first bytes src may already
 * hold; it takes src over (and closes it on failure). */
lp_basic_reader *lp_basic_reader_new(lp_byte_source *src, lp_error *err);
/* Whether the stream is in the bin form (it began with the LPBASIC header). */
bool lp_basic_reader_binary(const lp_basic_reader *r);
/* The one way to read a basic merge stream through, a block at a time,
 * as lp_trace_iter (analysis/trace.h) reads a held one:
 *     lp_basic_iter it;
 *     if (lp_basic_iter_open(&it, path, LP_BASIC_BLOCK_REFS, err))
 *             return err->status;
 *     for (lp_basic_block b; (b = lp_basic_iter_next(&it)).len;)
 *             for (size_t k = 0; k < b.len; k++)
 *                     ... b.ref[k], reference it.done - b.len + k ...
 *     rc = lp_basic_iter_clear(&it);
 * A block is 1 .. block_refs references, valid until the next call; it
 * is empty at the end or when the stream is malformed: clear then gives
 * 0, or the reader's status with err (the one given) set, naming the
 * file and line or record. A caller may stop before the end. */
#define LP_BASIC_BLOCK_REFS 65536
typedef struct lp_basic_block {
	const lp_basic_ref *ref;
	size_t len;
} lp_basic_block;
typedef struct lp_basic_iter {
	uint64_t done; /* references given so far */
	/* Private. */
	lp_basic_reader *r;
	lp_basic_ref *buf;
	size_t block_refs;
	int status;
	lp_error *err;
} lp_basic_iter;
/* Over the stream of path ('-': standard input): 0, or the status of
 * lp_basic_open with err set (it is not to be cleared then). */
int lp_basic_iter_open(lp_basic_iter *it, const char *path, size_t block_refs, lp_error *err);
/* Over r, which it takes over. */
void lp_basic_iter_init(lp_basic_iter *it, lp_basic_reader *r, size_t block_refs, lp_error *err);
lp_basic_block lp_basic_iter_next(lp_basic_iter *it);
/* The reader closed: 0, or the status of the block that failed. */
int lp_basic_iter_clear(lp_basic_iter *it);

/* Whether the first line of data[0, n) (the bytes before the first '\n')
 * is a text record of a basic merge stream. */
bool lp_basic_starts_as_text(const char *data, size_t n);

#endif
