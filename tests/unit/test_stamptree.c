/* analysis/stamptree.h: counts, selections and compaction against a
 * plain array of marks. */
#include <criterion/criterion.h>

#include <glib.h>

#include "analysis/stamptree.h"

/* Marks set and cleared at random over every stamp of a small set, the
 * last word's included: every count and every selection as the array's. */
Test(stamptree, counts_and_selects_as_an_array)
{
	enum { STAMPS = 256 };
	lp_stampset m;
	lp_stampset_init(&m, STAMPS);
	bool mark[STAMPS] = {0};
	GRand *rng = g_rand_new_with_seed(7);
	for (int round = 0; round < 2000; round++) {
		uint64_t s = (uint64_t)g_rand_int_range(rng, 0, STAMPS);
		if (mark[s])
			lp_stampset_remove(&m, s);
		else
			lp_stampset_add(&m, s);
		mark[s] = !mark[s];
		uint64_t below = 0;
		for (uint64_t t = 0; t < STAMPS; t++) {
			cr_assert_eq(lp_stampset_below(&m, t), below);
			cr_assert_eq(lp_stampset_has(&m, t), mark[t]);
			if (mark[t] && ++below)
				cr_assert_eq(lp_stampset_select(&m, below), t);
		}
		cr_assert_eq(lp_stampset_count(&m), below);
	}
	g_rand_free(rng);
	lp_stampset_clear(&m);
}

typedef struct owners {
	uint64_t stamp[64]; /* owner -> stamp */
	bool unmarked_kept[64];
} owners;

static bool relabel(void *ctx, uint32_t owner, uint64_t old, uint64_t new_stamp)
{
	owners *o = ctx;
	if (o->stamp[owner] != old)
		return false;
	o->stamp[owner] = new_stamp;
	return true;
}

/* Compaction keeps the marked stamps in order with their owners, and
 * doubles the stamps while more than half are taken. */
Test(stamptree, compaction_keeps_order_and_owners)
{
	for (int keep_unmarked = 0; keep_unmarked < 2; keep_unmarked++) {
		lp_stamptree t;
		lp_stamptree_init(&t, 64, keep_unmarked);
		owners o;
		for (uint32_t k = 0; k < 64; k++)
			o.stamp[k] = UINT64_MAX;
		/* 64 stamps: owners 0 .. 39 in turn, each marked at its last
		 * stamp only, the stamps of 40 .. 63 once each, unmarked. */
		for (uint32_t k = 0; k < 64; k++) {
			uint32_t owner = k < 48 ? k % 40 : k - 8;
			if (owner < 40 && o.stamp[owner] != UINT64_MAX)
				lp_stampset_remove(&t.marks, o.stamp[owner]);
			o.stamp[owner] = lp_stamptree_take(&t, owner);
			if (owner < 40)
				lp_stampset_add(&t.marks, o.stamp[owner]);
		}
		lp_stamptree_compact(&t, 64, relabel, &o);
		/* 40 marks, or with the unmarked the 56 stamps still their
		 * owners' (0 .. 7's first are not): past half of 64. */
		cr_assert_eq(t.now, keep_unmarked ? 56 : 40);
		cr_assert_eq(t.cap, 128);
		cr_assert_eq(lp_stampset_count(&t.marks), 40);
		for (uint64_t s = 0; s < t.now; s++)
			cr_assert_eq(o.stamp[t.owner[s]], s);
		/* Owners 8 .. 39 came before 0 .. 7's second stamps. */
		cr_assert_eq(t.owner[0], 8);
		cr_assert_eq(lp_stampset_select(&t.marks, 33), o.stamp[0]);
		lp_stamptree_clear(&t);
	}
}
