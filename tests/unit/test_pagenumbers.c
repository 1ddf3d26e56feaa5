/* Canonical to dense page numbers (src/analysis/pagenumbers.c) against a
 * GHashTable: dense numbers (a merge's), sparse ones (a hand-made
 * stream's), and mixes where the array's growth takes over numbers first
 * hashed. */
#include <criterion/criterion.h>
#include <glib.h>

#include "analysis/pagenumbers.h"

/* Number refs in turn, checking each against the model: a number seen
 * before keeps its page, a new one gets the next. */
static void check_run(const uint64_t *refs, size_t n)
{
	lp_page_numbers m;
	lp_page_numbers_init(&m);
	GHashTable *model = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	for (size_t i = 0; i < n; i++) {
		lp_pageno page = lp_page_numbers_find(&m, refs[i]);
		gpointer want;
		if (g_hash_table_lookup_extended(model, &refs[i], NULL, &want)) {
			cr_assert_eq(page, (lp_pageno)GPOINTER_TO_UINT(want), "reference %zu", i);
			continue;
		}
		cr_assert_eq(page, LP_NO_PAGE, "reference %zu: %" G_GUINT64_FORMAT " is new", i,
			     refs[i]);
		lp_pageno size = g_hash_table_size(model);
		cr_assert_eq(lp_page_numbers_add(&m, refs[i]), size);
		cr_assert_eq(m.pages, (uint64_t)size + 1);
		g_hash_table_insert(model, g_memdup2(&refs[i], sizeof refs[i]), GUINT_TO_POINTER(size));
	}
	/* Every number again, at the end. */
	GHashTableIter it;
	gpointer key, value;
	g_hash_table_iter_init(&it, model);
	while (g_hash_table_iter_next(&it, &key, &value))
		cr_assert_eq(lp_page_numbers_find(&m, *(uint64_t *)key),
			     (lp_pageno)GPOINTER_TO_UINT(value));
	g_hash_table_destroy(model);
	lp_page_numbers_clear(&m);
	cr_assert_eq(lp_page_numbers_find(&m, refs[0]), LP_NO_PAGE, "a cleared map is empty");
}

Test(pagenumbers, dense_numbers_in_order_of_first_reference)
{
	enum { N = 300000 };
	uint64_t *refs = g_new(uint64_t, N);
	GRand *rand = g_rand_new_with_seed(1);
	uint64_t next = 0;
	for (size_t i = 0; i < N; i++)
		refs[i] = next && g_rand_int_range(rand, 0, 3) ? (uint64_t)g_rand_int_range(rand, 0, (gint32)next)
							      : next++;
	check_run(refs, N);
	g_rand_free(rand);
	g_free(refs);
}

Test(pagenumbers, sparse_numbers)
{
	enum { N = 100000, DISTINCT = 5000 };
	uint64_t keys[DISTINCT], *refs = g_new(uint64_t, N);
	GRand *rand = g_rand_new_with_seed(2);
	for (size_t k = 0; k < DISTINCT; k++)
		keys[k] = (uint64_t)g_rand_int(rand) << 32 | g_rand_int(rand);
	keys[0] = UINT64_MAX;
	for (size_t i = 0; i < N; i++)
		refs[i] = keys[g_rand_int_range(rand, 0, DISTINCT)];
	check_run(refs, N);
	g_rand_free(rand);
	g_free(refs);
}

/* Numbers first past the array's bound (hashed), then within it once
 * the pages have grown: they move to the array. Recent pages repeat, as
 * a program's do, so the hashed pages' cache is met too. */
Test(pagenumbers, hashed_numbers_taken_over_by_the_array)
{
	enum { N = 400000 };
	uint64_t *refs = g_new(uint64_t, N);
	GRand *rand = g_rand_new_with_seed(3);
	for (size_t i = 0; i < N; i++) {
		uint32_t pick = (uint32_t)g_rand_int_range(rand, 0, 4);
		refs[i] = pick == 0   ? (uint64_t)g_rand_int_range(rand, 0, 200000)
			  : pick == 1 ? (uint64_t)g_rand_int_range(rand, 0, 1 << 30)
			  : i > 0     ? refs[i - 1 - (size_t)g_rand_int_range(rand, 0, (gint32)MIN(i, 64))]
				      : 7;
	}
	check_run(refs, N);
	g_rand_free(rand);
	g_free(refs);
}
