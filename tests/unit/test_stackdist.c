/* analysis/stackdist.h: the same stack distances as recency.h's positions,
 * over random streams that hit the front, miss it, fill it slowly (fewer
 * pages than it holds) and renumber stamps many times, with every page
 * known at init or the pages made room for as they come (grow). */
#include <criterion/criterion.h>
#include <glib.h>

#include "analysis/recency.h"
#include "analysis/stackdist.h"

static void compare_as(lp_pageno pages, uint64_t n, double near, guint32 seed, bool grow)
{
	GRand *rng = g_rand_new_with_seed(seed);
	lp_stackdist s;
	lp_stackdist_init(&s, grow ? 1 : pages);
	lp_recency r;
	lp_recency_init(&r, pages, false);
	lp_pageno last = 0;
	for (uint64_t t = 0; t < n; t++) {
		/* Near the last page most of the time, anywhere otherwise. */
		lp_pageno p = g_rand_double(rng) < near
				      ? (lp_pageno)((last + (lp_pageno)g_rand_int_range(rng, 0, 8)) % pages)
				      : (lp_pageno)g_rand_int_range(rng, 0, (gint32)pages);
		if (grow)
			lp_stackdist_grow(&s, p + 1);
		uint64_t want = lp_recency_position(&r, p);
		lp_recency_touch(&r, p);
		cr_assert_eq(lp_stackdist_access(&s, p), want, "pages %u, reference %" G_GUINT64_FORMAT,
			     pages, t);
		last = p;
	}
	lp_stackdist_clear(&s);
	lp_recency_clear(&r);
	g_rand_free(rng);
}

static void compare(lp_pageno pages, uint64_t n, double near, guint32 seed)
{
	compare_as(pages, n, near, seed, false);
	compare_as(pages, n, near, seed, true);
}

Test(stackdist, equals_recency_positions)
{
	compare(1, 100, 0, 1);
	compare(5, 1000, 0.5, 2);   /* fewer pages than the front */
	compare(33, 20000, 0.3, 3); /* one more than the front */
	compare(300, 200000, 0.9, 4);
	compare(5000, 200000, 0.5, 5);
	compare(5000, 200000, 0, 6);
}
