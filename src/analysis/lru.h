/* LRU memories (laplace-formats(5), "Page-image LRU behaviour sequence", and
 * laplace-lru(1)): behaviour sequences of a reference stream, the rules of
 * page-image traces, their re-reduction to larger memories and the reference
 * stream they stand for. The logic (src/analysis/lru.c) does no I/O, and its
 * messages name fields but neither file nor record; the drivers at the end
 * run it over whole traces read and written by the format modules. */
#ifndef LAPLACE_LRU_H
#define LAPLACE_LRU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "formats/legacy.h"

/* ---- an LRU memory of M pages on a stream of references (laplace-lru(1),
 * "From a basic merge stream") ---- */

typedef struct lp_lru_fault {
	char tag;         /* 'C' first reference to the page, 'F' otherwise */
	char dirt;        /* 'N' while filling, 'W' evicted dirty, 'R' clean */
	uint64_t page;
	uint64_t evicted; /* 0 with 'N' */
} lp_lru_fault;

typedef struct lp_lru lp_lru;
lp_lru *lp_lru_new(uint64_t frames); /* frames >= 1 */
/* Reference page; on a miss return true with *fault filled. */
bool lp_lru_ref(lp_lru *l, uint64_t page, bool write, lp_lru_fault *fault);
void lp_lru_free(lp_lru *l);

/* ---- re-reduction to a memory of frames >= M pages ---- */

typedef struct lp_pi_reduce lp_pi_reduce;
lp_pi_reduce *lp_pi_reduce_new(uint32_t frames);
/* Feed the next record of the M-page trace. Returns 1 with *out filled
 * when the larger memory faults (its images stay valid until the next
 * call, or as long as in's), 0 when it does not, -1 with err set
 * (LP_EINPUT: a broken rule; LP_EUSAGE: frames is less than M). */
int lp_pi_reduce_record(lp_pi_reduce *r, const lp_pi_record *in, lp_pi_record *out,
			lp_error *err);
void lp_pi_reduce_free(lp_pi_reduce *r);

/* ---- the reference stream of a page-image trace ---- */

typedef struct lp_pi_stream lp_pi_stream;
lp_pi_stream *lp_pi_stream_new(void);
/* Add the next record (its images are not kept); -1 with err set
 * (LP_EINPUT) at a broken rule. */
int lp_pi_stream_add(lp_pi_stream *s, const lp_pi_record *rec, lp_error *err);
/* Once every record is added: the next references of the stream, up to
 * cap; 0 at the end. */
size_t lp_pi_stream_next(lp_pi_stream *s, lp_basic_ref *out, size_t cap);
void lp_pi_stream_free(lp_pi_stream *s);

/* ---- whole traces: read, analysed, written (src/analysis/drivers.c) ---- */

/* Re-reduce a trace of an M-page memory (src is closed) to the trace of a
 * frames-page memory, binary with images or as text. LP_EUSAGE when frames
 * is below M, LP_EINPUT at the first broken rule. */
int lp_pi_reduce_trace(lp_byte_source *src, uint32_t frames, bool text,
		       const lp_torn_policy *policy, lp_output *out, lp_error *err);
/* Write the basic merge stream equivalent to a trace (laplace-formats(5),
 * "Page-image LRU behaviour sequence", its last paragraph); src is closed. */
int lp_pi_to_basic(lp_byte_source *src, const lp_torn_policy *policy, lp_output *out,
		   lp_error *err);

/* The text LRU behaviour sequence of a frames-page memory on the basic merge
 * stream at path (laplace-lru(1), "From a basic merge stream"). */
int lp_lru_basic_trace(const char *path, uint64_t frames, lp_output *out, lp_error *err);

/* What `laplace lru` asks (laplace-lru(1)). */
typedef struct lp_lru_request {
	const char *input;     /* "-": standard input */
	bool page_image;       /* input is a page-image trace, else a basic merge stream */
	bool text;             /* text output; binary output needs page_image */
	uint64_t frames;       /* at most UINT32_MAX with page_image */
	const char *output;    /* compressed by its suffix; NULL: standard output */
	int level;             /* its compression level, or LP_LEVEL_DEFAULT */
	lp_torn_policy policy; /* of a page-image input */
} lp_lru_request;
/* Write the behaviour sequence rq asks for, lp_pi_reduce_trace's or
 * lp_lru_basic_trace's, and publish the output only when it is whole.
 * Returns 0, or an lp_status with err set (LP_EUSAGE: frames is below the
 * page-image trace's memory). */
int lp_lru_run(const lp_lru_request *rq, lp_error *err);

#endif
