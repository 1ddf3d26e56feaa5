/* The re-scheduling engine (laplace-formats(5), "RE-SCHEDULING"). No I/O: it
 * pulls records from a source and pushes references to a sink.
 *
 * rr and random move in blocks of ticks rather than tick by tick: every
 * processor holds a batch of the references its unit will emit next (read
 * ahead no further than the end of its slice, and never past an event
 * record), and nothing but emission happens until some processor's batch
 * runs out. So a block lasts as many ticks as the shortest batch, and
 * everything the rules say happens at a tick (consuming events, making
 * units ready, ending slices, dispatching) happens at the ends of blocks. */
#include "sched/schedule.h"

#include "analysis/pagenumbers.h"
#include "analysis/policy.h"

#include <glib.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define CPU_BATCH 4096   /* references read ahead per processor */
#define OUT_BATCH 16384  /* references handed to the sink at once */
#define NONE SIZE_MAX

const char *const lp_sched_policy_names[LP_SCHED_POLICY_COUNT] = {"as-traced", "rr", "random"};

int lp_sched_policy_parse(const char *name)
{
	for (int p = 0; p < LP_SCHED_POLICY_COUNT; p++)
		if (!strcmp(name, lp_sched_policy_names[p]))
			return p;
	return -1;
}

const lp_policy_info *lp_sched_replacement_find(const char *name)
{
	const lp_policy_info *p = lp_policy_find(name);
	return p && lp_policy_has_victim(p) ? p : NULL;
}

/* opt's replacement, lru when none is named. */
static const lp_policy_info *replacement_of(const lp_sched_options *opt)
{
	return opt->replacement ? opt->replacement : lp_policy_find("lru");
}

char *lp_sched_replacement_names(void)
{
	return lp_policy_names(lp_policy_has_victim, ", ", " or ");
}

/* ---- renumbering: canonical -> new number, open addressing ---- */

typedef struct renumber_slot {
	uint64_t canonical;
	uint64_t number_plus_one; /* 0: empty slot */
} renumber_slot;

typedef struct renumber_map {
	renumber_slot *slots;
	uint64_t mask, count;
} renumber_map;

static renumber_slot *renumber_probe(renumber_slot *slots, uint64_t mask, uint64_t canonical)
{
	for (uint64_t i = lp_mix64(canonical) & mask;; i = (i + 1) & mask)
		if (!slots[i].number_plus_one || slots[i].canonical == canonical)
			return &slots[i];
}

static uint64_t renumber(renumber_map *m, uint64_t canonical)
{
	renumber_slot *s = renumber_probe(m->slots, m->mask, canonical);
	if (s->number_plus_one)
		return s->number_plus_one - 1;
	if ((m->count + 1) * 4 > (m->mask + 1) * 3) {
		uint64_t cap = (m->mask + 1) * 2;
		renumber_slot *slots = g_new0(renumber_slot, cap);
		for (uint64_t i = 0; i <= m->mask; i++)
			if (m->slots[i].number_plus_one)
				*renumber_probe(slots, cap - 1, m->slots[i].canonical) = m->slots[i];
		g_free(m->slots);
		m->slots = slots;
		m->mask = cap - 1;
		s = renumber_probe(slots, m->mask, canonical);
	}
	s->canonical = canonical;
	s->number_plus_one = ++m->count;
	return m->count - 1;
}

/* ---- the run ---- */

typedef struct cpu_state {
	size_t unit;         /* running, or NONE: idle */
	uint64_t slice_left; /* references this slice may still emit */
	bool slice_counted;  /* the slice has emitted a reference */
	size_t picture;      /* its entry in the report's slices, or NONE */
	const lp_sched_ref *batch; /* the unit's next references: buffer's, or the source's */
	lp_sched_ref *buffer;      /* where read puts them (a source without view) */
	size_t pos, len;
} cpu_state;

/* The record that creates a unit, as the waiting table's key. */
typedef struct creation_key {
	uint64_t timestamp, parent, child;
	char tag;
} creation_key;

typedef struct memory memory;

typedef struct engine {
	const lp_sched_input *in;
	const lp_sched_options *opt;
	const lp_sched_sink *sink;
	lp_sched_report *rep;
	lp_error *err;
	cpu_state *cpu;
	size_t *queue; /* ring buffer of units */
	size_t qhead, qlen, qcap;
	GArray *ready_now;   /* units made ready during this tick, in order */
	GArray *slice_ended; /* units whose slice ended this tick, by processor */
	GHashTable *waiting; /* creation_key * -> unit + 1 */
	uint64_t rng;
	bool renumbering;
	renumber_map numbers;
	lp_sched_out *out;      /* own_out, or the sink's buffer */
	size_t nout, out_cap;
	lp_sched_out *own_out;
	memory *mem; /* 9.4, or NULL */
} engine;

static guint creation_hash(gconstpointer p)
{
	const creation_key *k = p;
	return (guint)lp_mix64(k->timestamp ^ k->parent * 31 ^ k->child * 1009 ^ (uint64_t)k->tag);
}

static gboolean creation_equal(gconstpointer a, gconstpointer b)
{
	const creation_key *x = a, *y = b;
	return x->timestamp == y->timestamp && x->parent == y->parent && x->child == y->child &&
	       x->tag == y->tag;
}

/* Where the next references go. */
static void out_reset(engine *e)
{
	lp_sched_out *buffer = e->sink->buffer ? e->sink->buffer(e->sink->ctx, &e->out_cap) : NULL;
	e->out = buffer ? buffer : e->own_out;
	if (!buffer)
		e->out_cap = OUT_BATCH;
	e->nout = 0;
}

static int flush_out(engine *e)
{
	int rc = e->nout ? e->sink->refs(e->sink->ctx, e->out, e->nout, e->err) : 0;
	if (!rc)
		out_reset(e);
	return rc;
}

static int put_out(engine *e, const lp_sched_ref *ref, unsigned cpu)
{
	if (e->nout == e->out_cap && flush_out(e))
		return -1;
	lp_sched_out *o = &e->out[e->nout++];
	o->canonical = e->renumbering ? renumber(&e->numbers, ref->canonical) : ref->canonical;
	o->cpu = cpu;
	o->type = ref->type;
	return 0;
}

/* Processor 0's run of n references, as emit_block's single processor
 * gives them: copied a chunk at a time, with no test per reference. */
static int put_run(engine *e, const lp_sched_ref *refs, size_t n)
{
	while (n) {
		if (e->nout == e->out_cap && flush_out(e))
			return -1;
		size_t k = MIN(n, e->out_cap - e->nout);
		lp_sched_out *o = e->out + e->nout;
		if (e->renumbering)
			for (size_t i = 0; i < k; i++)
				o[i] = (lp_sched_out){renumber(&e->numbers, refs[i].canonical), 0, refs[i].type};
		else
			for (size_t i = 0; i < k; i++)
				o[i] = (lp_sched_out){refs[i].canonical, 0, refs[i].type};
		e->nout += k;
		refs += k;
		n -= k;
	}
	return 0;
}

static void queue_push(engine *e, size_t unit)
{
	if (e->qlen == e->qcap) {
		size_t cap = e->qcap ? e->qcap * 2 : 64;
		size_t *q = g_new(size_t, cap);
		for (size_t i = 0; i < e->qlen; i++)
			q[i] = e->queue[(e->qhead + i) % e->qcap];
		g_free(e->queue);
		e->queue = q;
		e->qcap = cap;
		e->qhead = 0;
	}
	e->queue[(e->qhead + e->qlen++) % e->qcap] = unit;
	if (e->in->source.soon)
		e->in->source.soon(e->in->source.ctx, unit);
}

/* Take the queue's entry at index i; the others keep their order. */
static size_t queue_take(engine *e, size_t i)
{
	size_t unit = e->queue[(e->qhead + i) % e->qcap];
	for (size_t k = i; k > 0; k--)
		e->queue[(e->qhead + k) % e->qcap] = e->queue[(e->qhead + k - 1) % e->qcap];
	e->qhead = (e->qhead + 1) % e->qcap;
	e->qlen--;
	return unit;
}

/* A unit consumed an event record: its parent's copy of an F or T makes
 * the child's unit ready. */
static void consume_event(engine *e, size_t unit, const lp_sched_event *ev)
{
	if ((ev->tag != 'F' && ev->tag != 'T') || ev->parent != e->in->units[unit].tid)
		return;
	creation_key key = {ev->timestamp, ev->parent, ev->child, ev->tag};
	gpointer child;
	if (!g_hash_table_lookup_extended(e->waiting, &key, NULL, &child))
		return;
	g_hash_table_remove(e->waiting, &key);
	size_t u = GPOINTER_TO_SIZE(child) - 1;
	g_array_append_val(e->ready_now, u);
}

/* Processor c's unit has emitted its batch (or was just dispatched):
 * consume the event records that follow at once and read the next batch,
 * no longer than the slice. Sets the unit done (cpu unit kept; *done true)
 * when nothing is left. Returns 0 or -1. */
static int refill(engine *e, cpu_state *c, bool *done)
{
	*done = false;
	c->pos = c->len = 0;
	for (;;) {
		size_t cap = (size_t)MIN(c->slice_left, (uint64_t)CPU_BATCH);
		lp_sched_event ev;
		const lp_sched_source *src = &e->in->source;
		ssize_t n = src->view ? src->view(src->ctx, c->unit, &c->batch, cap, &ev, e->err)
				      : src->read(src->ctx, c->unit, c->buffer, cap, UINT64_MAX, &ev, e->err);
		if (!src->view)
			c->batch = c->buffer;
		if (n < 0)
			return -1;
		if (n > 0) {
			c->len = (size_t)n;
			return 0;
		}
		if (ev.tag == LP_SCHED_END) {
			*done = true;
			return 0;
		}
		if (ev.tag == LP_SCHED_MORE)
			return 0;
		consume_event(e, c->unit, &ev);
	}
}

/* An idle processor takes units from the queue until one has a reference
 * to emit (or the queue is empty). */
static int dispatch(engine *e, unsigned index)
{
	cpu_state *c = &e->cpu[index];
	while (e->qlen) {
		size_t at = 0;
		if (e->opt->policy == LP_SCHED_RANDOM)
			at = (size_t)(lp_splitmix64_next(&e->rng) % e->qlen);
		c->unit = queue_take(e, at);
		c->slice_left = e->opt->quantum;
		c->slice_counted = false;
		bool done;
		if (refill(e, c, &done))
			return -1;
		if (!done)
			return 0;
		c->unit = NONE; /* only events were left: it leaves */
	}
	return 0;
}

/* The references of ticks [tick, tick + m), every busy processor one a
 * tick, in processor order. */
static int emit_block(engine *e, uint64_t tick, uint64_t m)
{
	unsigned ncpus = e->opt->cpus;
	lp_sched_report *rep = e->rep;
	for (unsigned i = 0; i < ncpus; i++) {
		cpu_state *c = &e->cpu[i];
		if (c->unit == NONE)
			continue;
		lp_sched_unit_stats *us = &rep->unit[c->unit];
		if (!c->slice_counted) {
			c->slice_counted = true;
			rep->cpu[i].slices++;
			us->slices++;
			c->picture = NONE;
			if (rep->nslices[i] < LP_SCHED_PICTURE_SLICES) {
				c->picture = rep->nslices[i]++;
				rep->slices[i][c->picture] = (lp_sched_slice){c->unit, tick, tick};
			}
		}
		if (!us->references)
			us->first_tick = tick;
		us->references += m;
		us->last_tick = tick + m - 1;
		rep->cpu[i].references += m;
		if (e->sink->ran)
			e->sink->ran(e->sink->ctx, i, c->unit, tick, m);
		c->slice_left -= m;
		if (c->picture != NONE)
			rep->slices[i][c->picture].last_tick = tick + m - 1;
	}
	if (ncpus == 1) {
		cpu_state *c = &e->cpu[0];
		if (put_run(e, c->batch + c->pos, (size_t)m))
			return -1;
		c->pos += m;
	} else {
		for (uint64_t t = 0; t < m; t++)
			for (unsigned i = 0; i < ncpus; i++)
				if (e->cpu[i].unit != NONE && put_out(e, &e->cpu[i].batch[e->cpu[i].pos + t], i))
					return -1;
		for (unsigned i = 0; i < ncpus; i++)
			e->cpu[i].pos += e->cpu[i].unit != NONE ? m : 0;
	}
	rep->ticks = tick + m;
	return 0;
}

/* The end of a tick: units made ready join the queue, then those whose
 * slice ended. */
static void end_tick(engine *e)
{
	for (guint i = 0; i < e->ready_now->len; i++)
		queue_push(e, g_array_index(e->ready_now, size_t, i));
	for (guint i = 0; i < e->slice_ended->len; i++)
		queue_push(e, g_array_index(e->slice_ended, size_t, i));
	g_array_set_size(e->ready_now, 0);
	g_array_set_size(e->slice_ended, 0);
}

static int run_dynamic(engine *e)
{
	unsigned ncpus = e->opt->cpus;
	uint64_t tick = 0;
	for (;;) {
		bool any_idle = false, any_busy = false;
		uint64_t m = UINT64_MAX;
		for (unsigned i = 0; i < ncpus; i++) {
			cpu_state *c = &e->cpu[i];
			if (c->unit == NONE && dispatch(e, i))
				return -1;
			if (c->unit == NONE) {
				any_idle = true;
				continue;
			}
			any_busy = true;
			m = MIN(m, (uint64_t)(c->len - c->pos));
		}
		if (!any_busy) {
			if (!e->ready_now->len)
				return 0; /* nothing runs, nothing is queued or ready */
			end_tick(e);
			tick++;
			continue;
		}
		/* A unit made ready now could be dispatched at the next tick. */
		if (any_idle && e->ready_now->len)
			m = 1;
		if (emit_block(e, tick, m))
			return -1;
		tick += m - 1; /* the block's last tick, whose end follows */
		for (unsigned i = 0; i < ncpus; i++) {
			cpu_state *c = &e->cpu[i];
			if (c->unit == NONE || c->pos < c->len)
				continue;
			bool done;
			if (refill(e, c, &done))
				return -1;
			if (!done && c->slice_left)
				continue;
			if (!done)
				g_array_append_val(e->slice_ended, c->unit);
			c->unit = NONE;
		}
		end_tick(e);
		tick++;
	}
}

/* ---- with a memory (9.4) ----
 *
 * Tick by tick: a reference's page decides, at its tick, whether it is
 * emitted, and the events of a tick (faults, frames taken, releases)
 * change what the next processor finds. Pages are dense numbers handed
 * out in the order the engine first reads them (a hash of canonical
 * numbers, looked up a batch at a time as the batch is read), so that the
 * pages' states and the replacement policy (analysis/policy.h, the
 * policies of laplace sim) are arrays indexed by page.
 *
 * A unit's batch is its own here, not its processor's: a unit that blocks
 * keeps the references it had read, and emits them once dispatched again.
 * Batches come from a pool and go back to it when used up, so only the
 * running and the blocked units hold one. */

#define MEM_BATCH 256 /* references read ahead per unit */

enum { PAGE_ABSENT, PAGE_PENDING, PAGE_TRANSIT, PAGE_RESIDENT };

typedef struct mem_batch {
	lp_sched_ref *buffer; /* where read puts them (a source without view) */
	lp_pageno *pages;     /* the references' pages */
} mem_batch;

typedef struct mem_unit {
	const lp_sched_ref *refs; /* its batch: buffer's, or the source's */
	mem_batch batch;          /* pages NULL: none held */
	size_t pos, len;
	lp_pageno hold;           /* the page it blocked on until it emits it, or LP_NO_PAGE */
	bool own_fault;           /* it blocked by faulting on hold, not by waiting */
	uint64_t since;           /* the tick it blocked in */
	size_t next_blocked;      /* the next unit blocked on the same page, or NONE */
} mem_unit;

/* A FIFO of pages, in a ring that grows. */
typedef struct page_fifo {
	lp_pageno *pages;
	uint64_t *ticks; /* with timed: arrival ticks */
	size_t head, len, cap;
	bool timed;      /* transit, not the frame queue */
} page_fifo;

struct memory {
	const lp_policy_ops *ops;
	void *policy;
	uint64_t frames, fault_ticks;
	mem_unit *units;
	GArray *free_batches; /* mem_batch */
	lp_page_numbers numbers; /* canonical -> page */
	/* Per page, room for cap pages. */
	uint8_t *state, *held;
	uint32_t *holders;        /* units holding a resident page */
	size_t *blocked_first, *blocked_last; /* units blocked on a pending or transit page */
	size_t cap;
	uint64_t used, resident, held_resident; /* frames in use; resident pages, held ones */
	page_fifo frame_queue, transit;
	GArray *unblocked; /* units unblocked this tick, in order */
};

static void fifo_push(page_fifo *f, lp_pageno page, uint64_t tick)
{
	if (f->len == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		lp_pageno *pages = g_new(lp_pageno, cap);
		uint64_t *ticks = f->timed ? g_new(uint64_t, cap) : NULL;
		for (size_t i = 0; i < f->len; i++) {
			pages[i] = f->pages[(f->head + i) % f->cap];
			if (ticks)
				ticks[i] = f->ticks[(f->head + i) % f->cap];
		}
		g_free(f->pages);
		g_free(f->ticks);
		f->pages = pages;
		f->ticks = ticks;
		f->cap = cap;
		f->head = 0;
	}
	size_t at = (f->head + f->len++) % f->cap;
	f->pages[at] = page;
	if (f->timed)
		f->ticks[at] = tick;
}

static lp_pageno fifo_pop(page_fifo *f)
{
	lp_pageno page = f->pages[f->head];
	f->head = (f->head + 1) % f->cap;
	f->len--;
	return page;
}

/* Room for page numbers below n in the per-page arrays. */
static void pages_reserve(memory *m, size_t n)
{
	if (n <= m->cap)
		return;
	size_t cap = MAX(m->cap * 2, n);
	m->state = g_renew(uint8_t, m->state, cap);
	m->held = g_renew(uint8_t, m->held, cap);
	m->holders = g_renew(uint32_t, m->holders, cap);
	m->blocked_first = g_renew(size_t, m->blocked_first, cap);
	m->blocked_last = g_renew(size_t, m->blocked_last, cap);
	memset(m->state + m->cap, PAGE_ABSENT, cap - m->cap);
	memset(m->held + m->cap, 0, cap - m->cap);
	memset(m->holders + m->cap, 0, (cap - m->cap) * sizeof *m->holders);
	m->cap = cap;
}

/* The page of canonical, a new one the first time. */
static inline lp_pageno page_of(memory *m, uint64_t canonical)
{
	lp_pageno page = lp_page_numbers_find(&m->numbers, canonical);
	if (page != LP_NO_PAGE)
		return page;
	page = lp_page_numbers_add(&m->numbers, canonical);
	pages_reserve(m, m->numbers.pages);
	return page;
}

static void batch_release(memory *m, mem_unit *mu)
{
	if (!mu->batch.pages)
		return;
	g_array_append_val(m->free_batches, mu->batch);
	mu->batch.pages = NULL;
	mu->batch.buffer = NULL;
}

/* Unit u, just dispatched or having emitted its batch's last reference:
 * consume the event records that follow at once and read its next batch,
 * no longer than its slice (processor c's), with their pages. *done when
 * nothing is left (its batch let go). Returns 0 or -1. */
static int mem_refill(engine *e, cpu_state *c, size_t u, bool *done)
{
	memory *m = e->mem;
	mem_unit *mu = &m->units[u];
	const lp_sched_source *src = &e->in->source;
	*done = false;
	mu->pos = mu->len = 0;
	if (!mu->batch.pages) {
		if (m->free_batches->len) {
			mu->batch = g_array_index(m->free_batches, mem_batch, m->free_batches->len - 1);
			g_array_set_size(m->free_batches, m->free_batches->len - 1);
		} else {
			mu->batch.pages = g_new(lp_pageno, MEM_BATCH);
			mu->batch.buffer = src->view ? NULL : g_new(lp_sched_ref, MEM_BATCH);
		}
	}
	for (;;) {
		size_t cap = (size_t)MIN(c->slice_left, (uint64_t)MEM_BATCH);
		lp_sched_event ev;
		ssize_t n = src->view ? src->view(src->ctx, u, &mu->refs, cap, &ev, e->err)
				      : src->read(src->ctx, u, mu->batch.buffer, cap, UINT64_MAX, &ev, e->err);
		if (!src->view)
			mu->refs = mu->batch.buffer;
		if (n < 0)
			return -1;
		if (n > 0) {
			mu->len = (size_t)n;
			for (size_t i = 0; i < mu->len; i++)
				mu->batch.pages[i] = page_of(m, mu->refs[i].canonical);
			return 0;
		}
		if (ev.tag == LP_SCHED_END)
			*done = true;
		if (ev.tag == LP_SCHED_END || ev.tag == LP_SCHED_MORE) {
			batch_release(m, mu);
			return 0;
		}
		consume_event(e, u, &ev);
	}
}

/* An idle processor takes units from the queue until one has a reference
 * to emit (or the queue is empty); a unit that blocked still has its. */
static int mem_dispatch(engine *e, unsigned index)
{
	cpu_state *c = &e->cpu[index];
	while (e->qlen) {
		size_t at = 0;
		if (e->opt->policy == LP_SCHED_RANDOM)
			at = (size_t)(lp_splitmix64_next(&e->rng) % e->qlen);
		size_t u = queue_take(e, at);
		c->unit = u;
		c->slice_left = e->opt->quantum;
		c->slice_counted = false;
		if (e->mem->units[u].pos < e->mem->units[u].len)
			return 0;
		bool done;
		if (mem_refill(e, c, u, &done))
			return -1;
		if (!done)
			return 0;
		c->unit = NONE; /* only events were left: it leaves */
	}
	return 0;
}

static bool frame_at_hand(const memory *m)
{
	return m->used < m->frames || m->resident > m->held_resident;
}

/* Page p takes a frame in tick t (9.4.3, step 3). Returns 0, or -1 with
 * e->err set when it would arrive past LP_SCHED_MAX_TICKS. */
static int take_frame(engine *e, lp_pageno p, uint64_t t)
{
	memory *m = e->mem;
	if (t > LP_SCHED_MAX_TICKS - m->fault_ticks)
		return lp_fail(e->err, LP_EINPUT,
			       "a page faulted in tick %" PRIu64 " would arrive %" PRIu64
			       " ticks later, past tick 2^63: laplace schedule counts ticks in 64 bits",
			       t, m->fault_ticks - 1);
	if (m->used < m->frames) {
		m->used++;
	} else {
		lp_pageno victim = m->ops->victim(m->policy, m->held);
		m->state[victim] = PAGE_ABSENT;
		m->resident--;
		e->rep->mem.evictions++;
	}
	m->state[p] = PAGE_TRANSIT;
	fifo_push(&m->transit, p, t + m->fault_ticks - 1);
	return 0;
}

/* Unit u, on processor c, blocks on page p in tick t: a wait, or a fault
 * that takes a frame or joins the frame queue. Returns 0 or -1. */
static int block(engine *e, unsigned c, size_t u, lp_pageno p, uint64_t t)
{
	memory *m = e->mem;
	mem_unit *mu = &m->units[u];
	bool fault = m->state[p] == PAGE_ABSENT;
	mu->hold = p;
	mu->own_fault = fault;
	mu->since = t;
	mu->next_blocked = NONE;
	if (fault) {
		e->rep->mem.faults++;
		e->rep->cpu[c].faults++;
		e->rep->unit[u].faults++;
		m->state[p] = PAGE_PENDING;
		m->blocked_first[p] = u;
		m->blocked_last[p] = u;
		if (!m->frame_queue.len && frame_at_hand(m))
			return take_frame(e, p, t);
		fifo_push(&m->frame_queue, p, 0);
		e->rep->mem.frame_waits++;
		return 0;
	}
	e->rep->mem.waits++;
	e->rep->cpu[c].waits++;
	e->rep->unit[u].waits++;
	m->units[m->blocked_last[p]].next_blocked = u;
	m->blocked_last[p] = u;
	return 0;
}

/* Processor c's unit u has emitted a reference: at the end of its batch,
 * the events that follow and the next batch; a done unit leaves, one whose
 * slice is used up will go to the back of the queue. */
static int mem_emitted(engine *e, cpu_state *c, size_t u)
{
	if (e->mem->units[u].pos < e->mem->units[u].len)
		return 0;
	bool done;
	if (mem_refill(e, c, u, &done))
		return -1;
	if (!done && !c->slice_left)
		g_array_append_val(e->slice_ended, u);
	if (done || !c->slice_left)
		c->unit = NONE;
	return 0;
}

/* Processor c's unit emits its next reference, to a resident page, in
 * tick t: the replacement state, the release of a held page, the figures,
 * then what follows the reference (9.4.3, step 2). */
static int mem_emit(engine *e, unsigned index, lp_pageno p, uint64_t t)
{
	memory *m = e->mem;
	cpu_state *c = &e->cpu[index];
	size_t u = c->unit;
	mem_unit *mu = &m->units[u];
	if (mu->hold != p || !mu->own_fault)
		m->ops->hit(m->policy, p);
	if (mu->hold == p) {
		mu->hold = LP_NO_PAGE;
		if (!--m->holders[p]) {
			m->held[p] = 0;
			m->held_resident--;
			while (m->frame_queue.len && frame_at_hand(m))
				if (take_frame(e, fifo_pop(&m->frame_queue), t))
					return -1;
		}
	}
	lp_sched_report *rep = e->rep;
	lp_sched_unit_stats *us = &rep->unit[u];
	if (!c->slice_counted) {
		c->slice_counted = true;
		rep->cpu[index].slices++;
		us->slices++;
		c->picture = NONE;
		if (rep->nslices[index] < LP_SCHED_PICTURE_SLICES) {
			c->picture = rep->nslices[index]++;
			rep->slices[index][c->picture] = (lp_sched_slice){u, t, t};
		}
	}
	if (c->picture != NONE)
		rep->slices[index][c->picture].last_tick = t;
	if (!us->references)
		us->first_tick = t;
	us->references++;
	us->last_tick = t;
	rep->cpu[index].references++;
	rep->ticks = t + 1;
	if (e->sink->ran)
		e->sink->ran(e->sink->ctx, index, u, t, 1);
	if (e->sink->refs && put_out(e, &mu->refs[mu->pos], index))
		return -1;
	mu->pos++;
	c->slice_left--;
	return mem_emitted(e, c, u);
}

/* One processor: after its reference of tick t, while nothing happens at
 * the ends of the ticks, the references its unit emits in the next ticks,
 * as many as are resident in a row (and no further than the next arrival
 * or the end of the batch or slice): the same events as tick by tick, at
 * less cost. A hit repeated with nothing between changes nothing (lru's
 * page is already the most recent, clock's bit already set), so the run
 * leaves out its own repeats. Returns the last tick emitted in (t: none). */
static int mem_run(engine *e, uint64_t t, uint64_t *last)
{
	memory *m = e->mem;
	cpu_state *c = &e->cpu[0];
	size_t u = c->unit;
	mem_unit *mu = &m->units[u];
	*last = t;
	uint64_t room = MIN((uint64_t)(mu->len - mu->pos), c->slice_left);
	if (m->transit.len)
		room = MIN(room, m->transit.ticks[m->transit.head] - t);
	const lp_pageno *pages = mu->batch.pages + mu->pos;
	const uint8_t *state = m->state;
	/* Not the reference before the run: it may have completed a fault,
	 * which is no hit. */
	lp_pageno prev = LP_NO_PAGE;
	size_t k = 0;
	for (; k < room && state[pages[k]] == PAGE_RESIDENT; prev = pages[k++])
		if (pages[k] != prev)
			m->ops->hit(m->policy, pages[k]);
	if (!k)
		return 0;
	lp_sched_report *rep = e->rep;
	lp_sched_unit_stats *us = &rep->unit[u];
	us->references += k;
	us->last_tick = t + k;
	rep->cpu[0].references += k;
	rep->ticks = t + k + 1;
	if (c->picture != NONE)
		rep->slices[0][c->picture].last_tick = t + k;
	if (e->sink->ran)
		e->sink->ran(e->sink->ctx, 0, u, t + 1, k);
	if (e->sink->refs && put_run(e, mu->refs + mu->pos, k))
		return -1;
	mu->pos += k;
	c->slice_left -= k;
	*last = t + k;
	return mem_emitted(e, c, u);
}

/* The end of tick t (9.4.3, phase 2): arrivals, then the ready queue. */
static void mem_end_tick(engine *e, uint64_t t)
{
	memory *m = e->mem;
	while (m->transit.len && m->transit.ticks[m->transit.head] == t) {
		lp_pageno p = fifo_pop(&m->transit);
		m->state[p] = PAGE_RESIDENT;
		m->resident++;
		m->ops->arrive(m->policy, p);
		uint32_t holders = 0;
		for (size_t u = m->blocked_first[p]; u != NONE; u = m->units[u].next_blocked) {
			e->rep->unit[u].blocked_ticks += t - m->units[u].since + 1;
			g_array_append_val(m->unblocked, u);
			holders++;
		}
		m->holders[p] = holders;
		m->held[p] = 1;
		m->held_resident++;
	}
	if (!e->ready_now->len && !m->unblocked->len && !e->slice_ended->len)
		return;
	for (guint i = 0; i < e->ready_now->len; i++)
		queue_push(e, g_array_index(e->ready_now, size_t, i));
	for (guint i = 0; i < m->unblocked->len; i++)
		queue_push(e, g_array_index(m->unblocked, size_t, i));
	for (guint i = 0; i < e->slice_ended->len; i++)
		queue_push(e, g_array_index(e->slice_ended, size_t, i));
	/* Most ends of ticks fill one of the three: the others cost no call. */
	if (e->ready_now->len)
		g_array_set_size(e->ready_now, 0);
	if (m->unblocked->len)
		g_array_set_size(m->unblocked, 0);
	if (e->slice_ended->len)
		g_array_set_size(e->slice_ended, 0);
}

static int run_memory(engine *e)
{
	memory *m = e->mem;
	unsigned ncpus = e->opt->cpus;
	for (uint64_t tick = 0;; tick++) {
		for (unsigned i = 0; i < ncpus; i++) {
			cpu_state *c = &e->cpu[i];
			for (;;) {
				if (c->unit == NONE && mem_dispatch(e, i))
					return -1;
				if (c->unit == NONE)
					break;
				mem_unit *mu = &m->units[c->unit];
				lp_pageno p = mu->batch.pages[mu->pos];
				if (m->state[p] == PAGE_RESIDENT) {
					if (mem_emit(e, i, p, tick))
						return -1;
					/* One processor, and nothing at the end of
					 * this tick: run on. */
					if (ncpus == 1 && c->unit != NONE && !e->ready_now->len &&
					    (!m->transit.len || m->transit.ticks[m->transit.head] > tick) &&
					    mem_run(e, tick, &tick))
						return -1;
					break;
				}
				if (block(e, i, c->unit, p, tick))
					return -1;
				c->unit = NONE;
			}
		}
		mem_end_tick(e, tick);
		if (e->qlen)
			continue;
		bool running = false;
		for (unsigned i = 0; i < ncpus && !running; i++)
			running = e->cpu[i].unit != NONE;
		if (running)
			continue;
		/* Nothing to run until the next arrival: the ticks before it
		 * are idle for every processor. */
		if (!m->transit.len)
			return 0;
		tick = m->transit.ticks[m->transit.head] - 1;
	}
}

static void memory_init(engine *e)
{
	memory *m = g_new0(memory, 1);
	const lp_policy_info *info = replacement_of(e->opt);
	/* The pages a first guess; the options at their defaults. */
	static const lp_policy_settings defaults;
	lp_policy_params params = {.frames = e->opt->memory, .pages = 1024};
	if (info->resolve)
		info->resolve(&defaults, params.frames, &params);
	m->ops = info->ops;
	m->policy = m->ops->create(&params);
	m->frames = e->opt->memory;
	m->fault_ticks = e->opt->fault_ticks;
	m->units = g_new0(mem_unit, e->in->nunits ? e->in->nunits : 1);
	for (size_t u = 0; u < e->in->nunits; u++)
		m->units[u].hold = LP_NO_PAGE;
	m->free_batches = g_array_new(FALSE, FALSE, sizeof(mem_batch));
	lp_page_numbers_init(&m->numbers);
	pages_reserve(m, 1024);
	m->transit.timed = true;
	m->unblocked = g_array_new(FALSE, FALSE, sizeof(size_t));
	e->mem = m;
}

static void memory_free(memory *m, size_t nunits)
{
	if (!m)
		return;
	m->ops->destroy(m->policy);
	for (size_t u = 0; u < nunits; u++)
		batch_release(m, &m->units[u]);
	for (guint i = 0; i < m->free_batches->len; i++) {
		mem_batch *b = &g_array_index(m->free_batches, mem_batch, i);
		g_free(b->pages);
		g_free(b->buffer);
	}
	g_array_free(m->free_batches, TRUE);
	g_free(m->units);
	lp_page_numbers_clear(&m->numbers);
	g_free(m->state);
	g_free(m->held);
	g_free(m->holders);
	g_free(m->blocked_first);
	g_free(m->blocked_last);
	g_free(m->frame_queue.pages);
	g_free(m->transit.pages);
	g_free(m->transit.ticks);
	g_array_free(m->unblocked, TRUE);
	g_free(m);
}

/* ---- as-traced: the files merged by timestamp ---- */

typedef struct file_head {
	lp_sched_ref ref;  /* its next reference */
	size_t unit;       /* the unit being read, NONE for kernel and orphan */
} file_head;

/* Heap order: timestamp, then file order. */
static bool head_before(const file_head *heads, size_t a, size_t b)
{
	return heads[a].ref.timestamp < heads[b].ref.timestamp ||
	       (heads[a].ref.timestamp == heads[b].ref.timestamp && a < b);
}

static void heap_push(size_t *heap, size_t *n, const file_head *heads, size_t f)
{
	size_t i = (*n)++;
	while (i > 0 && head_before(heads, f, heap[(i - 1) / 2])) {
		heap[i] = heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	heap[i] = f;
}

static size_t heap_pop(size_t *heap, size_t *n, const file_head *heads)
{
	size_t top = heap[0], last = heap[--*n], i = 0;
	for (;;) {
		size_t child = 2 * i + 1;
		if (child >= *n)
			break;
		if (child + 1 < *n && head_before(heads, heap[child + 1], heap[child]))
			child++;
		if (!head_before(heads, heap[child], last))
			break;
		heap[i] = heap[child];
		i = child;
	}
	if (*n)
		heap[i] = last;
	return top;
}

/* What read_file returns when the next reference is past last_ts. */
#define NEXT_IS_LATER (-2)

/* File f's next references, at most cap with timestamps up to last_ts,
 * into refs; an X of the file's own task on the way ends its unit (what
 * follows is the next). Returns their count, 0 at the file's end,
 * NEXT_IS_LATER, or -1 on error. */
static ssize_t read_file(engine *e, size_t f, file_head *h, lp_sched_ref *refs, size_t cap,
			 uint64_t last_ts)
{
	for (;;) {
		lp_sched_event ev;
		ssize_t n = e->in->source.read(e->in->source.ctx, f, refs, cap, last_ts, &ev, e->err);
		if (n != 0)
			return n;
		if (ev.tag == LP_SCHED_END)
			return 0;
		if (ev.tag == LP_SCHED_MORE)
			return NEXT_IS_LATER;
		if (ev.tag == 'X' && h->unit != NONE && ev.task == e->in->files[f].tid)
			h->unit++;
	}
}

/* Emit one reference of file head h at *tick; a unit's slice is its run
 * of consecutive references in the output. */
static int emit_traced(engine *e, const file_head *h, const lp_sched_ref *ref, size_t *last_unit,
		       uint64_t *tick)
{
	lp_sched_report *rep = e->rep;
	if (h->unit != NONE) {
		lp_sched_unit_stats *us = &rep->unit[h->unit];
		if (*last_unit != h->unit) {
			us->slices++;
			rep->cpu[0].slices++;
			if (rep->nslices[0] < LP_SCHED_PICTURE_SLICES)
				rep->slices[0][rep->nslices[0]++] = (lp_sched_slice){h->unit, *tick, *tick};
		}
		if (!us->references)
			us->first_tick = *tick;
		us->references++;
		us->last_tick = *tick;
		lp_sched_slice *last = rep->nslices[0] ? &rep->slices[0][rep->nslices[0] - 1] : NULL;
		if (last && last->unit == h->unit)
			last->last_tick = *tick;
		if (e->sink->ran)
			e->sink->ran(e->sink->ctx, 0, h->unit, *tick, 1);
	}
	*last_unit = h->unit;
	rep->cpu[0].references++;
	++*tick;
	return put_out(e, ref, 0);
}

static int run_as_traced(engine *e)
{
	size_t nfiles = e->in->nfiles;
	file_head *heads = g_new0(file_head, nfiles);
	size_t *heap = g_new(size_t, nfiles + 1), nheap = 0;
	lp_sched_ref *batch = g_new(lp_sched_ref, CPU_BATCH);
	size_t last_unit = NONE;
	uint64_t tick = 0;
	int rc = 0;
	for (size_t f = 0; f < nfiles && !rc; f++) {
		heads[f].unit = e->in->files[f].first_unit;
		ssize_t got = read_file(e, f, &heads[f], &heads[f].ref, 1, UINT64_MAX);
		if (got < 0)
			rc = -1;
		else if (got)
			heap_push(heap, &nheap, heads, f);
	}
	while (!rc && nheap) {
		size_t f = heap_pop(heap, &nheap, heads);
		file_head *h = &heads[f];
		/* Its head, then what comes before the next file's head (an
		 * equal timestamp too when f comes first in file order). */
		uint64_t last_ts = UINT64_MAX;
		if (nheap)
			last_ts = heads[heap[0]].ref.timestamp - (f < heap[0] ? 0 : 1);
		rc = emit_traced(e, h, &h->ref, &last_unit, &tick);
		ssize_t got = 0;
		while (!rc && (got = read_file(e, f, h, batch, CPU_BATCH, last_ts)) > 0)
			for (ssize_t i = 0; i < got && !rc; i++)
				rc = emit_traced(e, h, &batch[i], &last_unit, &tick);
		if (!rc && got == NEXT_IS_LATER)
			got = read_file(e, f, h, &h->ref, 1, UINT64_MAX);
		if (!rc && got < 0)
			rc = -1;
		else if (!rc && got)
			heap_push(heap, &nheap, heads, f);
	}
	e->rep->ticks = tick;
	g_free(batch);
	g_free(heap);
	g_free(heads);
	return rc;
}

/* ---- setup and report ---- */

static int unit_order_cmp(const void *a, const void *b, void *units)
{
	const lp_sched_unit *x = (const lp_sched_unit *)units + *(const size_t *)a;
	const lp_sched_unit *y = (const lp_sched_unit *)units + *(const size_t *)b;
	if (x->first_ts != y->first_ts)
		return x->first_ts < y->first_ts ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->incarnation != y->incarnation)
		return x->incarnation < y->incarnation ? -1 : 1;
	return 0;
}

void lp_sched_unit_order(const lp_sched_input *in, size_t *order)
{
	for (size_t i = 0; i < in->nunits; i++)
		order[i] = i;
	if (in->nunits) /* g_new of 0 is NULL, which qsort_r may not take */
		qsort_r(order, in->nunits, sizeof *order, unit_order_cmp, (void *)in->units);
}

/* The file that should hold unit u's creating record: the parent's task
 * file in the same process for T; for F, the parent task's file whose
 * unit began last before the record. NULL when there is none. */
static const char *parent_file(const lp_sched_input *in, const lp_sched_unit *u)
{
	const lp_sched_unit *best = NULL;
	for (size_t i = 0; i < in->nunits; i++) {
		const lp_sched_unit *p = &in->units[i];
		if (p->tid != u->creator_parent || (u->creator == 'T' && p->pid != u->pid) ||
		    p->first_ts > u->first_ts)
			continue;
		if (!best || p->first_ts >= best->first_ts)
			best = p;
	}
	return best ? in->files[best->file].name : NULL;
}

static int missing_creator(engine *e)
{
	const lp_sched_input *in = e->in;
	const lp_sched_unit *u = NULL;
	for (size_t i = 0; i < in->nunits && !u; i++) {
		const lp_sched_unit *v = &in->units[e->rep->unit_order[i]];
		creation_key key = {v->first_ts, v->creator_parent, v->tid, v->creator};
		if (v->creator && g_hash_table_contains(e->waiting, &key))
			u = v;
	}
	const char *parent = parent_file(in, u);
	char none[64];
	g_snprintf(none, sizeof none, "(none: no task file of task %" PRIx64 ")", u->creator_parent);
	return lp_fail(e->err, LP_EINPUT,
		       "%s: incarnation %" PRIu64 " of task %" PRIx64 " is created by '%c %" PRIx64
		       " %" PRIx64 " %" PRIx64 "', which its parent's file %s does not hold",
		       in->files[u->file].name, u->incarnation, u->tid, u->creator, u->first_ts,
		       u->creator_parent, u->tid, parent ? parent : none);
}

static void report_init(lp_sched_report *rep, const lp_sched_input *in, const lp_sched_options *opt)
{
	bool traced = opt->policy == LP_SCHED_AS_TRACED;
	memset(rep, 0, sizeof *rep);
	rep->policy = opt->policy;
	rep->quantum = traced ? 0 : opt->quantum;
	rep->cpus = traced ? 1 : opt->cpus;
	rep->memory = traced ? 0 : opt->memory;
	rep->replacement = replacement_of(opt);
	rep->fault_ticks = opt->fault_ticks;
	rep->cpu = g_new0(lp_sched_cpu_stats, rep->cpus);
	rep->slices = g_malloc0(sizeof *rep->slices * rep->cpus);
	rep->nslices = g_new0(size_t, rep->cpus);
	rep->nunits = in->nunits;
	rep->unit = g_new0(lp_sched_unit_stats, in->nunits);
	rep->units = g_memdup2(in->units, in->nunits * sizeof *in->units);
	rep->unit_order = g_new(size_t, in->nunits);
	lp_sched_unit_order(in, rep->unit_order);
}

uint64_t lp_sched_report_busy(const lp_sched_report *rep)
{
	uint64_t busy = 0;
	for (unsigned i = 0; i < rep->cpus; i++)
		busy += rep->cpu[i].references;
	return busy;
}

lp_u128 lp_sched_report_idle(const lp_sched_report *rep)
{
	return (lp_u128)rep->ticks * rep->cpus - lp_sched_report_busy(rep);
}

void lp_sched_report_utilization(const lp_sched_report *rep, char buf[32])
{
	lp_u128 slots = (lp_u128)rep->ticks * rep->cpus;
	g_snprintf(buf, 32, "%.6f", slots ? (double)lp_sched_report_busy(rep) / (double)slots : 0.0);
}

void lp_sched_report_free(lp_sched_report *rep)
{
	g_free(rep->cpu);
	g_free(rep->unit);
	g_free(rep->units);
	g_free(rep->unit_order);
	g_free(rep->slices);
	g_free(rep->nslices);
	memset(rep, 0, sizeof *rep);
}

int lp_schedule_run(const lp_sched_input *in, const lp_sched_options *opt, const lp_sched_sink *sink,
		    lp_sched_report *rep, lp_error *err)
{
	report_init(rep, in, opt);
	engine e = {
		.in = in,
		.opt = opt,
		.sink = sink,
		.rep = rep,
		.err = err,
		.ready_now = g_array_new(FALSE, FALSE, sizeof(size_t)),
		.slice_ended = g_array_new(FALSE, FALSE, sizeof(size_t)),
		.waiting = g_hash_table_new_full(creation_hash, creation_equal, g_free, NULL),
		.rng = opt->seed,
		.renumbering = opt->renumber,
		.own_out = g_new(lp_sched_out, OUT_BATCH),
	};
	out_reset(&e);
	if (opt->renumber) {
		e.numbers.slots = g_new0(renumber_slot, 1024);
		e.numbers.mask = 1023;
	}
	int rc;
	if (opt->policy == LP_SCHED_AS_TRACED) {
		rc = run_as_traced(&e);
	} else {
		e.cpu = g_new0(cpu_state, opt->cpus);
		for (unsigned i = 0; i < opt->cpus; i++) {
			e.cpu[i].unit = NONE;
			if (!in->source.view && !opt->memory)
				e.cpu[i].buffer = g_new(lp_sched_ref, CPU_BATCH);
		}
		if (opt->memory)
			memory_init(&e);
		/* The tick-0 queue: units not created by a record, in report order. */
		for (size_t i = 0; i < in->nunits; i++) {
			size_t u = rep->unit_order[i];
			const lp_sched_unit *unit = &in->units[u];
			if (!unit->creator) {
				queue_push(&e, u);
				continue;
			}
			creation_key *key = g_new(creation_key, 1);
			*key = (creation_key){unit->first_ts, unit->creator_parent, unit->tid, unit->creator};
			g_hash_table_insert(e.waiting, key, GSIZE_TO_POINTER(u + 1));
		}
		rc = e.mem ? run_memory(&e) : run_dynamic(&e);
		if (!rc && g_hash_table_size(e.waiting))
			rc = missing_creator(&e);
		for (unsigned i = 0; i < opt->cpus; i++)
			g_free(e.cpu[i].buffer);
		g_free(e.cpu);
		memory_free(e.mem, in->nunits);
	}
	if (!rc && e.nout) /* the last: no buffer is wanted after it */
		rc = sink->refs(sink->ctx, e.out, e.nout, err);
	if (!rc)
		for (unsigned i = 0; i < rep->cpus; i++)
			rep->cpu[i].idle_ticks = rep->ticks - rep->cpu[i].references;
	g_free(e.own_out);
	g_free(e.queue);
	g_free(e.numbers.slots);
	g_array_free(e.ready_now, TRUE);
	g_array_free(e.slice_ended, TRUE);
	g_hash_table_destroy(e.waiting);
	if (rc) {
		lp_sched_report_free(rep);
		return err->status ? err->status : LP_EIO;
	}
	return 0;
}
