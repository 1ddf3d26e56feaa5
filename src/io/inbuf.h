/* A read buffer over an lp_input, shared by the format readers: whole lines
 * for text formats, fixed-size records for binary ones. Also whole small
 * files (job files, index.yaml), read without blocking and up to a cap. */
#ifndef LAPLACE_INBUF_H
#define LAPLACE_INBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"
#include "io/io.h"

typedef struct lp_inbuf {
	lp_input *in;     /* not owned */
	char *data;
	size_t cap;
	size_t pos, len;  /* unread bytes are data[pos, len) */
	size_t scanned;   /* bytes after pos already searched for '\n' */
	bool eof;
	bool borrowed;    /* data is the caller's (lp_inbuf_init_bytes) */
} lp_inbuf;

void lp_inbuf_init(lp_inbuf *b, lp_input *in);
/* With an initial buffer of size bytes (at least a longest line's room). */
void lp_inbuf_init_sized(lp_inbuf *b, lp_input *in, size_t size);
/* Over len bytes already in memory (a mapped file), all of them
 * available at once: never read into, grown or freed here. Only for
 * binary records: lp_inbuf_line writes into the buffer. */
void lp_inbuf_init_bytes(lp_inbuf *b, const void *data, size_t len);
void lp_inbuf_free(lp_inbuf *b);
/* Make at least want bytes available at data + pos (fewer only at the end
 * of input), reading as much as fits. Returns the bytes available, or -1
 * with err set. */
ssize_t lp_inbuf_fill(lp_inbuf *b, size_t want, lp_error *err);

/* The longest line of any text format (laplace-formats(5), "DESCRIPTION"),
 * in bytes before its '\n'. */
#define LP_LINE_MAX 4096
/* lp_inbuf_line's result for a longer line. */
#define LP_INBUF_LONG_LINE (-2)

/* Next line, without its '\n' and NUL-terminated in place (the last line
 * may lack its '\n'). Returns 1, 0 at the end, -1 with err set, or
 * LP_INBUF_LONG_LINE (err untouched) when the line has more than
 * LP_LINE_MAX bytes: then at most LP_LINE_MAX + 1 of them have been looked
 * at, the buffer is left as it is, and the reader reports the line with
 * lp_inbuf_long_line. *line stays valid until the next call. */
int lp_inbuf_line(lp_inbuf *b, char **line, size_t *len, lp_error *err);
/* "NAME:LINE: line longer than 4096 bytes" (LP_EINPUT); returns -1. */
int lp_inbuf_long_line(lp_error *err, const char *name, uint64_t line);

/* Read the whole regular file path, of at most max_bytes, into *text (NUL
 * terminated; g_free it). A FIFO or device is refused without blocking
 * (LP_EINPUT, "PATH: not a regular file"), and so is a final symbolic link
 * unless follow_link. kind names the file in "PATH: KIND too large" messages. */
int lp_read_small_file(const char *path, bool follow_link, size_t max_bytes, const char *kind,
		       char **text, size_t *len, lp_error *err);
/* The same for a file already open (not closed here); path is for messages. */
int lp_read_small_fd(int fd, const char *path, size_t max_bytes, const char *kind, char **text,
		     size_t *len, lp_error *err);

#endif
