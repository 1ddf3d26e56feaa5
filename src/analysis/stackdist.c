/* LRU stack distances with a front array before a Fenwick tree over
 * stamps (stackdist.h, stamptree.h). */
#include "analysis/stackdist.h"

#include <glib.h>
#include <string.h>

#define NEVER UINT32_MAX       /* not referenced yet */
#define IN_FRONT (UINT32_MAX - 1)

/* Twice the pages: stamps run out after D references at least, so
 * renumbering costs O(1) a reference (stamptree.h, invariant 3). */
static uint64_t stamps_for(uint64_t pages)
{
	uint64_t cap = 1024;
	while (cap < 2 * pages)
		cap *= 2;
	return cap;
}

void lp_stackdist_init(lp_stackdist *s, lp_pageno pages)
{
	memset(s, 0, sizeof *s);
	size_t n = pages ? pages : 1;
	g_assert(n <= LP_STACKDIST_MAX_PAGES);
	lp_stamptree_init(&s->tree, stamps_for(n), false);
	s->stamp = g_new(uint32_t, n);
	memset(s->stamp, 0xff, n * sizeof *s->stamp);
	s->pages = (lp_pageno)n;
}

void lp_stackdist_clear(lp_stackdist *s)
{
	lp_stamptree_clear(&s->tree);
	g_free(s->stamp);
	memset(s, 0, sizeof *s);
}

/* Only marked stamps are asked about: each is its page's. */
static bool relabel(void *ctx, uint32_t page, uint64_t old, uint64_t new_stamp)
{
	(void)old;
	((lp_stackdist *)ctx)->stamp[page] = (uint32_t)new_stamp;
	return true;
}

/* Out of line: the hot loop keeps its registers. */
G_NO_INLINE static void compact(lp_stackdist *s, uint64_t cap)
{
	lp_stamptree_compact(&s->tree, cap, relabel, s);
}

void lp_stackdist_grow(lp_stackdist *s, lp_pageno pages)
{
	if (pages <= s->pages)
		return;
	uint64_t n = MAX((uint64_t)pages, MIN(2 * (uint64_t)s->pages, LP_STACKDIST_MAX_PAGES));
	g_assert(n <= LP_STACKDIST_MAX_PAGES);
	s->stamp = g_renew(uint32_t, s->stamp, n);
	memset(s->stamp + s->pages, 0xff, (n - s->pages) * sizeof *s->stamp);
	s->pages = (lp_pageno)n;
	if (s->tree.cap < 2 * n)
		compact(s, stamps_for(n)); /* the stamps renumbered into the larger tree */
}

/* A page not in the front: out of line, so that the front's path, most
 * references, saves no registers for the tree's. */
G_NO_INLINE static uint64_t enter_front(lp_stackdist *s, lp_pageno page, uint64_t t)
{
	lp_pageno *f = s->front;
	lp_stampset *marks = &s->tree.marks;
	uint64_t distance = 0;
	if (t != NEVER) /* behind the whole front, and the marks more recent than it */
		distance = s->nfront + s->marks - lp_stampset_below(marks, t);
	s->stamp[page] = IN_FRONT;
	if (s->nfront < LP_STACKDIST_FRONT) {
		/* Filling the front: no page has left it, so none is marked. */
		memmove(f + 1, f, s->nfront++ * sizeof *f);
		f[0] = page;
		return distance;
	}
	/* The front's last page becomes the tree's most recent mark: page's
	 * mark moves there, unless the stamps have run out. */
	lp_pageno out = f[LP_STACKDIST_FRONT - 1];
	if (t != NEVER && s->tree.now < s->tree.cap) {
		uint64_t stamp = lp_stamptree_take(&s->tree, out);
		s->stamp[out] = (uint32_t)stamp;
		lp_stampset_move(marks, t, stamp);
	} else {
		if (t != NEVER) {
			lp_stampset_remove(marks, t);
			s->marks--;
		}
		if (s->tree.now == s->tree.cap)
			compact(s, s->tree.cap); /* after the removal: it keeps marks only */
		uint64_t stamp = lp_stamptree_take(&s->tree, out);
		s->stamp[out] = (uint32_t)stamp;
		lp_stampset_add(&s->tree.marks, stamp);
		s->marks++;
	}
	memmove(f + 1, f, (LP_STACKDIST_FRONT - 1) * sizeof *f);
	f[0] = page;
	return distance;
}

G_ALWAYS_INLINE static inline uint64_t access_page(lp_stackdist *s, lp_pageno page)
{
	lp_pageno *f = s->front;
	uint64_t t = s->stamp[page];
	if (t != IN_FRONT)
		return enter_front(s, page, t);
	unsigned i = 0; /* its index in the front is the distance */
	while (f[i] != page)
		i++;
	for (unsigned j = i; j > 0; j--) /* a few moves: no call */
		f[j] = f[j - 1];
	f[0] = page;
	return i + 1;
}

uint64_t lp_stackdist_access(lp_stackdist *s, lp_pageno page)
{
	return access_page(s, page);
}

/* A page's stamp is a cache miss once D passes the L2 cache: asked for
 * this many references ahead, it has come when its turn does. */
#define AHEAD 16

void lp_stackdist_count(lp_stackdist *s, const lp_pageno *pages, size_t n, uint64_t *hist)
{
	size_t k = 0;
	for (; k + AHEAD < n; k++) {
		__builtin_prefetch(&s->stamp[pages[k + AHEAD]]);
		hist[access_page(s, pages[k])]++;
	}
	for (; k < n; k++)
		hist[access_page(s, pages[k])]++;
}
