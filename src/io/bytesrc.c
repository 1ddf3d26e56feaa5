/* The byte source: see io/bytesrc.h. */
#include "io/bytesrc.h"

#include <glib.h>

int lp_byte_source_init(lp_byte_source *s, const char *path, lp_error *err)
{
	if (!(s->in = lp_input_open(path, err)))
		return -1;
	lp_inbuf_init(&s->b, s->in);
	return 0;
}

int lp_byte_source_init_sized(lp_byte_source *s, const char *path, size_t input_size,
			      size_t line_size, lp_error *err)
{
	if (!(s->in = lp_input_open_sized(path, input_size, err)))
		return -1;
	lp_inbuf_init_sized(&s->b, s->in, line_size);
	return 0;
}

void lp_byte_source_clear(lp_byte_source *s)
{
	lp_inbuf_free(&s->b);
	lp_input_close(s->in);
	s->in = NULL;
}

lp_byte_source *lp_byte_source_open(const char *path, lp_error *err)
{
	lp_byte_source *s = g_new0(lp_byte_source, 1);
	if (lp_byte_source_init(s, path, err)) {
		g_free(s);
		return NULL;
	}
	return s;
}

void lp_byte_source_close(lp_byte_source *s)
{
	if (!s)
		return;
	lp_byte_source_clear(s);
	g_free(s);
}

const char *lp_byte_source_name(const lp_byte_source *s) { return lp_input_name(s->in); }

ssize_t lp_byte_source_records(lp_byte_source *s, size_t size, size_t cap, uint64_t index,
			       const lp_torn_policy *policy, lp_error *err)
{
	ssize_t avail = lp_inbuf_fill(&s->b, size, err);
	if (avail < 0)
		return -1;
	size_t n = (size_t)avail / size;
	if (n > 0)
		return (ssize_t)(n < cap ? n : cap);
	s->b.pos += (size_t)avail; /* reported once, then gone */
	if (avail > 0 && lp_torn_record(policy, lp_byte_source_name(s), index, (size_t)avail, err))
		return -1;
	return 0;
}

lp_record_reader *lp_record_reader_new(lp_byte_source *src, enum lp_endian endian)
{
	lp_record_reader *r = g_new0(lp_record_reader, 1);
	r->src = src;
	r->endian = endian;
	return r;
}

ssize_t lp_record_reader_next(lp_record_reader *r, size_t size, size_t cap,
			      const lp_torn_policy *policy, const unsigned char **data,
			      lp_error *err)
{
	ssize_t n = lp_byte_source_records(r->src, size, cap, r->index, policy, err);
	if (n <= 0)
		return n;
	*data = lp_byte_source_data(r->src);
	r->src->b.pos += (size_t)n * size;
	r->index += (uint64_t)n;
	return n;
}

void lp_record_reader_close(lp_record_reader *r)
{
	if (!r)
		return;
	lp_byte_source_close(r->src);
	g_free(r);
}
