/* SHARDS: the stack distances of sampled pages by a Fenwick tree over
 * stamps (stamptree.h, whose marks are also taken away when a page leaves
 * the sample), scaled into a histogram of weights. */
#include "analysis/shards.h"

#include <glib.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "analysis/stamptree.h"

#define NONE UINT32_MAX
#define NO_POS UINT64_MAX

struct lp_shards {
	uint64_t max_pages;    /* S; 0: a fixed rate */
	double rate;           /* R now */
	bool all;              /* every page is sampled (R = 1) */
	uint64_t limit;        /* else a page is sampled iff h <= limit */
	bool none;             /* R * 2^64 < 1: no page is */

	/* The sampled pages: an open-addressing table, linear probing from
	 * h (already well mixed), page -> slot; deleted by shifting back. */
	uint64_t *keys;
	uint32_t *vals;        /* NONE: empty */
	uint64_t tmask;
	/* Per slot: page, h, position of its last reference (NO_POS: free). */
	uint64_t *page_of, *hash_of, *last_pos;
	uint32_t nslots, slots_cap;
	uint32_t *free_slots;
	uint32_t nfree;
	uint32_t *heap;        /* fixed size: slots, largest h on top */
	uint32_t heap_n;

	lp_stamptree stamps;   /* a mark at each sampled page's last reference */
	uint64_t live;         /* pages in the sample */

	double *hist;          /* weights by scaled distance */
	uint64_t nbuckets;     /* at least LP_SHARDS_BUCKETS, at most twice the
				* sampled pages when more */
	uint64_t width;        /* bucket b: distances b*width+1 .. (b+1)*width */
	double cold, weights;  /* first references' weight; every weight */
	uint64_t refs, sampled, max_distance;
};

lp_shards *lp_shards_new(double rate, uint64_t pages)
{
	lp_shards *s = g_new0(lp_shards, 1);
	s->max_pages = pages;
	s->rate = pages ? 1.0 : rate;
	s->all = s->rate >= 1.0;
	if (!s->all) {
		double threshold = ldexp(s->rate, 64);
		s->none = threshold < 1.0;
		s->limit = s->none ? 0 : (uint64_t)threshold - 1;
	}
	s->tmask = 1023;
	s->keys = g_new(uint64_t, s->tmask + 1);
	s->vals = g_new(uint32_t, s->tmask + 1);
	memset(s->vals, 0xff, (s->tmask + 1) * sizeof *s->vals);
	lp_stamptree_init(&s->stamps, 1024, false);
	s->nbuckets = LP_SHARDS_BUCKETS;
	s->hist = g_new0(double, s->nbuckets);
	s->width = 1;
	return s;
}

void lp_shards_free(lp_shards *s)
{
	if (!s)
		return;
	g_free(s->keys);
	g_free(s->vals);
	g_free(s->page_of);
	g_free(s->hash_of);
	g_free(s->last_pos);
	g_free(s->free_slots);
	g_free(s->heap);
	lp_stamptree_clear(&s->stamps);
	g_free(s->hist);
	g_free(s);
}

/* ---- the table ---- */

static uint64_t table_find(const lp_shards *s, uint64_t page, uint64_t h)
{
	uint64_t i = h & s->tmask;
	while (s->vals[i] != NONE && s->keys[i] != page)
		i = (i + 1) & s->tmask;
	return i;
}

static void table_grow(lp_shards *s)
{
	uint64_t old_mask = s->tmask;
	uint64_t *keys = s->keys;
	uint32_t *vals = s->vals;
	s->tmask = old_mask * 2 + 1;
	s->keys = g_new(uint64_t, s->tmask + 1);
	s->vals = g_new(uint32_t, s->tmask + 1);
	memset(s->vals, 0xff, (s->tmask + 1) * sizeof *s->vals);
	for (uint64_t i = 0; i <= old_mask; i++) {
		if (vals[i] == NONE)
			continue;
		uint64_t j = table_find(s, keys[i], s->hash_of[vals[i]]);
		s->keys[j] = keys[i];
		s->vals[j] = vals[i];
	}
	g_free(keys);
	g_free(vals);
}

/* Backward-shift deletion: later entries of the run move up into the hole
 * unless their home lies cyclically within (hole, them]. */
static void table_delete(lp_shards *s, uint64_t i)
{
	uint64_t j = i;
	for (;;) {
		j = (j + 1) & s->tmask;
		if (s->vals[j] == NONE)
			break;
		uint64_t home = s->hash_of[s->vals[j]] & s->tmask;
		if (((j - home) & s->tmask) >= ((j - i) & s->tmask)) {
			s->keys[i] = s->keys[j];
			s->vals[i] = s->vals[j];
			i = j;
		}
	}
	s->vals[i] = NONE;
}

/* ---- the heap of a fixed size ---- */

static void heap_swap(lp_shards *s, uint32_t a, uint32_t b)
{
	uint32_t t = s->heap[a];
	s->heap[a] = s->heap[b];
	s->heap[b] = t;
}

static void heap_push(lp_shards *s, uint32_t slot)
{
	uint32_t i = s->heap_n++;
	s->heap[i] = slot;
	while (i > 0 && s->hash_of[s->heap[(i - 1) / 2]] < s->hash_of[s->heap[i]]) {
		heap_swap(s, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static uint32_t heap_pop(lp_shards *s)
{
	uint32_t top = s->heap[0];
	s->heap[0] = s->heap[--s->heap_n];
	for (uint32_t i = 0;;) {
		uint32_t big = i, l = 2 * i + 1, r = l + 1;
		if (l < s->heap_n && s->hash_of[s->heap[l]] > s->hash_of[s->heap[big]])
			big = l;
		if (r < s->heap_n && s->hash_of[s->heap[r]] > s->hash_of[s->heap[big]])
			big = r;
		if (big == i)
			break;
		heap_swap(s, i, big);
		i = big;
	}
	return top;
}

/* ---- marks over time ---- */

/* Only marked stamps are asked about: each is its slot's last reference. */
static bool relabel(void *ctx, uint32_t slot, uint64_t old, uint64_t new_stamp)
{
	(void)old;
	((lp_shards *)ctx)->last_pos[slot] = new_stamp;
	return true;
}

static void compact(lp_shards *s)
{
	lp_stamptree_compact(&s->stamps, s->stamps.cap, relabel, s);
}

/* ---- sampling ---- */

static uint32_t new_slot(lp_shards *s, uint64_t page, uint64_t h)
{
	uint32_t slot;
	if (s->nfree) {
		slot = s->free_slots[--s->nfree];
	} else {
		if (s->nslots == s->slots_cap) {
			s->slots_cap = s->slots_cap ? s->slots_cap * 2 : 1024;
			s->page_of = g_renew(uint64_t, s->page_of, s->slots_cap);
			s->hash_of = g_renew(uint64_t, s->hash_of, s->slots_cap);
			s->last_pos = g_renew(uint64_t, s->last_pos, s->slots_cap);
			s->free_slots = g_renew(uint32_t, s->free_slots, s->slots_cap);
			if (s->max_pages)
				s->heap = g_renew(uint32_t, s->heap, s->slots_cap);
		}
		slot = s->nslots++;
	}
	s->page_of[slot] = page;
	s->hash_of[slot] = h;
	s->last_pos[slot] = NO_POS;
	return slot;
}

/* The largest h leaves the sample, and R falls to the largest kept h.
 * Returns the slot that left. */
static uint32_t shrink(lp_shards *s)
{
	uint32_t out = heap_pop(s);
	if (s->last_pos[out] != NO_POS) /* a page just come has no mark yet */
		lp_stampset_remove(&s->stamps.marks, s->last_pos[out]);
	s->live--;
	s->last_pos[out] = NO_POS;
	table_delete(s, table_find(s, s->page_of[out], s->hash_of[out]));
	s->free_slots[s->nfree++] = out;
	s->all = false;
	s->limit = s->hash_of[s->heap[0]];
	/* The share of hashes at or below the limit: 2^-64 more than the
	 * limit / 2^64 of policies.md §7, which would be 0 were the one kept
	 * page's hash 0. */
	s->rate = ldexp((double)s->limit + 1.0, -64);
	return out;
}

/* A value of 1/R scale as a count: rounded, and no more than 2^63 (a
 * rate of 1e-20 scales a distance of 1 to 10^20). */
static uint64_t scaled_count(double v)
{
	return v >= 0x1p63 ? UINT64_C(1) << 63 : v <= 0.0 ? 0 : (uint64_t)llround(v);
}

/* The histogram holds distances past its end: it doubles while it is no
 * larger than twice the sampled pages (so that every page sampled, each
 * distance has its own bucket: the exact curve), else its buckets pair
 * up, twice as wide. */
static void count(lp_shards *s, uint64_t distance, double weight)
{
	uint64_t scaled = MAX(scaled_count((double)distance / s->rate), 1);
	if (scaled > s->max_distance)
		s->max_distance = scaled;
	uint64_t b = (scaled - 1) / s->width;
	while (b >= s->nbuckets) {
		uint64_t n = s->nbuckets;
		if (n < 2 * s->live) {
			s->hist = g_renew(double, s->hist, 2 * n);
			memset(s->hist + n, 0, n * sizeof *s->hist);
			s->nbuckets = 2 * n;
			continue;
		}
		for (uint64_t i = 0; i < n / 2; i++)
			s->hist[i] = s->hist[2 * i] + s->hist[2 * i + 1];
		memset(s->hist + n / 2, 0, n / 2 * sizeof *s->hist);
		s->width *= 2;
		b = (scaled - 1) / s->width;
	}
	s->hist[b] += weight;
}

void lp_shards_access(lp_shards *s, uint64_t page)
{
	s->refs++;
	uint64_t h = lp_shards_hash(page);
	if (!s->all && (s->none || h > s->limit))
		return;
	/* Compact first, while every mark is where last_pos says. */
	if (s->stamps.now == s->stamps.cap)
		compact(s);
	uint64_t i = table_find(s, page, h);
	uint32_t slot = s->vals[i];
	if (slot == NONE) {
		slot = new_slot(s, page, h);
		s->keys[i] = page;
		s->vals[i] = slot;
		s->live++;
		/* A page of larger h than every kept one is never in the
		 * sample: it leaves as soon as it comes. */
		if (s->max_pages) {
			heap_push(s, slot);
			if (s->live > s->max_pages && shrink(s) == slot)
				return;
		}
		if ((s->live + 1) * 2 > s->tmask + 1)
			table_grow(s);
	}
	s->sampled++;
	double weight = 1.0 / s->rate;
	s->weights += weight;
	if (s->last_pos[slot] == NO_POS) {
		s->cold += weight;
	} else {
		uint64_t prev = s->last_pos[slot];
		count(s, s->live - lp_stampset_below(&s->stamps.marks, prev), weight);
		lp_stampset_remove(&s->stamps.marks, prev);
	}
	uint64_t now = lp_stamptree_take(&s->stamps, slot);
	lp_stampset_add(&s->stamps.marks, now);
	s->last_pos[slot] = now;
}

void lp_shards_summarize(const lp_shards *s, lp_shards_summary *sum)
{
	uint64_t distinct = scaled_count(s->cold);
	*sum = (lp_shards_summary){s->refs, s->sampled, s->live, s->rate,
				   MAX(distinct, s->max_distance)};
	if (sum->frames > s->refs)
		sum->frames = s->refs;
}

void lp_shards_curve_start(lp_shards_curve *c, const lp_shards *s)
{
	*c = (lp_shards_curve){s, 0, 0, 0.0, s->refs};
}

uint64_t lp_shards_curve_next(lp_shards_curve *c)
{
	const lp_shards *s = c->s;
	uint64_t f = ++c->frames, b = (f - 1) / s->width;
	/* The first bucket holds the correction too: the references expected
	 * (N) less the weight sampled. */
	double first = (double)s->refs - s->weights;
	for (; c->bucket < b && c->bucket < s->nbuckets; c->bucket++)
		c->hits_before += s->hist[c->bucket] + (c->bucket ? 0.0 : first);
	double hits = c->hits_before;
	if (b < s->nbuckets)
		hits += (s->hist[b] + (b ? 0.0 : first)) * (double)(f - b * s->width) /
			(double)s->width;
	double misses = (double)s->refs - hits;
	uint64_t m = scaled_count(misses);
	if (m > c->last)
		m = c->last;
	c->last = m;
	return m;
}
