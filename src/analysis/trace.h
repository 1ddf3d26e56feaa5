/* A whole reference stream held as dense page numbers (policy.h), for
 * what needs the stream more than once or from both ends: laplace sim
 * (its sizes pow2 and all need D, opt needs next uses) and laplace
 * reduce.
 *
 * What it guarantees:
 *  - page[t], t = 0 .. n-1, is the dense number of reference t's
 *    canonical page: pages are numbered 0, 1, ... in order of first
 *    reference, so page[t] == pages exactly at a page's first reference
 *    as the stream is read, and canonical[p] gives the number back;
 *  - type[t] is reference t's type ("rwiRWI"), kept as read;
 *  - with user_only, R W I references are dropped before numbering
 *    (policies.md §1), so n, D and the numbers are the user stream's;
 *  - memory: 5 bytes a reference up to memory_refs references
 *    (LP_TRACE_MEMORY_REFS unless changed after lp_trace_init), past it
 *    the two arrays are mapped from unlinked temporary files (in
 *    TMPDIR, their blocks reserved as they grow: a full disk is an
 *    LP_EIO from lp_trace_add, never a fault while writing), so memory
 *    stays bounded; plus 8 bytes a distinct page, and the map from
 *    canonical numbers to dense ones while the stream is added (24 bytes
 *    a slot, freed by lp_trace_done); nothing is allocated per
 *    reference (the arrays grow by doubling);
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

#include "analysis/policy.h"
#include "core/error.h"
#include "core/pairmap.h"

/* References held in memory before the stream goes to a temporary file
 * (320 MiB of pages and types). */
#define LP_TRACE_MEMORY_REFS (UINT64_C(1) << 26)

/* LP_NO_PAGE stays free to mean "none". */
#define LP_TRACE_RECENT 256
#define LP_TRACE_MAX_PAGES (UINT32_MAX - 1)

typedef struct lp_trace {
	lp_pageno *page;     /* n dense page numbers */
	char *type;          /* n reference types */
	uint64_t n;
	lp_pageno pages;     /* D */
	uint64_t *canonical; /* D canonical numbers, by dense number */
	uint64_t memory_refs; /* see above */
	/* While adding. */
	bool user_only;
	uint64_t cap, pages_cap;
	int spill[2];         /* page's and type's temporary files, or -1 */
	size_t bytes[2];      /* their arrays' sizes */
	pairmap ids;         /* canonical -> dense number + 1 */
	/* The pages met last, by the low bits of their canonical numbers:
	 * most references are found here without a probe of ids. A slot's
	 * key starts as one no canonical number of its slot can be. */
	uint64_t recent_key[LP_TRACE_RECENT];
	lp_pageno recent_page[LP_TRACE_RECENT];
} lp_trace;

void lp_trace_init(lp_trace *t, bool user_only);
/* Add the next reference (dropped when user_only and type is R W or I).
 * 0, or LP_EINPUT with err set when it would be page LP_TRACE_MAX_PAGES
 * + 1 (the message names what, not where: the caller adds the file), or
 * LP_EIO when the temporary file cannot hold it. */
int lp_trace_add(lp_trace *t, char type, uint64_t canonical, lp_error *err);
/* Adding is over: the map is freed, the arrays trimmed. */
void lp_trace_done(lp_trace *t);
/* lp_trace_init, then every reference of the basic merge stream path
 * ('-': standard input), then lp_trace_done. 0, or the reader's lp_status
 * with err set (the message naming the file and line or record); t is
 * then cleared. */
int lp_trace_load(lp_trace *t, const char *path, bool user_only, lp_error *err);
void lp_trace_clear(lp_trace *t);

/* next(t) of every reference (policies.md §1), LP_NEVER for a page's
 * last: n entries, mapped from a temporary file past memory_refs
 * references; freed by lp_trace_next_use_free (t unchanged meanwhile). */
uint64_t *lp_trace_next_use(const lp_trace *t);
void lp_trace_next_use_free(const lp_trace *t, uint64_t *next);

#endif
