/* Raw reference traces written (laplace-formats(5), "RAW REFERENCE TRACE"
 * and 10.1), binary or text, 32-bit or 64-bit: apart from the reader,
 * which the library uses without the outputs this needs; and laplace
 * convert and dump of a raw trace, which copy it into a form. */
#include "formats/refio.h"

#include <glib.h>

#include "core/numbers.h"
#include "formats/registry.h"

#define WRITER_BUFFER_SIZE (256u << 10)
/* References decoded and encoded per step: big enough to amortise calls. */
#define COPY_BATCH 65536

struct lp_ref_writer {
	lp_output *out;
	enum lp_ref_format format;
	bool wide; /* the 64-bit form */
	bool big;
	size_t used;
	char buf[WRITER_BUFFER_SIZE];
};

/* A writer whose output starts with header (NULL: none). */
static lp_ref_writer *writer_new(lp_output *out, enum lp_ref_format format, bool wide, bool big,
				 const char *header, size_t header_size)
{
	lp_ref_writer *w = g_new(lp_ref_writer, 1);
	w->out = out;
	w->format = format;
	w->wide = wide;
	w->big = big;
	w->used = header_size;
	memcpy(w->buf, header, header_size);
	return w;
}

lp_ref_writer *lp_ref_bin_writer_new(lp_output *out, enum lp_endian endian)
{
	return writer_new(out, LP_REF_BIN, false, endian == LP_BIG, "", 0);
}

lp_ref_writer *lp_ref_text_writer_new(lp_output *out, enum lp_endian endian)
{
	(void)endian;
	return writer_new(out, LP_REF_TEXT, false, false, "", 0);
}

lp_ref_writer *lp_ref64_bin_writer_new(lp_output *out, enum lp_endian endian)
{
	(void)endian;
	return writer_new(out, LP_REF_BIN, true, false, LP_REF64_HEADER, LP_REF64_HEADER_SIZE);
}

lp_ref_writer *lp_ref64_text_writer_new(lp_output *out, enum lp_endian endian)
{
	(void)endian;
	static const char header[] = LP_REF64_TEXT_HEADER "\n";
	return writer_new(out, LP_REF_TEXT, true, false, header, sizeof header - 1);
}

static size_t encode_text(char *p, const lp_ref *ref)
{
	char *q = p;
	*q++ = ref->type;
	*q++ = ' ';
	q += lp_fmt_hex(q, ref->timestamp);
	*q++ = ' ';
	q += lp_fmt_hex(q, ref->length);
	*q++ = ' ';
	q += lp_fmt_hex(q, ref->vas);
	*q++ = ' ';
	q += lp_fmt_hex(q, ref->address);
	*q++ = '\n';
	return (size_t)(q - p);
}

static int flush_writer(lp_ref_writer *w, lp_error *err)
{
	int r = lp_output_write(w->out, w->buf, w->used, err);
	w->used = 0;
	return r;
}

int lp_ref_writer_write(lp_ref_writer *w, const lp_ref *refs, size_t n, lp_error *err)
{
	for (size_t i = 0; i < n; i++) {
		if (w->used + LP_REF64_TEXT_RECORD_MAX > sizeof w->buf) {
			int r = flush_writer(w, err);
			if (r)
				return r;
		}
		unsigned char *p = (unsigned char *)w->buf + w->used;
		if (w->format == LP_REF_TEXT)
			w->used += encode_text((char *)p, &refs[i]);
		else if (w->wide)
			w->used += lp_ref_encode_bin64(p, &refs[i]);
		else
			w->used += lp_ref_encode_bin(p, &refs[i], w->big);
	}
	return 0;
}

int lp_ref_writer_finish(lp_ref_writer *w, lp_error *err)
{
	int r = flush_writer(w, err);
	g_free(w);
	return r;
}

void lp_ref_writer_free(lp_ref_writer *w) { g_free(w); }

/* ---- laplace convert and dump ---- */

/* The first of refs[0, n) whose vas or address does not fit 32 bits,
 * named as the reference of index first + i of s; 0 when all fit. */
static int check_narrow(const lp_ref_source *s, uint64_t first, const lp_ref *refs, size_t n,
			lp_error *err)
{
	for (size_t i = 0; i < n; i++) {
		if (!((refs[i].vas | refs[i].address) >> 32))
			continue;
		bool vas = refs[i].vas >> 32;
		char *where = s->ops->where(s, first + i);
		lp_fail(err, LP_EINPUT, "%s: field %s: %" G_GINT64_MODIFIER "x does not fit 32 bits",
			where, vas ? "vas" : "address", vas ? refs[i].vas : refs[i].address);
		g_free(where);
		return LP_EINPUT;
	}
	return 0;
}

int lp_ref_copy(lp_ref_source *s, const lp_format *form, enum lp_endian endian,
		const lp_torn_policy *policy, lp_output *out, lp_error *err)
{
	bool narrow = form->ref->width < lp_ref_source_width(s);
	lp_ref_writer *w = form->open_sink(out, endian);
	lp_ref *batch = g_new(lp_ref, COPY_BATCH);
	ssize_t n;
	int rc = 0;
	while ((n = lp_ref_source_read(s, batch, COPY_BATCH, err)) > 0) {
		if (narrow && (rc = check_narrow(s, lp_ref_source_index(s) - (uint64_t)n, batch,
						 (size_t)n, err)))
			break;
		if ((rc = lp_ref_writer_write(w, batch, (size_t)n, err)))
			break;
	}
	g_free(batch);
	if (!rc && n < 0)
		rc = err->status;
	if (rc) {
		lp_ref_writer_free(w);
		return rc;
	}
	if ((rc = lp_ref_writer_finish(w, err)))
		return rc;
	size_t torn = lp_ref_source_torn_bytes(s);
	if (torn) /* binary: text is never torn */
		rc = lp_torn_record(policy, lp_ref_source_name(s), lp_ref_source_index(s), torn, err);
	return rc;
}

int lp_ref_dump(const char *path, enum lp_endian endian, const lp_torn_policy *policy,
		lp_output *out, lp_error *err)
{
	lp_ref_source *s = lp_ref_open(path, LP_REF_AUTO, endian, err);
	if (!s)
		return err->status;
	int rc = lp_ref_copy(s, lp_ref_row(LP_REF_TEXT, lp_ref_source_width(s)), endian, policy,
			     out, err);
	lp_ref_source_close(s);
	return rc;
}
