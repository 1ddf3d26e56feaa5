/* analysis/optdist.h: the same OPT stack distance at every reference as
 * Mattson's priority stack (policies.md §2's key, policy.h's lp_opt_key),
 * over random streams with locality, with pages never referenced again
 * by the thousand, and long enough to renumber the stamps many times. */
#include <criterion/criterion.h>
#include <glib.h>

#include "analysis/optdist.h"

/* The priority stack, one level a page: x to the top, the carry down
 * past every level of a smaller key, down to x's old level. */
static uint64_t *priority_stack(const lp_pageno *page, uint64_t n, lp_pageno pages)
{
	uint64_t *next = g_new(uint64_t, n ? n : 1), *seen = g_new(uint64_t, pages);
	for (lp_pageno p = 0; p < pages; p++)
		seen[p] = LP_NEVER;
	for (uint64_t t = n; t-- > 0;) {
		next[t] = seen[page[t]];
		seen[page[t]] = t;
	}
	lp_pageno *level = g_new(lp_pageno, pages);
	uint64_t *key = g_new(uint64_t, pages), *distance = g_new(uint64_t, n ? n : 1);
	uint64_t depth = 0;
	for (uint64_t t = 0; t < n; t++) {
		lp_pageno x = page[t];
		uint64_t old = 0;
		while (old < depth && level[old] != x)
			old++;
		distance[t] = old < depth ? old + 1 : 0;
		if (old == depth)
			depth++;
		if (old > 0) {
			lp_pageno carry = level[0];
			for (uint64_t i = 1; i < old; i++)
				if (key[level[i]] > key[carry]) {
					lp_pageno down = level[i];
					level[i] = carry;
					carry = down;
				}
			level[old] = carry;
		}
		level[0] = x;
		key[x] = lp_opt_key(next[t], t);
	}
	g_free(next);
	g_free(seen);
	g_free(level);
	g_free(key);
	return distance;
}

static void compare(const lp_pageno *page, uint64_t n, lp_pageno pages, const char *what)
{
	uint64_t *want = priority_stack(page, n, pages);
	lp_optdist o;
	lp_optdist_init(&o, pages);
	for (uint64_t t = 0; t < n; t++) {
		uint64_t got = lp_optdist_access(&o, page[t]);
		cr_assert_eq(got, want[t], "%s: reference %" G_GUINT64_FORMAT ": %" G_GUINT64_FORMAT
			     ", not %" G_GUINT64_FORMAT, what, t, got, want[t]);
	}
	lp_optdist_clear(&o);
	g_free(want);
}

Test(optdist, equals_the_priority_stack_on_random_streams)
{
	GRand *rng = g_rand_new_with_seed(40);
	for (int round = 0; round < 400; round++) {
		lp_pageno pages = (lp_pageno)g_rand_int_range(rng, 1, round < 200 ? 12 : 400);
		uint64_t n = (uint64_t)g_rand_int_range(rng, 0, 3000);
		double near = g_rand_double(rng);
		lp_pageno *page = g_new(lp_pageno, n ? n : 1), last = 0;
		for (uint64_t t = 0; t < n; t++)
			last = page[t] = g_rand_double(rng) < near
						 ? (lp_pageno)((last + (lp_pageno)g_rand_int_range(rng, 0, 5)) % pages)
						 : (lp_pageno)g_rand_int_range(rng, 0, (gint32)pages);
		compare(page, n, pages, "random");
		g_free(page);
	}
	g_rand_free(rng);
}

/* A hot set of 8 pages, and between its references pages seen once and
 * never again (policies.md §2's ties), thousands of them. */
Test(optdist, equals_the_priority_stack_with_pages_never_again)
{
	GRand *rng = g_rand_new_with_seed(41);
	const uint64_t n = 12000;
	lp_pageno *page = g_new(lp_pageno, n), fresh = 8;
	for (uint64_t t = 0; t < n; t++)
		page[t] = g_rand_int_range(rng, 0, 3) ? fresh++ : (lp_pageno)g_rand_int_range(rng, 0, 8);
	compare(page, n, fresh, "never again");
	/* The same pages again in reverse at the end: every one referenced twice. */
	lp_pageno *twice = g_new(lp_pageno, 2 * n);
	for (uint64_t t = 0; t < n; t++)
		twice[t] = twice[2 * n - 1 - t] = page[t];
	compare(twice, 2 * n, fresh, "palindrome");
	g_free(twice);
	g_free(page);
	g_rand_free(rng);
}

/* Few pages, a long stream: the 1024 stamps run out every few hundred
 * references. */
Test(optdist, renumbers_stamps)
{
	GRand *rng = g_rand_new_with_seed(42);
	const uint64_t n = 50000;
	lp_pageno *page = g_new(lp_pageno, n);
	for (uint64_t t = 0; t < n; t++)
		page[t] = (lp_pageno)g_rand_int_range(rng, 0, 300);
	compare(page, n, 300, "renumbered");
	g_free(page);
	g_rand_free(rng);
}
