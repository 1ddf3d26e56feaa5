/* The oracle-general form (oracle.h): its writer, which patches each
 * record's next access in when the page comes again, and its reader. */
#include "formats/oracle.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "core/numbers.h"

/* The fewest records kept in memory, the last ones written: a next
 * access within them is patched there, an older one in the temporary
 * file. */
#define MIN_WINDOW 1024
/* Copied from the temporary file to the output at a time. */
#define COPY_BYTES (1u << 20)

struct lp_oracle_writer {
	uint64_t n;          /* records given */
	uint64_t base;       /* the index of buf's first record */
	size_t used;         /* records in buf */
	size_t window;       /* buf's room, in records */
	unsigned char *buf;
	int fd;              /* the temporary file, unlinked; -1 until needed */
	char *dir;           /* where it is, for messages */
	/* Each page's last reference: open addressing on the object id
	 * (canonical number + 1, never 0: 0 marks a free slot). */
	uint64_t *ids, *last;
	size_t cap, count;
};

lp_oracle_writer *lp_oracle_writer_new(size_t window)
{
	lp_oracle_writer *w = g_new0(lp_oracle_writer, 1);
	w->window = MAX(window, (size_t)MIN_WINDOW);
	w->buf = g_malloc(w->window * LP_ORACLE_RECORD_SIZE);
	w->fd = -1;
	w->cap = 1024;
	w->ids = g_new0(uint64_t, w->cap);
	w->last = g_new(uint64_t, w->cap);
	return w;
}

void lp_oracle_writer_free(lp_oracle_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	g_free(w->dir);
	g_free(w->buf);
	g_free(w->ids);
	g_free(w->last);
	g_free(w);
}

static size_t slot_of(uint64_t id, size_t cap)
{
	uint64_t z = id * UINT64_C(0x9e3779b97f4a7c15);
	return (size_t)(z ^ (z >> 29)) & (cap - 1);
}

/* The slot of id: where it is, or the free one where it goes. */
static size_t find(const lp_oracle_writer *w, uint64_t id)
{
	size_t i = slot_of(id, w->cap);
	while (w->ids[i] && w->ids[i] != id)
		i = (i + 1) & (w->cap - 1);
	return i;
}

static void grow(lp_oracle_writer *w)
{
	uint64_t *ids = w->ids, *last = w->last;
	size_t cap = w->cap;
	w->cap *= 2;
	w->ids = g_new0(uint64_t, w->cap);
	w->last = g_new(uint64_t, w->cap);
	for (size_t i = 0; i < cap; i++)
		if (ids[i]) {
			size_t j = find(w, ids[i]);
			w->ids[j] = ids[i];
			w->last[j] = last[i];
		}
	g_free(ids);
	g_free(last);
}

static int io_failed(lp_oracle_writer *w, const char *what, int saved, lp_error *err)
{
	return lp_fail(err, LP_EIO, "cannot %s the oracle-general stream's temporary file in %s: %s",
		       what, w->dir ? w->dir : g_get_tmp_dir(), g_strerror(saved));
}

static int pwrite_all(lp_oracle_writer *w, const unsigned char *p, size_t n, uint64_t at,
		      lp_error *err)
{
	while (n) {
		ssize_t k = pwrite(w->fd, p, n, (off_t)at);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return io_failed(w, "write", errno, err);
		}
		p += k;
		n -= (size_t)k;
		at += (uint64_t)k;
	}
	return 0;
}

/* buf's records to the temporary file (made at the first time). */
static int spill(lp_oracle_writer *w, lp_error *err)
{
	if (w->fd < 0) {
		w->dir = g_strdup(g_get_tmp_dir());
		char *name = g_build_filename(w->dir, "laplace-oracle-XXXXXX", NULL);
		w->fd = g_mkstemp(name);
		int saved = errno;
		if (w->fd >= 0)
			unlink(name);
		g_free(name);
		if (w->fd < 0)
			return io_failed(w, "create", saved, err);
	}
	int rc = pwrite_all(w, w->buf, w->used * LP_ORACLE_RECORD_SIZE,
			    w->base * LP_ORACLE_RECORD_SIZE, err);
	w->base += w->used;
	w->used = 0;
	return rc;
}

int lp_oracle_put(lp_oracle_writer *w, uint64_t canon, lp_error *err)
{
	uint64_t id = canon + 1, t = w->n;
	size_t i = find(w, id);
	if (w->ids[i]) {
		uint64_t j = w->last[i];
		unsigned char next[8];
		lp_store_u64(next, t + 1, false);
		if (j >= w->base)
			memcpy(w->buf + (j - w->base) * LP_ORACLE_RECORD_SIZE + 16, next, 8);
		else if (pwrite_all(w, next, 8, j * LP_ORACLE_RECORD_SIZE + 16, err))
			return err->status;
		w->last[i] = t;
	} else {
		w->ids[i] = id;
		w->last[i] = t;
		if (++w->count * 2 > w->cap)
			grow(w);
	}
	lp_oracle_encode(w->buf + w->used * LP_ORACLE_RECORD_SIZE, t, canon);
	w->n++;
	if (++w->used == w->window)
		return spill(w, err);
	return 0;
}

int lp_oracle_finish(lp_oracle_writer *w, lp_output *out, lp_error *err)
{
	if (w->fd < 0) /* the whole stream is in memory */
		return lp_output_write(out, w->buf, w->used * LP_ORACLE_RECORD_SIZE, err);
	if (spill(w, err))
		return err->status;
	unsigned char *chunk = g_malloc(COPY_BYTES);
	uint64_t total = w->base * LP_ORACLE_RECORD_SIZE, at = 0;
	int rc = 0;
	while (!rc && at < total) {
		ssize_t k = pread(w->fd, chunk, (size_t)MIN((uint64_t)COPY_BYTES, total - at), (off_t)at);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			rc = io_failed(w, "read", k < 0 ? errno : EIO, err);
			break;
		}
		rc = lp_output_write(out, chunk, (size_t)k, err);
		at += (uint64_t)k;
	}
	g_free(chunk);
	return rc;
}

/* ---- the reader ---- */

struct lp_oracle_reader {
	lp_byte_source *src;
	uint64_t index; /* records read */
};

lp_oracle_reader *lp_oracle_reader_new(lp_byte_source *src)
{
	lp_oracle_reader *r = g_new0(lp_oracle_reader, 1);
	r->src = src;
	return r;
}

void lp_oracle_reader_close(lp_oracle_reader *r)
{
	if (!r)
		return;
	lp_byte_source_close(r->src);
	g_free(r);
}

ssize_t lp_oracle_read(lp_oracle_reader *r, lp_basic_ref *refs, size_t cap, lp_error *err)
{
	/* A torn last record is an error: nothing of it can be taken. */
	const lp_torn_policy strict = {.strict = true};
	ssize_t n = lp_byte_source_records(r->src, LP_ORACLE_RECORD_SIZE, cap, r->index, &strict,
					   err);
	if (n <= 0)
		return n;
	const unsigned char *p = lp_byte_source_data(r->src);
	for (ssize_t i = 0; i < n; i++, p += LP_ORACLE_RECORD_SIZE) {
		uint64_t id = lp_load_u64(p + 4, false);
		if (id == 0) {
			lp_fail(err, LP_EINPUT, "%s: record %" G_GUINT64_FORMAT
				       " (byte %" G_GUINT64_FORMAT "): field object id: 0, not a "
				       "canonical number + 1", lp_byte_source_name(r->src),
				       r->index + (uint64_t)i,
				       (r->index + (uint64_t)i) * LP_ORACLE_RECORD_SIZE + 4);
			return -1;
		}
		refs[i].type = 'r';
		refs[i].canonical = id - 1;
	}
	r->src->b.pos += (size_t)n * LP_ORACLE_RECORD_SIZE;
	r->index += (uint64_t)n;
	return n;
}
