/* LRU memories: behaviour sequences, re-reduction and the reference
 * stream of a page-image trace. */
#include "analysis/lru.h"

#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/policy.h"

#define NONE UINT32_MAX

/* ---- doubly linked lists over node indices ---- */

typedef struct lru_link {
	uint32_t prev, next;
} lru_link;

typedef struct lru_list {
	uint32_t head, tail; /* head: least recently used */
	uint64_t count;
} lru_list;

static void list_init(lru_list *l) { *l = (lru_list){NONE, NONE, 0}; }

static void list_append(lru_list *l, lru_link *links, uint32_t i)
{
	links[i] = (lru_link){l->tail, NONE};
	if (l->tail != NONE)
		links[l->tail].next = i;
	else
		l->head = i;
	l->tail = i;
	l->count++;
}

static void list_remove(lru_list *l, lru_link *links, uint32_t i)
{
	lru_link k = links[i];
	if (k.prev != NONE)
		links[k.prev].next = k.next;
	else
		l->head = k.next;
	if (k.next != NONE)
		links[k.next].prev = k.prev;
	else
		l->tail = k.prev;
	l->count--;
}

/* ---- LRU memory on 64-bit pages: the policy table's lru (policy.h) on
 * dense numbers, with the canonical numbers and dirt beside ---- */

typedef struct lru_node {
	uint64_t page;
	bool dirty;
} lru_node;

struct lp_lru {
	const lp_policy_ops *ops;
	void *policy;
	uint64_t refs;
	GArray *nodes;  /* lru_node, one per page ever referenced, by dense number */
	uint32_t *slots; /* open addressing: dense number or NONE */
	size_t nslots;  /* a power of two, at most half full */
};

static size_t slot_of(uint64_t page, size_t nslots)
{
	return (size_t)((page * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & (nslots - 1);
}

static void lru_grow(lp_lru *l)
{
	size_t n = l->nslots * 2;
	uint32_t *slots = g_new(uint32_t, n);
	memset(slots, 0xff, n * sizeof *slots);
	for (uint32_t i = 0; i < l->nodes->len; i++) {
		size_t s = slot_of(g_array_index(l->nodes, lru_node, i).page, n);
		while (slots[s] != NONE)
			s = (s + 1) & (n - 1);
		slots[s] = i;
	}
	g_free(l->slots);
	l->slots = slots;
	l->nslots = n;
}

lp_lru *lp_lru_new(uint64_t frames)
{
	lp_lru *l = g_new0(lp_lru, 1);
	l->ops = lp_policy_find("lru")->ops;
	/* A first guess at the pages: the policy grows past it. */
	lp_policy_params p = {.frames = frames, .pages = 1024};
	l->policy = l->ops->create(&p);
	l->nodes = g_array_new(FALSE, FALSE, sizeof(lru_node));
	l->nslots = 1024;
	l->slots = g_new(uint32_t, l->nslots);
	memset(l->slots, 0xff, l->nslots * sizeof *l->slots);
	return l;
}

bool lp_lru_ref(lp_lru *l, uint64_t page, bool write, lp_lru_fault *fault)
{
	size_t s = slot_of(page, l->nslots);
	while (l->slots[s] != NONE && g_array_index(l->nodes, lru_node, l->slots[s]).page != page)
		s = (s + 1) & (l->nslots - 1);
	uint32_t i = l->slots[s];
	fault->tag = 'F';
	if (i == NONE) {
		i = l->nodes->len;
		lru_node fresh = {.page = page};
		g_array_append_val(l->nodes, fresh);
		l->slots[s] = i;
		if (l->nodes->len * 2 > l->nslots)
			lru_grow(l);
		fault->tag = 'C';
	}
	lp_pageno victim;
	if (l->ops->access(l->policy, i, l->refs++, &victim)) {
		g_array_index(l->nodes, lru_node, i).dirty |= write;
		return false;
	}
	fault->page = page;
	if (victim == LP_NO_PAGE) {
		fault->dirt = 'N';
		fault->evicted = 0;
	} else {
		const lru_node *v = &g_array_index(l->nodes, lru_node, victim);
		fault->dirt = v->dirty ? 'W' : 'R';
		fault->evicted = v->page;
	}
	g_array_index(l->nodes, lru_node, i).dirty = write;
	return true;
}

void lp_lru_free(lp_lru *l)
{
	if (!l)
		return;
	l->ops->destroy(l->policy);
	g_array_free(l->nodes, TRUE);
	g_free(l->slots);
	g_free(l);
}

/* The first broken rule of a record becomes the error. */
typedef struct first_problem {
	lp_error *err;
	bool found;
} first_problem;

static void keep_first(void *ctx, const char *msg)
{
	first_problem *f = ctx;
	if (!f->found)
		lp_fail(f->err, LP_EINPUT, "%s", msg);
	f->found = true;
}

static int check_strictly(lp_pi_check *c, const lp_pi_record *rec, lp_error *err)
{
	first_problem f = {err, false};
	return lp_pi_check_record(c, rec, LP_PI_ALL_KNOWN, keep_first, &f) ? -1 : 0;
}

/* ---- re-reduction ----
 * The LRU stack of the M'-page memory holds M's resident pages on top;
 * below them, the pages M evicted, most recent eviction first. Only the
 * first K = M' - M of those (the window) are resident in M'; a fetch of a
 * window page is a hit for M', any other fetch a miss. M's eviction pushes
 * its page onto the window, and the page pushed out of a full window is
 * the one M' evicts. The order below the window never matters: those
 * pages can only come back through a fetch, which is a miss anyway. */

enum { PAGE_UNSEEN, PAGE_IN_M, PAGE_IN_WINDOW, PAGE_BEYOND };

struct lp_pi_reduce {
	uint32_t frames;
	lp_pi_check *check;
	lru_list window;          /* head: the page M' evicts next */
	lru_link links[LP_PI_PAGES];
	uint8_t where[LP_PI_PAGES];
	bool dirty[LP_PI_PAGES];   /* some M eviction during the M' stay was W */
	uint32_t image[LP_PI_PAGES]; /* slot holding the last image M evicted */
	GPtrArray *slots;       /* 4096-byte images */
	GArray *free_slots;     /* uint32_t */
	uint32_t released;      /* slot to free at the next call, or NONE */
};

lp_pi_reduce *lp_pi_reduce_new(uint32_t frames)
{
	lp_pi_reduce *r = g_new0(lp_pi_reduce, 1);
	r->frames = frames;
	r->check = lp_pi_check_new();
	list_init(&r->window);
	r->slots = g_ptr_array_new_with_free_func(g_free);
	r->free_slots = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	r->released = NONE;
	return r;
}

void lp_pi_reduce_free(lp_pi_reduce *r)
{
	if (!r)
		return;
	lp_pi_check_free(r->check);
	g_ptr_array_free(r->slots, TRUE);
	g_array_free(r->free_slots, TRUE);
	g_free(r);
}

static uint32_t slot_take(lp_pi_reduce *r)
{
	if (r->free_slots->len) {
		uint32_t s = g_array_index(r->free_slots, uint32_t, r->free_slots->len - 1);
		g_array_set_size(r->free_slots, r->free_slots->len - 1);
		return s;
	}
	g_ptr_array_add(r->slots, g_malloc(LP_PAGE_BYTES));
	return r->slots->len - 1;
}

static void slot_give(lp_pi_reduce *r, uint32_t s) { g_array_append_val(r->free_slots, s); }

int lp_pi_reduce_record(lp_pi_reduce *r, const lp_pi_record *in, lp_pi_record *out,
			lp_error *err)
{
	if (r->released != NONE) {
		slot_give(r, r->released);
		r->released = NONE;
	}
	if (check_strictly(r->check, in, err))
		return -1;
	uint16_t p = in->fetched;
	if (in->dirt == 'N') {
		if (lp_pi_check_fills(r->check) > r->frames)
			return lp_fail(err, LP_EUSAGE,
				       "the trace's memory has at least %" PRIu64 " page%s, more "
				       "than %" PRIu32 "; re-reduction only goes to larger memories",
				       lp_pi_check_fills(r->check),
				       lp_pi_check_fills(r->check) == 1 ? "" : "s", r->frames), -1;
		/* M fills, so M' (at least as large) fills too */
		r->where[p] = PAGE_IN_M;
		r->dirty[p] = false;
		*out = *in;
		return 1;
	}
	/* M is known from the first eviction on, and M <= M' was checked */
	uint64_t window_size = r->frames - lp_pi_check_fills(r->check);
	bool hit = r->where[p] == PAGE_IN_WINDOW;
	if (hit) {
		list_remove(&r->window, r->links, p);
		slot_give(r, r->image[p]);
	}
	uint16_t e = in->evicted;
	r->where[e] = PAGE_IN_WINDOW;
	r->dirty[e] |= in->dirt == 'W';
	r->image[e] = slot_take(r);
	memcpy(g_ptr_array_index(r->slots, r->image[e]), in->evicted_image, LP_PAGE_BYTES);
	list_append(&r->window, r->links, e);
	r->where[p] = PAGE_IN_M;
	if (hit)
		return 0;
	*out = (lp_pi_record){.tag = in->tag, .fetched = p, .fetched_image = in->fetched_image,
			      .dirt = 'N'};
	if (r->window.count > window_size) {
		/* the window's oldest page falls out of M': M' evicts it */
		uint32_t v = r->window.head;
		list_remove(&r->window, r->links, v);
		r->where[v] = PAGE_BEYOND;
		out->dirt = r->dirty[v] ? 'W' : 'R';
		out->evicted = (uint16_t)v;
		out->evicted_image = g_ptr_array_index(r->slots, r->image[v]);
		r->released = r->image[v];
	}
	r->dirty[p] = false;
	return 1;
}

/* ---- the reference stream of a page-image trace ---- */

typedef struct stream_rec {
	uint16_t fetched, evicted;
	bool evicts;
	bool written; /* this stay of the fetched page ends with a W eviction */
} stream_rec;

struct lp_pi_stream {
	lp_pi_check *check;
	GArray *recs;              /* stream_rec */
	uint64_t last_fetch[LP_PI_PAGES]; /* record of each page's latest fetch */
	/* replay */
	uint64_t next;             /* next record to emit */
	lru_list recency;              /* resident pages by the stream's recency */
	lru_link links[LP_PI_PAGES];
};

lp_pi_stream *lp_pi_stream_new(void)
{
	lp_pi_stream *s = g_new0(lp_pi_stream, 1);
	s->check = lp_pi_check_new();
	s->recs = g_array_new(FALSE, FALSE, sizeof(stream_rec));
	list_init(&s->recency);
	return s;
}

void lp_pi_stream_free(lp_pi_stream *s)
{
	if (!s)
		return;
	lp_pi_check_free(s->check);
	g_array_free(s->recs, TRUE);
	g_free(s);
}

int lp_pi_stream_add(lp_pi_stream *s, const lp_pi_record *rec, lp_error *err)
{
	if (check_strictly(s->check, rec, err))
		return -1;
	stream_rec sr = {.fetched = rec->fetched, .evicted = rec->evicted,
			 .evicts = rec->dirt != 'N'};
	if (rec->dirt == 'W')
		g_array_index(s->recs, stream_rec, s->last_fetch[rec->evicted]).written = true;
	s->last_fetch[rec->fetched] = s->recs->len;
	g_array_append_val(s->recs, sr);
	return 0;
}

size_t lp_pi_stream_next(lp_pi_stream *s, lp_basic_ref *out, size_t cap)
{
	size_t n = 0;
	while (n < cap && s->next < s->recs->len) {
		const stream_rec *sr = &g_array_index(s->recs, stream_rec, s->next);
		if (sr->evicts && s->recency.head != sr->evicted) {
			/* touch the pages older than the one to evict: hits for
			 * every memory of at least M pages */
			uint32_t old = s->recency.head;
			out[n++] = (lp_basic_ref){.type = 'r', .canonical = old};
			list_remove(&s->recency, s->links, old);
			list_append(&s->recency, s->links, old);
			continue;
		}
		if (sr->evicts)
			list_remove(&s->recency, s->links, sr->evicted);
		out[n++] = (lp_basic_ref){.type = sr->written ? 'w' : 'r', .canonical = sr->fetched};
		list_append(&s->recency, s->links, sr->fetched);
		s->next++;
	}
	return n;
}
