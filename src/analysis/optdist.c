/* OPT stack distances by the critical stack algorithm (optdist.h). */
#include "analysis/optdist.h"

#include <glib.h>
#include <string.h>

#define NEVER UINT32_MAX
/* A node's min without a page's stamp: 2^30, and sums added to it as to
 * any min. The steps over any run of stamps sum to less than D < 2^29 in
 * magnitude, so a min that started from NO_PAGES stays above 2^29, above
 * every page's, and never comes to 0 with the steps after its node
 * added: no test for it is needed on the way up or down. */
#define NO_PAGES (INT32_C(1) << 30)
#define NO_PAGES_8 INT8_MAX /* in an octet, whose sums stay within +-32 */
#define BLOCK LP_OPTDIST_BLOCK
/* Capacities below this are found by a scan of their leaves (one cache
 * line), not in the marker tree (set_mark, first_marked_by). */
#define SMALL 16

/* A byte of a block's bits holds four stamps (below); two bytes, eight. */
typedef struct octet {
	int8_t sum, min; /* as a node's, for the eight stamps */
} octet;

/* By two bytes of a block's bits; and which of their pages' stamps is
 * the earliest whose steps after it are the min (0 .. 7, or 8 if none). */
static octet octets[1 << 16];
static uint8_t earliest_min[1 << 16];

/* The table, once for every lp_optdist: from the latest of the eight
 * stamps (stamp i's page bit at i % 4 + i / 4 * 8, its marker's 4 above). */
static void make_octets(void)
{
	static gsize made;
	if (!g_once_init_enter(&made))
		return;
	for (unsigned x = 0; x < G_N_ELEMENTS(octets); x++) {
		int after = 0, min = NO_PAGES_8, at = 8;
		for (int i = 7; i >= 0; i--) {
			unsigned bit = (unsigned)(i % 4 + i / 4 * 8);
			if ((x >> bit & 1) && after <= min) {
				min = after;
				at = i;
			}
			after += (int)(x >> (bit + 4) & 1) - (int)(x >> bit & 1);
		}
		octets[x] = (octet){(int8_t)after, (int8_t)min};
		earliest_min[x] = (uint8_t)at;
	}
	g_once_init_leave(&made, 1);
}

void lp_optdist_init(lp_optdist *o, lp_pageno pages)
{
	memset(o, 0, sizeof *o);
	size_t n = pages ? pages : 1;
	g_assert(n <= LP_OPTDIST_MAX_PAGES);
	/* Live stamps (pages' and markers') are fewer than 2D: with room for
	 * 3D, a renumbering frees D stamps at least. */
	o->cap = 1024;
	while (o->cap < 3 * (uint64_t)n)
		o->cap *= 2;
	o->bits = g_new0(uint64_t, o->cap / BLOCK);
	o->tree = g_new(lp_optdist_node, 2 * (o->cap / BLOCK));
	for (uint32_t i = 0; i < 2 * (o->cap / BLOCK); i++)
		o->tree[i] = (lp_optdist_node){0, NO_PAGES};
	o->stamp = g_new(uint32_t, n);
	memset(o->stamp, 0xff, n * sizeof *o->stamp);
	o->ccap = 2 * SMALL;
	while (o->ccap < (uint64_t)n + 1)
		o->ccap *= 2;
	o->mark = g_new(uint32_t, 2 * o->ccap);
	memset(o->mark, 0xff, 2 * o->ccap * sizeof *o->mark);
	o->pages = (lp_pageno)n;
	make_octets();
}

void lp_optdist_clear(lp_optdist *o)
{
	g_free(o->bits);
	g_free(o->tree);
	g_free(o->stamp);
	g_free(o->mark);
	memset(o, 0, sizeof *o);
}

static inline void pull(lp_optdist_node *tree, uint32_t n)
{
	lp_optdist_node l = tree[2 * n], r = tree[2 * n + 1];
	tree[n] = (lp_optdist_node){l.sum + r.sum, MIN(r.min, l.min + r.sum)};
}

/* A block's bits: byte j holds stamps 4j .. 4j + 3, pages' in its low
 * nibble, markers' in its high one, so that two bytes index the table. */
static inline uint64_t page_bit(uint32_t s)
{
	return UINT64_C(1) << (s % BLOCK / 4 * 8 + s % 4);
}

static inline uint64_t marker_bit(uint32_t s)
{
	return page_bit(s) << 4;
}

/* Bytes 2j and 2j + 1: stamps 8j .. 8j + 7. */
static inline unsigned octet_at(uint64_t bits, unsigned j)
{
	return (unsigned)(bits >> (16 * j)) & 0xffff;
}

/* The leaf of block b, from its bits. An octet without pages (min
 * NO_PAGES_8) gives a min above 64 whatever the steps after it, a page
 * one below 40. */
static lp_optdist_node block_of(const lp_optdist *o, uint32_t b)
{
	uint64_t bits = o->bits[b];
	int32_t after = 0, min = NO_PAGES_8;
	for (unsigned j = BLOCK / 8; j-- > 0;) {
		octet e = octets[octet_at(bits, j)];
		min = MIN(min, e.min + after);
		after += e.sum;
	}
	return (lp_optdist_node){after, min > 64 ? NO_PAGES : min};
}

/* Recompute node n's ancestors up to where one comes out unchanged. */
static void rise(lp_optdist_node *tree, uint32_t n)
{
	for (n /= 2; n >= 1; n /= 2) {
		lp_optdist_node was = tree[n];
		pull(tree, n);
		if (was.sum == tree[n].sum && was.min == tree[n].min)
			break;
	}
}

/* Stamp t, the newest, now holds a page (whose step is step): its block
 * gains a last stamp, which changes no step after another. */
static void append(lp_optdist *o, uint32_t t, int32_t step)
{
	uint32_t n = o->cap / BLOCK + t / BLOCK;
	lp_optdist_node *leaf = &o->tree[n];
	lp_optdist_node was = *leaf;
	*leaf = (lp_optdist_node){was.sum + step, MIN(was.min + step, 0)};
	if (step || was.min > 0) /* else the same leaf (a reference again, mostly) */
		rise(o->tree, n);
}

/* Stamps a and b lost a page or a marker: their blocks' leaves anew,
 * both paths up to the node they share (whose sum comes out the same
 * when one lost a page and the other a marker), then up from there. */
static void lose(lp_optdist *o, uint32_t a, uint32_t b)
{
	uint32_t leaves = o->cap / BLOCK, x = leaves + a / BLOCK, y = leaves + b / BLOCK;
	o->tree[x] = block_of(o, a / BLOCK);
	if (y != x)
		o->tree[y] = block_of(o, b / BLOCK);
	while (x != y) {
		x /= 2;
		y /= 2;
		pull(o->tree, x);
		if (y != x)
			pull(o->tree, y);
	}
	rise(o->tree, x);
}

/* Capacity c's marker moves to stamp s, the newest. Searches read the
 * small capacities' leaves and the nodes whose capacities start at
 * SMALL or later (first_marked_by): the climb ends below the first node
 * that starts at capacity 0 (a power of 2), and the small capacities
 * have none above them. (The distance found is a capacity whose marker
 * is below all smaller capacities', and the markers mostly grow with the
 * capacity: its old marker was the least of nearly every node above it,
 * so each move climbs as far as it may.) */
static void set_mark(lp_optdist *o, uint32_t c, uint32_t s)
{
	uint32_t n = o->ccap + c;
	o->mark[n] = s;
	if (c < SMALL)
		return;
	for (n /= 2; n & (n - 1); n /= 2) {
		uint32_t m = MIN(o->mark[2 * n], o->mark[2 * n + 1]);
		if (o->mark[n] == m)
			break;
		o->mark[n] = m;
	}
}

/* Renumber the live stamps 0, 1, ... in order; rebuild both trees. */
static void compact(lp_optdist *o)
{
	uint32_t *renumber = g_new(uint32_t, o->now);
	uint32_t k = 0, blocks = o->cap / BLOCK;
	uint64_t *packed = g_new0(uint64_t, blocks);
	/* Only the live stamps (a page's or a marker's), a block's found by
	 * its bits: the others are asked about by no page and no marker. */
	for (uint32_t b = 0; b < (o->now + BLOCK - 1) / BLOCK; b++) {
		uint64_t bits = o->bits[b];
		for (uint64_t live = (bits | bits >> 4) & UINT64_C(0x0f0f0f0f0f0f0f0f); live;
		     live &= live - 1) {
			unsigned at = (unsigned)__builtin_ctzll(live);
			renumber[b * BLOCK + at / 8 * 4 + at % 8] = k;
			packed[k / BLOCK] |= (bits >> at & 1 ? page_bit(k) : 0) |
					     (bits >> (at + 4) & 1 ? marker_bit(k) : 0);
			k++;
		}
	}
	g_free(o->bits);
	o->bits = packed;
	for (lp_pageno p = 0; p < o->pages; p++)
		if (o->stamp[p] != NEVER)
			o->stamp[p] = renumber[o->stamp[p]];
	for (uint32_t c = 0; c < o->ccap; c++)
		if (o->mark[o->ccap + c] != NEVER)
			o->mark[o->ccap + c] = renumber[o->mark[o->ccap + c]];
	g_free(renumber);
	o->now = k;
	for (uint32_t b = 0; b < blocks; b++)
		o->tree[blocks + b] = block_of(o, b);
	for (uint32_t n = blocks - 1; n >= 1; n--)
		pull(o->tree, n);
	for (uint32_t n = o->ccap - 1; n >= 1; n--)
		o->mark[n] = MIN(o->mark[2 * n], o->mark[2 * n + 1]);
}

void lp_optdist_grow(lp_optdist *o, lp_pageno pages)
{
	if (pages <= o->pages)
		return;
	g_assert(pages <= LP_OPTDIST_MAX_PAGES);
	/* By doubling: a renumbering of every stamp each time. */
	size_t n = MAX((uint64_t)pages, MIN(2 * (uint64_t)o->pages, LP_OPTDIST_MAX_PAGES));
	o->stamp = g_renew(uint32_t, o->stamp, n);
	memset(o->stamp + o->pages, 0xff, (n - o->pages) * sizeof *o->stamp);
	uint32_t ccap = o->ccap;
	while (ccap < (uint64_t)n + 1)
		ccap *= 2;
	if (ccap != o->ccap) {
		uint32_t *mark = g_new(uint32_t, 2 * ccap);
		memset(mark, 0xff, 2 * ccap * sizeof *mark);
		memcpy(mark + ccap, o->mark + o->ccap, o->ccap * sizeof *mark);
		for (uint32_t m = ccap - 1; m >= 1; m--)
			mark[m] = MIN(mark[2 * m], mark[2 * m + 1]);
		g_free(o->mark);
		o->mark = mark;
		o->ccap = ccap;
	}
	uint32_t cap = o->cap;
	while (cap < 3 * (uint64_t)n)
		cap *= 2;
	if (cap != o->cap) { /* the stamps renumbered into the new room */
		o->cap = cap;
		o->tree = g_renew(lp_optdist_node, o->tree, 2 * (cap / BLOCK));
		compact(o);
	}
	o->pages = (lp_pageno)n;
}

/* The earliest page's stamp in block l after lo where the balance is
 * 0, after the block's steps summing to after; NEVER if none. Eight
 * stamps at a time, pages at lo or before left out (no step after lo
 * is theirs). */
static uint32_t zero_in_block(const lp_optdist *o, uint32_t l, uint32_t lo, int32_t after)
{
	lp_optdist_node leaf = o->tree[o->cap / BLOCK + l];
	if (leaf.min + after != 0)
		return NEVER;
	uint64_t all = o->bits[l], bits = all;
	if (l == lo / BLOCK) { /* the pages' bits of lo's bytes before its own, then of lo's byte */
		unsigned byte = lo % BLOCK / 4;
		bits &= ~(UINT64_C(0x0f0f0f0f0f0f0f0f) & ((UINT64_C(1) << (8 * byte)) - 1));
		bits &= ~((page_bit(lo) << 1) - (UINT64_C(1) << (8 * byte)));
	}
	int32_t rest = leaf.sum + after; /* steps after stamps 8j .. 8j + 7 */
	for (unsigned j = 0; j < BLOCK / 8; j++) {
		unsigned pages = octet_at(bits, j);
		rest -= octets[octet_at(all, j)].sum;
		/* The balance is never negative at a page: 0 is the min. (The
		 * pages left out are before the others: no step after those
		 * is theirs.) */
		octet e = octets[pages];
		if (e.min + rest == 0)
			return l * BLOCK + 8 * j + earliest_min[pages];
	}
	return NEVER;
}

/* The earliest page's stamp after lo where the balance is 0, under node
 * top (w blocks from block l), after which no step is: down to lo's
 * block, then the right siblings on the way, the lowest first. The
 * balance is never negative at a page's stamp, so a node whose min plus
 * the steps after it is not 0 holds none. */
static uint32_t earliest_zero(const lp_optdist *o, uint32_t top, uint32_t l, uint32_t w, uint32_t lo)
{
	uint32_t right[32];
	int32_t after_right[32];
	int k = 0;
	uint32_t n = top;
	int32_t after = 0;
	for (; w > 1; w /= 2) {
		uint32_t half = w / 2;
		if (lo / BLOCK < l + half) {
			right[k] = 2 * n + 1;
			after_right[k++] = after;
			after += o->tree[2 * n + 1].sum;
			n = 2 * n;
		} else {
			n = 2 * n + 1;
			l += half;
		}
	}
	uint32_t at = zero_in_block(o, l, lo, after);
	if (at != NEVER)
		return at;
	while (k-- > 0) {
		n = right[k];
		after = after_right[k];
		if (o->tree[n].min + after == 0)
			break;
	}
	uint32_t leaves = o->cap / BLOCK;
	while (n < leaves) {
		lp_optdist_node left = o->tree[2 * n];
		int32_t left_after = after + o->tree[2 * n + 1].sum;
		if (left.min + left_after == 0) {
			n = 2 * n;
			after = left_after;
		} else {
			n = 2 * n + 1;
		}
	}
	return zero_in_block(o, n - leaves, lo, after);
}

/* The least capacity whose marker is at stamp b or before: the small
 * ones in turn (the answer mostly), then up from capacity SMALL and down
 * (set_mark). Some capacity's always is. */
static uint32_t first_marked_by(const lp_optdist *o, uint32_t b)
{
	const uint32_t *leaf = o->mark + o->ccap;
	for (uint32_t c = 2; c < SMALL; c++)
		if (leaf[c] <= b)
			return c;
	uint32_t n = o->ccap + SMALL;
	for (;;) {
		n >>= __builtin_ctz(n); /* a left child: its parent starts there too */
		if (o->mark[n] <= b)
			break;
		n++;
	}
	while (n < o->ccap) {
		/* n's descendants four levels down share a cache line: on its
		 * way while the three levels between are read. */
		if (n < o->ccap / 8)
			__builtin_prefetch(&o->mark[16 * n]);
		n = o->mark[2 * n] <= b ? 2 * n : 2 * n + 1;
	}
	return n - o->ccap;
}

uint64_t lp_optdist_access(lp_optdist *o, lp_pageno page)
{
	uint32_t s = o->stamp[page];
	if (s != NEVER && s == o->now - 1)
		return 1;
	if (o->now == o->cap) {
		compact(o);
		s = o->stamp[page];
	}
	uint32_t t = o->now++;
	o->stamp[page] = t;
	if (s == NEVER) {
		uint32_t c = ++o->seen;
		o->bits[t / BLOCK] |= page_bit(t);
		if (c >= 2) {
			o->bits[t / BLOCK] |= marker_bit(t);
			set_mark(o, c, t);
		}
		append(o, t, c >= 2 ? 0 : -1);
		return 0;
	}
	uint32_t c = 2;
	/* b is after s: with capacity 2's marker at s or before (nearly a
	 * third of the references), the distance is 2, b unsought. */
	if (o->mark[o->ccap + 2] > s) {
		/* The search starts at the least node holding the blocks of s
		 * and t - 1: no steps after it (t is empty yet), and mostly
		 * near the leaves. */
		uint32_t leaves = o->cap / BLOCK, n = leaves + s / BLOCK,
			 last = leaves + (t - 1) / BLOCK, w = 1;
		for (; n != last; w *= 2) {
			n /= 2;
			last /= 2;
		}
		c = first_marked_by(o, earliest_zero(o, n, n * w - leaves, w, s));
	}
	uint32_t m = o->mark[o->ccap + c];
	o->bits[s / BLOCK] &= ~page_bit(s);
	o->bits[m / BLOCK] &= ~marker_bit(m);
	o->bits[t / BLOCK] |= page_bit(t) | marker_bit(t);
	set_mark(o, c, t);
	lose(o, s, m);
	append(o, t, 0);
	return c;
}

void lp_optdist_count(lp_optdist *o, const lp_pageno *page, size_t len, uint64_t *hist)
{
	/* A page's stamp first, and its block once the stamp is there
	 * (stale when the page comes sooner or the stamps are renumbered:
	 * only a wasted fetch). */
	enum { STAMP_AHEAD = 24, BLOCK_AHEAD = 8 };
	for (size_t k = 0; k < len; k++) {
		if (k + STAMP_AHEAD < len)
			__builtin_prefetch(&o->stamp[page[k + STAMP_AHEAD]]);
		if (k + BLOCK_AHEAD < len) {
			uint32_t s = o->stamp[page[k + BLOCK_AHEAD]];
			if (s < o->cap) {
				__builtin_prefetch(&o->bits[s / BLOCK]);
				__builtin_prefetch(&o->tree[o->cap / BLOCK + s / BLOCK]);
			}
		}
		hist[lp_optdist_access(o, page[k])]++;
	}
}
