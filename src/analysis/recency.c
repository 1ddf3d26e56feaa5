/* Recency positions by a Fenwick tree over stamps (recency.h,
 * stamptree.h). */
#include "analysis/recency.h"

#include <glib.h>
#include <string.h>

/* Twice the pages: a renumbering frees half the stamps at least
 * (stamptree.h, invariant 3). */
static uint64_t stamps_for(uint64_t pages)
{
	uint64_t cap = 1024;
	while (cap < 2 * pages)
		cap *= 2;
	return cap;
}

void lp_recency_init(lp_recency *r, lp_pageno pages, bool with_sub)
{
	memset(r, 0, sizeof *r);
	size_t n = pages ? pages : 1;
	lp_stamptree_init(&r->all, stamps_for(pages), false);
	if (with_sub) {
		r->sub = g_new0(lp_stampset, 1);
		lp_stampset_init(r->sub, r->all.cap);
		r->in_sub = g_new0(uint8_t, n);
	}
	r->stamp = g_new(uint64_t, n);
	memset(r->stamp, 0xff, n * sizeof *r->stamp);
	r->pages = (lp_pageno)n;
}

void lp_recency_clear(lp_recency *r)
{
	lp_stamptree_clear(&r->all);
	if (r->sub)
		lp_stampset_clear(r->sub);
	g_free(r->sub);
	g_free(r->in_sub);
	g_free(r->stamp);
	memset(r, 0, sizeof *r);
}

/* Every page referenced has its mark: only marked stamps are asked about. */
static bool relabel(void *ctx, uint32_t page, uint64_t old, uint64_t new_stamp)
{
	(void)old;
	((lp_recency *)ctx)->stamp[page] = new_stamp;
	return true;
}

/* Renumber the stamps 0 .. marks-1 in order, in a tree of cap stamps at
 * least; the second set follows them. */
static void compact(lp_recency *r, uint64_t cap)
{
	lp_stamptree_compact(&r->all, cap, relabel, r);
	if (!r->sub)
		return;
	lp_stampset_clear(r->sub);
	lp_stampset_init(r->sub, r->all.cap);
	for (uint64_t s = 0; s < r->all.now; s++)
		if (r->in_sub[r->all.owner[s]])
			r->sub->bits[s / 64] |= UINT64_C(1) << (s % 64);
	lp_stampset_build(r->sub);
}

void lp_recency_grow(lp_recency *r, lp_pageno pages)
{
	if (pages <= r->pages)
		return;
	lp_pageno n = (lp_pageno)MIN(MAX((uint64_t)pages, 2 * (uint64_t)r->pages),
				     (uint64_t)UINT32_MAX - 1);
	r->stamp = g_renew(uint64_t, r->stamp, n);
	memset(r->stamp + r->pages, 0xff, (size_t)(n - r->pages) * sizeof *r->stamp);
	if (r->sub) {
		r->in_sub = g_renew(uint8_t, r->in_sub, n);
		memset(r->in_sub + r->pages, 0, n - r->pages);
	}
	r->pages = n;
	if (2 * (uint64_t)n > r->all.cap)
		compact(r, stamps_for(n)); /* the stamps renumbered into the larger tree */
}

uint64_t lp_recency_position(const lp_recency *r, lp_pageno page)
{
	uint64_t s = r->stamp[page];
	return s == UINT64_MAX ? 0 : r->marks - lp_stampset_below(&r->all.marks, s);
}

void lp_recency_touch(lp_recency *r, lp_pageno page)
{
	if (r->all.now == r->all.cap)
		compact(r, r->all.cap);
	uint64_t s = r->stamp[page];
	bool sub = r->sub && r->in_sub[page];
	if (s != UINT64_MAX) {
		lp_stampset_remove(&r->all.marks, s);
		if (sub)
			lp_stampset_remove(r->sub, s);
	} else {
		r->marks++;
	}
	s = lp_stamptree_take(&r->all, page);
	r->stamp[page] = s;
	lp_stampset_add(&r->all.marks, s);
	if (sub)
		lp_stampset_add(r->sub, s);
}

void lp_recency_sub_set(lp_recency *r, lp_pageno page, bool on)
{
	if (r->in_sub[page] == on)
		return;
	r->in_sub[page] = on;
	lp_stampset_flip(r->sub, r->stamp[page], on ? 1 : (uint32_t)-1);
}

lp_pageno lp_recency_sub_last(const lp_recency *r)
{
	if (!lp_stampset_count(r->sub))
		return LP_NO_PAGE;
	return r->all.owner[lp_stampset_select(r->sub, 1)];
}

lp_pageno lp_recency_sub_after(const lp_recency *r, uint64_t pos)
{
	if (pos >= r->marks)
		return LP_NO_PAGE;
	/* Positions greater than pos are the marks - pos oldest stamps: the
	 * marked one of them with the largest stamp. */
	uint64_t last = lp_stampset_select(&r->all.marks, r->marks - pos);
	uint64_t below = lp_stampset_below(r->sub, last) + lp_stampset_has(r->sub, last);
	return below ? r->all.owner[lp_stampset_select(r->sub, below)] : LP_NO_PAGE;
}
