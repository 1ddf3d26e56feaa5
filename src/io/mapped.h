/* Input files mapped for reading, guarded against their shrinking.
 *
 * A page of a mapped file past its end (the file truncated or rewritten
 * shorter while it is mapped) raises SIGBUS when it is touched, which
 * would end the run with no message and its temporary files left. The
 * mappings made here are registered, and a SIGBUS inside one of them is
 * answered by putting zero-filled pages in place of the vanished ones
 * and marking the mapping shrunk: the reader goes on, reads zeros where
 * records were (which no reader of a record format takes for a whole
 * file), and before it reports an error or an end it asks
 * lp_mapped_shrunk, to name the file as shrunk instead. A SIGBUS
 * anywhere else is left to the action there was before. */
#ifndef LAPLACE_MAPPED_H
#define LAPLACE_MAPPED_H

#include <stdbool.h>
#include <stddef.h>

typedef struct lp_mapped {
	const unsigned char *data; /* NULL: not mapped */
	size_t size;               /* the file's size when it was mapped */
	unsigned slot;             /* in the registry of guarded mappings */
} lp_mapped;

/* Map size bytes of the regular file fd (size > 0) for reading, private.
 * 0, or -1 with errno set (m->data NULL). */
int lp_mapped_open(lp_mapped *m, int fd, size_t size);
/* Whether a page of m vanished under it (a SIGBUS was answered). */
bool lp_mapped_shrunk(const lp_mapped *m);
/* Unmap m (which may be unmapped already: data NULL). */
void lp_mapped_close(lp_mapped *m);

#endif
