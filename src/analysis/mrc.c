/* Stack distances in O(log n) a reference: every distinct page keeps one
 * mark, in a Fenwick tree over time, at the moment of its last reference.
 * The stack distance of a reference is then the number of marks after the
 * page's previous one, plus one. Time positions are compacted (the marks
 * renumbered 0..D-1 in order) whenever they run out, so the tree stays
 * O(D) in size however long the stream. */
#include "analysis/mrc.h"

#include <glib.h>
#include <string.h>

#include "core/pairmap.h"

#define INITIAL_POSITIONS 1024

struct lp_mrc {
	pairmap ids;         /* page -> dense id + 1 */
	uint64_t *last_pos;  /* id -> position of its last reference */
	uint64_t *hist;      /* hist[d]: references at stack distance d (1-based) */
	uint64_t ids_cap;    /* length of last_pos and hist (less one) */
	uint64_t distinct;
	uint64_t refs;
	uint64_t *tree;      /* Fenwick tree over positions, 1-based */
	uint64_t *owner;     /* position -> id referenced there */
	uint64_t positions;  /* capacity of tree and owner */
	uint64_t now;        /* next position */
};

lp_mrc *lp_mrc_new(void)
{
	lp_mrc *m = g_new0(lp_mrc, 1);
	pairmap_init(&m->ids);
	m->positions = INITIAL_POSITIONS;
	m->tree = g_new0(uint64_t, m->positions + 1);
	m->owner = g_new(uint64_t, m->positions);
	return m;
}

void lp_mrc_free(lp_mrc *m)
{
	if (!m)
		return;
	pairmap_free(&m->ids);
	g_free(m->last_pos);
	g_free(m->hist);
	g_free(m->tree);
	g_free(m->owner);
	g_free(m);
}

static void tree_add(lp_mrc *m, uint64_t pos, int64_t delta)
{
	for (uint64_t i = pos + 1; i <= m->positions; i += i & -i)
		m->tree[i] += (uint64_t)delta;
}

/* Marks at positions 0 .. pos. */
static uint64_t tree_prefix(const lp_mrc *m, uint64_t pos)
{
	uint64_t sum = 0;
	for (uint64_t i = pos + 1; i > 0; i -= i & -i)
		sum += m->tree[i];
	return sum;
}

/* Renumber the marks 0 .. distinct-1 in time order, doubling the positions
 * when marks fill more than half of them (so compaction stays amortised
 * O(1) a reference). */
static void compact(lp_mrc *m)
{
	uint64_t cap = m->positions;
	if (m->distinct * 2 > cap)
		cap *= 2;
	uint64_t *owner = g_new(uint64_t, cap);
	uint64_t next = 0;
	for (uint64_t pos = 0; pos < m->now; pos++) {
		uint64_t id = m->owner[pos];
		if (m->last_pos[id] == pos) {
			owner[next] = id;
			m->last_pos[id] = next++;
		}
	}
	g_free(m->owner);
	m->owner = owner;
	g_free(m->tree);
	m->tree = g_new0(uint64_t, cap + 1);
	m->positions = cap;
	/* Linear-time Fenwick construction over next leading ones. */
	for (uint64_t i = 1; i <= cap; i++) {
		if (i <= next)
			m->tree[i] += 1;
		uint64_t parent = i + (i & -i);
		if (parent <= cap)
			m->tree[parent] += m->tree[i];
	}
	m->now = next;
}

static uint64_t new_id(lp_mrc *m)
{
	if (m->distinct == m->ids_cap) {
		uint64_t cap = m->ids_cap ? m->ids_cap * 2 : 1024;
		uint64_t old_len = m->hist ? m->ids_cap + 1 : 0;
		m->last_pos = g_renew(uint64_t, m->last_pos, cap);
		m->hist = g_renew(uint64_t, m->hist, cap + 1);
		memset(m->hist + old_len, 0, (cap + 1 - old_len) * sizeof *m->hist);
		m->ids_cap = cap;
	}
	return m->distinct++;
}

uint64_t lp_mrc_access(lp_mrc *m, uint64_t page, uint64_t *page_id)
{
	uint64_t distance = 0;
	m->refs++;
	/* Compact first, while every mark is where last_pos says. */
	if (m->now == m->positions)
		compact(m);
	pairmap_slot *slot = pairmap_find(&m->ids, page, 0);
	uint64_t id;
	if (slot->value) {
		id = slot->value - 1;
		uint64_t prev = m->last_pos[id];
		/* Every mark is at a position before now, one per distinct page. */
		distance = m->distinct - tree_prefix(m, prev) + 1;
		m->hist[distance]++;
		tree_add(m, prev, -1);
	} else {
		id = new_id(m);
		slot->a = page;
		slot->b = 0;
		slot->value = id + 1;
		pairmap_added(&m->ids);
	}
	tree_add(m, m->now, 1);
	m->owner[m->now] = id;
	m->last_pos[id] = m->now++;
	if (page_id)
		*page_id = id;
	return distance;
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
