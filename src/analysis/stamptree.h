/* A Fenwick tree over stamps, with compaction: the one order-statistics
 * structure under laplace's curves and reductions (stackdist.c's LRU stack
 * distances, recency.c's recency positions, shards.c's sampled distances,
 * reduce.c's SAD).
 *
 * Each user hands out stamps, numbers that grow with time, to the events it
 * must order (mostly a page's last reference), and marks some of them; what
 * it asks is how many marks are older than a stamp (a prefix count,
 * O(log D)) or which stamp is the k-th mark (a descent, O(log D)).
 *
 * Invariants (why, not what):
 *
 * 1. A mark is one bit, 64 stamps a word, and the Fenwick tree counts the
 *    words' marks, not the stamps': 1/32 of the memory of a counter a
 *    stamp, so that bits and tree stay in the L2 cache while D is 10^5 and
 *    more, where the tree's descent was the curves' cache misses. A count
 *    below a stamp is the tree's prefix over the words before its own plus
 *    a population count in its own word.
 * 2. Only the order of stamps means anything, never their values: stamps
 *    are handed out in increasing order (lp_stamptree_take), so a user may
 *    renumber them at will as long as the order stays.
 * 3. Compaction (lp_stamptree_compact) renumbers the stamps still needed
 *    0, 1, ... in order, each with its owner and its mark, and forgets the
 *    rest: every count and every order the user can ask is the same after
 *    it. The user compacts when the stamps run out (now == cap); after a
 *    compaction at most half the stamps are taken (cap doubles until so),
 *    so the next one is cap/2 stamps away at least, and compaction costs
 *    O(1) a stamp taken: memory is O(D) however long the stream, and
 *    nothing is allocated but at init and at compaction.
 * 4. Stamps needed are the marked ones, unless the tree was made with
 *    keep_unmarked (SAD's anchors are positions to count from, not marks):
 *    then compaction asks the user about every stamp. Walking only the
 *    marked words is what makes the compaction cheap for the others.
 * 5. Owners (dense pages, table slots) and counts are 32-bit: at most
 *    2^32 - 1 marks, far beyond the memory any user's per-page arrays
 *    would take first; stamps (up to cap) are 64-bit.
 */
#ifndef LAPLACE_STAMPTREE_H
#define LAPLACE_STAMPTREE_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

/* A set of marked stamps 0 .. 64 * words - 1 (invariant 1); usable alone
 * as a second set over a tree's stamps (recency.c's resident pages). */
typedef struct lp_stampset {
	uint64_t *bits;  /* the marks, 64 stamps a word */
	uint32_t *tree;  /* Fenwick tree of the words' counts, 1-based */
	uint64_t words;
} lp_stampset;

/* Room for stamps stamps (a multiple of 64), none marked. */
void lp_stampset_init(lp_stampset *m, uint64_t stamps);
void lp_stampset_clear(lp_stampset *m);
/* The tree anew from the bits, in O(words). */
void lp_stampset_build(lp_stampset *m);
/* The stamp of the k-th mark in stamp order, 1 <= k <= the marks. */
uint64_t lp_stampset_select(const lp_stampset *m, uint64_t k);

static inline unsigned lp_count_bits(uint64_t x)
{
	x -= (x >> 1) & UINT64_C(0x5555555555555555);
	x = (x & UINT64_C(0x3333333333333333)) + (x >> 2 & UINT64_C(0x3333333333333333));
	x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
	return (unsigned)((x * UINT64_C(0x0101010101010101)) >> 56);
}

/* Flip stamp's mark, delta 1 when it was unmarked, -1 (as uint32) when
 * marked: the one write path of the hot loops. */
static inline void lp_stampset_flip(lp_stampset *m, uint64_t stamp, uint32_t delta)
{
	m->bits[stamp / 64] ^= UINT64_C(1) << (stamp % 64);
	for (uint64_t i = stamp / 64 + 1; i <= m->words; i += i & -i)
		m->tree[i] += delta;
}

static inline void lp_stampset_add(lp_stampset *m, uint64_t stamp)
{
	lp_stampset_flip(m, stamp, 1);
}

static inline void lp_stampset_remove(lp_stampset *m, uint64_t stamp)
{
	lp_stampset_flip(m, stamp, (uint32_t)-1);
}

/* Move the mark at stamp from to the unmarked stamp to (from < to): the
 * two paths up the tree meet, and from there on the counts are as they
 * were, so that a mark moved to the present, most of the curves' updates,
 * costs less than a removal and an addition. */
static inline void lp_stampset_move(lp_stampset *m, uint64_t from, uint64_t to)
{
	m->bits[from / 64] ^= UINT64_C(1) << (from % 64);
	m->bits[to / 64] ^= UINT64_C(1) << (to % 64);
	uint64_t i = from / 64 + 1, j = to / 64 + 1;
	while (i != j) {
		if (i < j) {
			if (i > m->words)
				break;
			m->tree[i]--;
			i += i & -i;
		} else {
			if (j > m->words)
				break;
			m->tree[j]++;
			j += j & -j;
		}
	}
}

static inline bool lp_stampset_has(const lp_stampset *m, uint64_t stamp)
{
	return m->bits[stamp / 64] >> (stamp % 64) & 1;
}

/* Marks at stamps 0 .. stamp - 1 (stamp < 64 * words). */
static inline uint64_t lp_stampset_below(const lp_stampset *m, uint64_t stamp)
{
	uint64_t sum = lp_count_bits(m->bits[stamp / 64] & ((UINT64_C(1) << (stamp % 64)) - 1));
	for (uint64_t i = stamp / 64; i > 0; i -= i & -i)
		sum += m->tree[i];
	return sum;
}

/* Every mark. */
static inline uint64_t lp_stampset_count(const lp_stampset *m)
{
	uint64_t sum = 0;
	for (uint64_t i = m->words; i > 0; i -= i & -i)
		sum += m->tree[i];
	return sum;
}

typedef struct lp_stamptree {
	lp_stampset marks;
	uint32_t *owner;     /* stamp -> its owner */
	uint64_t cap;        /* stamps: a power of two, at least 64 */
	uint64_t now;        /* the next stamp */
	bool keep_unmarked;  /* invariant 4 */
} lp_stamptree;

void lp_stamptree_init(lp_stamptree *t, uint64_t cap, bool keep_unmarked);
void lp_stamptree_clear(lp_stamptree *t);

/* The next stamp, owned by owner, unmarked; now < cap (the user compacts
 * first when the stamps have run out). */
static inline uint64_t lp_stamptree_take(lp_stamptree *t, uint32_t owner)
{
	t->owner[t->now] = owner;
	return t->now++;
}

/* Whether the stamp old, owned by owner, is still needed; if so the user
 * relabels it new in its own maps (owner -> stamp) before returning. */
typedef bool lp_stamptree_keep_fn(void *ctx, uint32_t owner, uint64_t old, uint64_t new_stamp);

/* Invariant 3: the stamps keep says are needed (every marked stamp is,
 * and keep is asked about unmarked ones only with keep_unmarked) become
 * 0 .. kept - 1 in order, in a tree of at least min_cap stamps (doubled
 * until at most half are taken). Inline so that each user's keep, a
 * constant here, is inlined into its one call: no call a stamp. */
static inline void lp_stamptree_compact(lp_stamptree *t, uint64_t min_cap, lp_stamptree_keep_fn *keep,
					void *ctx)
{
	uint64_t next = 0, words = t->cap / 64;
	lp_stampset kept;
	lp_stampset_init(&kept, t->cap > min_cap ? t->cap : min_cap);
	for (uint64_t w = 0; w < words && 64 * w < t->now; w++) {
		uint64_t bits = t->marks.bits[w];
		if (!t->keep_unmarked) {
			for (; bits; bits &= bits - 1) { /* marked stamps only, in order */
				uint64_t old = 64 * w + (uint64_t)__builtin_ctzll(bits);
				uint32_t owner = t->owner[old];
				keep(ctx, owner, old, next);
				kept.bits[next / 64] |= UINT64_C(1) << (next % 64);
				t->owner[next++] = owner;
			}
			continue;
		}
		for (uint64_t old = 64 * w; old < 64 * (w + 1) && old < t->now; old++) {
			uint32_t owner = t->owner[old];
			if (!keep(ctx, owner, old, next))
				continue;
			kept.bits[next / 64] |= (bits >> (old % 64) & 1) << (next % 64);
			t->owner[next++] = owner;
		}
	}
	uint64_t cap = kept.words * 64;
	if (next > cap / 2) {
		while (next > cap / 2)
			cap *= 2;
		lp_stampset grown;
		lp_stampset_init(&grown, cap);
		for (uint64_t w = 0; w < kept.words; w++)
			grown.bits[w] = kept.bits[w];
		lp_stampset_clear(&kept);
		kept = grown;
	}
	lp_stampset_build(&kept);
	lp_stampset_clear(&t->marks);
	t->marks = kept;
	if (cap != t->cap)
		t->owner = g_renew(uint32_t, t->owner, cap);
	t->cap = cap;
	t->now = next;
}

#endif
