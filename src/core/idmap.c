#include "core/idmap.h"

#include <glib.h>

#define INITIAL_CAPACITY 16

/* Fibonacci hashing: ids are often consecutive, and the multiply spreads
 * them over the whole table. */
static size_t home(const idmap *m, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15u) >> 32) & m->mask;
}

/* The slot holding key, or the empty one where it belongs. */
static idmap_slot *probe(const idmap *m, uint64_t key)
{
	for (size_t i = home(m, key);; i = (i + 1) & m->mask) {
		idmap_slot *s = &m->slots[i];
		if (!s->value || s->key == key)
			return s;
	}
}

void idmap_free(idmap *m)
{
	g_free(m->slots);
	*m = (idmap){0};
}

void *idmap_get(const idmap *m, uint64_t key)
{
	return m->slots ? probe(m, key)->value : NULL;
}

static bool grow(idmap *m)
{
	size_t cap = m->slots ? (m->mask + 1) * 2 : INITIAL_CAPACITY;
	idmap grown = {.slots = g_try_new0(idmap_slot, cap), .mask = cap - 1, .count = m->count};
	if (!grown.slots)
		return false;
	for (size_t i = 0; m->slots && i <= m->mask; i++)
		if (m->slots[i].value)
			*probe(&grown, m->slots[i].key) = m->slots[i];
	g_free(m->slots);
	*m = grown;
	return true;
}

bool idmap_put(idmap *m, uint64_t key, void *value)
{
	/* Grow before the table is 3/4 full, so that probes stay short and an
	 * empty slot always exists. */
	if ((!m->slots || (m->count + 1) * 4 > (m->mask + 1) * 3) && !grow(m))
		return false;
	idmap_slot *s = probe(m, key);
	if (!s->value)
		m->count++;
	*s = (idmap_slot){key, value};
	return true;
}

void *idmap_remove(idmap *m, uint64_t key)
{
	if (!m->slots)
		return NULL;
	idmap_slot *s = probe(m, key);
	void *value = s->value;
	if (!value)
		return NULL;
	/* Backward-shift deletion: pull later entries of the probe run into
	 * the hole whenever their home lies at or before it, so that no probe
	 * meets an empty slot before its key (no tombstones). */
	size_t hole = (size_t)(s - m->slots);
	for (size_t i = (hole + 1) & m->mask; m->slots[i].value; i = (i + 1) & m->mask) {
		size_t h = home(m, m->slots[i].key);
		/* Whether h lies cyclically in (hole, i]: then the entry stays. */
		bool stays = hole <= i ? (hole < h && h <= i) : (hole < h || h <= i);
		if (!stays) {
			m->slots[hole] = m->slots[i];
			hole = i;
		}
	}
	m->slots[hole].value = NULL;
	m->count--;
	return value;
}

void *idmap_next(const idmap *m, size_t *pos)
{
	for (; m->slots && *pos <= m->mask; (*pos)++)
		if (m->slots[*pos].value)
			return m->slots[(*pos)++].value;
	return NULL;
}
