/* A whole reference stream held as dense page numbers (policy.h), for
 * what needs the stream more than once or from both ends: laplace sim
 * (its sizes pow2 and all need D, opt needs next uses) and laplace
 * reduce.
 *
 * What it guarantees:
 *  - the dense number of reference t's canonical page, t = 0 .. n-1:
 *    pages are numbered 0, 1, ... in order of first reference, so
 *    reference t is page `pages` exactly at a page's first reference as
 *    the stream is read, canonical[p] gives the number back and first[p]
 *    the time of that first reference (t); its type
 *    ("rwiRWI") is kept as read;
 *  - with LP_TRACE_USER_ONLY, R W I references are dropped before
 *    numbering (policies.md §1), so n, D and the numbers are the user
 *    stream's;
 *  - with LP_TRACE_LRU_ONLY (laplace sim asked for the LRU curve alone),
 *    the stream itself is not kept: each window of references, a block
 *    long, is counted into curve_hist, the histogram of LRU stack
 *    distances (stackdist.h), as it fills, and no temporary file is made;
 *    no iterator, map or next uses of such a trace; LP_TRACE_OPT_ONLY
 *    likewise, OPT stack distances (optdist.h);
 *  - memory: the window and O(D), however long the stream (readers add
 *    their blocks, lp_trace_map and next uses their arrays: below). The
 *    references are added to a window of window_refs (LP_TRACE_WINDOW_REFS unless changed after
 *    lp_trace_init: 5 MiB of pages and types); a stream that fits it stays
 *    there; each time a longer one fills it, the window is written to the
 *    end of two unlinked temporary files in TMPDIR (pages, types), and
 *    what is left when adding is over stays in the window. The files are
 *    written once, sequentially (a full disk is an LP_EIO from
 *    lp_trace_add), and read back through lp_trace_iter's blocks, each
 *    iterator its own buffer (pread, any number of threads at once), so they
 *    live in the page cache or on disk, never in the process's memory.
 *    Besides: 16 bytes a distinct page, and the map from canonical numbers
 *    to dense ones while the stream is added (pagenumbers.h: 4 to 8 bytes
 *    a page for a merge's numbers, freed by lp_trace_done); nothing is
 *    allocated per reference;
 *  - lp_trace_map alone (laplace reduce) gives the whole stream as arrays,
 *    the window written out and the files mapped read-only: 5 bytes a
 *    reference of the mapping count in the process's memory as they are
 *    touched, clean pages the system may take back; lp_trace_next_use's
 *    8 bytes a reference count likewise (opt, policies.md §1);
 *  - at most LP_TRACE_MAX_PAGES distinct pages: past it lp_trace_add
 *    fails with LP_EINPUT rather than wrap a number.
 *
 * lp_trace_load reads a basic merge stream (any form, '-' for standard
 * input); a capture is merged by the caller and fed to lp_trace_add
 * (src/cmd/cli.c, cli_trace_load), since merging is the pipeline's layer,
 * not this one's. */
#ifndef LAPLACE_TRACE_H
#define LAPLACE_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/optdist.h"
#include "analysis/pagenumbers.h"
#include "analysis/policy.h"
#include "analysis/stackdist.h"
#include "core/error.h"
#include "core/progress.h"

/* References held in memory before the stream goes to its temporary
 * files (4 MiB of pages, 1 MiB of types). */
#define LP_TRACE_WINDOW_REFS (UINT64_C(1) << 20)
/* References a reader's block holds at most (256 KiB of pages). */
#define LP_TRACE_BLOCK_REFS (UINT64_C(1) << 16)
/* Next uses held in memory up to this many references (512 MiB), past it
 * in a temporary file. */
#define LP_TRACE_NEXT_USE_REFS (UINT64_C(1) << 26)

/* LP_NO_PAGE stays free to mean "none". */
#define LP_TRACE_MAX_PAGES (UINT32_MAX - 1)

typedef struct lp_trace {
	uint64_t n;
	lp_pageno pages;     /* D */
	uint64_t *canonical; /* D canonical numbers, by dense number */
	uint64_t *first;     /* D times of first references, by dense number */
	uint64_t window_refs;    /* see above */
	uint64_t next_use_refs;  /* LP_TRACE_NEXT_USE_REFS unless changed */
	/* References [0, filed) are in the files, the held ones after them,
	 * [filed, n), in the window. */
	uint64_t filed, held;
	int spill[2];        /* pages' and types' temporary files, or -1 */
	lp_pageno *page;     /* the window: references filed .. n-1 */
	char *type;
	uint64_t cap;        /* the window's room */
	lp_pageno *map_page; /* lp_trace_map's arrays, or NULL */
	char *map_type;
	/* With LP_TRACE_LRU_ONLY (LP_TRACE_OPT_ONLY): hist[d], the
	 * references at LRU (OPT) stack distance d, 1 <= d <= pages (hist[0]
	 * = 0); the stack while adding. */
	uint64_t *curve_hist;
	uint64_t curve_hist_cap;
	lp_stackdist *lru;
	lp_optdist *opt;
	/* While adding. */
	unsigned flags;
	uint64_t pages_cap;
	lp_page_numbers ids; /* canonical -> dense number */
} lp_trace;

enum {
	LP_TRACE_USER_ONLY = 1,
	LP_TRACE_LRU_ONLY = 2,
	LP_TRACE_OPT_ONLY = 4,
};

/* flags: LP_TRACE_* (above), or 0. */
void lp_trace_init(lp_trace *t, unsigned flags);
/* Add the next reference (dropped with LP_TRACE_USER_ONLY when type is R W or I).
 * 0, or LP_EINPUT with err set when it would be page LP_TRACE_MAX_PAGES
 * + 1, or with LP_TRACE_LRU_ONLY page LP_STACKDIST_MAX_PAGES + 1 (with
 * LP_TRACE_OPT_ONLY LP_OPTDIST_MAX_PAGES + 1)
 * (lp_policy_refuse_pages's message, as lp_sim_check_curves's; the
 * message names what, not where: the caller adds the file,
 * lp_trace_name_failure), or
 * LP_EIO when the temporary files cannot take the window. */
int lp_trace_add(lp_trace *t, char type, uint64_t canonical, lp_error *err);
/* Adding is over: the map is freed, the window trimmed. */
void lp_trace_done(lp_trace *t);
/* err's message (lp_trace_add's) prefixed with the stream's name, path
 * ("standard input" for "-"); returns err->status. */
int lp_trace_name_failure(const char *path, lp_error *err);
/* lp_trace_init, then every reference of the basic merge stream path
 * ('-': standard input), then lp_trace_done, telling progress (may be
 * NULL) the references read. 0, or the reader's lp_status with err set (the message naming the file and line or record); t is
 * then cleared. */
int lp_trace_load(lp_trace *t, const char *path, unsigned flags, const lp_progress *progress,
		  lp_error *err);
void lp_trace_clear(lp_trace *t);

/* The one way to read a done trace (t unchanged meanwhile), each job its
 * own iterator: blocks of its references in order, from the first
 * (forward) or from the last (backward; within a block the pages are
 * still in stream order), as DynamoRIO's readers iterate:
 *     lp_trace_iter it;
 *     lp_trace_iter_init(&it, t, false);
 *     for (lp_trace_block b; (b = lp_trace_iter_next(&it)).len;)
 *             for (size_t k = 0; k < b.len; k++)
 *                     ... b.page[k] is reference b.at + k ...
 *     lp_trace_iter_clear(&it);
 * A block holds 1 .. LP_TRACE_BLOCK_REFS references, valid until the
 * next call, and lies within the files or within the window; past the
 * end (the start, backward) it is empty. It is a value, so that a loop
 * over it keeps it in registers. Reading the files back cannot fail but
 * for the machine's I/O error, which ends the program as an I/O failure
 * (status 3). */
typedef struct lp_trace_block {
	const lp_pageno *page; /* references at .. at + len - 1 */
	size_t len;
	uint64_t at;
} lp_trace_block;
typedef struct lp_trace_iter {
	const lp_trace *t;
	bool backward;
	uint64_t next;  /* the first reference after the blocks given (forward), or
			 * the first of them (backward) */
	lp_pageno *buf; /* LP_TRACE_BLOCK_REFS pages, when t has files */
} lp_trace_iter;
void lp_trace_iter_init(lp_trace_iter *it, const lp_trace *t, bool backward);
lp_trace_block lp_trace_iter_next(lp_trace_iter *it);
void lp_trace_iter_clear(lp_trace_iter *it);

/* The whole done stream as n pages and n types (for random access):
 * the window's past the files' end written to them, the files mapped
 * read-only; held until lp_trace_clear. 0, or LP_EIO with err set. */
int lp_trace_map(lp_trace *t, const lp_pageno **page, const char **type, lp_error *err);

/* next(t) of every reference (policies.md §1), LP_NEVER for a page's
 * last: n entries, mapped from a temporary file past next_use_refs
 * references; freed by lp_trace_next_use_free (t unchanged meanwhile). */
uint64_t *lp_trace_next_use(const lp_trace *t);
void lp_trace_next_use_free(const lp_trace *t, uint64_t *next);

#endif
