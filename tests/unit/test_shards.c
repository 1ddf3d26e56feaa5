/* SHARDS curves: exact when every page is sampled, close to the exact
 * curve on a stream with locality, the same every run, and a fixed size
 * that keeps at most S pages. */
#include <criterion/criterion.h>
#include <math.h>

#include <glib.h>

#include "analysis/mrc.h"
#include "analysis/shards.h"

/* A stream of n references over a loop of hot pages and a cold tail,
 * pages spread over 64 bits. */
static uint64_t *stream(size_t n, uint32_t seed)
{
	GRand *rand = g_rand_new_with_seed(seed);
	uint64_t *pages = g_new(uint64_t, n);
	for (size_t i = 0; i < n; i++) {
		uint64_t p;
		if (g_rand_int_range(rand, 0, 10) < 7)
			p = (uint64_t)g_rand_int_range(rand, 0, 2000);
		else
			p = (uint64_t)g_rand_int_range(rand, 0, 40000);
		pages[i] = p * UINT64_C(0x9e3779b97f4a7c15);
	}
	g_rand_free(rand);
	return pages;
}

static lp_shards *feed(const uint64_t *pages, size_t n, double rate, uint64_t size)
{
	lp_shards *s = lp_shards_new(rate, size);
	for (size_t i = 0; i < n; i++)
		lp_shards_access(s, pages[i]);
	return s;
}

/* misses[f] of the exact curve and the curve of s, f = 1 .. frames. */
static uint64_t *curve(const lp_shards *s, uint64_t *frames)
{
	lp_shards_summary sum;
	lp_shards_summarize(s, &sum);
	uint64_t *m = g_new0(uint64_t, sum.frames + 1);
	lp_shards_curve c;
	lp_shards_curve_start(&c, s);
	for (uint64_t f = 1; f <= sum.frames; f++)
		m[f] = lp_shards_curve_next(&c);
	*frames = sum.frames;
	return m;
}

static uint64_t *exact(const uint64_t *pages, size_t n, uint64_t *distinct)
{
	lp_mrc *m = lp_mrc_new();
	for (size_t i = 0; i < n; i++)
		lp_mrc_access(m, pages[i], NULL);
	*distinct = lp_mrc_distinct_pages(m);
	uint64_t *misses = g_new(uint64_t, *distinct + 1);
	lp_mrc_misses(m, misses);
	lp_mrc_free(m);
	return misses;
}

Test(shards, the_hash_is_splitmix64s_finalizer)
{
	/* splitmix64 seeded with 0 gives first 0xe220a8397b1dcdaf: the
	 * finalizer of the state 0x9e3779b97f4a7c15. */
	cr_assert_eq(lp_shards_hash(UINT64_C(0x9e3779b97f4a7c15)), UINT64_C(0xe220a8397b1dcdaf));
	cr_assert_eq(lp_shards_hash(0), 0);
}

Test(shards, every_page_sampled_is_the_exact_curve)
{
	size_t n = 30000;
	uint64_t *pages = stream(n, 1), distinct, frames;
	uint64_t *want = exact(pages, n, &distinct);
	/* Rate 1, and a size no smaller than the pages: nothing is scaled. */
	lp_shards *by_rate = feed(pages, n, 1.0, 0), *by_size = feed(pages, n, 1.0, distinct);
	uint64_t *got = curve(by_rate, &frames);
	cr_assert_eq(frames, distinct);
	cr_assert_arr_eq(got + 1, want + 1, distinct * sizeof *want);
	g_free(got);
	got = curve(by_size, &frames);
	cr_assert_eq(frames, distinct);
	cr_assert_arr_eq(got + 1, want + 1, distinct * sizeof *want);
	lp_shards_summary sum;
	lp_shards_summarize(by_size, &sum);
	cr_assert_eq(sum.kept, distinct);
	cr_assert_eq(sum.sampled, n);
	cr_assert(sum.rate == 1.0);
	g_free(got);
	lp_shards_free(by_rate);
	lp_shards_free(by_size);
	g_free(want);
	g_free(pages);
}

/* Mean absolute miss-ratio error over the sizes from 1% of the pages. */
static double error(const uint64_t *want, uint64_t distinct, const uint64_t *got,
		    uint64_t frames, size_t n)
{
	double sum = 0;
	uint64_t from = (distinct + 99) / 100, count = 0;
	for (uint64_t f = from; f <= distinct; f++, count++)
		sum += fabs((double)(f <= frames ? got[f] : got[frames]) - (double)want[f]) /
		       (double)n;
	return sum / (double)count;
}

Test(shards, sampled_curves_are_close_and_the_same_every_run)
{
	size_t n = 400000;
	uint64_t *pages = stream(n, 2), distinct, frames, frames2;
	uint64_t *want = exact(pages, n, &distinct);
	lp_shards *size = feed(pages, n, 1.0, 2048), *again = feed(pages, n, 1.0, 2048);
	lp_shards_summary sum;
	lp_shards_summarize(size, &sum);
	cr_assert_eq(sum.kept, 2048);
	cr_assert_lt(sum.rate, 0.1);
	uint64_t *got = curve(size, &frames), *got2 = curve(again, &frames2);
	cr_assert_eq(frames, frames2);
	cr_assert_arr_eq(got, got2, (frames + 1) * sizeof *got);
	double e = error(want, distinct, got, frames, n);
	cr_assert_lt(e, 0.01, "fixed size: mean error %g", e);
	g_free(got);
	g_free(got2);
	lp_shards *rate = feed(pages, n, 0.1, 0);
	got = curve(rate, &frames);
	e = error(want, distinct, got, frames, n);
	cr_assert_lt(e, 0.01, "fixed rate: mean error %g", e);
	/* Misses never grow with the memory. */
	for (uint64_t f = 2; f <= frames; f++)
		cr_assert_leq(got[f], got[f - 1]);
	g_free(got);
	lp_shards_free(rate);
	lp_shards_free(size);
	lp_shards_free(again);
	g_free(want);
	g_free(pages);
}

Test(shards, nothing_sampled_and_nothing_referenced)
{
	/* A rate below 2^-64 samples no page (h(0) = 0 is not below 0):
	 * no page is estimated, so the curve has no sizes. */
	uint64_t pages[] = {0, 2, 0, 2}, frames;
	lp_shards *s = feed(pages, 4, ldexp(1.0, -70), 0);
	uint64_t *got = curve(s, &frames);
	cr_assert_eq(frames, 0);
	lp_shards_summary sum;
	lp_shards_summarize(s, &sum);
	cr_assert_eq(sum.references, 4);
	cr_assert_eq(sum.sampled, 0);
	g_free(got);
	lp_shards_free(s);
	s = feed(pages, 0, 1.0, 16);
	got = curve(s, &frames);
	cr_assert_eq(frames, 0);
	g_free(got);
	lp_shards_free(s);
}

Test(shards, a_page_that_leaves_as_it_comes)
{
	/* One page kept: the first two pages in order of hash, the larger
	 * second, which leaves the sample on arrival with no mark to take
	 * away; later references to it are not sampled. */
	uint64_t lo = 1, hi = 2;
	if (lp_shards_hash(lo) > lp_shards_hash(hi)) {
		lo = 2;
		hi = 1;
	}
	uint64_t pages[] = {lo, hi, lo, hi, lo}, frames;
	lp_shards *s = feed(pages, 5, 1.0, 1);
	lp_shards_summary sum;
	lp_shards_summarize(s, &sum);
	cr_assert_eq(sum.kept, 1);
	cr_assert_eq(sum.sampled, 3);
	cr_assert(sum.rate == ldexp((double)lp_shards_hash(lo) + 1.0, -64));
	uint64_t *got = curve(s, &frames);
	for (uint64_t f = 2; f <= frames; f++)
		cr_assert_leq(got[f], got[f - 1]);
	g_free(got);
	lp_shards_free(s);
}
