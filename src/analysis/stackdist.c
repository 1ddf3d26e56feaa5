/* LRU stack distances with a front array before a bit mask of marks and
 * a Fenwick tree over its words (stackdist.h). */
#include "analysis/stackdist.h"

#include <glib.h>
#include <string.h>

#define NEVER UINT32_MAX       /* not referenced yet */
#define IN_FRONT (UINT32_MAX - 1)

#define WORD 64 /* stamps a word of marks holds */

/* Stamps below 2^31 fit a page's uint32 beside its two values above. */
static void check_pages(uint64_t n)
{
	if (n > (UINT64_C(1) << 30))
		g_error("LRU stack distances: %" G_GUINT64_FORMAT " pages, more than 2^30", n);
}

static void alloc_marks(lp_stackdist *s)
{
	s->bits = g_renew(uint64_t, s->bits, s->cap / WORD);
	s->tree = g_renew(uint32_t, s->tree, s->cap / WORD + 1);
	s->owner = g_renew(lp_pageno, s->owner, s->cap);
}

void lp_stackdist_init(lp_stackdist *s, lp_pageno pages)
{
	memset(s, 0, sizeof *s);
	size_t n = pages ? pages : 1;
	check_pages(n);
	/* Twice the pages: stamps run out after D references at least, so
	 * renumbering costs O(1) a reference. */
	s->cap = 1024;
	while (s->cap < 2 * (uint64_t)n)
		s->cap *= 2;
	alloc_marks(s);
	memset(s->bits, 0, s->cap / WORD * sizeof *s->bits);
	memset(s->tree, 0, (s->cap / WORD + 1) * sizeof *s->tree);
	s->stamp = g_new(uint32_t, n);
	memset(s->stamp, 0xff, n * sizeof *s->stamp);
	s->pages = (lp_pageno)n;
}

void lp_stackdist_clear(lp_stackdist *s)
{
	g_free(s->bits);
	g_free(s->tree);
	g_free(s->owner);
	g_free(s->stamp);
	memset(s, 0, sizeof *s);
}

static inline unsigned count_bits(uint64_t x)
{
	x -= (x >> 1) & UINT64_C(0x5555555555555555);
	x = (x & UINT64_C(0x3333333333333333)) + (x >> 2 & UINT64_C(0x3333333333333333));
	x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
	return (unsigned)((x * UINT64_C(0x0101010101010101)) >> 56);
}

static void mark(lp_stackdist *s, uint64_t stamp, uint32_t delta)
{
	s->bits[stamp / WORD] ^= UINT64_C(1) << (stamp % WORD);
	for (uint64_t i = stamp / WORD + 1; i <= s->cap / WORD; i += i & -i)
		s->tree[i] += delta;
}

/* Marks at stamps 0 .. stamp - 1: the words before stamp's in the tree,
 * its own word's bits below it. */
static uint64_t marks_below(const lp_stackdist *s, uint64_t stamp)
{
	uint64_t sum = count_bits(s->bits[stamp / WORD] & ((UINT64_C(1) << (stamp % WORD)) - 1));
	for (uint64_t i = stamp / WORD; i > 0; i -= i & -i)
		sum += s->tree[i];
	return sum;
}

/* Renumber the marks' stamps 0 .. marks - 1 in order and rebuild the
 * bits and the tree. */
static void compact(lp_stackdist *s)
{
	uint64_t next = 0, words = s->cap / WORD;
	for (uint64_t t = 0; t < s->now; t++) {
		lp_pageno p = s->owner[t];
		if (s->stamp[p] == t) {
			s->owner[next] = p;
			s->stamp[p] = (uint32_t)next++;
		}
	}
	s->now = next;
	memset(s->bits, 0, words * sizeof *s->bits);
	for (uint64_t t = 0; t < next; t++)
		s->bits[t / WORD] |= UINT64_C(1) << (t % WORD);
	memset(s->tree, 0, (words + 1) * sizeof *s->tree);
	for (uint64_t i = 1; i <= words; i++) {
		s->tree[i] += count_bits(s->bits[i - 1]);
		uint64_t parent = i + (i & -i);
		if (parent <= words)
			s->tree[parent] += s->tree[i];
	}
}

void lp_stackdist_grow(lp_stackdist *s, lp_pageno pages)
{
	if (pages <= s->pages)
		return;
	uint64_t n = MAX((uint64_t)pages, MIN(2 * (uint64_t)s->pages, UINT64_C(1) << 30));
	check_pages(n);
	s->stamp = g_renew(uint32_t, s->stamp, n);
	memset(s->stamp + s->pages, 0xff, (n - s->pages) * sizeof *s->stamp);
	s->pages = (lp_pageno)n;
	if (s->cap >= 2 * n)
		return;
	while (s->cap < 2 * n)
		s->cap *= 2;
	alloc_marks(s);
	compact(s); /* the bits and the tree rebuilt over the new stamps */
}

uint64_t lp_stackdist_access(lp_stackdist *s, lp_pageno page)
{
	lp_pageno *f = s->front;
	uint64_t t = s->stamp[page], distance = 0;
	unsigned i = 0;
	if (t == IN_FRONT) { /* its index in the front is the distance */
		while (f[i] != page)
			i++;
		for (unsigned j = i; j > 0; j--) /* a few moves: no call */
			f[j] = f[j - 1];
		f[0] = page;
		return i + 1;
	}
	if (t != NEVER) {
		/* Behind the whole front, and the marks more recent than it. */
		distance = s->nfront + s->marks - marks_below(s, t);
		mark(s, t, (uint32_t)-1);
		s->marks--;
	}
	s->stamp[page] = IN_FRONT; /* before a renumbering, which keeps marks only */
	if (s->nfront == LP_STACKDIST_FRONT) {
		/* The front's last page becomes the tree's most recent mark. */
		if (s->now == s->cap)
			compact(s);
		lp_pageno out = f[LP_STACKDIST_FRONT - 1];
		s->stamp[out] = (uint32_t)s->now;
		s->owner[s->now] = out;
		mark(s, s->now++, 1);
		s->marks++;
		i = LP_STACKDIST_FRONT - 1;
	} else {
		i = s->nfront++;
	}
	memmove(f + 1, f, i * sizeof *f);
	f[0] = page;
	return distance;
}
