/* The oracle-general form (oracle.h): its writer, which finds next
 * accesses by a backward walk once the stream is whole, and its reader. */
#include "formats/oracle.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "core/nextuse.h"
#include "core/numbers.h"

/* The fewest references kept in memory. */
#define MIN_WINDOW 1024
/* References read back from the temporary files, and encoded, at a time. */
#define BLOCK_REFS 65536
/* The pages met last, by the low bits of their canonical numbers: most
 * references are found there without a probe of the table. */
#define RECENT 256
/* Canonical numbers below 2 * pages + DIRECT_SLACK are numbered through an
 * array indexed by them, not the table: a merge hands canonical numbers
 * out in order of first reference (laplace-formats(5) §3.5), so its
 * streams' are all there, and the array stays O(D). */
#define DIRECT_SLACK 65536

/* A slot of the table: an object id (canonical number + 1, never 0: 0
 * marks a free slot) and its dense number, in one cache line. */
typedef struct page_slot {
	uint64_t id;
	uint32_t dense;
} page_slot;

struct lp_oracle_writer {
	lp_output *out;
	/* The records go straight into out at their offsets (a file, read
	 * back for the next accesses), each with its dense page number in
	 * its next-access field until the walk; else the dense numbers go to
	 * temporary files, and the records out once all is known. */
	bool in_place;
	uint64_t n;       /* references given */
	uint64_t filed;   /* references [0, filed) are in out or pages_fd, the rest held */
	size_t window;    /* references held at most */
	uint32_t *page;   /* not in_place: the dense page numbers of references filed .. n-1 */
	unsigned char *records; /* in_place: the records of references filed .. n-1 */
	int pages_fd;     /* the dense page numbers filed, unlinked; -1 until needed */
	int next_fd;      /* their next uses, made by lp_oracle_finish */
	/* Dense page numbers, 0, 1, ... in order of first reference: by
	 * canonical number + 1 (0: none yet) for those below direct_cap, by
	 * open addressing on the object id for the others (hashed of them);
	 * and each number's canonical number. */
	uint32_t *direct;
	size_t direct_cap;
	page_slot *slots;
	size_t cap;
	uint32_t hashed;
	uint64_t recent_id[RECENT]; /* 0: none */
	uint32_t recent_dense[RECENT];
	uint32_t pages;
	uint64_t *canonical;
	size_t canonical_cap;
};

lp_oracle_writer *lp_oracle_writer_new(size_t window, lp_output *out)
{
	lp_oracle_writer *w = g_new0(lp_oracle_writer, 1);
	w->out = out;
	w->in_place = lp_output_rereadable(out);
	/* The same memory either way: 4 bytes a reference, or a record. */
	if (w->in_place) {
		w->window = MAX(window * sizeof *w->page / LP_ORACLE_RECORD_SIZE, (size_t)MIN_WINDOW);
		w->records = g_malloc(w->window * LP_ORACLE_RECORD_SIZE);
	} else {
		w->window = MAX(window, (size_t)MIN_WINDOW);
		w->page = g_new(uint32_t, w->window);
	}
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
	g_free(w->records);
	g_free(w->direct);
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

/* A temporary file in TMPDIR, unlinked at once: no run leaves it behind;
 * -1 (err set) when it cannot be made. */
static int scratch_file(lp_error *err)
{
	char *name = g_build_filename(g_get_tmp_dir(), "laplace-oracle-XXXXXX", NULL);
	int fd = g_mkstemp(name);
	int saved = errno;
	if (fd >= 0)
		unlink(name);
	g_free(name);
	if (fd < 0)
		io_failed("create", saved, err);
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

/* The window's references to the output (in place) or to the end of the
 * temporary file (made at the first time), the window empty again. */
static int file_window(lp_oracle_writer *w, lp_error *err)
{
	size_t held = (size_t)(w->n - w->filed);
	int rc;
	if (w->in_place) {
		rc = lp_output_pwrite(w->out, w->records, held * LP_ORACLE_RECORD_SIZE,
				      w->filed * LP_ORACLE_RECORD_SIZE, err);
	} else {
		if (w->pages_fd < 0 && (w->pages_fd = scratch_file(err)) < 0)
			return err->status;
		rc = pwrite_all(w->pages_fd, w->page, held * sizeof *w->page,
				w->filed * sizeof *w->page, err);
	}
	w->filed = w->n;
	return rc;
}

/* The dense number of canonical number canon, numbered now at its first
 * reference; UINT32_MAX past 2^32 - 1 pages. */
static uint32_t dense_of(lp_oracle_writer *w, uint64_t canon)
{
	if (canon < w->direct_cap && w->direct[canon])
		return w->direct[canon] - 1;
	uint64_t id = canon + 1;
	size_t i = 0;
	if (w->hashed) {
		i = find(w, id);
		if (w->slots[i].id)
			return w->slots[i].dense;
	}
	if (w->pages == UINT32_MAX)
		return UINT32_MAX;
	if (w->pages == w->canonical_cap) {
		w->canonical_cap = w->canonical_cap ? 2 * w->canonical_cap : 1024;
		w->canonical = g_renew(uint64_t, w->canonical, w->canonical_cap);
	}
	w->canonical[w->pages] = canon;
	uint32_t dense = w->pages++;
	uint64_t direct_max = 2 * (uint64_t)w->pages + DIRECT_SLACK;
	if (canon >= w->direct_cap && canon < direct_max) {
		size_t cap = (size_t)MIN(MAX(2 * (uint64_t)w->direct_cap, canon + 1), direct_max);
		w->direct = g_renew(uint32_t, w->direct, cap);
		memset(w->direct + w->direct_cap, 0, (cap - w->direct_cap) * sizeof *w->direct);
		w->direct_cap = cap;
	}
	if (canon < w->direct_cap) {
		w->direct[canon] = dense + 1;
		return dense;
	}
	if (!w->hashed)
		i = find(w, id);
	w->slots[i] = (page_slot){.id = id, .dense = dense};
	if ((size_t)++w->hashed * 2 > w->cap)
		grow(w);
	return dense;
}

void lp_oracle_prefetch(const lp_oracle_writer *w, uint64_t canon)
{
	if (canon < w->direct_cap)
		__builtin_prefetch(&w->direct[canon]);
	else if (w->hashed)
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
		dense = dense_of(w, canon);
		if (dense == UINT32_MAX)
			return lp_fail(err, LP_EINPUT, "more than %" G_GUINT32_FORMAT " distinct pages "
				       "for the oracle-general form", (uint32_t)UINT32_MAX);
		w->recent_id[h] = id;
		w->recent_dense[h] = dense;
	}
	size_t k = (size_t)(w->n - w->filed);
	if (w->in_place) {
		unsigned char *p = w->records + k * LP_ORACLE_RECORD_SIZE;
		lp_oracle_encode(p, w->n, canon);
		lp_store_u64(p + 16, dense, false); /* the walk's, until it runs */
	} else {
		w->page[k] = dense;
	}
	if (++w->n - w->filed == w->window)
		return file_window(w, err);
	return 0;
}

/* The next accesses of len records in place at p, from the dense page
 * numbers in their next-access fields: a block of the backward walk. */
static void walk_records(lp_next_use_walk *walk, unsigned char *p, size_t len,
			 uint32_t *block_page, uint64_t *block_next)
{
	for (size_t k = 0; k < len; k++)
		block_page[k] = (uint32_t)lp_load_u64(p + k * LP_ORACLE_RECORD_SIZE + 16, false);
	lp_next_use_walk_back(walk, block_page, len, block_next);
	for (size_t k = 0; k < len; k++)
		lp_store_u64(p + k * LP_ORACLE_RECORD_SIZE + 16,
			     block_next[k] == LP_NEVER ? UINT64_MAX : block_next[k] + 1, false);
}

/* In place (oracle.h): the held records walked and written after the
 * others, then the others walked a window at a time from the end, read
 * back from the output and written over. */
static int finish_in_place(lp_oracle_writer *w, lp_error *err)
{
	uint32_t *block_page = g_new(uint32_t, BLOCK_REFS);
	uint64_t *block_next = g_new(uint64_t, BLOCK_REFS);
	lp_next_use_walk walk;
	lp_next_use_walk_init(&walk, w->pages, w->n);
	int rc = 0;
	for (uint64_t end = w->n; !rc && end > 0;) {
		bool held = end > w->filed;
		uint64_t from = held ? w->filed : end - MIN((uint64_t)w->window, end);
		size_t len = (size_t)(end - from);
		if (!held)
			rc = lp_output_pread(w->out, w->records, len * LP_ORACLE_RECORD_SIZE,
					     from * LP_ORACLE_RECORD_SIZE, err);
		for (size_t k = len; !rc && k > 0;) {
			size_t part = MIN(k, (size_t)BLOCK_REFS);
			k -= part;
			walk_records(&walk, w->records + k * LP_ORACLE_RECORD_SIZE, part,
				     block_page, block_next);
		}
		if (!rc)
			rc = lp_output_pwrite(w->out, w->records, len * LP_ORACLE_RECORD_SIZE,
					      from * LP_ORACLE_RECORD_SIZE, err);
		if (!rc)
			lp_output_settled(w->out, from * LP_ORACLE_RECORD_SIZE,
					  len * LP_ORACLE_RECORD_SIZE);
		end = from;
	}
	lp_next_use_walk_clear(&walk);
	g_free(block_next);
	g_free(block_page);
	return rc;
}

/* The records of references from .. from + len - 1, their pages and next
 * uses given, to out. */
static int write_records(const lp_oracle_writer *w, uint64_t from, const uint32_t *page,
			 const uint64_t *next, size_t len, unsigned char *buf, lp_error *err)
{
	unsigned char *p = buf;
	for (size_t k = 0; k < len; k++, p += LP_ORACLE_RECORD_SIZE) {
		lp_oracle_encode(p, from + k, w->canonical[page[k]]);
		if (next[k] != LP_NEVER)
			lp_store_u64(p + 16, next[k] + 1, false);
	}
	return lp_output_write(w->out, buf, len * LP_ORACLE_RECORD_SIZE, err);
}

/* Through temporary files (oracle.h): next uses found backwards, the
 * window's in memory, the filed references' in a second temporary file, a
 * block at a time from the end; then every record forwards, its page and
 * next use read back. */
static int finish_through_files(lp_oracle_writer *w, lp_error *err)
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
			rc = write_records(w, from, block_page, block_next, len, records, err);
		from += len;
	}
	for (size_t k = 0; !rc && k < held; k += BLOCK_REFS) {
		size_t len = MIN((size_t)BLOCK_REFS, held - k);
		rc = write_records(w, w->filed + k, w->page + k, held_next + k, len, records, err);
	}
	lp_next_use_walk_clear(&walk);
	g_free(records);
	g_free(block_next);
	g_free(block_page);
	g_free(held_next);
	return rc;
}

int lp_oracle_finish(lp_oracle_writer *w, lp_error *err)
{
	return w->in_place ? finish_in_place(w, err) : finish_through_files(w, err);
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
