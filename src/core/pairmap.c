#include "core/pairmap.h"

#include <glib.h>
#include <stdbool.h>

#include "core/numbers.h"

#define INITIAL_CAPACITY 1024

void pairmap_init(pairmap *m)
{
	m->slots = g_new0(pairmap_slot, INITIAL_CAPACITY);
	m->mask = INITIAL_CAPACITY - 1;
	m->count = 0;
}

void pairmap_free(pairmap *m)
{
	g_free(m->slots);
	m->slots = NULL;
}

static uint64_t pair_hash(uint64_t a, uint64_t b)
{
	/* splitmix64's finaliser over a mix of both halves: file identities
	 * and page indexes are both small and clustered, so they need mixing. */
	return lp_mix64(a * 0x9e3779b97f4a7c15u ^ (b + 0x632be59bd9b4e019u));
}

static pairmap_slot *probe(pairmap_slot *slots, uint64_t mask, uint64_t a, uint64_t b)
{
	for (uint64_t i = pair_hash(a, b) & mask;; i = (i + 1) & mask) {
		pairmap_slot *s = &slots[i];
		if (s->value == 0 || (s->a == a && s->b == b))
			return s;
	}
}

static bool grow(pairmap *m)
{
	uint64_t cap = (m->mask + 1) * 2;
	pairmap_slot *slots = g_try_new0(pairmap_slot, cap);
	if (!slots)
		return false;
	for (uint64_t i = 0; i <= m->mask; i++)
		if (m->slots[i].value)
			*probe(slots, cap - 1, m->slots[i].a, m->slots[i].b) = m->slots[i];
	g_free(m->slots);
	m->slots = slots;
	m->mask = cap - 1;
	return true;
}

pairmap_slot *pairmap_find(pairmap *m, uint64_t a, uint64_t b)
{
	/* Grow before the table is 3/4 full so that probes stay short and an
	 * empty slot always exists. */
	if ((m->count + 1) * 4 > (m->mask + 1) * 3 && !grow(m))
		return NULL;
	return probe(m->slots, m->mask, a, b);
}

void pairmap_added(pairmap *m)
{
	m->count++;
}
