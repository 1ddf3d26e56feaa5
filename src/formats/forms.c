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
	s->oracle = lp_oracle_writer_new(buffer / sizeof(uint32_t), out);
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

/* Reference i's canonical number and type in b. */
static inline uint64_t batch_canon(const lp_form_batch *b, size_t i)
{
	return *(const uint64_t *)(b->canon + i * b->canon_stride);
}

static inline char batch_type(const lp_form_batch *b, size_t i)
{
	return b->type[i * b->type_stride];
}

/* The first reference of b the sink writes whose canonical number exceeds
 * max, else b->n. */
static size_t first_too_large(const lp_basic_sink *s, const lp_form_batch *b, uint64_t max)
{
	for (size_t i = 0; i < b->n; i++)
		if (batch_canon(b, i) > max && !(s->user_only && lp_ref_is_kernel(batch_type(b, i))))
			return i;
	return b->n;
}

/* References [from, to) of b in form at p, the kernel's left out when
 * user_only; *count += how many are written. Returns the bytes written.
 * Always inlined with constant form and user_only: a loop of its own for
 * each, with no test inside but the kernel's. */
static inline __attribute__((always_inline)) size_t encode_run(const enum lp_form form,
							       const bool user_only, char *p,
							       const lp_form_batch *b, size_t from,
							       size_t to, uint64_t *count)
{
	/* The forms that write the address (their rows' addresses), known
	 * here at compile time. */
	const bool addresses = form == LP_FORM_ADDR || form == LP_FORM_DIN;
	const size_t stride = b->canon_stride;
	const char *canon = b->canon + from * stride, *end = b->canon + to * stride;
	char *q = p;
	size_t skipped = 0;
	if (!addresses && b->type_stride == stride) {
		/* Types in the numbers' records (the schedule's): one pointer
		 * walks both, a register fewer in the loop. */
		const ptrdiff_t type_at = b->type - b->canon;
		for (; canon != end; canon += stride) {
			if (user_only && lp_ref_is_kernel(canon[type_at])) {
				skipped++;
				continue;
			}
			q += lp_form_encode(form, q, canon[type_at], *(const uint64_t *)canon, 0, 0);
		}
	} else {
		const char *type = b->type + from * b->type_stride;
		for (size_t i = from; canon != end; i++, canon += stride, type += b->type_stride) {
			if (user_only && lp_ref_is_kernel(*type)) {
				skipped++;
				continue;
			}
			q += lp_form_encode(form, q, *type, *(const uint64_t *)canon,
					    addresses ? b->raw[i].address : 0,
					    addresses ? b->raw[i].length : 0);
		}
	}
	*count += to - from - skipped;
	return (size_t)(q - p);
}

/* A form's put: the batch up to its first canonical number too large,
 * encoded into the buffer as many records at a time as it has room for
 * (flushed when it has none), then that number's error. */
static inline __attribute__((always_inline)) int encoded_put(lp_basic_sink *s,
							     const enum lp_form form,
							     const lp_form_batch *b, lp_error *err)
{
	const lp_stream_form *row = &lp_stream_forms[form];
	size_t n = row->canon_max == UINT64_MAX ? b->n : first_too_large(s, b, row->canon_max);
	for (size_t i = 0, k; i < n; i += k) {
		if (s->cap - s->used < row->record_max && flush(s, err))
			return err->status;
		k = MIN(n - i, (s->cap - s->used) / row->record_max);
		char *p = s->buf + s->used;
		s->used += s->user_only ? encode_run(form, true, p, b, i, i + k, &s->written)
					: encode_run(form, false, p, b, i, i + k, &s->written);
	}
	if (n < b->n)
		return lp_form_canon_error(err, form, s->written, batch_canon(b, n));
	return 0;
}

int lp_basic_put(lp_basic_sink *s, const lp_form_batch *b, lp_error *err)
{
	return encoded_put(s, LP_FORM_BASIC, b, err);
}

int lp_addr_put(lp_basic_sink *s, const lp_form_batch *b, lp_error *err)
{
	return encoded_put(s, LP_FORM_ADDR, b, err);
}

int lp_din_put(lp_basic_sink *s, const lp_form_batch *b, lp_error *err)
{
	return encoded_put(s, LP_FORM_DIN, b, err);
}

int lp_bin_put(lp_basic_sink *s, const lp_form_batch *b, lp_error *err)
{
	return encoded_put(s, LP_FORM_BIN, b, err);
}

/* oracle-general: each record through the writer, which finds the
 * next accesses. */
int lp_oracle_general_put(lp_basic_sink *s, const lp_form_batch *b, lp_error *err)
{
	enum { AHEAD = 8 }; /* references whose pages are fetched ahead */
	for (size_t i = 0; i < b->n; i++) {
		uint64_t canon = batch_canon(b, i);
		if (i + AHEAD < b->n)
			lp_oracle_prefetch(s->oracle, batch_canon(b, i + AHEAD));
		if (s->user_only && lp_ref_is_kernel(batch_type(b, i)))
			continue;
		if (canon > LP_ORACLE_CANON_MAX)
			return lp_form_canon_error(err, LP_FORM_ORACLE, s->written, canon);
		if (lp_oracle_put(s->oracle, canon, err))
			return err->status;
		s->written++;
	}
	return 0;
}

int lp_basic_sink_put(lp_basic_sink *s, const lp_form_batch *b, lp_error *err)
{
	return lp_stream_forms[s->form].put(s, b, err);
}

/* The merge's references: their types in the raw references. */
static int basic_refs(void *ctx, const lp_ref *refs, const uint64_t *canon, size_t n,
		      const lp_task_id *who, lp_error *err)
{
	(void)who;
	lp_form_batch b = {
		.type = &refs->type, .type_stride = sizeof *refs,
		.canon = (const char *)canon, .canon_stride = sizeof *canon,
		.raw = refs, .n = n,
	};
	return lp_basic_sink_put(ctx, &b, err);
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
		return lp_oracle_finish(s->oracle, err);
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
