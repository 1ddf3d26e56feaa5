/* Recency positions by Fenwick trees over stamps (recency.h). */
#include "analysis/recency.h"

#include <glib.h>
#include <string.h>

void lp_recency_init(lp_recency *r, lp_pageno pages, bool with_sub)
{
	memset(r, 0, sizeof *r);
	r->log_cap = 10;
	while ((UINT64_C(1) << r->log_cap) < 2 * (uint64_t)pages)
		r->log_cap++;
	r->cap = UINT64_C(1) << r->log_cap;
	size_t n = pages ? pages : 1;
	r->all = g_new0(uint32_t, r->cap + 1);
	if (with_sub) {
		r->sub = g_new0(uint32_t, r->cap + 1);
		r->in_sub = g_new0(uint8_t, n);
	}
	r->owner = g_new(lp_pageno, r->cap);
	r->stamp = g_new(uint64_t, n);
	memset(r->stamp, 0xff, n * sizeof *r->stamp);
	r->pages = (lp_pageno)n;
}

void lp_recency_clear(lp_recency *r)
{
	g_free(r->all);
	g_free(r->sub);
	g_free(r->in_sub);
	g_free(r->owner);
	g_free(r->stamp);
	memset(r, 0, sizeof *r);
}

static void tree_add(uint32_t *tree, uint64_t cap, uint64_t stamp, int32_t delta)
{
	for (uint64_t i = stamp + 1; i <= cap; i += i & -i)
		tree[i] += (uint32_t)delta;
}

/* Marks at stamps 0 .. stamp - 1. */
static uint64_t tree_below(const uint32_t *tree, uint64_t stamp)
{
	uint64_t sum = 0;
	for (uint64_t i = stamp; i > 0; i -= i & -i)
		sum += tree[i];
	return sum;
}

/* The stamp of the k-th mark (k >= 1) in stamp order. */
static uint64_t tree_select(const uint32_t *tree, unsigned log_cap, uint64_t k)
{
	uint64_t pos = 0;
	for (unsigned b = log_cap + 1; b-- > 0;) {
		uint64_t next = pos + (UINT64_C(1) << b);
		if (next <= (UINT64_C(1) << log_cap) && tree[next] < k) {
			pos = next;
			k -= tree[next];
		}
	}
	return pos; /* 1-based pos + 1, less one */
}

static void build(uint32_t *tree, uint64_t cap, const lp_pageno *owner, uint64_t n,
		  const uint8_t *in)
{
	memset(tree, 0, (cap + 1) * sizeof *tree);
	for (uint64_t i = 1; i <= cap; i++) {
		if (i <= n && (!in || in[owner[i - 1]]))
			tree[i] += 1;
		uint64_t parent = i + (i & -i);
		if (parent <= cap)
			tree[parent] += tree[i];
	}
}

/* Renumber the stamps 0 .. marks-1 in order. */
static void compact(lp_recency *r)
{
	uint64_t next = 0;
	for (uint64_t s = 0; s < r->now; s++) {
		lp_pageno p = r->owner[s];
		if (r->stamp[p] == s) {
			r->owner[next] = p;
			r->stamp[p] = next++;
		}
	}
	r->now = next;
	build(r->all, r->cap, r->owner, next, NULL);
	if (r->sub)
		build(r->sub, r->cap, r->owner, next, r->in_sub);
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
	if (2 * (uint64_t)n <= r->cap)
		return;
	while (r->cap < 2 * (uint64_t)n) {
		r->cap *= 2;
		r->log_cap++;
	}
	r->all = g_renew(uint32_t, r->all, r->cap + 1);
	if (r->sub)
		r->sub = g_renew(uint32_t, r->sub, r->cap + 1);
	r->owner = g_renew(lp_pageno, r->owner, r->cap);
	compact(r); /* rebuilds the trees at their new size */
}

uint64_t lp_recency_position(const lp_recency *r, lp_pageno page)
{
	uint64_t s = r->stamp[page];
	return s == UINT64_MAX ? 0 : r->marks - tree_below(r->all, s);
}

void lp_recency_touch(lp_recency *r, lp_pageno page)
{
	if (r->now == r->cap)
		compact(r);
	uint64_t s = r->stamp[page];
	bool sub = r->sub && r->in_sub[page];
	if (s != UINT64_MAX) {
		tree_add(r->all, r->cap, s, -1);
		if (sub)
			tree_add(r->sub, r->cap, s, -1);
	} else {
		r->marks++;
	}
	s = r->now++;
	r->stamp[page] = s;
	r->owner[s] = page;
	tree_add(r->all, r->cap, s, 1);
	if (sub)
		tree_add(r->sub, r->cap, s, 1);
}

void lp_recency_sub_set(lp_recency *r, lp_pageno page, bool on)
{
	if (r->in_sub[page] == on)
		return;
	r->in_sub[page] = on;
	tree_add(r->sub, r->cap, r->stamp[page], on ? 1 : -1);
}

lp_pageno lp_recency_sub_last(const lp_recency *r)
{
	if (!tree_below(r->sub, r->cap))
		return LP_NO_PAGE;
	return r->owner[tree_select(r->sub, r->log_cap, 1)];
}

lp_pageno lp_recency_sub_after(const lp_recency *r, uint64_t pos)
{
	if (pos >= r->marks)
		return LP_NO_PAGE;
	/* Positions greater than pos are the marks - pos oldest stamps: the
	 * marked one of them with the largest stamp. */
	uint64_t limit = tree_select(r->all, r->log_cap, r->marks - pos) + 1;
	uint64_t below = tree_below(r->sub, limit);
	return below ? r->owner[tree_select(r->sub, r->log_cap, below)] : LP_NO_PAGE;
}
