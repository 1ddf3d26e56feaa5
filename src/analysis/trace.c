/* A reference stream as dense page numbers (trace.h). */
#include "analysis/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/record.h"

#define LOAD_BATCH 65536

void lp_trace_init(lp_trace *t, bool user_only)
{
	memset(t, 0, sizeof *t);
	t->user_only = user_only;
	t->memory_refs = LP_TRACE_MEMORY_REFS;
	t->spill[0] = t->spill[1] = -1;
	pairmap_init(&t->ids);
	for (uint64_t h = 0; h < LP_TRACE_RECENT; h++)
		t->recent_key[h] = ~h;
}

/* A temporary file of bytes bytes (its blocks reserved, so that writing
 * through a mapping never meets a full disk), unlinked at once. */
static int spill_file(size_t bytes, lp_error *err)
{
	const char *dir = g_get_tmp_dir();
	char *name = g_build_filename(dir, "laplace-trace-XXXXXX", NULL);
	int fd = g_mkstemp(name);
	int rc = fd < 0 ? errno : 0;
	if (fd >= 0) {
		unlink(name);
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

/* Grow array k of t (0: pages, 1: types; elem bytes each) from t->cap to
 * cap elements: in memory up to t->memory_refs, past it mapped from a
 * temporary file, so that memory stays bounded however long the stream. */
static int grow(lp_trace *t, int k, void **array, size_t elem, uint64_t cap, lp_error *err)
{
	size_t old = t->bytes[k], bytes = (size_t)cap * elem;
	if (cap <= t->memory_refs && t->spill[k] < 0) {
		*array = g_realloc(*array, bytes);
		t->bytes[k] = bytes;
		return 0;
	}
	void *map;
	if (t->spill[k] < 0) {
		int fd = spill_file(bytes, err);
		if (fd < 0)
			return err->status;
		map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED) {
			close(fd);
			return lp_fail(err, LP_EIO, "cannot map the stream's temporary file: %s",
				       g_strerror(errno));
		}
		memcpy(map, *array, old);
		g_free(*array);
		t->spill[k] = fd;
	} else {
		int rc = posix_fallocate(t->spill[k], 0, (off_t)bytes);
		if (rc)
			return lp_fail(err, LP_EIO, "cannot grow the stream's temporary file: %s",
				       g_strerror(rc));
		map = mremap(*array, old, bytes, MREMAP_MAYMOVE);
		if (map == MAP_FAILED)
			return lp_fail(err, LP_EIO, "cannot map the stream's temporary file: %s",
				       g_strerror(errno));
	}
	*array = map;
	t->bytes[k] = bytes;
	return 0;
}

static void release(lp_trace *t, int k, void *array)
{
	if (t->spill[k] < 0) {
		g_free(array);
		return;
	}
	munmap(array, t->bytes[k]);
	close(t->spill[k]);
	t->spill[k] = -1;
}

int lp_trace_add(lp_trace *t, char type, uint64_t canonical, lp_error *err)
{
	if (t->user_only && lp_ref_is_kernel(type))
		return 0;
	uint64_t h = canonical & (LP_TRACE_RECENT - 1);
	lp_pageno p;
	if (t->recent_key[h] == canonical) {
		p = t->recent_page[h];
		goto append;
	}
	pairmap_slot *slot = pairmap_find(&t->ids, canonical, 0);
	if (!slot)
		return lp_fail(err, LP_EINPUT, "out of memory numbering %" G_GUINT32_FORMAT
			       " distinct pages", t->pages);
	if (slot->value) {
		p = (lp_pageno)(slot->value - 1);
	} else {
		if (t->pages == LP_TRACE_MAX_PAGES)
			return lp_fail(err, LP_EINPUT, "more than %" G_GUINT32_FORMAT
				       " distinct pages", (uint32_t)LP_TRACE_MAX_PAGES);
		if (t->pages == t->pages_cap) {
			t->pages_cap = t->pages_cap ? t->pages_cap * 2 : 1024;
			t->canonical = g_renew(uint64_t, t->canonical, t->pages_cap);
		}
		p = t->pages++;
		t->canonical[p] = canonical;
		slot->a = canonical;
		slot->b = 0;
		slot->value = (uint64_t)p + 1;
		pairmap_added(&t->ids);
	}
	t->recent_key[h] = canonical;
	t->recent_page[h] = p;
append:
	if (t->n == t->cap) {
		uint64_t cap = t->cap ? t->cap * 2 : 65536;
		void *page = t->page, *type = t->type;
		int rc = grow(t, 0, &page, sizeof *t->page, cap, err);
		t->page = page;
		if (!rc)
			rc = grow(t, 1, &type, sizeof *t->type, cap, err);
		t->type = type;
		if (rc)
			return rc;
		t->cap = cap;
	}
	t->page[t->n] = p;
	t->type[t->n++] = type;
	return 0;
}

void lp_trace_done(lp_trace *t)
{
	pairmap_free(&t->ids);
	memset(&t->ids, 0, sizeof t->ids);
	if (t->n < t->cap && t->spill[0] < 0) {
		t->page = g_renew(lp_pageno, t->page, t->n);
		t->type = g_renew(char, t->type, t->n);
		t->cap = t->n;
		t->bytes[0] = t->n * sizeof *t->page;
		t->bytes[1] = t->n * sizeof *t->type;
	}
	if (t->pages < t->pages_cap) {
		t->canonical = g_renew(uint64_t, t->canonical, t->pages);
		t->pages_cap = t->pages;
	}
}

int lp_trace_load(lp_trace *t, const char *path, bool user_only, lp_error *err)
{
	lp_trace_init(t, user_only);
	lp_basic_reader *in = lp_basic_open(path, err);
	if (!in) {
		lp_trace_clear(t);
		return err->status;
	}
	lp_basic_ref *batch = g_new(lp_basic_ref, LOAD_BATCH);
	ssize_t got;
	int rc = 0;
	while (!rc && (got = lp_basic_read(in, batch, LOAD_BATCH, err)) > 0)
		for (ssize_t k = 0; k < got && !rc; k++)
			if ((rc = lp_trace_add(t, batch[k].type, batch[k].canonical, err))) {
				char what[sizeof err->msg];
				g_strlcpy(what, err->msg, sizeof what);
				lp_fail(err, rc, "%s: %s", strcmp(path, "-") ? path : "standard input",
					what);
			}
	if (!rc && got < 0)
		rc = err->status;
	g_free(batch);
	lp_basic_close(in);
	if (rc)
		lp_trace_clear(t);
	else
		lp_trace_done(t);
	return rc;
}

void lp_trace_clear(lp_trace *t)
{
	release(t, 0, t->page);
	release(t, 1, t->type);
	g_free(t->canonical);
	pairmap_free(&t->ids);
	memset(t, 0, sizeof *t);
	t->spill[0] = t->spill[1] = -1;
}

uint64_t *lp_trace_next_use(const lp_trace *t)
{
	size_t bytes = (size_t)(t->n ? t->n : 1) * sizeof(uint64_t);
	uint64_t *next;
	if (t->n > t->memory_refs) {
		/* On disk as the stream is (policies.md §1 lets opt keep them
		 * there); without a temporary file, in anonymous memory. */
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
	uint64_t *seen = g_new(uint64_t, t->pages ? t->pages : 1);
	for (lp_pageno p = 0; p < t->pages; p++)
		seen[p] = LP_NEVER;
	for (uint64_t i = t->n; i-- > 0;) {
		next[i] = seen[t->page[i]];
		seen[t->page[i]] = i;
	}
	g_free(seen);
	return next;
}

void lp_trace_next_use_free(const lp_trace *t, uint64_t *next)
{
	if (t->n > t->memory_refs)
		munmap(next, (size_t)t->n * sizeof *next);
	else
		g_free(next);
}
