/* The merge's map of ids (src/core/idmap.c) against a plain array: every
 * put, get and remove in a long random run, over few enough keys that
 * probe runs collide, wrap around the table's end and are pulled back by
 * removals. */
#include <criterion/criterion.h>
#include <glib.h>

#include "../../src/core/idmap.h"

#define KEYS 600u

Test(idmap, agrees_with_an_array_through_puts_and_removals)
{
	idmap map = {0};
	static int values[KEYS]; /* the values stored: their addresses */
	void *model[KEYS] = {0};
	GRand *rand = g_rand_new_with_seed(24);
	size_t count = 0;
	for (int step = 0; step < 200000; step++) {
		/* Keys spread over the whole 64-bit range, so that their homes
		 * fall anywhere in the table. */
		uint32_t k = g_rand_int_range(rand, 0, KEYS);
		uint64_t key = (uint64_t)k * 0x100000001b3u;
		if (g_rand_int_range(rand, 0, 3)) {
			cr_assert(idmap_put(&map, key, &values[k]));
			count += !model[k];
			model[k] = &values[k];
		} else {
			cr_assert_eq(idmap_remove(&map, key), model[k], "step %d", step);
			count -= !!model[k];
			model[k] = NULL;
		}
		if (step % 1000 == 0)
			for (uint32_t j = 0; j < KEYS; j++)
				cr_assert_eq(idmap_get(&map, (uint64_t)j * 0x100000001b3u), model[j],
					     "step %d key %u", step, j);
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
	cr_assert_null(idmap_get(&map, 0), "a freed map is empty");
	cr_assert_null(idmap_remove(&map, 0));
}
