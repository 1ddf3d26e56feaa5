/* SAD and OLR: hand-derived reductions, and random streams whose reductions
 * must give the same LRU behaviour sequence (dirt included) at every
 * memory of at least K pages, and, for SAD, the same OPT faults. */
#include <criterion/criterion.h>
#include <string.h>

#include <glib.h>

#include "analysis/lru.h"
#include "analysis/reduce.h"

/* "type page" as letters: page 'a' is 0; a string of pages, all reads
 * unless types is given. */
static lp_refs from_letters(const char *letters, const char *types)
{
	lp_refs r = {0};
	for (size_t i = 0; letters[i]; i++)
		lp_refs_push(&r, (lp_pageno)(letters[i] - 'a'), types ? types[i] : 'r');
	return r;
}

static char *letters_of(const lp_refs *r)
{
	char *s = g_malloc(r->n + 1);
	for (size_t i = 0; i < r->n; i++)
		s[i] = (char)('a' + r->pages[i]);
	s[r->n] = 0;
	return s;
}

static char *types_of(const lp_refs *r)
{
	char *s = g_malloc0(r->n + 1);
	if (r->n)
		memcpy(s, r->types, r->n);
	return s;
}

typedef void reduce_fn(const lp_pageno *, const char *, size_t, lp_pageno, uint64_t, lp_refs *);

static lp_refs reduce(reduce_fn *fn, const lp_refs *in, lp_pageno npages, uint64_t frames)
{
	lp_refs out = {0};
	fn(in->pages, in->types, in->n, npages, frames, &out);
	return out;
}

static void check_reduction(reduce_fn *fn, const char *letters, const char *types, uint64_t k,
			    const char *want, const char *want_types)
{
	lp_refs in = from_letters(letters, types);
	lp_refs out = reduce(fn, &in, 26, k);
	char *got = letters_of(&out), *got_types = types_of(&out);
	cr_assert_str_eq(got, want, "%s at K = %llu", letters, (unsigned long long)k);
	if (want_types)
		cr_assert_str_eq(got_types, want_types, "%s at K = %llu", letters,
				 (unsigned long long)k);
	g_free(got);
	g_free(got_types);
	lp_refs_clear(&in);
	lp_refs_clear(&out);
}

Test(reduce, olr_smaragdakis_example)
{
	/* abcbacdabd, K = 3: b is evicted at d (event 3) and c at the second
	 * b (event 4); a, fetched first, must be touched after c's fetch so
	 * that c, not a, is the least recent at event 4: a b c a d b. */
	check_reduction(lp_reduce_olr, "abcbacdabd", NULL, 3, "abcadb", "rrrrrr");
}

Test(reduce, sad_keeps_what_cannot_be_dropped)
{
	/* abcbacdabd, K = 3: a's middle reference spans a..a of a b c b a c d
	 * a (four pages), b's b c b a c d a b: nothing goes. */
	check_reduction(lp_reduce_sad, "abcbacdabd", NULL, 3, "abcbacdabd", NULL);
	/* K = 4: the middle references of a (4) and b (3) go. */
	check_reduction(lp_reduce_sad, "abcbacdabd", NULL, 4, "abccdabd", NULL);
}

Test(reduce, sad_moves_a_dropped_write)
{
	/* K = 2, ababa: a's middle reference (2) lies in a window 0..4 of two
	 * pages: dropped, and its write goes to reference 0. */
	check_reduction(lp_reduce_sad, "ababa", "rrwrr", 2, "abba", "wrrr");
	/* A kernel read made a kernel write, a user read a user write. */
	check_reduction(lp_reduce_sad, "aaa", "RwR", 1, "aa", "WR");
	check_reduction(lp_reduce_sad, "aaa", "iWr", 1, "aa", "wr");
}

Test(reduce, olr_types_carry_the_stay_dirt)
{
	/* K = 1: every reference is its own stay but for runs of a page. The
	 * stay of a holding a write is written w. */
	check_reduction(lp_reduce_olr, "aabaa", "rwrrr", 1, "aba", "wrr");
	check_reduction(lp_reduce_olr, "aa", "Rw", 1, "a", "W");
}

Test(reduce, empty_and_small)
{
	check_reduction(lp_reduce_olr, "", NULL, 1, "", NULL);
	check_reduction(lp_reduce_sad, "", NULL, 1, "", NULL);
	/* K larger than the pages: OLR keeps one fetch a page. */
	check_reduction(lp_reduce_olr, "abcabcabc", NULL, 8, "abc", NULL);
	check_reduction(lp_reduce_sad, "abcabcabc", NULL, 8, "abcabc", NULL);
}

/* The behaviour sequence of an m-page LRU memory as text. */
static char *behaviour(const lp_refs *r, uint64_t m)
{
	lp_lru *l = lp_lru_new(m);
	GString *s = g_string_new(NULL);
	for (size_t i = 0; i < r->n; i++) {
		lp_lru_fault f;
		if (lp_lru_ref(l, r->pages[i], lp_ref_is_write(r->types[i]), &f)) {
			char line[LP_BEHAVIOUR_LINE_MAX];
			g_string_append_len(s, line,
					    (gssize)lp_behaviour_format(line, f.tag, f.page, f.dirt,
									f.evicted));
		}
	}
	lp_lru_free(l);
	return g_string_free(s, FALSE);
}

/* Belady's MIN faults with m frames, naively (policies.md §2): the victim
 * is the resident page used furthest ahead, among pages never used again
 * the least recently used. */
static uint64_t opt_faults(const lp_refs *r, lp_pageno npages, uint64_t m)
{
	bool *in = g_new0(bool, npages);
	size_t *last = g_new0(size_t, npages);
	uint64_t faults = 0, resident = 0;
	for (size_t t = 0; t < r->n; t++) {
		lp_pageno p = r->pages[t];
		if (!in[p]) {
			faults++;
			if (resident == m) {
				lp_pageno victim = 0;
				size_t best_next = 0, best_last = SIZE_MAX;
				for (lp_pageno q = 0; q < npages; q++) {
					if (!in[q])
						continue;
					size_t next = t + 1;
					while (next < r->n && r->pages[next] != q)
						next++;
					if (next > best_next || (next == best_next && next == r->n &&
								 last[q] < best_last)) {
						victim = q;
						best_next = next;
						best_last = last[q];
					}
				}
				in[victim] = false;
			} else {
				resident++;
			}
			in[p] = true;
		}
		last[p] = t;
	}
	g_free(in);
	g_free(last);
	return faults;
}

Test(reduce, random_streams_keep_their_behaviour)
{
	static const char types[] = "rwiRWI";
	GRand *rand = g_rand_new_with_seed(35);
	for (int round = 0; round < 300; round++) {
		lp_pageno npages = (lp_pageno)g_rand_int_range(rand, 1, 12);
		size_t n = (size_t)g_rand_int_range(rand, 0, 120);
		lp_refs in = {0};
		/* Some locality: half the references repeat one of the last few. */
		for (size_t i = 0; i < n; i++) {
			lp_pageno p = (lp_pageno)g_rand_int_range(rand, 0, (gint32)npages);
			if (i > 3 && g_rand_boolean(rand))
				p = in.pages[i - (size_t)g_rand_int_range(rand, 1, 4)];
			lp_refs_push(&in, p, types[g_rand_int_range(rand, 0, 6)]);
		}
		uint64_t k = (uint64_t)g_rand_int_range(rand, 1, (gint32)npages + 2);
		lp_refs sad = reduce(lp_reduce_sad, &in, npages, k);
		lp_refs olr = reduce(lp_reduce_olr, &in, npages, k);
		cr_assert_leq(olr.n, sad.n, "round %d: OLR %zu, SAD %zu", round, olr.n, sad.n);
		cr_assert_leq(sad.n, in.n);
		for (uint64_t m = k; m <= npages + 1; m++) {
			char *want = behaviour(&in, m);
			char *got_sad = behaviour(&sad, m), *got_olr = behaviour(&olr, m);
			cr_assert_str_eq(got_sad, want, "round %d: SAD at K = %llu, m = %llu", round,
					 (unsigned long long)k, (unsigned long long)m);
			cr_assert_str_eq(got_olr, want, "round %d: OLR at K = %llu, m = %llu", round,
					 (unsigned long long)k, (unsigned long long)m);
			cr_assert_eq(opt_faults(&sad, npages, m), opt_faults(&in, npages, m),
				     "round %d: SAD's OPT faults at m = %llu", round,
				     (unsigned long long)m);
			g_free(want);
			g_free(got_sad);
			g_free(got_olr);
		}
		/* SAD is a subsequence of the input. */
		size_t j = 0;
		for (size_t i = 0; i < in.n && j < sad.n; i++)
			if (in.pages[i] == sad.pages[j])
				j++;
		cr_assert_eq(j, sad.n, "round %d: SAD is not a subsequence", round);
		lp_refs_clear(&in);
		lp_refs_clear(&sad);
		lp_refs_clear(&olr);
	}
	g_rand_free(rand);
}

Test(reduce, long_streams_keep_their_behaviour)
{
	/* Long enough for SAD's positions to be compacted many times. */
	GRand *rand = g_rand_new_with_seed(350);
	lp_refs in = {0};
	for (size_t i = 0; i < 60000; i++) {
		/* A hot loop of 40 pages, now and then a page of 400. */
		lp_pageno p = g_rand_int_range(rand, 0, 8)
				      ? (lp_pageno)(i / 3 % 40)
				      : (lp_pageno)g_rand_int_range(rand, 0, 400);
		lp_refs_push(&in, p, g_rand_int_range(rand, 0, 5) ? 'r' : 'w');
	}
	static const uint64_t ks[] = {4, 16, 41, 64};
	for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++) {
		lp_refs sad = reduce(lp_reduce_sad, &in, 400, ks[k]);
		lp_refs olr = reduce(lp_reduce_olr, &in, 400, ks[k]);
		cr_assert_lt(sad.n, in.n);
		cr_assert_leq(olr.n, sad.n);
		const uint64_t ms[] = {ks[k], ks[k] + 1, 2 * ks[k], 300, 400};
		for (size_t i = 0; i < 5; i++) {
			char *want = behaviour(&in, ms[i]);
			char *got_sad = behaviour(&sad, ms[i]), *got_olr = behaviour(&olr, ms[i]);
			cr_assert(!strcmp(got_sad, want), "SAD at K = %llu, m = %llu",
				  (unsigned long long)ks[k], (unsigned long long)ms[i]);
			cr_assert(!strcmp(got_olr, want), "OLR at K = %llu, m = %llu",
				  (unsigned long long)ks[k], (unsigned long long)ms[i]);
			g_free(want);
			g_free(got_sad);
			g_free(got_olr);
		}
		lp_refs_clear(&sad);
		lp_refs_clear(&olr);
	}
	lp_refs_clear(&in);
	g_rand_free(rand);
}

/* Whether two streams have the same behaviour at every m from k to pages
 * (beyond pages nothing is ever evicted: the same as at pages). */
static bool same_behaviour(const lp_refs *a, const lp_refs *b, uint64_t k, lp_pageno pages)
{
	bool same = true;
	for (uint64_t m = k; m <= pages && same; m++) {
		char *x = behaviour(a, m), *y = behaviour(b, m);
		same = !strcmp(x, y);
		g_free(x);
		g_free(y);
	}
	return same;
}

Test(reduce, olr_is_the_shortest)
{
	/* Every stream one reference shorter than OLR's, over the same pages,
	 * has another behaviour: then so has every shorter one, as repeating
	 * a stream's last reference is a hit at every size and changes no
	 * order. Small streams of reads, searched exhaustively. */
	GRand *rand = g_rand_new_with_seed(3535);
	for (int round = 0; round < 60; round++) {
		lp_pageno npages = (lp_pageno)g_rand_int_range(rand, 2, 4);
		size_t n = (size_t)g_rand_int_range(rand, 1, 11);
		lp_refs in = {0};
		for (size_t i = 0; i < n; i++)
			lp_refs_push(&in, (lp_pageno)g_rand_int_range(rand, 0, (gint32)npages), 'r');
		uint64_t k = (uint64_t)g_rand_int_range(rand, 1, (gint32)npages + 1);
		lp_refs olr = reduce(lp_reduce_olr, &in, npages, k);
		cr_assert(same_behaviour(&in, &olr, k, npages));
		size_t len = olr.n - 1, count = 1;
		for (size_t i = 0; i < len; i++)
			count *= npages;
		lp_refs shorter = {0};
		for (size_t i = 0; i < len; i++)
			lp_refs_push(&shorter, 0, 'r');
		for (size_t c = 0; c < count; c++) {
			for (size_t i = 0, x = c; i < len; i++, x /= npages)
				shorter.pages[i] = (lp_pageno)(x % npages);
			cr_assert(!same_behaviour(&in, &shorter, k, npages),
				  "round %d: a stream of %zu references behaves as OLR's %zu", round,
				  len, olr.n);
		}
		lp_refs_clear(&shorter);
		lp_refs_clear(&olr);
		lp_refs_clear(&in);
	}
	g_rand_free(rand);
}
