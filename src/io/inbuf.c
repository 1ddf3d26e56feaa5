#include "laplace/inbuf.h"

#include <string.h>

#include <glib.h>

/* Fuzz builds make it small, so that records often straddle refills. */
#ifndef INBUF_INITIAL_SIZE
#define INBUF_INITIAL_SIZE (1u << 20)
#endif

void lp_inbuf_init(lp_inbuf *b, lp_input *in)
{
	memset(b, 0, sizeof *b);
	b->in = in;
	b->cap = INBUF_INITIAL_SIZE;
	b->data = g_malloc(b->cap);
}

void lp_inbuf_free(lp_inbuf *b)
{
	g_free(b->data);
	b->data = NULL;
}

/* Move the unread bytes to the front, grow to hold at least need bytes plus
 * a terminating NUL, and read until the buffer is full or input ends. */
static int read_more(lp_inbuf *b, size_t need, lp_error *err)
{
	if (b->pos > 0) {
		memmove(b->data, b->data + b->pos, b->len - b->pos);
		b->len -= b->pos;
		b->pos = 0;
	}
	if (need + 1 > b->cap) {
		while (need + 1 > b->cap)
			b->cap *= 2;
		b->data = g_realloc(b->data, b->cap);
	}
	/* Keep one byte free for the NUL after a last line without '\n'. */
	size_t room = b->cap - 1 - b->len;
	ssize_t r = lp_input_read(b->in, b->data + b->len, room, err);
	if (r < 0)
		return -1;
	b->len += (size_t)r;
	if ((size_t)r < room) /* lp_input_read is short only at the end */
		b->eof = true;
	return 0;
}

ssize_t lp_inbuf_fill(lp_inbuf *b, size_t want, lp_error *err)
{
	if (b->len - b->pos < want && !b->eof && read_more(b, want, err) < 0)
		return -1;
	return (ssize_t)(b->len - b->pos);
}

int lp_inbuf_line(lp_inbuf *b, char **line, size_t *len, lp_error *err)
{
	for (;;) {
		char *start = b->data + b->pos;
		size_t avail = b->len - b->pos;
		char *nl = memchr(start + b->scanned, '\n', avail - b->scanned);
		if (nl) {
			*nl = '\0';
			*line = start;
			*len = (size_t)(nl - start);
			b->pos += *len + 1;
			b->scanned = 0;
			return 1;
		}
		if (b->eof) {
			if (avail == 0)
				return 0;
			start[avail] = '\0'; /* read_more left room for it */
			*line = start;
			*len = avail;
			b->pos = b->len;
			b->scanned = 0;
			return 1;
		}
		b->scanned = avail;
		/* A line longer than the buffer makes it grow. */
		size_t need = avail < b->cap / 2 ? avail : b->cap;
		if (read_more(b, need, err) < 0)
			return -1;
	}
}
