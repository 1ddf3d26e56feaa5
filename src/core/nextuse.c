/* The backward walk of next uses (nextuse.h). */
#include "core/nextuse.h"

#include <glib.h>

void lp_next_use_walk_init(lp_next_use_walk *w, uint32_t pages, uint64_t n)
{
	w->after = g_new(uint64_t, pages ? pages : 1);
	for (uint32_t p = 0; p < pages; p++)
		w->after[p] = LP_NEVER;
	w->from = n;
}

void lp_next_use_walk_back(lp_next_use_walk *w, const uint32_t *page, size_t len,
			   uint64_t *next)
{
	uint64_t *after = w->after, t = w->from;
	for (size_t k = len; k-- > 0;) {
		uint32_t p = page[k];
		next[k] = after[p];
		after[p] = --t;
	}
	w->from = t;
}

void lp_next_use_walk_clear(lp_next_use_walk *w)
{
	g_free(w->after);
	*w = (lp_next_use_walk){0};
}
