/* Interleave references and kernel events by timestamp and push them
 * through the merge core into a sink, one step at a time.
 *
 * References travel in batches: every run of references between two
 * events is translated with one lp_merge_refs call and handed to the sink
 * with one call, since the current task cannot change inside it.
 *
 * With threads (lp_pipeline.threads > 1, lp_pipeline_run only) the same
 * steps run in three stages: a reader thread reads and checks batches of
 * references into a fixed ring of SLOTS batches, this thread merges them,
 * and a writer thread hands the runs and events to the sink (formatting,
 * compression, writing). Each stage sees the records in the same order as
 * the single-threaded path, so the output is the same bytes; and a failure
 * is reported as the single-threaded path would: the reader's failures
 * arrive in stream order with its batches, and before this thread reports
 * one of its own it lets the writer finish what came earlier, whose
 * failure, if any, came first.
 *
 * Some sources cost more to decode than the merge costs (text references):
 * those that can cut and decode apart (lp_ref_source_ops.cut, .decode) have
 * the reader thread only cut the batches' records, a work pool
 * (lp_workpool) decodes batches at once, and this thread takes them from
 * it in order and checks their order itself. A batch has the same records
 * as the single-threaded reader would read at once, so that failures come
 * at the same point. */
#include "pipeline/pipeline.h"

#include <inttypes.h>
#include <stdio.h>

#include "io/workpool.h"

#define BATCH 65536
/* Batches in flight between the reader and the writer: enough to keep the
 * stages busy through each other's bursts, little enough to keep memory
 * (2 MiB a batch, and its text, 1.7 MiB for a gen capture) and latency
 * small. With parser threads, two more for each. */
#define SLOTS 4
#define MAX_PARSERS 8
#define MAX_SLOTS (SLOTS + 2 * MAX_PARSERS)
/* The merging thread hands the writer its runs and events in parcels of
 * up to PARCEL_ITEMS, one parcel at least per batch, from a fixed set of
 * PARCELS: handing over each item alone (a capture has an event every
 * thousand references or so) cost more in locking and waking than the
 * writer's work. The fixed set also bounds what waits for the writer:
 * events carry no batch, and a long stretch of them would otherwise queue
 * without end. */
#define PARCEL_ITEMS 1024
#define PARCELS 4

/* A batch of references read, with what the reader found. */
typedef struct ref_batch {
	lp_ref *refs;
	uint64_t *canon; /* their canonical numbers, once translated */
	size_t n;        /* 0: the end of the input, or a failure */
	uint64_t first_index; /* refs[0]'s index in the input */
	int status;      /* the reader's failure, with err */
	lp_error err;
	double fraction; /* of the reference input read, or -1 */
	/* Records cut by the reader; to_parse: given to the parsing pool, whose
	 * result the merging thread takes before refs and status. */
	lp_text_chunk text;
	bool to_parse;
} ref_batch;

/* What the merging thread queues for the writer thread. */
enum item_kind { ITEM_REFS, ITEM_EVENT, ITEM_RELEASE, ITEM_FINISH, ITEM_STOP };
typedef struct writer_item {
	enum item_kind kind;
	ref_batch *batch;       /* REFS: its refs[from, from + n); RELEASE */
	size_t from, n;
	bool have_who;
	lp_task_id who;
	lp_event ev;            /* EVENT, its line copied into the parcel's
				 * text at line_at (the pointers are set by
				 * the writer: the text may move as it grows) */
	size_t line_at;
	lp_event_route route;
	const lp_stats *stats;  /* FINISH */
} writer_item;

typedef struct parcel {
	writer_item items[PARCEL_ITEMS];
	size_t n;
	GString *text;
} parcel;

typedef struct stages {
	GThread *reader, *writer;
	GAsyncQueue *free_batches; /* writer -> reader; stop_reader ends it */
	GAsyncQueue *read_batches; /* reader -> merger */
	GAsyncQueue *parcels;      /* merger -> writer */
	GAsyncQueue *free_parcels; /* writer -> merger */
	parcel parcel_set[PARCELS];
	parcel *open;              /* being filled by the merger, or NULL */
	lp_workpool *parsers;      /* reader -> merger (a source that decodes apart); NULL: the reader
				    * reads and parses itself */
	int nslots;
	ref_batch slots[MAX_SLOTS];
	int write_failed;          /* atomic: the writer's sink failed */
	int write_status;          /* the writer's own; read after joining it */
	lp_error write_err;
} stages;

/* Pushed into free_batches to end the reader. */
static ref_batch stop_reader;

struct lp_pipeline_state {
	const lp_pipeline *p;
	bool started;     /* the first event has been read */
	bool finished;    /* the sink's finish() has been called */
	lp_event ev;      /* the next event, when have_event */
	bool have_event;
	uint64_t prev_event_ts;
	uint64_t prev_ref_ts; /* the reader's alone */
	bool any_ref;
	uint64_t order_breaks; /* the source's order_breaks at the last batch */
	uint64_t refs_done, events_done;
	ref_batch *batch; /* read last: refs[pos, n) are still to go */
	ref_batch own_batch; /* the single-threaded path's one batch */
	size_t pos;
	bool refs_left;   /* the reference input is not exhausted yet */
	stages *stages;   /* NULL: single-threaded */
};

/* Prefix core warnings (D with nothing attached) with the event's place. */
static void warn_at_event(void *ctx, const char *msg)
{
	lp_pipeline_state *st = ctx;
	if (!st->p->warn)
		return;
	char *where = st->p->kern->ops->where(st->p->kern, &st->ev);
	char *full = g_strdup_printf("%s: %s", where, msg);
	st->p->warn(st->p->warn_ctx, full);
	g_free(full);
	g_free(where);
}

static int next_event(lp_pipeline_state *st, lp_error *err)
{
	int rc = lp_event_source_next(st->p->kern, &st->ev, err);
	if (rc < 0)
		return err->status;
	st->have_event = rc > 0;
	if (st->have_event) {
		if (st->events_done && st->ev.timestamp < st->prev_event_ts) {
			char *where = st->p->kern->ops->where(st->p->kern, &st->ev);
			lp_fail(err, LP_EINPUT,
				"%s: field timestamp: %" PRIx64 " is earlier than the previous event's %" PRIx64,
				where, st->ev.timestamp, st->prev_event_ts);
			g_free(where);
			return err->status;
		}
		st->prev_event_ts = st->ev.timestamp;
	}
	return 0;
}

/* Check that b's references go on from the last batch's in time order;
 * the reader's work when it parses, else the merging thread's. */
static void check_order(lp_pipeline_state *st, ref_batch *b)
{
	lp_ref_source *r = st->p->refs;
	const lp_ref *buf = b->refs;
	uint64_t prev = st->any_ref ? st->prev_ref_ts : buf[0].timestamp;
	/* A source that counts records out of order as it decodes them: in
	 * order (the rule), the batch need not be read again. */
	bool seen_in_order = false;
	if (r->ops->order_breaks) {
		uint64_t breaks = r->ops->order_breaks(r);
		seen_in_order = breaks == st->order_breaks;
		st->order_breaks = breaks;
	}
	if (seen_in_order && b->n) {
		st->prev_ref_ts = buf[b->n - 1].timestamp;
		st->any_ref = true;
		return;
	}
	for (size_t k = 0; k < b->n; k++) {
		if (buf[k].timestamp < prev) {
			lp_error *err = &b->err;
			char *where = r->ops->where(r, b->first_index + k);
			b->status = lp_fail(err, LP_EINPUT,
					    "%s: field timestamp: %" PRIx64 " is earlier than the previous reference's %" PRIx64,
					    where, buf[k].timestamp, prev);
			g_free(where);
			b->n = 0;
			return;
		}
		prev = buf[k].timestamp;
	}
	if (b->n) {
		st->prev_ref_ts = prev;
		st->any_ref = true;
	}
}

static void note_fraction(lp_pipeline_state *st, ref_batch *b)
{
	b->fraction = st->p->refs->ops->fraction(st->p->refs);
}

/* Read the next batch of references into b and check their order; the
 * reader thread's work when there is one. */
static void read_batch(lp_pipeline_state *st, ref_batch *b)
{
	lp_ref_source *r = st->p->refs;
	b->n = 0;
	b->status = 0;
	ssize_t n = r->ops->read(r, b->refs, BATCH, &b->err);
	note_fraction(st, b);
	if (n < 0) {
		b->status = b->err.status;
		return;
	}
	b->n = (size_t)n;
	b->first_index = r->ops->index(r) - b->n;
	check_order(st, b);
}

/* Cut the next batch's records for the decoding pool. Returns false when this
 * batch is the reader's last (the end, or a failure). */
static bool cut_batch(lp_pipeline_state *st, ref_batch *b)
{
	b->n = 0;
	b->status = 0;
	b->to_parse = false;
	ssize_t n = st->p->refs->ops->cut(st->p->refs, &b->text, BATCH, &b->err);
	note_fraction(st, b);
	if (n < 0) {
		b->status = b->err.status;
		return false;
	}
	/* The index of its first reference, as read_batch has it: not the
	 * chunk's first line, which counts a header line too (line_where
	 * adds it again). */
	b->first_index = st->p->refs->ops->index(st->p->refs) - (uint64_t)n;
	b->to_parse = n > 0 || b->text.long_line;
	return n > 0 && !b->text.long_line;
}

/* lp_work_fn: decode batch job's records. */
static int parse_batch(void *ctx, void *job, lp_error *err)
{
	lp_pipeline_state *st = ctx;
	ref_batch *b = job;
	const lp_ref_source *r = st->p->refs;
	ssize_t n = r->ops->decode(r, &b->text, b->refs, err);
	if (n < 0)
		return err->status;
	b->n = (size_t)n;
	return 0;
}

static gpointer reader_main(gpointer data)
{
	lp_pipeline_state *st = data;
	stages *sg = st->stages;
	for (;;) {
		ref_batch *b = g_async_queue_pop(sg->free_batches);
		if (b == &stop_reader)
			return NULL;
		if (!sg->parsers) {
			read_batch(st, b);
			g_async_queue_push(sg->read_batches, b);
			if (b->n == 0)
				return NULL;
			continue;
		}
		bool more = cut_batch(st, b);
		if (b->to_parse)
			lp_workpool_submit(sg->parsers, b);
		g_async_queue_push(sg->read_batches, b);
		if (!more)
			return NULL;
	}
}

/* Hand the open parcel to the writer. */
static void send_parcel(stages *sg)
{
	if (sg->open) {
		g_async_queue_push(sg->parcels, sg->open);
		sg->open = NULL;
	}
}

/* A new item in the open parcel, for the caller to fill in. A full parcel
 * is sent first, and a new one taken (waiting while the writer holds them
 * all). */
static writer_item *add_item(stages *sg, enum item_kind kind)
{
	if (sg->open && sg->open->n == PARCEL_ITEMS)
		send_parcel(sg);
	if (!sg->open) {
		sg->open = g_async_queue_pop(sg->free_parcels);
		sg->open->n = 0;
		g_string_truncate(sg->open->text, 0);
	}
	writer_item *it = &sg->open->items[sg->open->n++];
	*it = (writer_item){.kind = kind};
	return it;
}

static int writer_do(const lp_pipeline *p, writer_item *it, const GString *text, lp_error *err)
{
	switch (it->kind) {
	case ITEM_REFS:
		return p->sink->refs(p->sink_ctx, it->batch->refs + it->from, it->batch->canon + it->from,
				     it->n, it->have_who ? &it->who : NULL, err);
	case ITEM_EVENT: {
		const char *line = text->str + it->line_at;
		if (it->ev.name)
			it->ev.name = line + (it->ev.name - it->ev.line);
		it->ev.line = line;
		return p->sink->event(p->sink_ctx, &it->ev, &it->route, err);
	}
	case ITEM_FINISH:
		return p->sink->finish(p->sink_ctx, it->stats, err);
	default:
		return 0;
	}
}

/* After a failure the writer goes on taking items, without the sink, so
 * that the other stages never wait on it. */
static gpointer writer_main(gpointer data)
{
	lp_pipeline_state *st = data;
	stages *sg = st->stages;
	for (;;) {
		parcel *pc = g_async_queue_pop(sg->parcels);
		for (size_t i = 0; i < pc->n; i++) {
			writer_item *it = &pc->items[i];
			if (!sg->write_status &&
			    (sg->write_status = writer_do(st->p, it, pc->text, &sg->write_err)))
				g_atomic_int_set(&sg->write_failed, 1);
			if (it->kind == ITEM_RELEASE)
				g_async_queue_push(sg->free_batches, it->batch);
			if (it->kind == ITEM_FINISH || it->kind == ITEM_STOP)
				return NULL;
		}
		g_async_queue_push(sg->free_parcels, pc);
	}
}

static void start_stages(lp_pipeline_state *st)
{
	stages *sg = g_new0(stages, 1);
	st->stages = sg;
	sg->free_batches = g_async_queue_new();
	sg->read_batches = g_async_queue_new();
	sg->parcels = g_async_queue_new();
	sg->free_parcels = g_async_queue_new();
	for (int i = 0; i < PARCELS; i++) {
		sg->parcel_set[i].text = g_string_new(NULL);
		g_async_queue_push(sg->free_parcels, &sg->parcel_set[i]);
	}
	unsigned nparsers = 0;
	if (st->p->refs->ops->cut)
		nparsers = MIN(st->p->threads, (unsigned)MAX_PARSERS);
	sg->nslots = SLOTS + 2 * (int)nparsers;
	for (int i = 0; i < sg->nslots; i++) {
		ref_batch *b = &sg->slots[i];
		b->refs = g_new(lp_ref, BATCH);
		b->canon = g_new(uint64_t, BATCH);
		g_async_queue_push(sg->free_batches, b);
	}
	/* As many batches as there are: the reader never waits to give one.
	 * Parsers that cannot start leave their batches to the merging thread. */
	if (nparsers)
		sg->parsers = lp_workpool_new("laplace-parse", nparsers, (unsigned)sg->nslots,
					      parse_batch, st);
	if (st->p->refs->ops->set_handoff)
		st->p->refs->ops->set_handoff(st->p->refs, true);
	sg->reader = g_thread_new("laplace-read", reader_main, st);
	sg->writer = g_thread_new("laplace-write", writer_main, st);
}

/* End both threads. With finish, the writer calls the sink's finish()
 * last; else it stops where it is, after what was queued. Returns the
 * writer's failure (with err set), or 0. */
static int stop_stages(lp_pipeline_state *st, bool finish, lp_error *err)
{
	stages *sg = st->stages;
	writer_item *last = add_item(sg, finish ? ITEM_FINISH : ITEM_STOP);
	last->stats = lp_merge_stats(st->p->merge);
	send_parcel(sg);
	g_thread_join(sg->writer);
	/* The reader has ended at the end of its input or a failure, or waits
	 * for a free batch, or is reading one. */
	g_async_queue_push_front(sg->free_batches, &stop_reader);
	g_thread_join(sg->reader);
	/* Parsers finish the batches they are parsing; the rest are dropped. */
	lp_workpool_free(sg->parsers);
	g_async_queue_unref(sg->free_batches);
	g_async_queue_unref(sg->read_batches);
	g_async_queue_unref(sg->parcels);
	g_async_queue_unref(sg->free_parcels);
	for (int i = 0; i < PARCELS; i++)
		g_string_free(sg->parcel_set[i].text, TRUE);
	for (int i = 0; i < sg->nslots; i++) {
		ref_batch *b = &sg->slots[i];
		g_free(b->refs);
		g_free(b->canon);
		lp_text_chunk_free(&b->text);
	}
	int rc = sg->write_status;
	if (rc)
		*err = sg->write_err;
	g_free(sg);
	st->stages = NULL;
	return rc;
}

/* The next batch, from the reader thread or read here. Returns its count
 * (0 at the end), or -1 with err set. */
static ssize_t next_refs(lp_pipeline_state *st, lp_error *err)
{
	stages *sg = st->stages;
	if (!sg) {
		read_batch(st, st->batch);
	} else {
		if (st->batch) {
			add_item(sg, ITEM_RELEASE)->batch = st->batch;
			send_parcel(sg);
		}
		ref_batch *b = g_async_queue_pop(sg->read_batches);
		st->batch = b;
		if (sg->parsers) {
			if (b->to_parse) /* b: given to both in order */
				lp_workpool_take(sg->parsers, &b->status, &b->err);
			if (!b->status)
				check_order(st, b);
		}
	}
	if (st->batch->status) {
		*err = st->batch->err;
		return -1;
	}
	return (ssize_t)st->batch->n;
}

/* The first of refs[lo, hi) whose timestamp is at least ts; next_refs has
 * checked that a batch is sorted, so a binary search will do. */
static size_t first_at_or_after(const lp_ref *refs, size_t lo, size_t hi, uint64_t ts)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (refs[mid].timestamp < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int emit_refs(lp_pipeline_state *st, size_t from, size_t n, lp_error *err)
{
	if (n == 0)
		return 0;
	const lp_pipeline *p = st->p;
	const lp_ref *refs = st->batch->refs + from;
	uint64_t *canon = st->batch->canon + from;
	int rc = lp_merge_refs(p->merge, refs, n, canon, err);
	if (rc)
		return rc;
	lp_task_id who;
	bool have = lp_merge_current_task(p->merge, &who);
	if (st->stages) {
		writer_item *it = add_item(st->stages, ITEM_REFS);
		it->batch = st->batch;
		it->from = from;
		it->n = n;
		it->have_who = have;
		it->who = who;
	} else if ((rc = p->sink->refs(p->sink_ctx, refs, canon, n, have ? &who : NULL, err))) {
		return rc;
	}
	st->refs_done += n;
	return 0;
}

/* The event for the writer: its line lives in the kernel reader's buffer,
 * which the next event overwrites. */
static void queue_event(lp_pipeline_state *st, const lp_event_route *route)
{
	stages *sg = st->stages;
	writer_item *it = add_item(sg, ITEM_EVENT);
	it->ev = st->ev;
	it->route = *route;
	it->line_at = sg->open->text->len;
	g_string_append_len(sg->open->text, st->ev.line, (gssize)st->ev.line_len);
	g_string_append_c(sg->open->text, '\0'); /* as a copy of its own had */
}

static int apply_event(lp_pipeline_state *st, lp_error *err)
{
	const lp_pipeline *p = st->p;
	lp_event_route route;
	int rc = lp_merge_event(p->merge, &st->ev, &route, err);
	if (rc == LP_EINPUT) { /* running out of memory is no fault of the line's */
		char *what = g_strdup(err->msg);
		char *where = p->kern->ops->where(p->kern, &st->ev);
		lp_fail(err, rc, "%s: %s", where, what);
		g_free(where);
		g_free(what);
		return rc;
	}
	if (rc)
		return rc;
	if (st->stages)
		queue_event(st, &route);
	else if ((rc = p->sink->event(p->sink_ctx, &st->ev, &route, err)))
		return rc;
	st->events_done++;
	return next_event(st, err);
}

/* The fraction done is how far the reference input has been read, when it
 * is a regular file. */
static void report_progress(const lp_pipeline_state *st)
{
	lp_progress_info info = {
		.records = st->refs_done,
		.events = st->events_done,
		.fraction = st->batch->fraction,
	};
	st->p->progress(st->p->progress_ctx, &info);
}

static int torn_record(const lp_pipeline_state *st, lp_error *err)
{
	const lp_pipeline *p = st->p;
	size_t torn = lp_ref_source_torn_bytes(p->refs);
	if (!torn)
		return 0;
	if (!p->strict)
		lp_merge_add_warning(p->merge);
	const lp_torn_policy policy = {.strict = p->strict, .warn = p->warn, .warn_ctx = p->warn_ctx};
	return lp_torn_record(&policy, lp_ref_source_name(p->refs), lp_ref_source_index(p->refs), torn,
			      err);
}

static lp_pipeline_state *new_state(const lp_pipeline *p, bool threaded)
{
	lp_pipeline_state *st = g_new0(lp_pipeline_state, 1);
	st->p = p;
	st->refs_left = true;
	lp_merge_set_warn(p->merge, warn_at_event, st);
	if (threaded) {
		start_stages(st);
	} else {
		st->own_batch.refs = g_new(lp_ref, BATCH);
		st->own_batch.canon = g_new(uint64_t, BATCH);
		st->batch = &st->own_batch;
	}
	return st;
}

lp_pipeline_state *lp_pipeline_start(const lp_pipeline *p)
{
	return new_state(p, false);
}

static int step(lp_pipeline_state *st, lp_error *err)
{
	const lp_pipeline *p = st->p;
	if (st->finished)
		return 0;
	if (!st->started) {
		st->started = true;
		if (next_event(st, err))
			return -1;
	}
	if ((!st->batch || st->pos == st->batch->n) && st->refs_left) {
		ssize_t got = next_refs(st, err);
		if (got < 0)
			return -1;
		st->pos = 0;
		if (got == 0) {
			st->refs_left = false;
			if (torn_record(st, err))
				return -1;
		}
		if (p->progress)
			report_progress(st);
	}
	if (!st->have_event) {
		if (!st->refs_left) {
			st->finished = true;
			if (st->stages)
				return stop_stages(st, true, err) ? -1 : 0;
			return p->sink->finish(p->sink_ctx, lp_merge_stats(p->merge), err) ? -1 : 0;
		}
		size_t from = st->pos;
		st->pos = st->batch->n;
		return emit_refs(st, from, st->batch->n - from, err) ? -1 : 1;
	}
	/* References strictly before the event go first; on a tie the event
	 * comes first. */
	size_t from = st->pos;
	st->pos = first_at_or_after(st->batch->refs, from, st->batch->n, st->ev.timestamp);
	if (emit_refs(st, from, st->pos - from, err))
		return -1;
	if ((st->pos < st->batch->n || !st->refs_left) && apply_event(st, err))
		return -1;
	return 1;
}

int lp_pipeline_step(lp_pipeline_state *st, lp_error *err)
{
	int rc = step(st, err);
	/* A failure of the writer came earlier in the stream than anything
	 * this thread is doing: it is the one to report. */
	if (st->stages && (rc < 0 || g_atomic_int_get(&st->stages->write_failed))) {
		if (stop_stages(st, false, err))
			return -1;
	}
	return rc;
}

void lp_pipeline_stop(lp_pipeline_state *st)
{
	if (!st)
		return;
	lp_error ignored;
	if (st->stages)
		stop_stages(st, false, &ignored);
	lp_merge_set_warn(st->p->merge, NULL, NULL);
	g_free(st->own_batch.refs);
	g_free(st->own_batch.canon);
	g_free(st);
}

int lp_pipeline_run(const lp_pipeline *p, lp_error *err)
{
	lp_pipeline_state *st = new_state(p, p->threads > 1);
	int rc;
	while ((rc = lp_pipeline_step(st, err)) > 0)
		;
	lp_pipeline_stop(st);
	return rc < 0 ? err->status : 0;
}
