/* libCacheSim's oracleGeneral binary trace (policies.md §6): one packed
 * 24-byte little-endian record a reference, uint32 clock time (t + 1,
 * modulo 2^32), uint64 object id (canonical number + 1), uint32 object
 * size (4096), int64 next access (next(t) + 1, or -1 when never). The
 * writer numbers the pages densely as references come, finds the next
 * accesses by one backward walk (core/nextuse.h) once the stream is whole,
 * and holds a window of references in memory, in one of two ways:
 * - in place, when the output is a file it can read back (a staged,
 *   uncompressed one, lp_output_rereadable): each full window's records go
 *   to the output at their offsets, the dense page number in the
 *   next-access field; the walk reads them back from the end, a window at
 *   a time, and writes them over with their next accesses. No temporary
 *   file; the output is written twice and read once.
 * - through temporary files otherwise (a pipe, a compressed output): each
 *   full window's dense page numbers (4 bytes a reference) go to an
 *   unlinked temporary file in TMPDIR, the walk puts the next uses of the
 *   filed references in a second one (8 bytes a reference), and the
 *   records are written forwards: temporary disk 12 bytes a reference past
 *   the window, half the output's size.
 * Memory: the window (about as many bytes as asked for), one block, and
 * 16 to 40 bytes a distinct page. */
#ifndef LAPLACE_ORACLE_H
#define LAPLACE_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "laplace/laplace.h"
#include "core/byteorder.h"
#include "core/error.h"
#include "io/bytesrc.h"
#include "io/io.h"

#define LP_ORACLE_RECORD_SIZE 24
#define LP_ORACLE_OBJ_SIZE 4096
/* The largest canonical number: its object id, + 1, must fit 64 bits. */
#define LP_ORACLE_CANON_MAX (UINT64_MAX - 1)

/* One record at p, its next access never (-1) until the caller stores one. */
static inline void lp_oracle_encode(unsigned char *p, uint64_t t, uint64_t canon)
{
	lp_store_u32(p, (uint32_t)(t + 1), false);
	lp_store_u64(p + 4, canon + 1, false);
	lp_store_u32(p + 12, LP_ORACLE_OBJ_SIZE, false);
	lp_store_u64(p + 16, UINT64_MAX, false); /* int64 -1 */
}

typedef struct lp_oracle_writer lp_oracle_writer;
/* A writer to out holding about window * 4 bytes of references (1024
 * references at least) in memory. */
lp_oracle_writer *lp_oracle_writer_new(size_t window, lp_output *out);
void lp_oracle_writer_free(lp_oracle_writer *w);
/* The next reference, to canonical number canon (at most
 * LP_ORACLE_CANON_MAX). Returns 0, LP_EIO (err set) when the output or
 * the temporary file cannot take the window, or LP_EINPUT past 2^32 - 1 distinct
 * pages. */
int lp_oracle_put(lp_oracle_writer *w, uint64_t canon, lp_error *err);
/* A hint that canon comes soon: its table slot is fetched meanwhile (the
 * table of a deep stream's pages is larger than the caches). */
void lp_oracle_prefetch(const lp_oracle_writer *w, uint64_t canon);
/* Every record, next accesses filled in, written to the output; 0 or the
 * status of the failure (err set). */
int lp_oracle_finish(lp_oracle_writer *w, lp_error *err);

/* The reader (laplace convert --from oracle-general): each record as a
 * read ('r', oracleGeneral has no types) of canonical number id - 1. An
 * object id 0 or a record cut short is an error (LP_EINPUT) naming the
 * file, the record and the field. Takes src over. */
typedef struct lp_oracle_reader lp_oracle_reader;
lp_oracle_reader *lp_oracle_reader_new(lp_byte_source *src);
ssize_t lp_oracle_read(lp_oracle_reader *r, lp_basic_ref *refs, size_t cap, lp_error *err);
void lp_oracle_reader_close(lp_oracle_reader *r);

#endif
