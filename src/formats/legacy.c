/* What the legacy readers share: torn records, and the dump and
 * conversion loops (the formats' rows and their detection: registry.c). */
#include "formats/legacy.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/byteorder.h"
#include "formats/forms.h"
#include "formats/registry.h"
#include "core/numbers.h"

#define BATCH 4096

/* ---- dump and conversion loops ---- */

/* Text goes out through one big buffer: flush it when the next batch of
 * lines might not fit. */
typedef struct text_buf {
	char *buf;
	size_t len, cap;
	lp_output *out;
} text_buf;

static int text_flush(text_buf *t, lp_error *err)
{
	int st = lp_output_write(t->out, t->buf, t->len, err);
	t->len = 0;
	return st;
}

static int dump_byu(lp_byte_source *src, enum lp_endian endian, const lp_torn_policy *policy,
		    text_buf *t, lp_error *err)
{
	lp_byu_reader *r = lp_record_reader_new(src, endian);
	lp_byu_record *recs = g_new(lp_byu_record, BATCH);
	ssize_t n;
	int st = 0;
	while (st == 0 && (n = lp_byu_reader_read(r, recs, BATCH, policy, err)) > 0) {
		t->len += lp_byu_format(t->buf + t->len, recs, (size_t)n);
		st = text_flush(t, err);
	}
	if (st == 0 && n < 0)
		st = err->status;
	g_free(recs);
	lp_record_reader_close(r);
	return st;
}

static int dump_p6(lp_byte_source *src, enum lp_endian endian, const lp_torn_policy *policy,
		   text_buf *t, lp_error *err)
{
	lp_p6_reader *r = lp_record_reader_new(src, endian);
	lp_p6_record *recs = g_new(lp_p6_record, BATCH);
	ssize_t n;
	int st = 0;
	while (st == 0 && (n = lp_p6_reader_read(r, recs, BATCH, policy, err)) > 0) {
		t->len += lp_p6_format(t->buf + t->len, recs, (size_t)n);
		st = text_flush(t, err);
	}
	if (st == 0 && n < 0)
		st = err->status;
	g_free(recs);
	lp_record_reader_close(r);
	return st;
}

static int dump_page_image(lp_byte_source *src, enum lp_endian endian,
			   const lp_torn_policy *policy, text_buf *t, lp_error *err)
{
	(void)endian;
	lp_pi_reader *r = lp_pi_reader_new(src);
	lp_pi_record rec;
	int got, st = 0;
	while (st == 0 && (got = lp_pi_reader_next(r, &rec, policy, err)) > 0) {
		t->len += lp_behaviour_format(t->buf + t->len, rec.tag, rec.fetched, rec.dirt,
					      rec.evicted);
		if (t->cap - t->len < LP_BEHAVIOUR_LINE_MAX)
			st = text_flush(t, err);
	}
	if (st == 0 && got < 0)
		st = err->status;
	if (st == 0)
		st = text_flush(t, err);
	lp_pi_reader_close(r);
	return st;
}

/* A basic merge stream's text form: "type canonical" lines. */
static int dump_basic(lp_byte_source *src, enum lp_endian endian, const lp_torn_policy *policy,
		      text_buf *t, lp_error *err)
{
	(void)endian, (void)policy;
	enum { LINE_MAX_LEN = LP_BASIC_RECORD_MAX };
	lp_basic_reader *r = lp_basic_reader_new(src, err);
	if (!r)
		return err->status;
	lp_basic_iter in;
	lp_basic_iter_init(&in, r, BATCH, err);
	int st = 0;
	for (lp_basic_block b; st == 0 && (b = lp_basic_iter_next(&in)).len;) {
		char *p = t->buf + t->len;
		for (size_t i = 0; i < b.len; i++)
			p += lp_form_encode(LP_FORM_BASIC, p, b.ref[i].type, b.ref[i].canonical, 0, 0);
		t->len = (size_t)(p - t->buf);
		st = text_flush(t, err);
	}
	int read_st = lp_basic_iter_clear(&in);
	if (st == 0)
		st = read_st;
	return st;
}

typedef int dump_fn(lp_byte_source *src, enum lp_endian endian, const lp_torn_policy *policy,
		    text_buf *t, lp_error *err);

static int dump_with(dump_fn *fn, lp_byte_source *src, enum lp_endian endian,
		     const lp_torn_policy *policy, lp_output *out, lp_error *err)
{
	text_buf t = {.cap = BATCH * LP_BYU_LINE_MAX, .out = out};
	t.buf = g_malloc(t.cap);
	int st = fn(src, endian, policy, &t, err);
	g_free(t.buf);
	return st;
}

#define DUMP(NAME, FN) \
	int NAME(lp_byte_source *src, enum lp_endian endian, const lp_torn_policy *policy, \
		 lp_output *out, lp_error *err) \
	{ \
		return dump_with(FN, src, endian, policy, out, err); \
	}
DUMP(lp_byu_dump, dump_byu)
DUMP(lp_p6_dump, dump_p6)
DUMP(lp_page_image_dump, dump_page_image)
DUMP(lp_basic_dump, dump_basic)

int lp_legacy_dump(lp_byte_source *src, enum lp_format_id format, enum lp_endian endian,
		   const lp_torn_policy *policy, lp_output *out, lp_error *err)
{
	const lp_format *f = lp_format_of(format);
	if (!f || !f->dump) {
		lp_byte_source_close(src);
		return lp_fail(err, LP_EUSAGE, "no text dump for this format here");
	}
	return f->dump(src, endian, policy, out, err);
}

/* " (NAME N, ...)": the skipped records by request type or operation. */
static void append_skipped(GString *s, const lp_legacy_summary *sum, enum lp_format_id format)
{
	const char *sep = " (";
	if (format == LP_FORMAT_P6) {
		/* several operations share the name INVALID: count them as one */
		for (int op = 0; op < 16; op++) {
			uint64_t n = 0;
			bool first = true;
			for (int o = 0; o < 16; o++)
				if (!strcmp(lp_p6_op_names[o], lp_p6_op_names[op])) {
					first = first && o >= op;
					n += sum->skipped_by[o];
				}
			if (first && n) {
				g_string_append_printf(s, "%s%s %" PRIu64, sep, lp_p6_op_names[op], n);
				sep = ", ";
			}
		}
	} else {
		for (int t = 0; t < 256; t++) {
			if (!sum->skipped_by[t])
				continue;
			const char *name = lp_byu_reqtype_name((uint8_t)t);
			if (name)
				g_string_append_printf(s, "%s%s %" PRIu64, sep, name, sum->skipped_by[t]);
			else
				g_string_append_printf(s, "%sUNKNOWN_%02x %" PRIu64, sep, (unsigned)t,
						       sum->skipped_by[t]);
			sep = ", ";
		}
	}
	if (sum->skipped)
		g_string_append_c(s, ')');
}

size_t lp_legacy_summary_text(const lp_legacy_summary *sum, enum lp_format_id format,
			      char *buf, size_t size)
{
	GString *s = g_string_new(NULL);
	uint64_t refs = sum->refs[0] + sum->refs[1] + sum->refs[2];
	g_string_append_printf(s, "%" PRIu64 " record%s, %" PRIu64 " reference%s (i %" PRIu64
			       ", r %" PRIu64 ", w %" PRIu64 "), %" PRIu64 " skipped",
			       sum->records, sum->records == 1 ? "" : "s", refs, refs == 1 ? "" : "s",
			       sum->refs[0], sum->refs[1], sum->refs[2], sum->skipped);
	append_skipped(s, sum, format);
	size_t len = s->len;
	g_strlcpy(buf, s->str, size);
	g_string_free(s, TRUE);
	return len;
}

/* A trace of records none of which is a reference is no trace of this
 * format (or of nothing to convert): an empty output that looks like a
 * success would hide that. */
static int fail_all_skipped(const lp_legacy_summary *sum, enum lp_format_id format,
			    const char *name, lp_error *err)
{
	GString *s = g_string_new(NULL);
	if (format == LP_FORMAT_P6)
		g_string_append(s, "field control: no record is I_FETCH, NC_I_FETCH, D_READ, NC_D_READ, "
				   "D_WRITE or WRITE_BACK");
	else
		g_string_append(s, "field reqtype: no record is FETCH, MEMREAD, MEMREADINV or MEMWRITE");
	g_string_append_printf(s, ": %" PRIu64 " record%s skipped", sum->skipped, sum->skipped == 1 ? "" : "s");
	append_skipped(s, sum, format);
	lp_fail(err, LP_EINPUT, "%s: %s", name, s->str);
	g_string_free(s, TRUE);
	return err->status;
}

static void count_ref(lp_legacy_summary *sum, char type)
{
	sum->refs[type == 'i' ? 0 : type == 'r' ? 1 : 2]++;
}

/* BYU and p6 records turned into references a batch at a time: read()
 * reads up to BATCH records and puts the references among them in refs,
 * counting the rest in sum (by request type or operation); it returns the
 * records read, 0 at the end, or -1 with err set. */
typedef struct refs_decoder {
	void *(*open)(lp_byte_source *src, enum lp_endian endian);
	ssize_t (*read)(void *d, lp_ref *refs, size_t *nref, lp_legacy_summary *sum,
			const lp_torn_policy *policy, lp_error *err);
	void (*close)(void *d);
} refs_decoder;

typedef struct byu_refs {
	lp_byu_reader *r;
	lp_byu_record recs[BATCH];
	uint64_t clock; /* running sum of the time deltas */
} byu_refs;

static void *byu_refs_open(lp_byte_source *src, enum lp_endian endian)
{
	byu_refs *d = g_new0(byu_refs, 1);
	d->r = lp_record_reader_new(src, endian);
	return d;
}

static ssize_t byu_refs_read(void *dv, lp_ref *refs, size_t *nref, lp_legacy_summary *sum,
			     const lp_torn_policy *policy, lp_error *err)
{
	byu_refs *d = dv;
	ssize_t n = lp_byu_reader_read(d->r, d->recs, BATCH, policy, err);
	for (ssize_t i = 0; i < n; i++) {
		const lp_byu_record *b = &d->recs[i];
		/* the first record's time is not a delta */
		if (sum->records + (uint64_t)i > 0)
			d->clock += b->time;
		char type = lp_byu_ref_type(b->reqtype);
		if (!type) {
			sum->skipped++;
			sum->skipped_by[b->reqtype]++;
			continue;
		}
		refs[(*nref)++] = (lp_ref){.timestamp = d->clock, .vas = b->proc, .address = b->addr,
					   .length = b->size, .type = type};
	}
	return n;
}

static void byu_refs_close(void *dv)
{
	byu_refs *d = dv;
	lp_record_reader_close(d->r);
	g_free(d);
}

typedef struct p6_refs {
	lp_p6_reader *r;
	lp_p6_record recs[BATCH];
} p6_refs;

static void *p6_refs_open(lp_byte_source *src, enum lp_endian endian)
{
	p6_refs *d = g_new0(p6_refs, 1);
	d->r = lp_record_reader_new(src, endian);
	return d;
}

static ssize_t p6_refs_read(void *dv, lp_ref *refs, size_t *nref, lp_legacy_summary *sum,
			    const lp_torn_policy *policy, lp_error *err)
{
	p6_refs *d = dv;
	ssize_t n = lp_p6_reader_read(d->r, d->recs, BATCH, policy, err);
	for (ssize_t i = 0; i < n; i++) {
		if (!lp_p6_to_ref(&d->recs[i], sum->records + (uint64_t)i, &refs[*nref])) {
			sum->skipped++;
			sum->skipped_by[d->recs[i].control >> 4]++;
			continue;
		}
		(*nref)++;
	}
	return n;
}

static void p6_refs_close(void *dv)
{
	p6_refs *d = dv;
	lp_record_reader_close(d->r);
	g_free(d);
}

static const refs_decoder refs_decoders[] = {
	[LP_FORMAT_BYU] = {byu_refs_open, byu_refs_read, byu_refs_close},
	[LP_FORMAT_P6] = {p6_refs_open, p6_refs_read, p6_refs_close},
};

int lp_legacy_to_refs(lp_byte_source *src, enum lp_format_id format, enum lp_endian endian,
		      const lp_torn_policy *policy, lp_ref_writer *w, lp_legacy_summary *sum,
		      lp_error *err)
{
	memset(sum, 0, sizeof *sum);
	const lp_format *f = lp_format_of(format);
	if (!f || !f->to_refs) {
		lp_byte_source_close(src);
		return lp_fail(err, LP_EUSAGE, "only BYU and p6 traces convert to raw references");
	}
	const refs_decoder *dec = &refs_decoders[format];
	void *d = dec->open(src, endian);
	lp_ref *refs = g_new(lp_ref, BATCH);
	ssize_t n;
	int st = 0;
	while (st == 0) {
		size_t nref = 0;
		n = dec->read(d, refs, &nref, sum, policy, err);
		if (n <= 0)
			break;
		for (size_t i = 0; i < nref; i++)
			count_ref(sum, refs[i].type);
		sum->records += (uint64_t)n;
		st = lp_ref_writer_write(w, refs, nref, err);
	}
	if (st == 0 && n < 0)
		st = err->status;
	if (st == 0 && sum->records > 0 && sum->skipped == sum->records)
		st = fail_all_skipped(sum, format, lp_byte_source_name(src), err);
	g_free(refs);
	dec->close(d);
	return st;
}
