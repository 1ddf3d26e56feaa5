/* The backward walk of next uses (core/nextuse.h) and the forward walk
 * of previous uses (core/prevuse.h). */
#include <criterion/criterion.h>

#include <glib.h>

#include "core/nextuse.h"
#include "core/prevuse.h"

/* Blocks of every length from 1 up, walked from the stream's end: each
 * next use as a forward search finds it. */
Test(nextuse, blocks_from_the_end_give_every_next_use)
{
	enum { N = 5000, PAGES = 300 };
	static uint32_t page[N];
	static uint64_t next[N];
	uint64_t state = 7;
	for (size_t t = 0; t < N; t++) {
		state = state * 6364136223846793005u + 1442695040888963407u;
		page[t] = (uint32_t)((state >> 33) % (t % 5 ? 20 : PAGES));
	}
	lp_next_use_walk w;
	lp_next_use_walk_init(&w, PAGES, N);
	size_t end = N;
	for (size_t len = 1; end > 0; len++) {
		size_t take = MIN(len, end);
		lp_next_use_walk_back(&w, page + end - take, take, next + end - take);
		end -= take;
	}
	cr_assert_eq(w.from, 0);
	lp_next_use_walk_clear(&w);
	for (size_t t = 0; t < N; t++) {
		uint64_t want = LP_NEVER;
		for (size_t u = t + 1; u < N && want == LP_NEVER; u++)
			if (page[u] == page[t])
				want = u;
		cr_assert_eq(next[t], want, "reference %zu", t);
	}
}

/* An empty stream, and a stream of pages never seen again. */
Test(nextuse, empty_and_never_again)
{
	lp_next_use_walk w;
	lp_next_use_walk_init(&w, 0, 0);
	lp_next_use_walk_back(&w, NULL, 0, NULL);
	lp_next_use_walk_clear(&w);
	const uint32_t page[] = {2, 0, 1};
	uint64_t next[3];
	lp_next_use_walk_init(&w, 3, 3);
	lp_next_use_walk_back(&w, page, 3, next);
	for (size_t t = 0; t < 3; t++)
		cr_assert_eq(next[t], LP_NEVER);
	lp_next_use_walk_clear(&w);
}

/* The forward walk of previous uses (core/prevuse.h): each backward
 * distance as a backward search finds it (0 at a page's first
 * reference), and the last references left for the gaps to the end. */
Test(nextuse, forward_walk_gives_every_backward_distance)
{
	enum { N = 5000, PAGES = 300 };
	static uint32_t page[N];
	uint64_t state = 11;
	for (size_t t = 0; t < N; t++) {
		state = state * 6364136223846793005u + 1442695040888963407u;
		page[t] = (uint32_t)((state >> 33) % (t % 5 ? 20 : PAGES));
	}
	lp_prev_use_walk w;
	lp_prev_use_walk_init(&w, PAGES);
	for (size_t t = 0; t < N; t++) {
		uint64_t want = 0;
		for (size_t u = t; u-- > 0 && !want;)
			if (page[u] == page[t])
				want = t - u;
		cr_assert_eq(lp_prev_use_step(&w, page[t], t), want, "reference %zu", t);
	}
	for (uint32_t p = 0; p < PAGES; p++) {
		uint64_t want = LP_NEVER;
		for (size_t u = N; u-- > 0 && want == LP_NEVER;)
			if (page[u] == p)
				want = u;
		cr_assert_eq(w.last[p], want, "page %u", p);
	}
	lp_prev_use_walk_clear(&w);
}
