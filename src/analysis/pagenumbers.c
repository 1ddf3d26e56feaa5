/* Canonical page numbers to dense ones (pagenumbers.h). */
#include "analysis/pagenumbers.h"

#include <glib.h>
#include <string.h>

#include "core/numbers.h"

/* The array covers numbers below max(DIRECT_MIN, DIRECT_SLACK * pages):
 * at most 16 bytes a page, or 256 KiB, however sparse the numbers. */
#define DIRECT_MIN 65536
#define DIRECT_SLACK 4

void lp_page_numbers_init(lp_page_numbers *m)
{
	memset(m, 0, sizeof *m);
	for (uint64_t h = 0; h < LP_PAGE_NUMBERS_RECENT; h++)
		m->recent_key[h] = ~h;
}

void lp_page_numbers_clear(lp_page_numbers *m)
{
	g_free(m->direct);
	g_free(m->slots);
	lp_page_numbers_init(m);
}

static lp_page_slot *probe(lp_page_slot *slots, uint64_t mask, uint64_t canonical)
{
	for (uint64_t i = lp_mix64(canonical) & mask;; i = (i + 1) & mask)
		if (slots[i].page == LP_NO_PAGE || slots[i].canonical == canonical)
			return &slots[i];
}

static lp_page_slot *new_slots(uint64_t n)
{
	lp_page_slot *slots = g_new(lp_page_slot, n);
	for (uint64_t i = 0; i < n; i++)
		slots[i].page = LP_NO_PAGE;
	return slots;
}

/* The hash again in n slots, its numbers below direct_cap moved to the
 * array. */
static void rehash(lp_page_numbers *m, uint64_t n)
{
	lp_page_slot *slots = new_slots(n);
	m->hashed = 0;
	for (uint64_t i = 0; m->slots && i <= m->slot_mask; i++) {
		lp_page_slot s = m->slots[i];
		if (s.page == LP_NO_PAGE)
			continue;
		if (s.canonical < m->direct_cap) {
			m->direct[s.canonical] = s.page;
		} else {
			*probe(slots, n - 1, s.canonical) = s;
			m->hashed++;
		}
	}
	g_free(m->slots);
	m->slots = slots;
	m->slot_mask = n - 1;
}

lp_pageno lp_page_numbers_find_hashed(lp_page_numbers *m, uint64_t canonical)
{
	if (!m->hashed)
		return LP_NO_PAGE;
	uint64_t h = canonical & (LP_PAGE_NUMBERS_RECENT - 1);
	if (m->recent_key[h] == canonical)
		return m->recent_page[h];
	lp_pageno page = probe(m->slots, m->slot_mask, canonical)->page;
	if (page != LP_NO_PAGE) {
		m->recent_key[h] = canonical;
		m->recent_page[h] = page;
	}
	return page;
}

lp_pageno lp_page_numbers_add(lp_page_numbers *m, uint64_t canonical)
{
	lp_pageno page = (lp_pageno)m->pages++;
	uint64_t bound = MAX((uint64_t)DIRECT_MIN, DIRECT_SLACK * m->pages);
	if (canonical >= m->direct_cap && canonical < bound) {
		/* Doubling: O(1) a page, and the hashed numbers now covered
		 * moved over. */
		uint64_t cap = MIN(bound, MAX(2 * m->direct_cap, canonical + 1));
		m->direct = g_renew(lp_pageno, m->direct, cap);
		memset(m->direct + m->direct_cap, 0xff, (cap - m->direct_cap) * sizeof *m->direct);
		m->direct_cap = cap;
		if (m->hashed)
			rehash(m, m->slot_mask + 1);
	}
	if (canonical < m->direct_cap) {
		m->direct[canonical] = page;
		return page;
	}
	if (!m->slots || (m->hashed + 1) * 4 > (m->slot_mask + 1) * 3)
		rehash(m, m->slots ? 2 * (m->slot_mask + 1) : 1024);
	*probe(m->slots, m->slot_mask, canonical) = (lp_page_slot){canonical, page};
	m->hashed++;
	uint64_t h = canonical & (LP_PAGE_NUMBERS_RECENT - 1);
	m->recent_key[h] = canonical;
	m->recent_page[h] = page;
	return page;
}
