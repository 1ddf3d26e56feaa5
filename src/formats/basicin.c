/* Basic merge streams read back as input ("type canonical" lines), and
 * the LRU behaviour sequence of one. */
#include "bytesrc.h"

#include <inttypes.h>
#include <string.h>

#include "laplace/lru.h"

struct lp_basic_reader {
	lp_byte_source *src;
	uint64_t line_no; /* lines read so far */
};

lp_basic_reader *lp_basic_reader_open(const char *path, lp_error *err)
{
	lp_byte_source *src = lp_byte_source_open(path, err);
	if (!src)
		return NULL;
	lp_basic_reader *r = g_new0(lp_basic_reader, 1);
	r->src = src;
	return r;
}

void lp_basic_reader_close(lp_basic_reader *r)
{
	if (!r)
		return;
	lp_byte_source_close(r->src);
	g_free(r);
}

static int parse_line(const lp_basic_reader *r, const char *s, size_t len, lp_basic_ref *ref,
		      lp_error *err)
{
	const char *name = lp_byte_source_name(r->src);
	while (len > 0 && (s[len - 1] == '\r' || s[len - 1] == ' '))
		len--;
	if (len == 0 || lp_ref_type_index(s[0]) < 0 || (len > 1 && s[1] != ' '))
		return lp_fail(err, LP_EINPUT, "%s:%" PRIu64 ": field type: not one of r w i R W I",
			       name, r->line_no);
	if (len < 3)
		return lp_fail(err, LP_EINPUT, "%s:%" PRIu64 ": field canonical: missing", name,
			       r->line_no);
	if (lp_parse_hex(s + 2, len - 2, &ref->page) < 0)
		return lp_fail(err, LP_EINPUT,
			       "%s:%" PRIu64 ": field canonical: not a hex number of at most 64 bits",
			       name, r->line_no);
	ref->type = s[0];
	return 0;
}

ssize_t lp_basic_reader_read(lp_basic_reader *r, lp_basic_ref *out, size_t cap, lp_error *err)
{
	size_t n = 0;
	while (n < cap) {
		char *line;
		size_t len;
		int got = lp_inbuf_line(&r->src->b, &line, &len, err);
		if (got == LP_INBUF_LONG_LINE)
			return lp_inbuf_long_line(err, lp_byte_source_name(r->src), r->line_no + 1);
		if (got < 0)
			return -1;
		if (got == 0)
			break;
		r->line_no++;
		if (parse_line(r, line, len, &out[n], err))
			return -1;
		n++;
	}
	return (ssize_t)n;
}

int lp_lru_basic_trace(const char *path, uint64_t frames, lp_output *out, lp_error *err)
{
	lp_basic_reader *r = lp_basic_reader_open(path, err);
	if (!r)
		return err->status;
	enum { BATCH = 4096 };
	lp_basic_ref *refs = g_new(lp_basic_ref, BATCH);
	char *text = g_malloc(BATCH * LP_BEHAVIOUR_LINE_MAX);
	lp_lru *lru = lp_lru_new(frames);
	ssize_t n;
	int st = 0;
	while (st == 0 && (n = lp_basic_reader_read(r, refs, BATCH, err)) > 0) {
		char *p = text;
		lp_lru_fault f;
		for (ssize_t i = 0; i < n; i++)
			if (lp_lru_ref(lru, refs[i].page, lp_ref_is_write(refs[i].type), &f))
				p += lp_behaviour_format(p, f.tag, f.page, f.dirt, f.evicted);
		st = lp_output_write(out, text, (size_t)(p - text), err);
	}
	if (st == 0 && n < 0)
		st = err->status;
	lp_lru_free(lru);
	g_free(text);
	g_free(refs);
	lp_basic_reader_close(r);
	return st;
}
