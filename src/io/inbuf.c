#include "io/inbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

/* Fuzz builds make it small, so that records often straddle refills. */
#ifndef INBUF_INITIAL_SIZE
#define INBUF_INITIAL_SIZE (1u << 20)
#endif
/* A longest line, its '\n' and the NUL after a last line always fit. */
_Static_assert(INBUF_INITIAL_SIZE > LP_LINE_MAX + 2, "inbuf too small for a line");

void lp_inbuf_init(lp_inbuf *b, lp_input *in)
{
	lp_inbuf_init_sized(b, in, INBUF_INITIAL_SIZE);
}

void lp_inbuf_init_sized(lp_inbuf *b, lp_input *in, size_t size)
{
	memset(b, 0, sizeof *b);
	b->in = in;
	b->cap = MAX(size, (size_t)LP_LINE_MAX + 3);
	b->data = g_malloc(b->cap);
}

void lp_inbuf_init_bytes(lp_inbuf *b, const void *data, size_t len)
{
	memset(b, 0, sizeof *b);
	b->data = (char *)data; /* read only: the binary readers never write */
	b->cap = b->len = len;
	b->eof = true;
	b->borrowed = true;
}

void lp_inbuf_free(lp_inbuf *b)
{
	if (!b->borrowed)
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
		/* Only a '\n' within LP_LINE_MAX bytes ends a line short enough. */
		size_t window = MIN(avail, (size_t)LP_LINE_MAX + 1);
		char *nl = b->scanned < window
			? memchr(start + b->scanned, '\n', window - b->scanned) : NULL;
		if (nl) {
			*nl = '\0';
			*line = start;
			*len = (size_t)(nl - start);
			b->pos += *len + 1;
			b->scanned = 0;
			return 1;
		}
		if (avail > LP_LINE_MAX)
			return LP_INBUF_LONG_LINE;
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
		/* The buffer holds far more than a line: it never grows here. */
		if (read_more(b, avail + 1, err) < 0)
			return -1;
	}
}

int lp_inbuf_long_line(lp_error *err, const char *name, uint64_t line)
{
	lp_fail(err, LP_EINPUT, "%s:%" PRIu64 ": line longer than %d bytes", name, line, LP_LINE_MAX);
	return -1;
}

int lp_read_small_file(const char *path, bool follow_link, size_t max_bytes, const char *kind,
		       char **text, size_t *len, lp_error *err)
{
	/* O_NONBLOCK: a FIFO in the file's place must not hang the reader. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (follow_link ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return lp_fail(err, LP_EIO, "cannot open %s: %s", path, g_strerror(errno));
	int r = lp_read_small_fd(fd, path, max_bytes, kind, text, len, err);
	close(fd);
	return r;
}

int lp_read_small_fd(int fd, const char *path, size_t max_bytes, const char *kind, char **text,
		     size_t *len, lp_error *err)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return lp_fail(err, LP_EIO, "cannot read %s: %s", path, g_strerror(errno));
	if (!S_ISREG(st.st_mode))
		return lp_fail(err, LP_EINPUT, "%s: not a regular file", path);
	if ((uint64_t)st.st_size > max_bytes)
		return lp_fail(err, LP_EINPUT, "%s: %s too large (%jd bytes, at most %zu)", path, kind,
			       (intmax_t)st.st_size, max_bytes);
	/* The size can change while we read: stop one byte past the limit. */
	GByteArray *buf = g_byte_array_new();
	guint8 chunk[16384];
	int r = 0;
	while (buf->len <= max_bytes) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = lp_fail(err, LP_EIO, "cannot read %s: %s", path, g_strerror(errno));
			break;
		}
		if (n == 0)
			break;
		g_byte_array_append(buf, chunk, (guint)n);
	}
	if (!r && buf->len > max_bytes)
		r = lp_fail(err, LP_EINPUT, "%s: %s too large (more than %zu bytes)", path, kind,
			    max_bytes);
	if (r) {
		g_byte_array_free(buf, TRUE);
		return r;
	}
	*len = buf->len;
	g_byte_array_append(buf, (const guint8 *)"", 1);
	*text = (char *)g_byte_array_free(buf, FALSE);
	return 0;
}
