/* The LRU analyses run over whole traces: the behaviour sequence of a
 * basic merge stream, a page-image trace re-reduced to a larger memory, and
 * the reference stream a page-image trace stands for (laplace-lru(1);
 * laplace-formats(5), "Page-image LRU behaviour sequence"). The format readers and writers do the I/O; the LRU
 * logic (lru.c) knows no files. */
#include "analysis/lru.h"

#include "formats/basicin.h"
#include "formats/forms.h"
#include "core/numbers.h"
#include "io/bytesrc.h"

#include <inttypes.h>

/* Name file and record in a message from the LRU logic. */
static int record_error(lp_pi_reader *r, lp_error *err)
{
	lp_error inner = *err;
	return lp_fail(err, inner.status, "%s: record %" PRIu64 ": %s", lp_pi_reader_name(r),
		       lp_pi_reader_index(r) - 1, inner.msg);
}

int lp_pi_reduce_trace(lp_byte_source *src, uint32_t frames, bool text,
		       const lp_torn_policy *policy, lp_output *out, lp_error *err)
{
	lp_pi_reader *r = lp_pi_reader_new(src);
	lp_pi_reduce *red = lp_pi_reduce_new(frames);
	lp_pi_writer *w = lp_pi_writer_new(out, text);
	lp_pi_record in, rec;
	int got, st = 0;
	while (st == 0 && (got = lp_pi_reader_next(r, &in, policy, err)) != 0) {
		if (got < 0) {
			st = err->status;
			break;
		}
		int fault = lp_pi_reduce_record(red, &in, &rec, err);
		if (fault < 0)
			st = record_error(r, err);
		else if (fault)
			st = lp_pi_writer_write(w, &rec, err);
	}
	lp_pi_writer_free(w);
	lp_pi_reduce_free(red);
	lp_pi_reader_close(r);
	return st;
}

int lp_pi_to_basic(lp_byte_source *src, const lp_torn_policy *policy, lp_output *out,
		   lp_error *err)
{
	lp_pi_reader *r = lp_pi_reader_new(src);
	lp_pi_stream *s = lp_pi_stream_new();
	lp_pi_record in;
	int got, st = 0;
	while ((got = lp_pi_reader_next(r, &in, policy, err)) != 0) {
		if (got < 0 || lp_pi_stream_add(s, &in, err) < 0) {
			st = got < 0 ? err->status : record_error(r, err);
			break;
		}
	}
	enum { BATCH = 4096, LINE_MAX_LEN = LP_FORM_RECORD_MAX };
	lp_basic_ref *refs = g_new(lp_basic_ref, BATCH);
	char *text = g_malloc(BATCH * LINE_MAX_LEN);
	size_t n;
	while (st == 0 && (n = lp_pi_stream_next(s, refs, BATCH)) > 0) {
		char *p = text;
		for (size_t i = 0; i < n; i++) {
			p += lp_form_encode(LP_FORM_BASIC, p, refs[i].type, refs[i].canonical, 0, 0);
		}
		st = lp_output_write(out, text, (size_t)(p - text), err);
	}
	g_free(text);
	g_free(refs);
	lp_pi_stream_free(s);
	lp_pi_reader_close(r);
	return st;
}

int lp_lru_basic_trace(const char *path, uint64_t frames, lp_output *out, lp_error *err)
{
	enum { BATCH = 4096 };
	lp_basic_iter in;
	if (lp_basic_iter_open(&in, path, BATCH, err))
		return err->status;
	char *text = g_malloc(BATCH * LP_BEHAVIOUR_LINE_MAX);
	lp_lru *lru = lp_lru_new(frames);
	int st = 0;
	for (lp_basic_block b; st == 0 && (b = lp_basic_iter_next(&in)).len;) {
		char *p = text;
		lp_lru_fault f;
		for (size_t i = 0; i < b.len; i++)
			if (lp_lru_ref(lru, b.ref[i].canonical, lp_ref_is_write(b.ref[i].type), &f))
				p += lp_behaviour_format(p, f.tag, f.page, f.dirt, f.evicted);
		st = lp_output_write(out, text, (size_t)(p - text), err);
	}
	int read_st = lp_basic_iter_clear(&in);
	if (st == 0)
		st = read_st;
	lp_lru_free(lru);
	g_free(text);
	return st;
}

int lp_lru_run(const lp_lru_request *rq, lp_error *err)
{
	lp_byte_source *src = NULL;
	if (rq->page_image && !(src = lp_byte_source_open(rq->input, err)))
		return err->status;
	lp_output *out = lp_output_open_level(rq->output, LP_COMPRESS_AUTO, rq->level, err);
	if (!out) {
		lp_byte_source_close(src);
		return err->status;
	}
	int st = rq->page_image ? lp_pi_reduce_trace(src, (uint32_t)rq->frames, rq->text,
						      &rq->policy, out, err)
				: lp_lru_basic_trace(rq->input, rq->frames, out, err);
	if (st) {
		lp_output_abort(out);
		return st;
	}
	return lp_output_commit(out, err);
}
