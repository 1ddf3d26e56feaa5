/* A growable read buffer over an lp_input, shared by the format readers:
 * whole lines for text formats, fixed-size records for binary ones. */
#ifndef LAPLACE_INBUF_H
#define LAPLACE_INBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "laplace/error.h"
#include "laplace/io.h"

typedef struct lp_inbuf {
	lp_input *in;     /* not owned */
	char *data;
	size_t cap;
	size_t pos, len;  /* unread bytes are data[pos, len) */
	size_t scanned;   /* bytes after pos already searched for '\n' */
	bool eof;
} lp_inbuf;

void lp_inbuf_init(lp_inbuf *b, lp_input *in);
void lp_inbuf_free(lp_inbuf *b);
/* Make at least want bytes available at data + pos (fewer only at the end
 * of input), reading as much as fits. Returns the bytes available, or -1
 * with err set. */
ssize_t lp_inbuf_fill(lp_inbuf *b, size_t want, lp_error *err);
/* Next line, without its '\n' and NUL-terminated in place (the last line
 * may lack its '\n'). Returns 1, 0 at the end, -1 with err set. *line stays
 * valid until the next call. Lines of any length are read whole. */
int lp_inbuf_line(lp_inbuf *b, char **line, size_t *len, lp_error *err);

#endif
