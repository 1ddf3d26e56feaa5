/* The seam between formats and the merge: what the pipeline reads from
 * (a reference source and an event source) and writes to (a sink). The
 * pipeline and the scheduler see only these; each format's file under
 * formats/ provides them.
 *
 * A source is a struct whose first member is its ops; the pipeline calls
 * through them once a batch of references, never once a reference: the
 * loop over records stays inside each source's read(). */
#ifndef LAPLACE_STREAM_H
#define LAPLACE_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"
#include "core/merge.h"
#include "core/record.h"

/* What a format's sniff() says of a trace's first bytes (registry.h). */
enum lp_sniff {
	LP_SNIFF_NO,
	LP_SNIFF_LIKELY, /* plausible records, no proof */
	LP_SNIFF_SURE,   /* its header, or a first record that parses */
};

/* A batch of records as bytes, cut by one thread and decoded by another
 * (lp_ref_source_ops.cut and .decode). For text: whole lines. */
typedef struct lp_text_chunk {
	char *text;          /* its records; for text, each line ended by '\n' */
	size_t len, cap;
	uint64_t first_line; /* the first one's number, from 1 */
	size_t lines;
	bool long_line;      /* the line after them is longer than LP_LINE_MAX */
} lp_text_chunk;
void lp_text_chunk_free(lp_text_chunk *c);

typedef struct lp_ref_source lp_ref_source;

typedef struct lp_ref_source_ops {
	/* Decode up to cap references into out; returns the count, 0 at the
	 * end, -1 with err set (naming file, record and field). Timestamp
	 * order is the caller's to check. */
	ssize_t (*read)(lp_ref_source *s, lp_ref *out, size_t cap, lp_error *err);
	/* Where the reference of index i (from 0) is, for a message: "FILE:LINE"
	 * or "FILE: record I" (g_free it). */
	char *(*where)(const lp_ref_source *s, uint64_t i);
	/* Index of the next reference read() would return. */
	uint64_t (*index)(const lp_ref_source *s);
	/* After the end: the bytes of a torn last record, 0 if none. */
	size_t (*torn_bytes)(const lp_ref_source *s);
	/* How far the input has been read, from 0 to 1, or -1 if unknown. */
	double (*fraction)(const lp_ref_source *s);
	const char *(*name)(const lp_ref_source *s);
	void (*close)(lp_ref_source *s);
	/* Optional (NULL when the source has none): */
	/* How many references decoded so far had an earlier timestamp than
	 * the one before them; when it has not grown, a batch is in order
	 * and need not be checked again. */
	uint64_t (*order_breaks)(const lp_ref_source *s);
	/* The references read() decodes are for another thread: store them
	 * past this processor's caches where it can. */
	void (*set_handoff)(lp_ref_source *s, bool handoff);
	/* Parallel decoding, when decoding costs more than the merge: cut()
	 * moves the next records, at most max, into c (returns how many, 0 at
	 * the end or before a record too long, -1 with err set); decode(),
	 * safe to call from several threads at once, turns c into refs with
	 * the same results, record for record and error for error, as read()
	 * (returns c->lines, or -1 with err set). */
	ssize_t (*cut)(lp_ref_source *s, lp_text_chunk *c, size_t max, lp_error *err);
	ssize_t (*decode)(const lp_ref_source *s, const lp_text_chunk *c, lp_ref *refs,
			  lp_error *err);
	/* Bits of the vas ids and addresses its form carries: 32, or 64 in
	 * the 64-bit forms (laplace-formats(5) 10), whose captures have
	 * another default page offset. */
	unsigned width;
} lp_ref_source_ops;

struct lp_ref_source {
	const lp_ref_source_ops *ops;
};

static inline ssize_t lp_ref_source_read(lp_ref_source *s, lp_ref *out, size_t cap, lp_error *err)
{
	return s->ops->read(s, out, cap, err);
}
static inline const char *lp_ref_source_name(const lp_ref_source *s) { return s->ops->name(s); }
static inline uint64_t lp_ref_source_index(const lp_ref_source *s) { return s->ops->index(s); }
static inline double lp_ref_source_fraction(const lp_ref_source *s) { return s->ops->fraction(s); }
static inline size_t lp_ref_source_torn_bytes(const lp_ref_source *s)
{
	return s->ops->torn_bytes(s);
}
static inline unsigned lp_ref_source_width(const lp_ref_source *s) { return s->ops->width; }
static inline void lp_ref_source_close(lp_ref_source *s)
{
	if (s)
		s->ops->close(s);
}

typedef struct lp_event_source lp_event_source;

typedef struct lp_event_source_ops {
	/* Next event: 1 with *ev filled (its strings stay valid until the
	 * next call), 0 at the end, -1 with err set. Timestamp order is the
	 * caller's to check. */
	int (*next)(lp_event_source *s, lp_event *ev, lp_error *err);
	/* Where ev, the last event next() returned, is: "FILE:LINE" (g_free
	 * it). */
	char *(*where)(const lp_event_source *s, const lp_event *ev);
	void (*close)(lp_event_source *s);
} lp_event_source_ops;

struct lp_event_source {
	const lp_event_source_ops *ops;
};

static inline int lp_event_source_next(lp_event_source *s, lp_event *ev, lp_error *err)
{
	return s->ops->next(s, ev, err);
}
static inline void lp_event_source_close(lp_event_source *s)
{
	if (s)
		s->ops->close(s);
}

/* A sink receives the merged stream. refs() gets a run of references that
 * share one current task (who is NULL when none is current); event() gets
 * each kernel event after it was applied, with its route; finish() gets the
 * final statistics once both inputs are exhausted. Each returns 0 or an
 * lp_status with err set. */
typedef struct lp_sink {
	int (*refs)(void *ctx, const lp_ref *refs, const uint64_t *canon, size_t n,
		    const lp_task_id *who, lp_error *err);
	int (*event)(void *ctx, const lp_event *ev, const lp_event_route *route, lp_error *err);
	int (*finish)(void *ctx, const lp_stats *stats, lp_error *err);
} lp_sink;

#endif
