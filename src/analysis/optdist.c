/* OPT stack distances by the critical stack algorithm (optdist.h). */
#include "analysis/optdist.h"

#include <glib.h>
#include <string.h>

#define NEVER UINT64_MAX
#define NO_PAGES INT32_MAX /* a node's min without a page's stamp */

void lp_optdist_init(lp_optdist *o, lp_pageno pages)
{
	memset(o, 0, sizeof *o);
	size_t n = pages ? pages : 1;
	/* Balances stay within +-2D: int32 holds them. */
	if (n >= (UINT32_C(1) << 29))
		g_error("opt's distances: %zu pages, more than 2^29", n);
	/* Live stamps (pages' and markers') are fewer than 2D: with room for
	 * 3D, a renumbering frees D stamps at least. */
	o->cap = 1024;
	while (o->cap < 3 * (uint64_t)n)
		o->cap *= 2;
	o->tree = g_new(lp_optdist_node, 2 * o->cap);
	for (uint64_t i = 0; i < 2 * o->cap; i++)
		o->tree[i] = (lp_optdist_node){0, NO_PAGES};
	o->point = g_new(lp_pageno, o->cap);
	memset(o->point, 0xff, o->cap * sizeof *o->point);
	o->marked = g_new0(uint32_t, o->cap);
	o->stamp = g_new(uint64_t, n);
	memset(o->stamp, 0xff, n * sizeof *o->stamp);
	o->ccap = 2;
	while (o->ccap < (uint64_t)n + 1)
		o->ccap *= 2;
	o->mark = g_new(uint64_t, 2 * o->ccap);
	memset(o->mark, 0xff, 2 * o->ccap * sizeof *o->mark);
	o->pages = (lp_pageno)n;
}

void lp_optdist_clear(lp_optdist *o)
{
	g_free(o->tree);
	g_free(o->point);
	g_free(o->marked);
	g_free(o->stamp);
	g_free(o->mark);
	memset(o, 0, sizeof *o);
}

static inline void pull(lp_optdist_node *tree, uint64_t n)
{
	lp_optdist_node l = tree[2 * n], r = tree[2 * n + 1];
	int32_t carried = l.min == NO_PAGES ? NO_PAGES : l.min + r.sum;
	tree[n] = (lp_optdist_node){l.sum + r.sum, MIN(r.min, carried)};
}

static void leaf(lp_optdist *o, uint64_t s)
{
	bool is_page = o->point[s] != LP_NO_PAGE;
	uint64_t n = o->cap + s;
	o->tree[n] = (lp_optdist_node){(o->marked[s] != 0) - is_page, is_page ? 0 : NO_PAGES};
	for (n /= 2; n >= 1; n /= 2)
		pull(o->tree, n);
}

static void set_mark(lp_optdist *o, uint32_t c, uint64_t s)
{
	uint64_t n = o->ccap + c;
	o->mark[n] = s;
	for (n /= 2; n >= 1; n /= 2)
		o->mark[n] = MIN(o->mark[2 * n], o->mark[2 * n + 1]);
}

/* Renumber the live stamps 0, 1, ... in order; rebuild both trees. */
static void compact(lp_optdist *o)
{
	uint64_t k = 0;
	for (uint64_t s = 0; s < o->now; s++) {
		lp_pageno p = o->point[s];
		uint32_t c = o->marked[s];
		if (p == LP_NO_PAGE && !c)
			continue;
		o->point[k] = p;
		o->marked[k] = c;
		if (p != LP_NO_PAGE)
			o->stamp[p] = k;
		if (c)
			o->mark[o->ccap + c] = k;
		k++;
	}
	memset(o->point + k, 0xff, (o->cap - k) * sizeof *o->point);
	memset(o->marked + k, 0, (o->cap - k) * sizeof *o->marked);
	o->now = k;
	for (uint64_t s = 0; s < o->cap; s++) {
		bool is_page = o->point[s] != LP_NO_PAGE;
		o->tree[o->cap + s] =
			(lp_optdist_node){(o->marked[s] != 0) - is_page, is_page ? 0 : NO_PAGES};
	}
	for (uint64_t n = o->cap - 1; n >= 1; n--)
		pull(o->tree, n);
	for (uint64_t n = o->ccap - 1; n >= 1; n--)
		o->mark[n] = MIN(o->mark[2 * n], o->mark[2 * n + 1]);
}

/* The earliest page's stamp after lo where the balance is 0, within node
 * n (width w, from stamp l), after which the steps sum to after; NEVER if
 * none. The balance is never negative at a page's stamp, so a node
 * whose min plus after is not 0 holds none. */
static uint64_t earliest_zero(const lp_optdist *o, uint64_t n, uint64_t l, uint64_t w, uint64_t lo,
			      int32_t after)
{
	if (l + w - 1 <= lo || o->tree[n].min == NO_PAGES || o->tree[n].min + after != 0)
		return NEVER;
	while (w > 1) {
		w /= 2;
		if (l + w - 1 > lo) { /* the left half reaches past lo */
			uint64_t at = earliest_zero(o, 2 * n, l, w, lo, after + o->tree[2 * n + 1].sum);
			if (at != NEVER)
				return at;
		}
		n = 2 * n + 1;
		l += w;
		if (o->tree[n].min == NO_PAGES || o->tree[n].min + after != 0)
			return NEVER;
	}
	return l;
}

/* The least capacity whose marker is at stamp b or before. */
static uint32_t first_marked_by(const lp_optdist *o, uint64_t b)
{
	uint64_t n = 1;
	while (n < o->ccap)
		n = o->mark[2 * n] <= b ? 2 * n : 2 * n + 1;
	return (uint32_t)(n - o->ccap);
}

uint64_t lp_optdist_access(lp_optdist *o, lp_pageno page)
{
	uint64_t s = o->stamp[page];
	if (s != NEVER && s == o->now - 1)
		return 1;
	if (o->now == o->cap) {
		compact(o);
		s = o->stamp[page];
	}
	uint64_t t = o->now++;
	o->point[t] = page;
	o->stamp[page] = t;
	if (s == NEVER) {
		uint32_t c = ++o->seen;
		if (c >= 2) {
			o->marked[t] = c;
			set_mark(o, c, t);
		}
		leaf(o, t);
		return 0;
	}
	/* The balance over stamps before t (t is not in the tree yet). */
	uint64_t b = earliest_zero(o, 1, 0, o->cap, s, 0);
	uint32_t c = first_marked_by(o, b);
	uint64_t m = o->mark[o->ccap + c];
	o->point[s] = LP_NO_PAGE;
	leaf(o, s);
	o->marked[m] = 0;
	leaf(o, m);
	o->marked[t] = c;
	set_mark(o, c, t);
	leaf(o, t);
	return c;
}
