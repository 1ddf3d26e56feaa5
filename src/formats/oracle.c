/* The oracle-general form (oracle.h): its writer, which finds next
 * accesses by a backward walk once the stream is whole, and its reader. */
#include "formats/oracle.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "core/nextuse.h"
#include "core/numbers.h"

/* The fewest references whose pages are kept in memory. */
#define MIN_WINDOW 1024
/* References read back from the temporary files, and encoded, at a time. */
#define BLOCK_REFS 65536
/* The pages met last, by the low bits of their canonical numbers: most
 * references are found there without a probe of the table. */
#define RECENT 256

/* A slot of the table: an object id (canonical number + 1, never 0: 0
 * marks a free slot) and its dense number, in one cache line. */
typedef struct page_slot {
	uint64_t id;
	uint32_t dense;
} page_slot;

struct lp_oracle_writer {
	uint64_t n;       /* references given */
	uint64_t filed;   /* references [0, filed) are in pages_fd, the rest in page */
	size_t window;    /* page's room */
	uint32_t *page;   /* the dense page numbers of references filed .. n-1 */
	int pages_fd;     /* the dense page numbers filed, unlinked; -1 until needed */
	int next_fd;      /* their next uses, made by lp_oracle_finish */
	/* Dense page numbers, 0, 1, ... in order of first reference: open
	 * addressing on the object id, and each number's canonical number. */
	page_slot *slots;
	size_t cap;
	uint64_t recent_id[RECENT]; /* 0: none */
	uint32_t recent_dense[RECENT];
	uint32_t pages;
	uint64_t *canonical;
	size_t canonical_cap;
};

lp_oracle_writer *lp_oracle_writer_new(size_t window)
{
	lp_oracle_writer *w = g_new0(lp_oracle_writer, 1);
	w->window = MAX(window, (size_t)MIN_WINDOW);
	w->page = g_new(uint32_t, w->window);
	w->pages_fd = w->next_fd = -1;
	w->cap = 1024;
	w->slots = g_new0(page_slot, w->cap);
	return w;
}

void lp_oracle_writer_free(lp_oracle_writer *w)
{
	if (!w)
		return;
	if (w->pages_fd >= 0)
		close(w->pages_fd);
	if (w->next_fd >= 0)
		close(w->next_fd);
	g_free(w->page);
	g_free(w->slots);
	g_free(w->canonical);
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
	while (w->slots[i].id && w->slots[i].id != id)
		i = (i + 1) & (w->cap - 1);
	return i;
}

static void grow(lp_oracle_writer *w)
{
	page_slot *slots = w->slots;
	size_t cap = w->cap;
	w->cap *= 2;
	w->slots = g_new0(page_slot, w->cap);
	for (size_t i = 0; i < cap; i++)
		if (slots[i].id)
			w->slots[find(w, slots[i].id)] = slots[i];
	g_free(slots);
}

static int io_failed(const char *what, int saved, lp_error *err)
{
	return lp_fail(err, LP_EIO, "cannot %s the oracle-general stream's temporary file in %s: %s",
		       what, g_get_tmp_dir(), g_strerror(saved));
}

/* A temporary file in TMPDIR, unlinked at once: no run leaves it behind. */
static int scratch_file(lp_error *err)
{
	char *name = g_build_filename(g_get_tmp_dir(), "laplace-oracle-XXXXXX", NULL);
	int fd = g_mkstemp(name);
	int saved = errno;
	if (fd >= 0)
		unlink(name);
	g_free(name);
	if (fd < 0)
		return io_failed("create", saved, err);
	return fd;
}

static int pwrite_all(int fd, const void *buf, size_t n, uint64_t at, lp_error *err)
{
	const char *p = buf;
	while (n) {
		ssize_t k = pwrite(fd, p, n, (off_t)at);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return io_failed("write", k < 0 ? errno : ENOSPC, err);
		p += k;
		n -= (size_t)k;
		at += (uint64_t)k;
	}
	return 0;
}

static int pread_all(int fd, void *buf, size_t n, uint64_t at, lp_error *err)
{
	char *p = buf;
	while (n) {
		ssize_t k = pread(fd, p, n, (off_t)at);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return io_failed("read", k < 0 ? errno : EIO, err);
		p += k;
		n -= (size_t)k;
		at += (uint64_t)k;
	}
	return 0;
}

/* The window's pages to the end of the temporary file (made at the first
 * time), the window empty again. */
static int file_window(lp_oracle_writer *w, lp_error *err)
{
	if (w->pages_fd < 0 && (w->pages_fd = scratch_file(err)) < 0)
		return err->status;
	size_t held = (size_t)(w->n - w->filed);
	int rc = pwrite_all(w->pages_fd, w->page, held * sizeof *w->page,
			    w->filed * sizeof *w->page, err);
	w->filed = w->n;
	return rc;
}

/* The dense number of object id, numbered now at its first reference;
 * UINT32_MAX past 2^32 - 1 pages. */
static uint32_t dense_of(lp_oracle_writer *w, uint64_t id)
{
	size_t i = find(w, id);
	if (w->slots[i].id)
		return w->slots[i].dense;
	if (w->pages == UINT32_MAX)
		return UINT32_MAX;
	if (w->pages == w->canonical_cap) {
		w->canonical_cap = w->canonical_cap ? 2 * w->canonical_cap : 1024;
		w->canonical = g_renew(uint64_t, w->canonical, w->canonical_cap);
	}
	w->canonical[w->pages] = id - 1;
	w->slots[i] = (page_slot){.id = id, .dense = w->pages};
	if ((size_t)++w->pages * 2 > w->cap)
		grow(w);
	return w->pages - 1;
}

void lp_oracle_prefetch(const lp_oracle_writer *w, uint64_t canon)
{
	__builtin_prefetch(&w->slots[slot_of(canon + 1, w->cap)]);
}

int lp_oracle_put(lp_oracle_writer *w, uint64_t canon, lp_error *err)
{
	uint64_t id = canon + 1;
	size_t h = (size_t)(canon & (RECENT - 1));
	uint32_t dense;
	if (w->recent_id[h] == id) {
		dense = w->recent_dense[h];
	} else {
		dense = dense_of(w, id);
		if (dense == UINT32_MAX)
			return lp_fail(err, LP_EINPUT, "more than %" G_GUINT32_FORMAT " distinct pages "
				       "for the oracle-general form", (uint32_t)UINT32_MAX);
		w->recent_id[h] = id;
		w->recent_dense[h] = dense;
	}
	w->page[w->n++ - w->filed] = dense;
	if (w->n - w->filed == w->window)
		return file_window(w, err);
	return 0;
}

/* The records of references from .. from + len - 1, their pages and next
 * uses given, to out. */
static int write_records(const lp_oracle_writer *w, uint64_t from, const uint32_t *page,
			 const uint64_t *next, size_t len, unsigned char *buf, lp_output *out,
			 lp_error *err)
{
	unsigned char *p = buf;
	for (size_t k = 0; k < len; k++, p += LP_ORACLE_RECORD_SIZE) {
		lp_oracle_encode(p, from + k, w->canonical[page[k]]);
		if (next[k] != LP_NEVER)
			lp_store_u64(p + 16, next[k] + 1, false);
	}
	return lp_output_write(out, buf, len * LP_ORACLE_RECORD_SIZE, err);
}

/* Next uses found backwards (nextuse.h): the window's in memory, the
 * filed references' in a second temporary file, a block at a time from
 * the end; then every record forwards, its page and next use read back. */
int lp_oracle_finish(lp_oracle_writer *w, lp_output *out, lp_error *err)
{
	size_t held = (size_t)(w->n - w->filed);
	uint64_t *held_next = g_new(uint64_t, held ? held : 1);
	uint32_t *block_page = g_new(uint32_t, BLOCK_REFS);
	uint64_t *block_next = g_new(uint64_t, BLOCK_REFS);
	unsigned char *records = g_malloc((size_t)BLOCK_REFS * LP_ORACLE_RECORD_SIZE);
	lp_next_use_walk walk;
	lp_next_use_walk_init(&walk, w->pages, w->n);
	lp_next_use_walk_back(&walk, w->page, held, held_next);
	int rc = 0;
	if (w->filed && (w->next_fd = scratch_file(err)) < 0)
		rc = err->status;
	for (uint64_t end = w->filed; !rc && end > 0;) {
		uint64_t from = end - MIN((uint64_t)BLOCK_REFS, end);
		size_t len = (size_t)(end - from);
		rc = pread_all(w->pages_fd, block_page, len * sizeof *block_page,
			       from * sizeof *block_page, err);
		if (!rc) {
			lp_next_use_walk_back(&walk, block_page, len, block_next);
			rc = pwrite_all(w->next_fd, block_next, len * sizeof *block_next,
					from * sizeof *block_next, err);
		}
		end = from;
	}
	for (uint64_t from = 0; !rc && from < w->filed;) {
		size_t len = (size_t)MIN((uint64_t)BLOCK_REFS, w->filed - from);
		rc = pread_all(w->pages_fd, block_page, len * sizeof *block_page,
			       from * sizeof *block_page, err);
		if (!rc)
			rc = pread_all(w->next_fd, block_next, len * sizeof *block_next,
				       from * sizeof *block_next, err);
		if (!rc)
			rc = write_records(w, from, block_page, block_next, len, records, out, err);
		from += len;
	}
	for (size_t k = 0; !rc && k < held; k += BLOCK_REFS) {
		size_t len = MIN((size_t)BLOCK_REFS, held - k);
		rc = write_records(w, w->filed + k, w->page + k, held_next + k, len, records, out,
				   err);
	}
	lp_next_use_walk_clear(&walk);
	g_free(records);
	g_free(block_next);
	g_free(block_page);
	g_free(held_next);
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
