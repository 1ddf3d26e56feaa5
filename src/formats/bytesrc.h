/* The buffered byte source behind every legacy reader (internal). */
#ifndef LAPLACE_BYTESRC_H
#define LAPLACE_BYTESRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "io/inbuf.h"
#include "formats/legacy.h"

/* An input and its read buffer (lp_inbuf_fill makes bytes available). */
struct lp_byte_source {
	lp_input *in;
	lp_inbuf b;
};

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

/* Names copied 16 bytes at a time (the destination needs that much room)
 * and then cut to their length: a fixed-size copy the compiler inlines. */
typedef struct lp_padded_name {
	char text[16];
	uint8_t len;
} lp_padded_name;

static inline char *lp_put_name(char *p, const lp_padded_name *name)
{
	memcpy(p, name->text, 16);
	return p + name->len;
}

#endif
