/* The buffered byte source behind every legacy reader (internal). */
#ifndef LAPLACE_BYTESRC_H
#define LAPLACE_BYTESRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "laplace/legacy.h"

struct lp_byte_source {
	lp_input *in;
	unsigned char *buf;
	size_t cap;   /* bytes allocated */
	size_t pos;   /* first unconsumed byte */
	size_t len;   /* bytes held */
	bool eof;
};

/* Make at least want bytes (want <= cap) available at buf + pos, reading
 * as much as fits; returns the bytes available (fewer than want only at
 * the end of input), or -1 with err set. */
ssize_t lp_byte_source_fill(lp_byte_source *s, size_t want, lp_error *err);

/* Report a torn last record of left bytes at record index under policy:
 * returns 0 after a warning, LP_EINPUT with err set when strict. */
int lp_torn_record(const lp_torn_policy *policy, const char *name, uint64_t index,
		   size_t left, lp_error *err);

#endif
