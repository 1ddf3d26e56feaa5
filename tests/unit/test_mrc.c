/* LRU miss-ratio curves by stack distances. */
#include <criterion/criterion.h>

#include <glib.h>

#include "analysis/mrc.h"

static lp_mrc *feed(const uint64_t *pages, size_t n)
{
	lp_mrc *m = lp_mrc_new();
	for (size_t i = 0; i < n; i++)
		lp_mrc_access(m, pages[i], NULL);
	return m;
}

/* a b c a b d a: the second a and b are 3 distinct pages back, and so is
 * the last a (b, d, a). 2 frames: every reference misses; 3 frames: only
 * the four first references do. */
Test(mrc, hand_checked_stream)
{
	const uint64_t a = 0xa, b = 0xffffffffffffffffu, c = 0, d = 7;
	uint64_t pages[] = {a, b, c, a, b, d, a};
	lp_mrc *m = feed(pages, 7);
	cr_assert_eq(lp_mrc_references(m), 7);
	cr_assert_eq(lp_mrc_distinct_pages(m), 4);
	uint64_t misses[5];
	lp_mrc_misses(m, misses);
	uint64_t want[5] = {7, 7, 7, 4, 4};
	cr_assert_arr_eq(misses, want, sizeof want);
	lp_mrc_free(m);
}

/* The same stream, reference by reference: a b c a b d a are at stack
 * distances -, -, -, 3, 3, -, 3 (0 marks a first reference), and pages are
 * numbered in order of first reference. */
Test(mrc, access_returns_distance_and_id)
{
	uint64_t pages[] = {0xa, 0xb, 0xc, 0xa, 0xb, 0xd, 0xa};
	uint64_t want_distance[] = {0, 0, 0, 3, 3, 0, 3};
	uint64_t want_id[] = {0, 1, 2, 0, 1, 3, 0};
	lp_mrc *m = lp_mrc_new();
	for (size_t i = 0; i < 7; i++) {
		uint64_t id = 99;
		cr_assert_eq(lp_mrc_access(m, pages[i], &id), want_distance[i], "reference %zu", i);
		cr_assert_eq(id, want_id[i], "reference %zu", i);
	}
	lp_mrc_free(m);
}

/* Repeats of one page hit from one frame on. */
Test(mrc, repeats_hit_with_one_frame)
{
	uint64_t pages[] = {5, 5, 5, 6, 6, 5};
	lp_mrc *m = feed(pages, 6);
	uint64_t misses[3];
	lp_mrc_misses(m, misses);
	/* 1 frame: 5 5 5 6 6 5 -> misses at 5, 6, 5; 2 frames: 5 and 6 only. */
	uint64_t want[3] = {6, 3, 2};
	cr_assert_arr_eq(misses, want, sizeof want);
	lp_mrc_free(m);
}

Test(mrc, empty_stream)
{
	lp_mrc *m = lp_mrc_new();
	uint64_t misses[1] = {99};
	lp_mrc_misses(m, misses);
	cr_assert_eq(misses[0], 0);
	cr_assert_eq(lp_mrc_distinct_pages(m), 0);
	lp_mrc_free(m);
}

/* A cyclic sweep of 1500 pages, 20 times over (many compactions and a
 * doubling of positions): LRU misses every reference below 1500 frames and
 * only the first 1500 references from 1500 frames on. */
Test(mrc, cyclic_sweep_across_compactions)
{
	enum { PAGES = 1500, ROUNDS = 20 };
	lp_mrc *m = lp_mrc_new();
	for (int r = 0; r < ROUNDS; r++)
		for (uint64_t p = 0; p < PAGES; p++)
			lp_mrc_access(m, p * 4096, NULL);
	cr_assert_eq(lp_mrc_distinct_pages(m), PAGES);
	uint64_t *misses = g_new(uint64_t, PAGES + 1);
	lp_mrc_misses(m, misses);
	for (int f = 0; f < PAGES; f++)
		cr_assert_eq(misses[f], (uint64_t)PAGES * ROUNDS, "frames %d", f);
	cr_assert_eq(misses[PAGES], PAGES);
	g_free(misses);
	lp_mrc_free(m);
}

/* A working set that moves: pages 5w .. 5w+9 swept 3 times, for window
 * w, then the window slides by 5. In a window's first sweep, each of the 5
 * pages it shares with the previous window was last seen 5 distinct pages
 * back (the rest of that sweep, then the start of this one); the other 5
 * are first references; the two later sweeps are at distance 10. */
Test(mrc, sliding_window_across_compactions)
{
	enum { WINDOWS = 400, WIDTH = 10, SLIDE = 5, SWEEPS = 3 };
	lp_mrc *m = lp_mrc_new();
	for (uint64_t w = 0; w < WINDOWS; w++)
		for (int s = 0; s < SWEEPS; s++)
			for (uint64_t p = w * SLIDE; p < w * SLIDE + WIDTH; p++)
				lp_mrc_access(m, p, NULL);
	uint64_t distinct = (WINDOWS - 1) * SLIDE + WIDTH;
	cr_assert_eq(lp_mrc_distinct_pages(m), distinct);
	uint64_t *misses = g_new(uint64_t, distinct + 1);
	lp_mrc_misses(m, misses);
	uint64_t refs = (uint64_t)WINDOWS * SWEEPS * WIDTH;
	for (int f = 0; f < SLIDE; f++)
		cr_assert_eq(misses[f], refs, "frames %d", f);
	for (int f = SLIDE; f < WIDTH; f++)
		cr_assert_eq(misses[f], refs - (WINDOWS - 1) * SLIDE, "frames %d", f);
	for (uint64_t f = WIDTH; f <= distinct; f++)
		cr_assert_eq(misses[f], distinct, "frames %" G_GUINT64_FORMAT, f);
	g_free(misses);
	lp_mrc_free(m);
}

/* A curve holds at most so many pages (2^30 in laplace stat and report):
 * a page past them is not counted, and the curve says it is not whole,
 * naming the input, rather than aborting or drawing a wrong curve. */
Test(mrc, pages_past_the_most_it_holds_are_bad_input)
{
	lp_mrc *m = lp_mrc_new_within(3);
	lp_error err = {0};
	for (uint64_t p = 1; p <= 3; p++)
		lp_mrc_access(m, p, NULL);
	cr_assert_eq(lp_mrc_access(m, 1, NULL), 3);
	cr_assert_eq(lp_mrc_check(m, "s.bin", &err), 0);
	uint64_t id = 7;
	cr_assert_eq(lp_mrc_access(m, 4, &id), 0);
	cr_assert_eq(id, 0);
	cr_assert_eq(lp_mrc_distinct_pages(m), 3);
	cr_assert_eq(lp_mrc_check(m, "s.bin", &err), LP_EINPUT);
	cr_assert_str_eq(err.msg, "s.bin: more distinct pages than the exact LRU curve holds (3)");
	lp_mrc_free(m);
}
