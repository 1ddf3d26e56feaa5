/* Stack distances in O(log D) a reference (stackdist.h, the structure of
 * every exact LRU curve), pages numbered densely as they come. */
#include "analysis/mrc.h"

#include <glib.h>
#include <inttypes.h>
#include <string.h>

#include "analysis/pagenumbers.h"
#include "analysis/stackdist.h"

struct lp_mrc {
	lp_page_numbers ids; /* page -> dense id */
	lp_stackdist distances;
	uint64_t *hist;      /* hist[d]: references at stack distance d (1-based) */
	uint64_t hist_cap;   /* length of hist, less one */
	uint64_t distinct;
	uint64_t refs;
	uint64_t max_pages; /* the most distinct pages counted */
	bool overflowed;    /* a page past max_pages came */
};

lp_mrc *lp_mrc_new(void)
{
	return lp_mrc_new_within(LP_STACKDIST_MAX_PAGES);
}

lp_mrc *lp_mrc_new_within(uint64_t max_pages)
{
	lp_mrc *m = g_new0(lp_mrc, 1);
	m->max_pages = MIN(max_pages, LP_STACKDIST_MAX_PAGES);
	lp_page_numbers_init(&m->ids);
	lp_stackdist_init(&m->distances, 512);
	m->hist_cap = 512;
	m->hist = g_new0(uint64_t, m->hist_cap + 1);
	return m;
}

void lp_mrc_free(lp_mrc *m)
{
	if (!m)
		return;
	lp_page_numbers_clear(&m->ids);
	lp_stackdist_clear(&m->distances);
	g_free(m->hist);
	g_free(m);
}

uint64_t lp_mrc_access(lp_mrc *m, uint64_t page, uint64_t *page_id)
{
	m->refs++;
	lp_pageno id = lp_page_numbers_find(&m->ids, page);
	if (id == LP_NO_PAGE) {
		if (m->distinct == m->max_pages) {
			/* Out of line of the curve: not numbered, not counted. */
			m->overflowed = true;
			if (page_id)
				*page_id = 0;
			return 0;
		}
		id = lp_page_numbers_add(&m->ids, page);
		m->distinct++;
		lp_stackdist_grow(&m->distances, (lp_pageno)m->distinct);
		if (m->distinct > m->hist_cap) {
			m->hist = g_renew(uint64_t, m->hist, 2 * m->hist_cap + 1);
			memset(m->hist + m->hist_cap + 1, 0, m->hist_cap * sizeof *m->hist);
			m->hist_cap *= 2;
		}
	}
	uint64_t distance = lp_stackdist_access(&m->distances, id);
	if (distance)
		m->hist[distance]++;
	if (page_id)
		*page_id = id;
	return distance;
}

int lp_mrc_check(const lp_mrc *m, const char *input, lp_error *err)
{
	if (!m->overflowed)
		return 0;
	return lp_fail(err, LP_EINPUT,
		       "%s: more distinct pages than the exact LRU curve holds (%" PRIu64 ")", input,
		       m->max_pages);
}

uint64_t lp_mrc_references(const lp_mrc *m) { return m->refs; }
uint64_t lp_mrc_distinct_pages(const lp_mrc *m) { return m->distinct; }

void lp_mrc_misses(const lp_mrc *m, uint64_t *misses)
{
	/* With f frames, the misses are the first references (distinct) and
	 * the references at a stack distance greater than f. */
	uint64_t beyond = 0;
	misses[m->distinct] = m->distinct;
	for (uint64_t f = m->distinct; f > 0; f--) {
		beyond += m->hist[f];
		misses[f - 1] = m->distinct + beyond;
	}
}
