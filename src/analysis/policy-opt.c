/* opt: Belady's MIN at one size (policies.md §2), next uses given: the
 * resident pages in a max-heap on their eviction key (opt_key), so that a
 * reference costs O(log K). */
#include <glib.h>

#include "analysis/policy.h"
#include "analysis/optdist.h"
#include "analysis/sim.h"

typedef struct opt {
	uint64_t frames;
	const uint64_t *next_use;
	lp_pageno *heap;   /* resident pages, the largest key first */
	uint64_t *key;     /* by page */
	uint32_t *slot;    /* page -> its heap index, or UINT32_MAX */
	uint64_t count;
} opt;

static void *opt_create(const lp_policy_params *params)
{
	opt *o = g_new0(opt, 1);
	size_t pages = params->pages ? params->pages : 1;
	o->frames = params->frames;
	o->next_use = params->next_use;
	o->heap = g_new(lp_pageno, MIN(params->frames, (uint64_t)pages));
	o->key = g_new(uint64_t, pages);
	o->slot = g_new(uint32_t, pages);
	for (size_t p = 0; p < pages; p++)
		o->slot[p] = UINT32_MAX;
	return o;
}

static void opt_destroy(void *state)
{
	opt *o = state;
	g_free(o->heap);
	g_free(o->key);
	g_free(o->slot);
	g_free(o);
}

static void put(opt *o, uint64_t i, lp_pageno p)
{
	o->heap[i] = p;
	o->slot[p] = (uint32_t)i;
}

static void sift_up(opt *o, uint64_t i)
{
	lp_pageno p = o->heap[i];
	while (i > 0) {
		uint64_t up = (i - 1) / 2;
		if (o->key[o->heap[up]] >= o->key[p])
			break;
		put(o, i, o->heap[up]);
		i = up;
	}
	put(o, i, p);
}

static void sift_down(opt *o, uint64_t i)
{
	lp_pageno p = o->heap[i];
	for (;;) {
		uint64_t child = 2 * i + 1;
		if (child >= o->count)
			break;
		if (child + 1 < o->count && o->key[o->heap[child + 1]] > o->key[o->heap[child]])
			child++;
		if (o->key[o->heap[child]] <= o->key[p])
			break;
		put(o, i, o->heap[child]);
		i = child;
	}
	put(o, i, p);
}

static bool opt_access(void *state, lp_pageno page, uint64_t t, lp_pageno *victim)
{
	opt *o = state;
	uint64_t key = lp_opt_key(o->next_use[t], t);
	if (o->slot[page] != UINT32_MAX) {
		/* The key only grows (it was t, the next use is later): the
		 * page rises towards the top, the next victim. */
		o->key[page] = key;
		sift_up(o, o->slot[page]);
		return true;
	}
	*victim = LP_NO_PAGE;
	if (o->count == o->frames) {
		*victim = o->heap[0];
		o->slot[*victim] = UINT32_MAX;
		if (--o->count) {
			put(o, 0, o->heap[o->count]);
			sift_down(o, 0);
		}
	}
	o->key[page] = key;
	put(o, o->count++, page);
	sift_up(o, o->count - 1);
	return false;
}

static const lp_policy_ops opt_ops = {
	.create = opt_create,
	.destroy = opt_destroy,
	.access = opt_access,
};

static void opt_curve(const lp_policy_curve *c)
{
	uint64_t *hist = lp_sim_opt_distances(c->t, c->tick);
	lp_sim_stack_faults(hist, c->t->pages, c->sizes, c->nsizes, c->faults);
	g_free(hist);
}

const lp_policy_info lp_policy_opt = {
	.name = "opt",
	.space = LP_SPACE_FIXED,
	.rule = "evict the page whose next reference is furthest away (Belady's MIN)",
	.ops = &opt_ops,
	.curve = opt_curve,
	.curve_pages = LP_OPTDIST_MAX_PAGES,
	.needs_next_use = true,
	.colour = "#d85a74",
	.dash = "10 4",
};
