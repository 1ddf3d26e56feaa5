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

/* A reader of fixed-size records (the BYU and P6 traces' readers), which
 * their format's decoder reads in the byte order endian; it takes src
 * over, closed with it. */
typedef struct lp_record_reader {
	lp_byte_source *src;
	enum lp_endian endian;
	uint64_t index; /* records read so far */
} lp_record_reader;

lp_record_reader *lp_record_reader_new(lp_byte_source *src, enum lp_endian endian);
/* The next whole records of size bytes, at most cap, consumed: their
 * count, their bytes from *data (valid until the next call); 0 at the
 * end, where a torn last record is reported through policy; -1 on error. */
ssize_t lp_record_reader_next(lp_record_reader *r, size_t size, size_t cap,
			      const lp_torn_policy *policy, const unsigned char **data,
			      lp_error *err);
void lp_record_reader_close(lp_record_reader *r);

#endif
