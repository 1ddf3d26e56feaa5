/* LRU stack distances with a front array before a Fenwick tree
 * (stackdist.h). */
#include "analysis/stackdist.h"

#include <glib.h>
#include <string.h>

#define NEVER UINT64_MAX       /* not referenced yet */
#define IN_FRONT (UINT64_MAX - 1)

void lp_stackdist_init(lp_stackdist *s, lp_pageno pages)
{
	memset(s, 0, sizeof *s);
	size_t n = pages ? pages : 1;
	/* Twice the pages: stamps run out after D references at least, so
	 * renumbering costs O(1) a reference. */
	s->cap = 1024;
	while (s->cap < 2 * (uint64_t)n)
		s->cap *= 2;
	s->tree = g_new0(uint32_t, s->cap + 1);
	s->owner = g_new(lp_pageno, s->cap);
	s->stamp = g_new(uint64_t, n);
	memset(s->stamp, 0xff, n * sizeof *s->stamp);
	s->pages = (lp_pageno)n;
}

void lp_stackdist_clear(lp_stackdist *s)
{
	g_free(s->tree);
	g_free(s->owner);
	g_free(s->stamp);
	memset(s, 0, sizeof *s);
}

static void tree_add(uint32_t *tree, uint64_t cap, uint64_t stamp, uint32_t delta)
{
	for (uint64_t i = stamp + 1; i <= cap; i += i & -i)
		tree[i] += delta;
}

/* Marks at stamps 0 .. stamp - 1. */
static uint64_t tree_below(const uint32_t *tree, uint64_t stamp)
{
	uint64_t sum = 0;
	for (uint64_t i = stamp; i > 0; i -= i & -i)
		sum += tree[i];
	return sum;
}

/* Renumber the marks' stamps 0 .. marks - 1 in order and rebuild the
 * tree. */
static void compact(lp_stackdist *s)
{
	uint64_t next = 0;
	for (uint64_t t = 0; t < s->now; t++) {
		lp_pageno p = s->owner[t];
		if (s->stamp[p] == t) {
			s->owner[next] = p;
			s->stamp[p] = next++;
		}
	}
	s->now = next;
	memset(s->tree, 0, (s->cap + 1) * sizeof *s->tree);
	for (uint64_t i = 1; i <= s->cap; i++) {
		if (i <= next)
			s->tree[i] += 1;
		uint64_t parent = i + (i & -i);
		if (parent <= s->cap)
			s->tree[parent] += s->tree[i];
	}
}

void lp_stackdist_grow(lp_stackdist *s, lp_pageno pages)
{
	if (pages <= s->pages)
		return;
	uint64_t n = MAX((uint64_t)pages, MIN(2 * (uint64_t)s->pages, (uint64_t)UINT32_MAX));
	s->stamp = g_renew(uint64_t, s->stamp, n);
	memset(s->stamp + s->pages, 0xff, (n - s->pages) * sizeof *s->stamp);
	s->pages = (lp_pageno)n;
	if (s->cap >= 2 * n)
		return;
	while (s->cap < 2 * n)
		s->cap *= 2;
	s->tree = g_renew(uint32_t, s->tree, s->cap + 1);
	s->owner = g_renew(lp_pageno, s->owner, s->cap);
	compact(s); /* the tree rebuilt over the new stamps */
}

uint64_t lp_stackdist_access(lp_stackdist *s, lp_pageno page)
{
	lp_pageno *f = s->front;
	unsigned i = 0;
	while (i < s->nfront && f[i] != page)
		i++;
	if (i < s->nfront) { /* in the front: its index is the distance */
		for (unsigned j = i; j > 0; j--) /* a few moves: no call */
			f[j] = f[j - 1];
		f[0] = page;
		return i + 1;
	}
	uint64_t t = s->stamp[page], distance = 0;
	if (t != NEVER) {
		/* Behind the whole front, and the marks more recent than it. */
		distance = s->nfront + s->marks - tree_below(s->tree, t);
		tree_add(s->tree, s->cap, t, (uint32_t)-1);
		s->marks--;
	}
	s->stamp[page] = IN_FRONT; /* before a renumbering, which keeps marks only */
	if (s->nfront == LP_STACKDIST_FRONT) {
		/* The front's last page becomes the tree's most recent mark. */
		if (s->now == s->cap)
			compact(s);
		lp_pageno out = f[LP_STACKDIST_FRONT - 1];
		s->stamp[out] = s->now;
		s->owner[s->now] = out;
		tree_add(s->tree, s->cap, s->now++, 1);
		s->marks++;
		i = LP_STACKDIST_FRONT - 1;
	} else {
		i = s->nfront++;
	}
	memmove(f + 1, f, i * sizeof *f);
	f[0] = page;
	return distance;
}
