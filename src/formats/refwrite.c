/* Raw reference traces written (laplace-formats(5), "RAW REFERENCE TRACE"),
 * binary or text: apart from the reader, which the library uses without
 * the outputs this needs. */
#include "formats/refio.h"

#include <glib.h>

#include "core/numbers.h"

#define WRITER_BUFFER_SIZE (256u << 10)

struct lp_ref_writer {
	lp_output *out;
	enum lp_ref_format format;
	bool big;
	size_t used;
	char buf[WRITER_BUFFER_SIZE];
};

lp_ref_writer *lp_ref_writer_new(lp_output *out, enum lp_ref_format format, enum lp_endian endian)
{
	lp_ref_writer *w = g_new(lp_ref_writer, 1);
	w->out = out;
	w->format = format;
	w->big = endian == LP_BIG;
	w->used = 0;
	return w;
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
		if (w->used + LP_REF_TEXT_RECORD_MAX > sizeof w->buf) {
			int r = flush_writer(w, err);
			if (r)
				return r;
		}
		if (w->format == LP_REF_TEXT)
			w->used += encode_text(w->buf + w->used, &refs[i]);
		else
			w->used += lp_ref_encode_bin((unsigned char *)w->buf + w->used, &refs[i], w->big);
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
