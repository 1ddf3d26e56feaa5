/* The forms of a merged reference stream (laplace-formats(5), "FORMS FOR
 * SIMULATORS", policies.md §6), and their writer, the basic merge sink:
 * "type canonical" lines (basic), "type address length" lines (addr),
 * Dinero's "label address" (din), 8-byte words after a header (bin), or
 * oracleGeneral's records (oracle.c's writer). Their rows are the
 * registry's (lp_stream_forms); their readers basicin.c and oracle.c. */
#include "formats/forms.h"

#include <string.h>

#include <glib.h>

#include "formats/oracle.h"
#include "formats/registry.h"

/* ---- the writer ---- */

/* The buffer of lp_basic_sink_new's sinks, flushed before fewer bytes
 * than the longest record remain. */
#define BUF_SIZE (1u << 20)
#define MAX_RECORD LP_FORM_RECORD_MAX

struct lp_basic_sink {
	lp_output *out;
	bool user_only;
	enum lp_form form;
	lp_oracle_writer *oracle; /* oracle-general's, else NULL */
	uint64_t written; /* references, for messages */
	size_t used;
	size_t cap;
	char *buf;
};

lp_basic_sink *lp_basic_sink_new(lp_output *out, bool user_only, enum lp_form form)
{
	return lp_stream_forms[form].open_sink(out, user_only, form, BUF_SIZE);
}

lp_basic_sink *lp_encoded_sink_new(lp_output *out, bool user_only, enum lp_form form,
				   size_t buffer)
{
	lp_basic_sink *s = g_malloc(sizeof *s);
	s->cap = MAX(buffer, (size_t)LP_BIN_HEADER_SIZE + MAX_RECORD);
	s->buf = g_malloc(s->cap);
	s->out = out;
	s->user_only = user_only;
	s->form = form;
	s->oracle = NULL;
	s->written = 0;
	s->used = 0;
	const lp_stream_form *row = &lp_stream_forms[form];
	if (row->header) {
		memcpy(s->buf, row->header, row->header_size);
		s->used = row->header_size;
	}
	return s;
}

lp_basic_sink *lp_oracle_sink_new(lp_output *out, bool user_only, enum lp_form form,
				  size_t buffer)
{
	lp_basic_sink *s = lp_encoded_sink_new(out, user_only, form, 0);
	s->oracle = lp_oracle_writer_new(buffer / sizeof(uint32_t));
	return s;
}

void lp_basic_sink_free(lp_basic_sink *s)
{
	if (s) {
		lp_oracle_writer_free(s->oracle);
		g_free(s->buf);
	}
	g_free(s);
}

static int flush(lp_basic_sink *s, lp_error *err)
{
	int rc = lp_output_write(s->out, s->buf, s->used, err);
	s->used = 0;
	return rc;
}

int lp_form_canon_error(lp_error *err, enum lp_form form, uint64_t index, uint64_t canon)
{
	return lp_fail(err, LP_EINPUT, "reference %" G_GUINT64_FORMAT ": canonical number %"
		       G_GINT64_MODIFIER "x does not fit the %s form", index, canon, lp_stream_forms[form].name);
}

/* The references in one form; inline and called with a constant form, so
 * that each form gets a loop of its own with no switch inside. */
static inline int encode_refs(lp_basic_sink *s, const enum lp_form form, const lp_ref *refs,
			      const uint64_t *canon, size_t n, lp_error *err)
{
	/* In locals: the compiler must assume that every store into s->buf
	 * may change s's other fields, and would reload them each time. */
	size_t used = s->used;
	uint64_t written = s->written;
	bool user_only = s->user_only;
	const uint64_t max = lp_stream_forms[form].canon_max;
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (user_only && lp_ref_is_kernel(refs[i].type))
			continue;
		if (canon[i] > max) {
			rc = lp_form_canon_error(err, form, written, canon[i]);
			break;
		}
		if (used > s->cap - MAX_RECORD) {
			s->used = used;
			rc = flush(s, err);
			used = 0;
			if (rc)
				break;
		}
		used += lp_form_encode(form, s->buf + used, refs[i].type, canon[i], refs[i].address,
				       refs[i].length);
		written++;
	}
	s->used = used;
	s->written = written;
	return rc;
}

/* oracle-general: each record through the writer, which finds the
 * next accesses. */
static int oracle_refs(lp_basic_sink *s, const lp_ref *refs, const uint64_t *canon, size_t n,
		       lp_error *err)
{
	enum { AHEAD = 8 }; /* references whose pages are fetched ahead */
	for (size_t i = 0; i < n; i++) {
		if (i + AHEAD < n)
			lp_oracle_prefetch(s->oracle, canon[i + AHEAD]);
		if (s->user_only && lp_ref_is_kernel(refs[i].type))
			continue;
		if (canon[i] > LP_ORACLE_CANON_MAX)
			return lp_form_canon_error(err, LP_FORM_ORACLE, s->written, canon[i]);
		if (lp_oracle_put(s->oracle, canon[i], err))
			return err->status;
		s->written++;
	}
	return 0;
}

static int basic_refs(void *ctx, const lp_ref *refs, const uint64_t *canon, size_t n,
		      const lp_task_id *who, lp_error *err)
{
	(void)who;
	lp_basic_sink *s = ctx;
	switch (s->form) {
	case LP_FORM_BASIC: return encode_refs(s, LP_FORM_BASIC, refs, canon, n, err);
	case LP_FORM_ADDR: return encode_refs(s, LP_FORM_ADDR, refs, canon, n, err);
	case LP_FORM_DIN: return encode_refs(s, LP_FORM_DIN, refs, canon, n, err);
	case LP_FORM_BIN: return encode_refs(s, LP_FORM_BIN, refs, canon, n, err);
	case LP_FORM_ORACLE: return oracle_refs(s, refs, canon, n, err);
	case LP_FORM_COUNT: break;
	}
	return lp_fail(err, LP_EUSAGE, "no such output form");
}

static int basic_event(void *ctx, const lp_event *ev, const lp_event_route *route, lp_error *err)
{
	(void)ctx, (void)ev, (void)route, (void)err;
	return 0; /* kernel events produce no records */
}

static int basic_finish(void *ctx, const lp_stats *stats, lp_error *err)
{
	(void)stats;
	lp_basic_sink *s = ctx;
	if (s->oracle)
		return lp_oracle_finish(s->oracle, s->out, err);
	return flush(s, err);
}

const lp_sink lp_basic_sink_ops = {
	.refs = basic_refs,
	.event = basic_event,
	.finish = basic_finish,
};

int lp_oracle_dump(lp_byte_source *src, enum lp_endian endian, const lp_torn_policy *policy,
		   lp_output *out, lp_error *err)
{
	(void)endian, (void)policy;
	enum { BATCH = 4096, LINE = LP_BASIC_RECORD_MAX };
	lp_oracle_reader *r = lp_oracle_reader_new(src);
	lp_basic_ref *refs = g_new(lp_basic_ref, BATCH);
	char *text = g_malloc(BATCH * LINE);
	ssize_t n;
	int rc = 0;
	while (!rc && (n = lp_oracle_read(r, refs, BATCH, err)) > 0) {
		char *p = text;
		for (ssize_t i = 0; i < n; i++)
			p += lp_form_encode(LP_FORM_BASIC, p, refs[i].type, refs[i].canonical, 0, 0);
		rc = lp_output_write(out, text, (size_t)(p - text), err);
	}
	if (!rc && n < 0)
		rc = err->status;
	g_free(text);
	g_free(refs);
	lp_oracle_reader_close(r);
	return rc;
}
