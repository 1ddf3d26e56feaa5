/* A byte source: an input and its read buffer, the one shell every reader
 * of a file builds on. Readers embed one (lp_byte_source_init) or take an
 * open one over (lp_byte_source_open: the legacy readers, handed a source
 * whose first bytes were looked at to detect its format). */
#ifndef LAPLACE_BYTESRC_H
#define LAPLACE_BYTESRC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"
#include "io/inbuf.h"
#include "io/io.h"

/* lp_inbuf_fill, lp_inbuf_line... on b make bytes and lines available. */
typedef struct lp_byte_source {
	lp_input *in;
	lp_inbuf b;
} lp_byte_source;

/* Open path into s: 0, or -1 with err set. */
int lp_byte_source_init(lp_byte_source *s, const char *path, lp_error *err);
/* The same for one of many files open at once, with an input buffer of
 * input_size bytes and a read buffer of line_size (lp_input_open_sized). */
int lp_byte_source_init_sized(lp_byte_source *s, const char *path, size_t input_size,
			      size_t line_size, lp_error *err);
/* Close what lp_byte_source_init opened (s itself is the caller's). */
void lp_byte_source_clear(lp_byte_source *s);

/* A source of its own, freed by lp_byte_source_close (NULL-safe). */
lp_byte_source *lp_byte_source_open(const char *path, lp_error *err);
void lp_byte_source_close(lp_byte_source *s);

const char *lp_byte_source_name(const lp_byte_source *s);

/* How many whole records of size bytes (at most cap) lie at the front of
 * the source: 0 at the end, where a torn last record is reported through
 * policy (index: the records read before it) and dropped; -1 on error.
 * The caller decodes them from lp_byte_source_data and consumes them. */
ssize_t lp_byte_source_records(lp_byte_source *s, size_t size, size_t cap, uint64_t index,
			       const lp_torn_policy *policy, lp_error *err);

/* The first unconsumed byte. */
static inline const unsigned char *lp_byte_source_data(const lp_byte_source *s)
{
	return (const unsigned char *)s->b.data + s->b.pos;
}

#endif
