/* The merge's map of ids (src/core/idmap.c) against a plain array: every
 * put, get and remove in a long random run, over few enough keys that
 * probe runs collide, wrap around the table's end and are pulled back by
 * removals. */
#include <criterion/criterion.h>
#include <glib.h>

#include "core/idmap.h"

#define KEYS 760u /* at most 3/4 of 1024 slots, so the table stays at 1024 */

/* One random run of `steps` puts and removals, seeded by seed. */
static void random_run(guint32 seed, int steps)
{
	idmap map = {0};
	static int values[KEYS]; /* the values stored: their addresses */
	void *model[KEYS] = {0};
	GRand *rand = g_rand_new_with_seed(seed);
	/* Random keys: their homes collide as real ids' may (consecutive ones
	 * would spread evenly and hardly ever meet). */
	uint64_t keys[KEYS];
	for (uint32_t k = 0; k < KEYS; k++)
		keys[k] = (uint64_t)g_rand_int(rand) << 32 | g_rand_int(rand);
	size_t count = 0;
	for (int step = 0; step < steps; step++) {
		uint32_t k = g_rand_int_range(rand, 0, KEYS);
		if (g_rand_int_range(rand, 0, 10)) {
			cr_assert(idmap_put(&map, keys[k], &values[k]));
			count += !model[k];
			model[k] = &values[k];
		} else {
			cr_assert_eq(idmap_remove(&map, keys[k]), model[k], "seed %u step %d", seed, step);
			count -= !!model[k];
			model[k] = NULL;
		}
		if (step % 100 == 0)
			for (uint32_t j = 0; j < KEYS; j++)
				cr_assert_eq(idmap_get(&map, keys[j]), model[j], "seed %u step %d key %u", seed,
					     step, j);
	}
	cr_assert_eq(map.count, count);
	size_t pos = 0, walked = 0;
	for (void *v; (v = idmap_next(&map, &pos));) {
		cr_assert_eq(model[(int *)v - values], v);
		walked++;
	}
	cr_assert_eq(walked, count);
	g_rand_free(rand);
	idmap_free(&map);
	cr_assert_null(idmap_get(&map, keys[0]), "a freed map is empty");
	cr_assert_null(idmap_remove(&map, keys[0]));
}

/* Ten runs, near the growth threshold (3/4 of 1024 slots) most of the
 * time, with different keys: some runs wrap around the table's end. */
Test(idmap, agrees_with_an_array_through_puts_and_removals)
{
	for (guint32 seed = 1; seed <= 10; seed++)
		random_run(seed, 40000);
}
