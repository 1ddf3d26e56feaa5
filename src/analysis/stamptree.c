/* A Fenwick tree over stamps, with compaction (stamptree.h). */
#include "analysis/stamptree.h"

#include <string.h>

void lp_stampset_init(lp_stampset *m, uint64_t stamps)
{
	m->words = stamps / 64;
	m->bits = g_new0(uint64_t, m->words);
	m->tree = g_new0(uint32_t, m->words + 1);
}

void lp_stampset_clear(lp_stampset *m)
{
	g_free(m->bits);
	g_free(m->tree);
	memset(m, 0, sizeof *m);
}

void lp_stampset_build(lp_stampset *m)
{
	memset(m->tree, 0, (m->words + 1) * sizeof *m->tree);
	for (uint64_t i = 1; i <= m->words; i++) {
		m->tree[i] += lp_count_bits(m->bits[i - 1]);
		uint64_t parent = i + (i & -i);
		if (parent <= m->words)
			m->tree[parent] += m->tree[i];
	}
}

uint64_t lp_stampset_select(const lp_stampset *m, uint64_t k)
{
	/* The last word whose marks before it are fewer than k... */
	uint64_t pos = 0, step = 1;
	while (step * 2 <= m->words)
		step *= 2;
	for (; step; step /= 2)
		if (pos + step <= m->words && m->tree[pos + step] < k) {
			pos += step;
			k -= m->tree[pos];
		}
	/* ... holds the k-th mark: a byte at a time, then a bit. */
	uint64_t bits = m->bits[pos], at = 64 * pos;
	for (unsigned c; (c = lp_count_bits(bits & 0xff)) < k; bits >>= 8, at += 8)
		k -= c;
	while (--k)
		bits &= bits - 1;
	return at + (uint64_t)__builtin_ctzll(bits);
}

void lp_stamptree_init(lp_stamptree *t, uint64_t cap, bool keep_unmarked)
{
	memset(t, 0, sizeof *t);
	lp_stampset_init(&t->marks, cap);
	t->owner = g_new(uint32_t, cap);
	t->cap = cap;
	t->keep_unmarked = keep_unmarked;
}

void lp_stamptree_clear(lp_stamptree *t)
{
	lp_stampset_clear(&t->marks);
	g_free(t->owner);
	memset(t, 0, sizeof *t);
}
