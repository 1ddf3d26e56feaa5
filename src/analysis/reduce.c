/* SAD and OLR (policies.md §5). Both are one pass over the input held
 * whole (trace.h), then one over what they keep. */
#include "analysis/reduce.h"

#include <glib.h>
#include <stdbool.h>
#include <string.h>

#include "analysis/stamptree.h"
#include "core/record.h"

#define NONE UINT32_MAX

void lp_refs_push(lp_refs *r, lp_pageno page, char type)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 4096;
		r->pages = g_renew(lp_pageno, r->pages, r->cap);
		r->types = g_renew(char, r->types, r->cap);
	}
	r->pages[r->n] = page;
	r->types[r->n++] = type;
}

void lp_refs_clear(lp_refs *r)
{
	g_free(r->pages);
	g_free(r->types);
	*r = (lp_refs){0};
}

/* The write of a reference's privilege: w for r i w, W for R I W. */
static char as_write(char type) { return lp_ref_is_kernel(type) ? 'W' : 'w'; }

/* ---- SAD ----
 *
 * The pages whose last reference is at a position >= a's are the distinct
 * pages referenced from a to now. Positions are the stamps of a Fenwick
 * tree over stamps (stamptree.h), handed out one a reference and compacted
 * whenever they run out: only the last reference and the anchor a of each
 * page keep theirs (an anchor is kept unmarked), so memory stays O(D),
 * small enough to stay in the caches, however long the stream.
 * The SAD_FRONT pages referenced last are an array, most recent first, with
 * their last positions beside (as stackdist.h's front): most references
 * land there and cost no tree work, and when a is after the front's oldest
 * last reference the pages are counted in the front alone. Every other
 * page has a mark in a Fenwick tree at its last reference's position, older
 * than the whole front's. */
#define SAD_FRONT 32

typedef struct sad {
	lp_stamptree stamps; /* positions; the owner of one is the page referenced there */
	/* Per page: reference index and position of a, its last kept
	 * reference, and of its last reference (last_t NONE: none yet). */
	uint32_t *anchor_t, *anchor_pos, *last_t, *last_pos;
	uint32_t distinct;
	lp_pageno front[SAD_FRONT];
	uint32_t front_pos[SAD_FRONT]; /* their last positions, decreasing */
	unsigned nfront;
	uint8_t *in_front; /* per page */
} sad;

static void mark(sad *s, uint32_t pos, uint32_t delta)
{
	lp_stampset_flip(&s->stamps.marks, pos, delta);
}

/* A position is kept while it is its page's last reference or anchor. */
static bool relabel(void *ctx, uint32_t page, uint64_t pos, uint64_t new_pos)
{
	sad *s = ctx;
	bool last = s->last_pos[page] == pos, anchor = s->anchor_pos[page] == pos;
	if (last)
		s->last_pos[page] = (uint32_t)new_pos;
	if (anchor)
		s->anchor_pos[page] = (uint32_t)new_pos;
	return last || anchor;
}

static void sad_compact(sad *s)
{
	lp_stamptree_compact(&s->stamps, s->stamps.cap, relabel, s);
	for (unsigned i = 0; i < s->nfront; i++)
		s->front_pos[i] = s->last_pos[s->front[i]];
}

/* Put p, referenced at pos, at the front's head (referenced before: it
 * is in the front, or has a mark in the tree). A page the front lets go
 * gets its mark at its last reference's position. */
static void to_front(sad *s, lp_pageno p, bool referenced, uint32_t pos)
{
	unsigned i;
	if (referenced && s->in_front[p]) {
		for (i = 0; s->front[i] != p; i++)
			;
	} else {
		if (referenced)
			mark(s, s->last_pos[p], (uint32_t)-1);
		if (s->nfront == SAD_FRONT) {
			i = SAD_FRONT - 1;
			s->in_front[s->front[i]] = 0;
			mark(s, s->front_pos[i], 1);
		} else {
			i = s->nfront++;
		}
		s->in_front[p] = 1;
	}
	memmove(s->front + 1, s->front, i * sizeof *s->front);
	memmove(s->front_pos + 1, s->front_pos, i * sizeof *s->front_pos);
	s->front[0] = p;
	s->front_pos[0] = pos;
}

/* The pages whose last reference is at pos or after. */
static uint32_t pages_since(const sad *s, uint32_t pos)
{
	if (s->front_pos[s->nfront - 1] < pos) { /* within the front */
		unsigned lo = 0, hi = s->nfront - 1; /* front_pos[hi] < pos */
		while (hi - lo > 1) {
			unsigned mid = (lo + hi) / 2;
			if (s->front_pos[mid] >= pos)
				lo = mid;
			else
				hi = mid;
		}
		return hi; /* front_pos[0] >= pos: p itself, just referenced */
	}
	return s->distinct - (uint32_t)lp_stampset_below(&s->stamps.marks, pos);
}

void lp_reduce_sad(const lp_pageno *pages, const char *types, size_t n, lp_pageno npages,
		   uint64_t frames, lp_refs *out)
{
	sad s = {0};
	lp_stamptree_init(&s.stamps, 1024, true);
	s.anchor_t = g_new(uint32_t, npages);
	s.anchor_pos = g_new(uint32_t, npages);
	s.last_t = g_new(uint32_t, npages);
	s.last_pos = g_new(uint32_t, npages);
	s.in_front = g_new0(uint8_t, npages);
	for (lp_pageno p = 0; p < npages; p++)
		s.last_t[p] = NONE;
	/* Two bits a reference: dropped, and made a write by a dropped
	 * write after it (the input's arrays may be mapped from a file,
	 * and are not written). */
	uint8_t *dropped = g_new0(uint8_t, n / 8 + 1), *written = g_new0(uint8_t, n / 8 + 1);
	for (size_t t = 0; t < n; t++) {
		lp_pageno p = pages[t];
		/* Compact first, while every mark is where last_pos says. */
		if (s.stamps.now == s.stamps.cap)
			sad_compact(&s);
		uint32_t j = s.last_t[p], j_pos = s.last_pos[p];
		bool again = j != NONE && j == t - 1;
		if (j == NONE) {
			s.anchor_t[p] = (uint32_t)t;
			s.anchor_pos[p] = (uint32_t)s.stamps.now;
			s.distinct++;
		}
		if (again) {
			/* No other page since j: p heads the front, and j's
			 * position orders t among the others as well. */
			s.last_t[p] = (uint32_t)t;
		} else {
			to_front(&s, p, j != NONE, (uint32_t)s.stamps.now);
			s.last_t[p] = (uint32_t)t;
			s.last_pos[p] = (uint32_t)lp_stamptree_take(&s.stamps, p);
		}
		/* Reference j lies between a and t: dropped iff references a .. t
		 * touch at most frames pages. The first is a itself. */
		if (j == NONE || j == s.anchor_t[p])
			continue;
		/* A third reference in a row to one page: a .. t touches the
		 * pages a .. t - 1 did, which held at most frames if t - 2 was
		 * dropped, and is the one page if t - 2 became the anchor. */
		bool run = again && t >= 2 && pages[t - 2] == p;
		if (run || pages_since(&s, s.anchor_pos[p]) <= frames) {
			uint32_t a = s.anchor_t[p];
			if (lp_ref_is_write(types[j]))
				written[a / 8] |= (uint8_t)(1u << a % 8);
			dropped[j / 8] |= (uint8_t)(1u << j % 8);
		} else {
			/* j's position, no longer a mark, stays as the anchor's. */
			s.anchor_t[p] = j;
			s.anchor_pos[p] = j_pos;
		}
	}
	for (size_t t = 0; t < n; t++)
		if (!(dropped[t / 8] >> t % 8 & 1))
			lp_refs_push(out, pages[t], written[t / 8] >> t % 8 & 1 ? as_write(types[t])
									: types[t]);
	g_free(dropped);
	g_free(written);
	g_free(s.anchor_t);
	g_free(s.anchor_pos);
	g_free(s.last_t);
	g_free(s.last_pos);
	lp_stamptree_clear(&s.stamps);
	g_free(s.in_front);
}

/* ---- OLR ----
 *
 * A point's position is a tuple: a fetch is (i), a touch just after P is
 * P + (r). The points form a tree: a touch is a child of the point it
 * follows, and children are ordered by rank; the fetches are the roots in
 * event order. The sorted output is then the tree's preorder.
 *
 * Finalizations come in rank order (evicted stays by eviction event, then
 * the rest by fetch event), so appending each touch to its parent's
 * children keeps them sorted without a sort.
 *
 * Every point's position begins with the event of a fetch, its root: a
 * stay fetched at event i is fetched before last(v) iff i <= root(last(v)),
 * (i) being last(v) or a prefix of it. So the requirements of the stay
 * fetched at i are those of the evictions j, i < j < its own end, whose
 * root(last(v)) >= i: they need not be stored per stay (that cost K a
 * fault), only each eviction's last(v), and found when the stay is
 * finalized, in a tree of maxima over the events.
 *
 * They come with increasing lower bounds: a stay evicted later was
 * resident, and not least recent, when the earlier one was evicted, so it
 * holds a point after that one's last. Taking them by decreasing lower
 * bound is taking them newest first, and each touch placed is before the
 * ones placed earlier: the last placed is the smallest, and a requirement
 * holds a point iff that one is before its upper bound (j), i.e. iff its
 * root is below j. After a touch of root r, the next requirement to take is
 * the newest at an event j <= r. */

typedef struct olr_node {
	uint32_t parent, first_child, last_child, next_sibling;
	uint32_t root;  /* its first element: the event of the fetch it descends from */
	uint32_t stay;
} olr_node;

typedef struct olr_stay {
	lp_pageno page;
	char type;      /* the fetch line's, a write once the stay is written */
} olr_stay;

typedef struct olr {
	GArray *nodes;
	/* By event (a fault: one stay fetched, maybe one evicted), cap of
	 * them: the stay fetched, its fetch's node, the last point of the
	 * stay evicted; and a tree of maxima (1-based, leaves from cap) of
	 * that point's root + 1, 0 where the event evicted nothing. */
	olr_stay *stays;
	uint32_t *fetch_node, *evicted_last, *tree;
	uint32_t events, cap;
} olr;

static uint32_t new_node(olr *o, uint32_t parent, uint32_t root, uint32_t stay)
{
	uint32_t id = o->nodes->len;
	olr_node node = {parent, NONE, NONE, NONE, root, stay};
	g_array_append_val(o->nodes, node);
	if (parent != NONE) {
		olr_node *p = &g_array_index(o->nodes, olr_node, parent);
		if (p->last_child == NONE)
			p->first_child = id;
		else
			g_array_index(o->nodes, olr_node, p->last_child).next_sibling = id;
		p->last_child = id;
	}
	return id;
}

/* Room for one more event. */
static void olr_grow(olr *o)
{
	if (o->events < o->cap)
		return;
	o->cap = o->cap ? o->cap * 2 : 1024;
	o->stays = g_renew(olr_stay, o->stays, o->cap);
	o->fetch_node = g_renew(uint32_t, o->fetch_node, o->cap);
	o->evicted_last = g_renew(uint32_t, o->evicted_last, o->cap);
	uint32_t *tree = g_new0(uint32_t, 2 * (size_t)o->cap);
	/* The old leaves, then every maximum again. */
	for (uint32_t i = 0; i < o->events; i++)
		tree[o->cap + i] = o->tree[o->cap / 2 + i];
	for (uint32_t k = o->cap - 1; k > 0; k--)
		tree[k] = MAX(tree[2 * k], tree[2 * k + 1]);
	g_free(o->tree);
	o->tree = tree;
}

static void tree_set(olr *o, uint32_t event, uint32_t value)
{
	uint32_t k = o->cap + event;
	o->tree[k] = value;
	for (k /= 2; k > 0; k /= 2)
		o->tree[k] = MAX(o->tree[2 * k], o->tree[2 * k + 1]);
}

/* The largest event in lo .. hi whose value is at least min, or NONE;
 * node k covers events nl .. nr. */
static uint32_t rightmost(const olr *o, uint32_t k, uint32_t nl, uint32_t nr, uint32_t lo,
			  uint32_t hi, uint32_t min)
{
	if (nr < lo || nl > hi || o->tree[k] < min)
		return NONE;
	if (nl == nr)
		return nl;
	uint32_t mid = nl + (nr - nl) / 2;
	uint32_t e = rightmost(o, 2 * k + 1, mid + 1, nr, lo, hi, min);
	return e != NONE ? e : rightmost(o, 2 * k, nl, mid, lo, hi, min);
}

/* The points past the fetch of the stay fetched at event stay, whose
 * stay ends at event end (or at the end, end = events): a touch for each
 * requirement that holds no point yet. Returns its largest point. */
static uint32_t finalize(olr *o, uint32_t stay, uint32_t end)
{
	uint32_t first = NONE;
	for (uint32_t hi = end - 1; hi > stay;) {
		uint32_t j = rightmost(o, 1, 0, o->cap - 1, stay + 1, hi, stay + 1);
		if (j == NONE)
			break;
		uint32_t lb = o->evicted_last[j];
		uint32_t root = g_array_index(o->nodes, olr_node, lb).root;
		uint32_t id = new_node(o, lb, root, stay);
		if (first == NONE)
			first = id;
		hi = root;
	}
	return first != NONE ? first : o->fetch_node[stay];
}

/* A doubly linked list over pages, least recent first. */
typedef struct page_list {
	uint32_t *prev, *next;
	uint32_t head, tail;
} page_list;

static void plist_append(page_list *l, uint32_t p)
{
	l->prev[p] = l->tail;
	l->next[p] = NONE;
	if (l->tail != NONE)
		l->next[l->tail] = p;
	else
		l->head = p;
	l->tail = p;
}

static void plist_remove(page_list *l, uint32_t p)
{
	if (l->prev[p] != NONE)
		l->next[l->prev[p]] = l->next[p];
	else
		l->head = l->next[p];
	if (l->next[p] != NONE)
		l->prev[l->next[p]] = l->prev[p];
	else
		l->tail = l->prev[p];
}

void lp_reduce_olr(const lp_pageno *pages, const char *types, size_t n, lp_pageno npages,
		   uint64_t frames, lp_refs *out)
{
	olr o = {.nodes = g_array_new(FALSE, FALSE, sizeof(olr_node))};
	page_list lru = {g_new(uint32_t, npages), g_new(uint32_t, npages), NONE, NONE};
	uint32_t *stay_of = g_new(uint32_t, npages); /* NONE: not resident */
	for (lp_pageno p = 0; p < npages; p++)
		stay_of[p] = NONE;
	uint64_t resident = 0;
	for (size_t t = 0; t < n; t++) {
		lp_pageno p = pages[t];
		char type = types[t];
		if (stay_of[p] != NONE) {
			plist_remove(&lru, p);
			plist_append(&lru, p);
			if (lp_ref_is_write(type))
				o.stays[stay_of[p]].type = as_write(o.stays[stay_of[p]].type);
			continue;
		}
		olr_grow(&o);
		uint32_t event = o.events, value = 0;
		if (resident == frames) {
			lp_pageno victim = lru.head;
			plist_remove(&lru, victim);
			uint32_t last = finalize(&o, stay_of[victim], event);
			stay_of[victim] = NONE;
			o.evicted_last[event] = last;
			value = g_array_index(o.nodes, olr_node, last).root + 1;
		} else {
			resident++;
		}
		o.stays[event] = (olr_stay){p, type};
		o.fetch_node[event] = new_node(&o, NONE, event, event);
		tree_set(&o, event, value);
		o.events++;
		stay_of[p] = event;
		plist_append(&lru, p);
	}
	for (uint32_t i = 0; i < o.events; i++)
		if (stay_of[o.stays[i].page] == i)
			finalize(&o, i, o.events);
	/* Preorder, root after root. */
	const olr_node *nodes = (const olr_node *)(void *)o.nodes->data;
	for (uint32_t i = 0; i < o.events; i++) {
		uint32_t root = o.fetch_node[i], at = root;
		for (;;) {
			const olr_stay *s = &o.stays[nodes[at].stay];
			lp_refs_push(out, s->page, s->type);
			if (nodes[at].first_child != NONE) {
				at = nodes[at].first_child;
				continue;
			}
			while (at != root && nodes[at].next_sibling == NONE)
				at = nodes[at].parent;
			if (at == root)
				break;
			at = nodes[at].next_sibling;
		}
	}
	g_free(stay_of);
	g_free(lru.prev);
	g_free(lru.next);
	g_array_free(o.nodes, TRUE);
	g_free(o.stays);
	g_free(o.fetch_node);
	g_free(o.evicted_last);
	g_free(o.tree);
}
