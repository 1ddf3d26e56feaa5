/* A reference stream as dense page numbers (trace.h). */
#include "analysis/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/nextuse.h"
#include "core/record.h"
#include "formats/basicin.h"
#include "io/staging.h"

void lp_trace_init(lp_trace *t, unsigned flags)
{
	memset(t, 0, sizeof *t);
	t->flags = flags;
	/* Counted a block at a time, the window stays in the cache. */
	t->window_refs = flags & (LP_TRACE_LRU_ONLY | LP_TRACE_OPT_ONLY) ? LP_TRACE_BLOCK_REFS
									 : LP_TRACE_WINDOW_REFS;
	t->next_use_refs = LP_TRACE_NEXT_USE_REFS;
	t->spill[0] = t->spill[1] = -1;
	lp_page_numbers_init(&t->ids);
	if (flags & LP_TRACE_LRU_ONLY) {
		t->lru = g_new(lp_stackdist, 1);
		lp_stackdist_init(t->lru, 1024);
	} else if (flags & LP_TRACE_OPT_ONLY) {
		t->opt = g_new(lp_optdist, 1);
		lp_optdist_init(t->opt, 1024);
	}
}

/* A temporary file, unlinked at once, of bytes bytes with its blocks
 * reserved (so that writing through a mapping never meets a full disk),
 * or empty. */
static int spill_file(size_t bytes, lp_error *err)
{
	const char *dir = g_get_tmp_dir();
	char *name = g_build_filename(dir, "laplace-trace-XXXXXX", NULL);
	int fd = g_mkstemp(name);
	int rc = fd < 0 ? errno : 0;
	if (fd >= 0) {
		unlink(name);
		if (bytes)
			rc = posix_fallocate(fd, 0, (off_t)bytes);
	}
	if (rc) {
		lp_fail(err, LP_EIO, "cannot hold the stream in a temporary file in %s: %s", dir,
			g_strerror(rc));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	g_free(name);
	return fd;
}

/* bytes of buf to the end of fd: 0 or an errno. */
static int write_all(int fd, const void *buf, size_t bytes)
{
	const char *p = buf;
	while (bytes) {
		ssize_t put = write(fd, p, bytes);
		if (put < 0 && errno == EINTR)
			continue;
		if (put <= 0)
			return put < 0 ? errno : ENOSPC;
		p += put;
		bytes -= (size_t)put;
	}
	return 0;
}

/* The window's references to the end of the files (made at the first
 * time), the window empty again. */
static int file_window(lp_trace *t, lp_error *err)
{
	for (int k = 0; k < 2; k++)
		if (t->spill[k] < 0 && (t->spill[k] = spill_file(0, err)) < 0)
			return err->status;
	int rc = write_all(t->spill[0], t->page, t->held * sizeof *t->page);
	if (!rc)
		rc = write_all(t->spill[1], t->type, t->held);
	if (rc)
		return lp_fail(err, LP_EIO, "cannot write the stream to its temporary file in %s: %s",
			       g_get_tmp_dir(), g_strerror(rc));
	t->filed = t->n;
	t->held = 0;
	return 0;
}

/* LP_TRACE_LRU_ONLY, LP_TRACE_OPT_ONLY: the window's references counted,
 * the window empty again. */
static void count_window(lp_trace *t)
{
	if (t->curve_hist_cap < (uint64_t)t->pages + 1) {
		uint64_t cap = MAX((uint64_t)t->pages + 1, 2 * t->curve_hist_cap);
		t->curve_hist = g_renew(uint64_t, t->curve_hist, cap);
		memset(t->curve_hist + t->curve_hist_cap, 0,
		       (cap - t->curve_hist_cap) * sizeof *t->curve_hist);
		t->curve_hist_cap = cap;
	}
	if (t->lru) {
		lp_stackdist_grow(t->lru, t->pages);
		lp_stackdist_count(t->lru, t->page, t->held, t->curve_hist);
	} else {
		lp_optdist_grow(t->opt, t->pages);
		lp_optdist_count(t->opt, t->page, t->held, t->curve_hist);
	}
	t->filed = t->n;
	t->held = 0;
}

/* Room for one more reference in the window: grown by doubling up to
 * window_refs, past it written to the files (counted with
 * LP_TRACE_LRU_ONLY or LP_TRACE_OPT_ONLY). */
static int make_room(lp_trace *t, lp_error *err)
{
	uint64_t window = MAX(t->window_refs, 1);
	if (t->cap >= window && (t->lru || t->opt)) {
		count_window(t);
		return 0;
	}
	if (t->cap >= window)
		return file_window(t, err);
	t->cap = MIN(window, t->cap ? t->cap * 2 : LP_TRACE_BLOCK_REFS);
	t->page = g_renew(lp_pageno, t->page, t->cap);
	t->type = g_renew(char, t->type, t->cap);
	return 0;
}

/* The first reference of canonical: its dense number, or LP_NO_PAGE with
 * err set past LP_TRACE_MAX_PAGES (past LP_STACKDIST_MAX_PAGES, lru's
 * curve_pages, with LP_TRACE_LRU_ONLY). Out of line: once a page. */
G_NO_INLINE static lp_pageno number_page(lp_trace *t, uint64_t canonical, lp_error *err)
{
	if (t->pages == LP_TRACE_MAX_PAGES) {
		lp_fail(err, LP_EINPUT, "more than %" G_GUINT32_FORMAT " distinct pages",
			(uint32_t)LP_TRACE_MAX_PAGES);
		return LP_NO_PAGE;
	}
	if (t->lru && t->pages == LP_STACKDIST_MAX_PAGES) {
		lp_policy_refuse_pages(lp_policy_find("lru"), NULL, (uint64_t)t->pages + 1, err);
		return LP_NO_PAGE;
	}
	if (t->opt && t->pages == LP_OPTDIST_MAX_PAGES) {
		lp_policy_refuse_pages(lp_policy_find("opt"), NULL, (uint64_t)t->pages + 1, err);
		return LP_NO_PAGE;
	}
	if (t->pages == t->pages_cap) {
		t->pages_cap = t->pages_cap ? t->pages_cap * 2 : 1024;
		t->canonical = g_renew(uint64_t, t->canonical, t->pages_cap);
		t->first = g_renew(uint64_t, t->first, t->pages_cap);
	}
	t->canonical[t->pages] = canonical;
	t->first[t->pages] = t->n;
	lp_pageno p = lp_page_numbers_add(&t->ids, canonical);
	t->pages++;
	return p;
}

int lp_trace_add(lp_trace *t, char type, uint64_t canonical, lp_error *err)
{
	if ((t->flags & LP_TRACE_USER_ONLY) && lp_ref_is_kernel(type))
		return 0;
	lp_pageno p = lp_page_numbers_find(&t->ids, canonical);
	if (p == LP_NO_PAGE && (p = number_page(t, canonical, err)) == LP_NO_PAGE)
		return err->status;
	uint64_t at = t->held;
	if (at == t->cap) {
		int rc = make_room(t, err);
		if (rc)
			return rc;
		at = t->held;
	}
	t->page[at] = p;
	t->type[at] = type;
	t->held = at + 1;
	t->n++;
	return 0;
}

void lp_trace_done(lp_trace *t)
{
	lp_page_numbers_clear(&t->ids);
	if (t->lru || t->opt) {
		count_window(t);
		t->curve_hist[0] = 0; /* first references: no distance */
		if (t->lru)
			lp_stackdist_clear(t->lru);
		else
			lp_optdist_clear(t->opt);
		g_clear_pointer(&t->lru, g_free);
		g_clear_pointer(&t->opt, g_free);
	}
	if (t->held < t->cap) {
		t->page = g_renew(lp_pageno, t->page, t->held);
		t->type = g_renew(char, t->type, t->held);
		t->cap = t->held;
	}
	if (t->pages < t->pages_cap) {
		t->canonical = g_renew(uint64_t, t->canonical, t->pages);
		t->first = g_renew(uint64_t, t->first, t->pages);
		t->pages_cap = t->pages;
	}
}

int lp_trace_name_failure(const char *path, lp_error *err)
{
	char what[sizeof err->msg];
	g_strlcpy(what, err->msg, sizeof what);
	return lp_fail(err, err->status, "%s: %s", strcmp(path, "-") ? path : "standard input",
		       what);
}

int lp_trace_load(lp_trace *t, const char *path, unsigned flags, const lp_progress *progress,
		  lp_error *err)
{
	lp_trace_init(t, flags);
	lp_basic_iter in;
	if (lp_basic_iter_open(&in, path, LP_BASIC_BLOCK_REFS, err)) {
		lp_trace_clear(t);
		return err->status;
	}
	int rc = 0;
	for (lp_basic_block b; !rc && (b = lp_basic_iter_next(&in)).len;) {
		for (size_t k = 0; k < b.len && !rc; k++)
			if ((rc = lp_trace_add(t, b.ref[k].type, b.ref[k].canonical, err)))
				lp_trace_name_failure(path, err);
		lp_progress_records(progress, in.done);
	}
	int read_rc = lp_basic_iter_clear(&in);
	if (!rc)
		rc = read_rc;
	if (rc)
		lp_trace_clear(t);
	else
		lp_trace_done(t);
	return rc;
}

void lp_trace_clear(lp_trace *t)
{
	if (t->map_page)
		munmap(t->map_page, t->n * sizeof *t->map_page);
	if (t->map_type)
		munmap(t->map_type, t->n);
	for (int k = 0; k < 2; k++)
		if (t->spill[k] >= 0)
			close(t->spill[k]);
	g_free(t->page);
	g_free(t->type);
	g_free(t->canonical);
	g_free(t->first);
	g_free(t->curve_hist);
	if (t->lru)
		lp_stackdist_clear(t->lru);
	g_free(t->lru);
	if (t->opt)
		lp_optdist_clear(t->opt);
	g_free(t->opt);
	lp_page_numbers_clear(&t->ids);
	memset(t, 0, sizeof *t);
	t->spill[0] = t->spill[1] = -1;
}

void lp_trace_iter_init(lp_trace_iter *it, const lp_trace *t, bool backward)
{
	g_assert(!(t->flags & LP_TRACE_LRU_ONLY));
	*it = (lp_trace_iter){.t = t, .backward = backward, .next = backward ? t->n : 0};
	if (t->filed)
		it->buf = g_new(lp_pageno, LP_TRACE_BLOCK_REFS);
}

/* The machine's own I/O failed under a file this process wrote: no
 * caller can go on, and none should have to check every block; the run
 * ends as an I/O failure (status 3), its staged outputs removed, never an
 * abort. */
static _Noreturn void read_back_failed(const char *why)
{
	g_printerr("%s: cannot read the stream back from its temporary file in TMPDIR: %s\n",
		   g_get_prgname() ? g_get_prgname() : "laplace", why);
	lp_stage_abandon(LP_EIO);
}

lp_trace_block lp_trace_iter_next(lp_trace_iter *it)
{
	const lp_trace *t = it->t;
	uint64_t from, len;
	if (it->backward) {
		uint64_t end = it->next, start = end > t->filed ? t->filed : 0;
		len = MIN(LP_TRACE_BLOCK_REFS, end - start);
		from = it->next = end - len;
	} else {
		from = it->next;
		len = from < t->n ? MIN(LP_TRACE_BLOCK_REFS, (from < t->filed ? t->filed : t->n) - from)
				  : 0;
		it->next = from + len;
	}
	if (!len)
		return (lp_trace_block){NULL, 0, from};
	if (from >= t->filed)
		return (lp_trace_block){t->page + (from - t->filed), (size_t)len, from};
	size_t bytes = (size_t)len * sizeof *it->buf, got = 0;
	off_t at = (off_t)(from * sizeof *it->buf);
	while (got < bytes) {
		ssize_t k = pread(t->spill[0], (char *)it->buf + got, bytes - got, at + (off_t)got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			read_back_failed(k < 0 ? g_strerror(errno) : "it ends early");
		got += (size_t)k;
	}
	return (lp_trace_block){it->buf, (size_t)len, from};
}

void lp_trace_iter_clear(lp_trace_iter *it)
{
	g_free(it->buf);
	*it = (lp_trace_iter){0};
}

int lp_trace_map(lp_trace *t, const lp_pageno **page, const char **type, lp_error *err)
{
	g_assert(!(t->flags & LP_TRACE_LRU_ONLY));
	if (!t->filed) { /* all in the window */
		*page = t->page;
		*type = t->type;
		return 0;
	}
	if (!t->map_page) {
		if (t->n > t->filed) {
			int rc = file_window(t, err);
			if (rc)
				return rc;
			g_free(t->page);
			g_free(t->type);
			t->page = NULL;
			t->type = NULL;
			t->cap = 0;
		}
		void *p = mmap(NULL, t->n * sizeof *t->page, PROT_READ, MAP_SHARED, t->spill[0], 0);
		void *y = p == MAP_FAILED ? MAP_FAILED
					  : mmap(NULL, t->n, PROT_READ, MAP_SHARED, t->spill[1], 0);
		if (y == MAP_FAILED) {
			int e = errno;
			if (p != MAP_FAILED)
				munmap(p, t->n * sizeof *t->page);
			return lp_fail(err, LP_EIO, "cannot map the stream's temporary file: %s",
				       g_strerror(e));
		}
		t->map_page = p;
		t->map_type = y;
	}
	*page = t->map_page;
	*type = t->map_type;
	return 0;
}

uint64_t *lp_trace_next_use(const lp_trace *t)
{
	size_t bytes = (size_t)(t->n ? t->n : 1) * sizeof(uint64_t);
	uint64_t *next;
	if (t->n > t->next_use_refs) {
		/* On disk (policies.md §1 lets opt keep them there); without
		 * a temporary file, in anonymous memory. */
		lp_error unused;
		int fd = spill_file(bytes, &unused);
		void *map = fd >= 0 ? mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
				    : MAP_FAILED;
		if (fd >= 0)
			close(fd);
		if (map == MAP_FAILED)
			map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
				   0);
		if (map == MAP_FAILED)
			g_error("out of memory for %zu bytes of next uses", bytes);
		next = map;
	} else {
		next = g_malloc(bytes);
	}
	/* Backwards (nextuse.h), a block at a time. */
	lp_next_use_walk walk;
	lp_next_use_walk_init(&walk, t->pages, t->n);
	lp_trace_iter it;
	lp_trace_iter_init(&it, t, true);
	for (lp_trace_block b; (b = lp_trace_iter_next(&it)).len;)
		lp_next_use_walk_back(&walk, b.page, b.len, next + b.at);
	lp_trace_iter_clear(&it);
	lp_next_use_walk_clear(&walk);
	return next;
}

void lp_trace_next_use_free(const lp_trace *t, uint64_t *next)
{
	if (t->n > t->next_use_refs)
		munmap(next, (size_t)t->n * sizeof *next);
	else
		g_free(next);
}
