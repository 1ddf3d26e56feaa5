/* The forward walk of previous uses (prevuse.h). */
#include "core/prevuse.h"

#include <glib.h>

void lp_prev_use_walk_init(lp_prev_use_walk *w, uint32_t pages)
{
	w->last = g_new(uint64_t, pages ? pages : 1);
	for (uint32_t p = 0; p < pages; p++)
		w->last[p] = LP_NEVER;
}

void lp_prev_use_walk_clear(lp_prev_use_walk *w)
{
	g_free(w->last);
	*w = (lp_prev_use_walk){0};
}
