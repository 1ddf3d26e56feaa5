/* Raw reference traces written (laplace-formats(5), "RAW REFERENCE TRACE"),
 * binary or text: apart from the reader, which the library uses without
 * the outputs this needs; and laplace dump of a raw trace, which writes
 * its text. */
#include "formats/refio.h"

#include <glib.h>

#include "core/numbers.h"
#include "formats/registry.h"

#define WRITER_BUFFER_SIZE (256u << 10)
#define DUMP_BATCH 65536

struct lp_ref_writer {
	lp_output *out;
	enum lp_ref_format format;
	bool big;
	size_t used;
	char buf[WRITER_BUFFER_SIZE];
};

static lp_ref_writer *writer_new(lp_output *out, enum lp_ref_format format, enum lp_endian endian)
{
	lp_ref_writer *w = g_new(lp_ref_writer, 1);
	w->out = out;
	w->format = format;
	w->big = endian == LP_BIG;
	w->used = 0;
	return w;
}

lp_ref_writer *lp_ref_bin_writer_new(lp_output *out, enum lp_endian endian)
{
	return writer_new(out, LP_REF_BIN, endian);
}

lp_ref_writer *lp_ref_text_writer_new(lp_output *out, enum lp_endian endian)
{
	return writer_new(out, LP_REF_TEXT, endian);
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

/* ---- laplace dump ---- */

int lp_ref_dump(const char *path, enum lp_endian endian, const lp_torn_policy *policy,
		lp_output *out, lp_error *err)
{
	lp_ref_source *reader = lp_ref_open(path, LP_REF_AUTO, endian, err);
	if (!reader)
		return err->status;
	lp_ref_writer *writer = lp_ref_text_writer_new(out, endian);
	lp_ref *batch = g_new(lp_ref, DUMP_BATCH);
	ssize_t n;
	int rc = 0;
	while ((n = lp_ref_source_read(reader, batch, DUMP_BATCH, err)) > 0)
		if ((rc = lp_ref_writer_write(writer, batch, (size_t)n, err)))
			break;
	g_free(batch);
	if (!rc && n < 0)
		rc = err->status;
	if (!rc)
		rc = lp_ref_writer_finish(writer, err);
	else
		lp_ref_writer_free(writer);
	size_t torn = lp_ref_source_torn_bytes(reader);
	if (!rc && torn) /* binary: text is never torn */
		rc = lp_torn_record(policy, lp_ref_source_name(reader), lp_ref_source_index(reader),
				    torn, err);
	lp_ref_source_close(reader);
	return rc;
}
