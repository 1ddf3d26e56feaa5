/* Interleave references and kernel events by timestamp and push them
 * through the merge core into a sink, one step at a time.
 *
 * References travel in batches: every run of references between two
 * events is translated with one lp_merge_refs call and handed to the sink
 * with one call, since the current task cannot change inside it. */
#include "laplace/pipeline.h"

#include <inttypes.h>
#include <stdio.h>

#define BATCH 65536

struct lp_pipeline_state {
	const lp_pipeline *p;
	bool started;     /* the first event has been read */
	bool finished;    /* the sink's finish() has been called */
	lp_event ev;      /* the next event, when have_event */
	bool have_event;
	uint64_t prev_event_ts;
	uint64_t prev_ref_ts;
	bool any_ref;
	uint64_t refs_done, events_done;
	lp_ref *refs;     /* the batch read last: refs[pos, n) are still to go */
	uint64_t *canon;  /* their canonical numbers, once translated */
	size_t pos, n;
	bool refs_left;   /* the reference input is not exhausted yet */
};

/* Prefix core warnings (D with nothing attached) with the event's place. */
static void warn_at_event(void *ctx, const char *msg)
{
	lp_pipeline_state *st = ctx;
	if (!st->p->warn)
		return;
	char *full = g_strdup_printf("%s:%" PRIu64 ": %s", lp_kern_reader_name(st->p->kern),
				     st->ev.line_no, msg);
	st->p->warn(st->p->warn_ctx, full);
	g_free(full);
}

static int next_event(lp_pipeline_state *st, lp_error *err)
{
	int rc = lp_kern_reader_next(st->p->kern, &st->ev, err);
	if (rc < 0)
		return err->status;
	st->have_event = rc > 0;
	if (st->have_event) {
		if (st->events_done && st->ev.timestamp < st->prev_event_ts)
			return lp_fail(err, LP_EINPUT,
				       "%s:%" PRIu64 ": field timestamp: %" PRIx64
				       " is earlier than the previous event's %" PRIx64,
				       lp_kern_reader_name(st->p->kern), st->ev.line_no,
				       st->ev.timestamp, st->prev_event_ts);
		st->prev_event_ts = st->ev.timestamp;
	}
	return 0;
}

/* Read the next batch of references and check their order. */
static ssize_t next_refs(lp_pipeline_state *st, lp_ref *buf, lp_error *err)
{
	lp_ref_reader *r = st->p->refs;
	ssize_t n = lp_ref_reader_read(r, buf, BATCH, err);
	if (n <= 0)
		return n;
	uint64_t prev = st->any_ref ? st->prev_ref_ts : buf[0].timestamp;
	for (size_t k = 0; k < (size_t)n; k++) {
		if (buf[k].timestamp < prev) {
			uint64_t index = lp_ref_reader_index(r) - (uint64_t)n + k;
			if (lp_ref_reader_format(r) == LP_REF_TEXT)
				lp_fail(err, LP_EINPUT, "%s:%" PRIu64, lp_ref_reader_name(r), index + 1);
			else
				lp_fail(err, LP_EINPUT, "%s: record %" PRIu64, lp_ref_reader_name(r), index);
			char *where = g_strdup(err->msg);
			lp_fail(err, LP_EINPUT,
				"%s: field timestamp: %" PRIx64 " is earlier than the previous reference's %" PRIx64,
				where, buf[k].timestamp, prev);
			g_free(where);
			return -1;
		}
		prev = buf[k].timestamp;
	}
	st->prev_ref_ts = prev;
	st->any_ref = true;
	return n;
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

static int emit_refs(lp_pipeline_state *st, const lp_ref *refs, uint64_t *canon, size_t n,
		     lp_error *err)
{
	if (n == 0)
		return 0;
	const lp_pipeline *p = st->p;
	int rc = lp_merge_refs(p->merge, refs, n, canon, err);
	if (rc)
		return rc;
	lp_task_id who;
	bool have = lp_merge_current_task(p->merge, &who);
	rc = p->sink->refs(p->sink_ctx, refs, canon, n, have ? &who : NULL, err);
	if (rc)
		return rc;
	st->refs_done += n;
	return 0;
}

static int apply_event(lp_pipeline_state *st, lp_error *err)
{
	const lp_pipeline *p = st->p;
	lp_event_route route;
	int rc = lp_merge_event(p->merge, &st->ev, &route, err);
	if (rc) {
		char *what = g_strdup(err->msg);
		lp_fail(err, rc, "%s:%" PRIu64 ": %s", lp_kern_reader_name(p->kern), st->ev.line_no, what);
		g_free(what);
		return rc;
	}
	rc = p->sink->event(p->sink_ctx, &st->ev, &route, err);
	if (rc)
		return rc;
	st->events_done++;
	return next_event(st, err);
}

/* The fraction done is how far the reference input has been read, when it
 * is a regular file. */
static void report_progress(const lp_pipeline_state *st)
{
	const lp_input *in = lp_ref_reader_input(st->p->refs);
	int64_t size = lp_input_file_size(in);
	lp_progress_info info = {
		.records = st->refs_done,
		.events = st->events_done,
		.fraction = size > 0 ? (double)lp_input_file_offset(in) / (double)size : -1,
	};
	st->p->progress(st->p->progress_ctx, &info);
}

static int torn_record(const lp_pipeline_state *st, lp_error *err)
{
	const lp_pipeline *p = st->p;
	size_t torn = lp_ref_reader_torn_bytes(p->refs);
	if (!torn)
		return 0;
	if (!p->strict)
		lp_merge_add_warning(p->merge);
	const lp_torn_policy policy = {.strict = p->strict, .warn = p->warn, .warn_ctx = p->warn_ctx};
	return lp_torn_record(&policy, lp_ref_reader_name(p->refs), lp_ref_reader_index(p->refs), torn,
			      err);
}

lp_pipeline_state *lp_pipeline_start(const lp_pipeline *p)
{
	lp_pipeline_state *st = g_new0(lp_pipeline_state, 1);
	st->p = p;
	st->refs = g_new(lp_ref, BATCH);
	st->canon = g_new(uint64_t, BATCH);
	st->refs_left = true;
	lp_merge_set_warn(p->merge, warn_at_event, st);
	return st;
}

int lp_pipeline_step(lp_pipeline_state *st, lp_error *err)
{
	const lp_pipeline *p = st->p;
	if (st->finished)
		return 0;
	if (!st->started) {
		st->started = true;
		if (next_event(st, err))
			return -1;
	}
	if (st->pos == st->n && st->refs_left) {
		ssize_t got = next_refs(st, st->refs, err);
		if (got < 0)
			return -1;
		st->pos = 0;
		st->n = (size_t)got;
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
			return p->sink->finish(p->sink_ctx, lp_merge_stats(p->merge), err) ? -1 : 0;
		}
		size_t from = st->pos;
		st->pos = st->n;
		return emit_refs(st, st->refs + from, st->canon + from, st->n - from, err) ? -1 : 1;
	}
	/* References strictly before the event go first; on a tie the event
	 * comes first. */
	size_t from = st->pos;
	st->pos = first_at_or_after(st->refs, from, st->n, st->ev.timestamp);
	if (emit_refs(st, st->refs + from, st->canon + from, st->pos - from, err))
		return -1;
	if ((st->pos < st->n || !st->refs_left) && apply_event(st, err))
		return -1;
	return 1;
}

void lp_pipeline_stop(lp_pipeline_state *st)
{
	if (!st)
		return;
	lp_merge_set_warn(st->p->merge, NULL, NULL);
	g_free(st->refs);
	g_free(st->canon);
	g_free(st);
}

int lp_pipeline_run(const lp_pipeline *p, lp_error *err)
{
	lp_pipeline_state *st = lp_pipeline_start(p);
	int rc;
	while ((rc = lp_pipeline_step(st, err)) > 0)
		;
	lp_pipeline_stop(st);
	return rc < 0 ? err->status : 0;
}
